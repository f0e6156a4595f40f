/*
 * gen.c - write a finished ring file of a known number of events, for the
 * reader benchmarks: usage `gen FILE EVENTS [RINGS] [nostop]`.
 *
 * The mix is what a traced program writes: runtime phases (begin/end),
 * counters, user ints, user spans and small custom events, spread over
 * RINGS rings (default 4) sized so nothing is lost, with ring_start and
 * ring_stop (none with "nostop": the file of a killed writer, for the
 * --clean benchmark). Uses the project's own ring writer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

static int with_stop = 1; /* write ring_stop at the end of each ring */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *create(const char *path, struct rte_layout *l)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	void *base;

	if (fd < 0)
		die(path);
	if (ftruncate(fd, (off_t)l->total_size) < 0)
		die("ftruncate");
	base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		die("mmap");
	close(fd);
	rte_layout_write_header(l, base);
	return base;
}

static void name(void *base, const struct rte_layout *l, unsigned id,
                 const char *s)
{
	strcpy((char *)base + l->custom_events_offset + id * RTE_NAME_SLOT_BYTES, s);
}

static void fill_ring(struct rte_ring_writer *w, long n, unsigned ring)
{
	uint64_t ts = 1000000000ull + ring;
	uint64_t payload[2];
	long i = 0;

	while (i < n) {
		switch (i % 8) {
		case 0: rte_ring_write0(w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, RTE_P_MINOR), ts); break;
		case 1: rte_ring_write0(w, rte_hdr_make(0, 0, RTE_MSG_EXIT, RTE_P_MINOR), ts); break;
		case 2: rte_ring_write1(w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, RTE_C_MINOR_ALLOCATED), ts, (uint64_t)i); break;
		case 3: rte_ring_write1(w, rte_hdr_make(0, 1, RTE_UMSG_INT, 1), ts, (uint64_t)(i % 1000)); break;
		case 4: rte_ring_write0(w, rte_hdr_make(0, 1, RTE_UMSG_SPAN_BEGIN, 2), ts); break;
		case 5: rte_ring_write0(w, rte_hdr_make(0, 1, RTE_UMSG_SPAN_END, 2), ts); break;
		case 6:
			rte_custom_encode("payload", 7, payload);
			rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 3), ts, payload, 1);
			break;
		default: rte_ring_write0(w, rte_hdr_make(0, 1, RTE_UMSG_UNIT, 0), ts); break;
		}
		ts += 37 + (uint64_t)(i % 11) * 13;
		i++;
	}
	if (with_stop)
		rte_ring_write0(w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_STOP), ts);
}

int main(int argc, char **argv)
{
	struct rte_layout l;
	unsigned rings = argc > 3 ? (unsigned)atoi(argv[3]) : 4;
	long n = argc > 2 ? atol(argv[2]) : 0;
	unsigned log2 = RTE_RING_LOG2_MIN;
	void *base;

	if (argc < 3 || n < 1 || rings < 1 || rings > 64) {
		fprintf(stderr, "usage: %s FILE EVENTS [RINGS] [nostop]\n", argv[0]);
		return 1;
	}
	with_stop = !(argc > 4 && !strcmp(argv[4], "nostop"));
	/* Up to 3 words an event; room for all of them without wrapping. */
	while (log2 < RTE_RING_LOG2_MAX && ((uint64_t)1 << log2) < (uint64_t)(n / rings + 2) * 3 + 16)
		log2++;
	if (rte_layout_compute(&l, rings, log2) < 0)
		return 1;
	base = create(argv[1], &l);
	name(base, &l, 0, "gen.tick");
	name(base, &l, 1, "gen.count");
	name(base, &l, 2, "gen.work");
	name(base, &l, 3, "gen.msg");
	for (unsigned r = 0; r < rings; r++) {
		struct rte_ring_writer w;

		rte_ring_writer_attach(&w, base, &l, r);
		rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, r ? RTE_LC_DOMAIN_SPAWN : RTE_LC_RING_START),
		                999999000ull, 4242);
		fill_ring(&w, n / rings + (r < (unsigned)(n % rings)), r);
	}
	munmap(base, l.total_size);
	return 0;
}
