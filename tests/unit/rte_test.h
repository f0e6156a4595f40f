/*
 * rte_test.h - helpers shared by the cmocka unit tests of common/.
 *
 * Every test works on real files in a private temporary directory (created
 * on first use, removed at exit by the process that created it): ring files
 * are laid out with rte_layout_compute(), their header written as the
 * producer does, mapped shared and written through the real ring writer;
 * readers open them by path with the real consumer.
 *
 * Include after <cmocka.h>'s prerequisites; the helpers assert with cmocka
 * and so must run on the thread that runs the test.
 */
#ifndef RTE_TEST_H
#define RTE_TEST_H

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "clock.h"
#include "ring.h"
#include "rte/consumer.h"
#include "rte/format.h"

/* A ring file created by t_ring_file_create(), mapped read-write. */
struct t_file {
	char path[PATH_MAX];
	unsigned char *base;
	size_t len;
	struct rte_layout l;
};

/* The private temporary directory of this process. */
const char *t_tmpdir(void);

/* "<tmpdir>/<name>" in a static buffer of the caller's choice. */
void t_path(char *out, size_t cap, const char *name);

/*
 * Create <tmpdir>/<name> with OCaml's layout for max_domains rings of
 * 2^log2 words, size it, map it shared and write the eight header words
 * as the producer does. Asserts on failure.
 */
void t_ring_file_create(struct t_file *f, const char *name,
                        unsigned max_domains, unsigned log2);

/* Same as t_ring_file_create() with an explicit layout (may be bogus;
 * the file is l->total_size bytes unless size_override is not 0). */
void t_ring_file_create_layout(struct t_file *f, const char *name,
                               const struct rte_layout *l,
                               uint64_t size_override);

/* Unmap (the file stays). */
void t_ring_file_unmap(struct t_file *f);

/* Pointer to header word `i` (0..7) of the file. */
uint64_t *t_meta(struct t_file *f, unsigned i);

/* Pointers to head/tail of ring `ring`, and to its data words. */
uint64_t *t_ring_head(struct t_file *f, unsigned ring);
uint64_t *t_ring_data(struct t_file *f, unsigned ring);

/* Write a name into name slot `id` (NUL-terminated, at most 127 bytes). */
void t_set_name(struct t_file *f, unsigned id, const char *name);

/* Attach a writer to ring `ring` of f. */
void t_writer(struct t_file *f, unsigned ring, struct rte_ring_writer *w);

/* Open a cursor, asserting success. */
rte_cursor *t_open(const char *path);

/* Write `len` bytes to <tmpdir>/<name>, truncating; stores the path. */
void t_write_file(char *path, size_t cap, const char *name, const void *data,
                  size_t len);

/* Decompress gzip file `gz` into `out` (zero blocks left sparse). */
void t_gunzip(const char *gz, const char *out);

/* The fixtures directory: $RTE_FIXTURES_DIR, else the compiled-in path. */
const char *t_fixtures_dir(void);

/* Small deterministic generator (xorshift64*), seeded per test. */
uint64_t t_rand(uint64_t *state);

/* Monotonic nanoseconds straight from clock_gettime. */
uint64_t t_now_ns(void);

#endif
