/*
 * peaks.c - ring files of rte.alloc.peak / rte.alloc.peak_ns sequences a
 * wrapped or hostile ring can hold (tests/heap t_peaks), written with our
 * own ring writer: rte-read's peak is the highest rte.alloc.peak, its
 * time the peak_ns right after that value, or null when it was lost.
 *
 *   peaks DIR   writes DIR/50.events ... DIR/52.events:
 *     50   peak 1000 (ns 100), peak 3000 whose peak_ns is lost, then a
 *          lower peak 2000 (ns 300): 3000 bytes, time null
 *     51   a peak_ns with no peak before it (77), then peak 500 (ns 600):
 *          500 at 600
 *     52   peak 0 (never written by the shim: no peak), peak 4000 (ns
 *          700), peak 4000 again (ns 900, a later image of the pid):
 *          4000 at 900
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

enum { U_PEAK = 0, U_PEAK_NS, U_HEAP };

struct file {
	void *base;
	struct rte_layout l;
	struct rte_ring_writer w;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void create(struct file *f, const char *dir, int pid)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%d.events", dir, pid);
	if (rte_layout_compute(&f->l, 1, 14) < 0)
		die("layout");
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		die(path);
	if (ftruncate(fd, (off_t)f->l.total_size) < 0)
		die("ftruncate");
	f->base = mmap(NULL, f->l.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f->base == MAP_FAILED)
		die("mmap");
	close(fd);
	memcpy(f->base, &f->l.version, RTE_METADATA_BYTES);
	strcpy((char *)f->base + f->l.custom_events_offset + U_PEAK * RTE_NAME_SLOT_BYTES,
	       "rte.alloc.peak");
	strcpy((char *)f->base + f->l.custom_events_offset + U_PEAK_NS * RTE_NAME_SLOT_BYTES,
	       "rte.alloc.peak_ns");
	strcpy((char *)f->base + f->l.custom_events_offset + U_HEAP * RTE_NAME_SLOT_BYTES,
	       "rte.alloc.heap");
	rte_ring_writer_attach(&f->w, f->base, &f->l, 0);
}

static void lc(struct file *f, unsigned id, uint64_t ts, uint64_t v)
{
	rte_ring_write1(&f->w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, id), ts, v);
}

static void user(struct file *f, unsigned id, uint64_t ts, uint64_t v)
{
	rte_ring_write1(&f->w, rte_hdr_make(0, 1, RTE_UMSG_INT, id), ts, v);
}

static void done(struct file *f)
{
	lc(f, RTE_LC_RING_STOP, 2000, 0);
	munmap(f->base, f->l.total_size);
}

int main(int argc, char **argv)
{
	struct file f;

	if (argc != 2)
		return 2;
	create(&f, argv[1], 50);
	lc(&f, RTE_LC_RING_START, 10, 50);
	user(&f, U_PEAK, 100, 1000);
	user(&f, U_PEAK_NS, 100, 100);
	user(&f, U_HEAP, 150, 900);
	user(&f, U_PEAK, 200, 3000);
	user(&f, U_HEAP, 300, 2000);
	user(&f, U_PEAK, 300, 2000);
	user(&f, U_PEAK_NS, 300, 300);
	done(&f);
	create(&f, argv[1], 51);
	lc(&f, RTE_LC_RING_START, 10, 51);
	user(&f, U_PEAK_NS, 50, 77);
	user(&f, U_PEAK, 600, 500);
	user(&f, U_PEAK_NS, 600, 600);
	done(&f);
	create(&f, argv[1], 52);
	lc(&f, RTE_LC_RING_START, 10, 52);
	user(&f, U_PEAK, 400, 0);
	user(&f, U_PEAK_NS, 400, 400);
	user(&f, U_PEAK, 700, 4000);
	user(&f, U_PEAK_NS, 700, 700);
	user(&f, U_PEAK, 900, 4000);
	user(&f, U_PEAK_NS, 900, 900);
	done(&f);
	return 0;
}
