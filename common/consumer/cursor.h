/*
 * cursor.h - the cursor of the consumer library, inside it only: the state
 * of a ring being read, struct rte_cursor, the ring accessors, and the
 * functions its files share (consumer.c reads; open.c opens, validates,
 * maps and closes, and words the errors; bounds.c checks a ring's head and
 * tail; poll.c builds on the reads). Not installed: rte/consumer.h is the
 * interface.
 */
#ifndef RTE_CONSUMER_CURSOR_H
#define RTE_CONSUMER_CURSOR_H

#include <stdint.h>
#include <sys/stat.h>

#include "rte/consumer.h"

struct ring_state {
	uint64_t pos;       /* next word counter to read */
	uint64_t base, end; /* buf holds the words [base, end), checked intact */
	uint64_t lost;      /* total lost words reported */
	uint64_t *buf;      /* the copy: own, or the thread's peek buffer */
	uint64_t *own;      /* this ring's copy buffer, CHUNK_WORDS words, lazy */
	uint64_t gen;       /* 0: the copy is in own; else in the peek buffer,
	                       valid while that buffer's gen is still this */
	uint64_t kept;      /* ring index from which pages may be mapped */
	int err;            /* sticky error of this ring, 0 if none */
	char *why;          /* its message, restored when it is returned again */
};

/* A cursor's cache of user event names is a tree of three levels by the
 * 13 bits of the id: NAME_TOP blocks of NAME_MID blocks of NAME_LEAF
 * names, each block made on first use. */
#define NAME_TOP 16u
#define NAME_MID 16u
#define NAME_LEAF 32u
_Static_assert(NAME_TOP * NAME_MID * NAME_LEAF == RTE_MAX_USER_EVENTS &&
               RTE_MAX_USER_EVENTS == 0x1fffu + 1, "ids are 13-bit fields");
#define NAME_T(id) ((id) / (NAME_MID * NAME_LEAF) % NAME_TOP)
#define NAME_M(id) ((id) / NAME_LEAF % NAME_MID)
#define NAME_L(id) ((id) % NAME_LEAF)

struct rte_cursor {
	char *path;
	const unsigned char *base; /* mapping of layout.total_size bytes */
	size_t map_len;
	int packed;                /* a packed capture: base is its unpacked
	                            * copy (unpack.c), not the file mapped */
	struct stat st;            /* of the file when it was opened */
	struct rte_layout layout;
	struct ring_state *rings;
	/* cached user event names by id (a 13-bit field: below
	 * RTE_MAX_USER_EVENTS), a tree of blocks made on first use:
	 * librte.so's own events take the top ids, which a flat array would
	 * pay for with 64 KiB a file, a flat array of blocks with 1 KiB; a
	 * file with a few names costs about half a KiB, so memory stays
	 * small with 100,000 files; a file with none, one pointer */
	char ****names; /* NAME_TOP blocks, NULL until the first name */
	/* the names of phase and counter ids: one OCaml version's table
	 * (rte/ocaml.h), 5.2's unless rte_cursor_use_ocaml() chose another */
	const char *const *phase_names, *const *counter_names;
	unsigned nphases, ncounters;
	char *errmsg; /* ERRMSG_CAP bytes, allocated at the first error: a
	               * cursor of each of 100,000 files stays small */
};
#define ERRMSG_CAP 512

/* What consumer_ring_bounds(), consumer_bad_length() and refill() return
 * when the producer overwrote r->pos (consumer.c, bounds.c). */
#define READ_LOST (-100)

static inline const uint64_t *ring_header(const rte_cursor *c, unsigned ring)
{
	return (const uint64_t *)(c->base + c->layout.headers_offset +
	                          (uint64_t)ring * c->layout.ring_header_size_bytes);
}

static inline const uint64_t *ring_data(const rte_cursor *c, unsigned ring)
{
	return (const uint64_t *)(c->base + c->layout.data_offset +
	                          (uint64_t)ring * c->layout.ring_size_bytes);
}

/* Acquire: pairs with the producer's release stores of head and tail. */
static inline uint64_t load_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Hidden: inside the library only, not exported by librteconsumer.so. */
#pragma GCC visibility push(hidden)

/* open.c */
void consumer_set_errmsg(rte_cursor *c, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
int consumer_ring_fail(rte_cursor *c, unsigned ring, int err, const char *f, ...)
	__attribute__((format(printf, 4, 5)));
int consumer_remap(rte_cursor *c);
int consumer_remap_failed(rte_cursor *c, unsigned ring);
int consumer_user_name_slow(rte_cursor *c, unsigned ring, unsigned id,
                            const char **out);
/* The one check of a ring file's header (FORMAT.md section 4): the eight
 * words w of a file of size bytes, *l filled. RTE_OK or an error, why set. */
int consumer_validate_header(const uint64_t w[RTE_METADATA_WORDS], uint64_t size,
                             struct rte_layout *l, char *why, size_t wlen);

/* unpack.c: a packed capture (packed.h) read from fd (file_size bytes)
 * into an anonymous mapping, *base of *size bytes, *l the layout of the
 * ring file it holds (its header checked before anything is mapped). */
int consumer_is_packed(const void *first8);
int consumer_unpack(int fd, uint64_t file_size, const unsigned char **base,
                    uint64_t *size, struct rte_layout *l, char *why, size_t wlen);

/* bounds.c */
int64_t consumer_ring_bounds(rte_cursor *c, unsigned ring, uint64_t *head_out);
int consumer_bad_length(rte_cursor *c, unsigned ring, unsigned len,
                        uint64_t *head_out);
void consumer_drop_pages(rte_cursor *c, unsigned ring, uint64_t upto);

#pragma GCC visibility pop

#endif
