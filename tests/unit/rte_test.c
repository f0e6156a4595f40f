/*
 * rte_test.c - helpers shared by the unit tests (see rte_test.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "rte_test.h"

#ifndef RTE_FIXTURES
#define RTE_FIXTURES "tests/fixtures/ocaml-5.2"
#endif

static char g_tmpdir[PATH_MAX];
static pid_t g_tmpdir_owner;

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p) < 0 ? -1 : 0;
}

static void rm_tmpdir(void)
{
	/* Only the creator cleans up: forked children exit through here
	 * too when they call exit(). */
	if (g_tmpdir[0] && getpid() == g_tmpdir_owner)
		nftw(g_tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *t_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (g_tmpdir[0])
		return g_tmpdir;
	if (!base || !*base)
		base = "/tmp";
	snprintf(g_tmpdir, sizeof g_tmpdir, "%s/rte-unit-XXXXXX", base);
	if (!mkdtemp(g_tmpdir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", g_tmpdir, strerror(errno));
		abort();
	}
	g_tmpdir_owner = getpid();
	atexit(rm_tmpdir);
	return g_tmpdir;
}

void t_path(char *out, size_t cap, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", t_tmpdir(), name);

	assert_true(n > 0 && (size_t)n < cap);
}

void t_ring_file_create_layout(struct t_file *f, const char *name,
                               const struct rte_layout *l,
                               uint64_t size_override)
{
	uint64_t size = size_override ? size_override : l->total_size;
	int fd;

	memset(f, 0, sizeof *f);
	f->l = *l;
	t_path(f->path, sizeof f->path, name);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	f->len = (size_t)size;
	f->base = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(f->base != MAP_FAILED);
	rte_layout_write_header(l, f->base);
}

void t_ring_file_create(struct t_file *f, const char *name,
                        unsigned max_domains, unsigned log2)
{
	struct rte_layout l;

	assert_int_equal(rte_layout_compute(&l, max_domains, log2), 0);
	t_ring_file_create_layout(f, name, &l, 0);
}

void t_ring_file_unmap(struct t_file *f)
{
	if (f->base)
		munmap(f->base, f->len);
	f->base = NULL;
}

uint64_t *t_meta(struct t_file *f, unsigned i)
{
	return (uint64_t *)f->base + i;
}

uint64_t *t_ring_head(struct t_file *f, unsigned ring)
{
	return (uint64_t *)(f->base + f->l.headers_offset +
	                    (uint64_t)ring * f->l.ring_header_size_bytes);
}

uint64_t *t_ring_data(struct t_file *f, unsigned ring)
{
	return (uint64_t *)(f->base + f->l.data_offset +
	                    (uint64_t)ring * f->l.ring_size_bytes);
}

void t_set_name(struct t_file *f, unsigned id, const char *name)
{
	char *slot = (char *)f->base + f->l.custom_events_offset +
	             (uint64_t)id * RTE_NAME_SLOT_BYTES;
	size_t n = strlen(name);

	assert_true(n <= RTE_NAME_MAX);
	memset(slot, 0, RTE_NAME_SLOT_BYTES);
	memcpy(slot, name, n);
}

void t_writer(struct t_file *f, unsigned ring, struct rte_ring_writer *w)
{
	rte_ring_writer_attach(w, f->base, &f->l, ring);
}

rte_cursor *t_open(const char *path)
{
	char err[512] = "";
	rte_cursor *c = NULL;
	int rc = rte_cursor_open(path, &c, err, sizeof err);

	if (rc != RTE_OK)
		fail_msg("rte_cursor_open(%s) = %d: %s", path, rc, err);
	assert_non_null(c);
	return c;
}

void t_write_file(char *path, size_t cap, const char *name, const void *data,
                  size_t len)
{
	int fd;

	t_path(path, cap, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

void t_gunzip(const char *gz, const char *out)
{
	static unsigned char buf[1 << 16];
	gzFile in = gzopen(gz, "rb");
	off_t size = 0;
	int fd, n;

	if (!in)
		fail_msg("gzopen %s: %s", gz, strerror(errno));
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	while ((n = gzread(in, buf, sizeof buf)) > 0) {
		if (all_zero(buf, (size_t)n))
			assert_true(lseek(fd, n, SEEK_CUR) >= 0);
		else
			assert_int_equal(write(fd, buf, (size_t)n), n);
		size += n;
	}
	if (n < 0) {
		int e;

		fail_msg("gzread %s: %s", gz, gzerror(in, &e));
	}
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
	gzclose(in);
}

const char *t_fixtures_dir(void)
{
	const char *d = getenv("RTE_FIXTURES_DIR");

	return d && *d ? d : RTE_FIXTURES;
}

uint64_t t_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

uint64_t t_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
