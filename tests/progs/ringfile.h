/*
 * ringfile.h - a one-ring file written with our own ring writer, for the
 * test programs that make ring files of chosen, odd or lying contents
 * (tests/heap/progs/peaks.c, tests/tree/progs/hostile.c): a file laid out
 * as the shim lays one out (rte_layout_compute), its header written, its
 * user event names set, ring 0 attached. Header-only; a program exits 1
 * with perror's message on any failure. Link with the writer's objects.
 */
#ifndef RTE_TESTS_RINGFILE_H
#define RTE_TESTS_RINGFILE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

struct ringfile {
	void *base;
	struct rte_layout l;
	struct rte_ring_writer w;
};

static inline void ringfile_die(const char *what)
{
	perror(what);
	exit(1);
}

/* DIR/PID.events, 2^14-word ring 0, user ids 0..n-1 named names[0..n-1]. */
static inline void ringfile_create(struct ringfile *f, const char *dir, int pid,
                                   const char *const *names, unsigned n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%d.events", dir, pid);
	if (rte_layout_compute(&f->l, 1, 14) < 0)
		ringfile_die("layout");
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		ringfile_die(path);
	if (ftruncate(fd, (off_t)f->l.total_size) < 0)
		ringfile_die("ftruncate");
	f->base = mmap(NULL, f->l.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f->base == MAP_FAILED)
		ringfile_die("mmap");
	close(fd);
	memcpy(f->base, &f->l.version, RTE_METADATA_BYTES);
	for (unsigned i = 0; i < n; i++)
		strcpy((char *)f->base + f->l.custom_events_offset + i * RTE_NAME_SLOT_BYTES,
		       names[i]);
	rte_ring_writer_attach(&f->w, f->base, &f->l, 0);
}

static inline void ringfile_lc(struct ringfile *f, unsigned id, uint64_t ts, uint64_t v)
{
	rte_ring_write1(&f->w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, id), ts, v);
}

static inline void ringfile_int(struct ringfile *f, unsigned id, uint64_t ts, uint64_t v)
{
	rte_ring_write1(&f->w, rte_hdr_make(0, 1, RTE_UMSG_INT, id), ts, v);
}

static inline void ringfile_bytes(struct ringfile *f, unsigned id, uint64_t ts,
                                  const void *p, size_t n)
{
	rte_ring_write_bytes(&f->w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, id), ts, p, n);
}

static inline void ringfile_unmap(struct ringfile *f)
{
	munmap(f->base, f->l.total_size);
}

#endif
