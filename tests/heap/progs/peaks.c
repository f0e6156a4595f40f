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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../progs/ringfile.h"

enum { U_PEAK = 0, U_PEAK_NS, U_HEAP };

static const char *const names[] = { "rte.alloc.peak", "rte.alloc.peak_ns", "rte.alloc.heap" };

static void create(struct ringfile *f, const char *dir, int pid)
{
	ringfile_create(f, dir, pid, names, 3);
}

static void done(struct ringfile *f)
{
	ringfile_lc(f, RTE_LC_RING_STOP, 2000, 0);
	ringfile_unmap(f);
}

int main(int argc, char **argv)
{
	struct ringfile f;

	if (argc != 2)
		return 2;
	create(&f, argv[1], 50);
	ringfile_lc(&f, RTE_LC_RING_START, 10, 50);
	ringfile_int(&f, U_PEAK, 100, 1000);
	ringfile_int(&f, U_PEAK_NS, 100, 100);
	ringfile_int(&f, U_HEAP, 150, 900);
	ringfile_int(&f, U_PEAK, 200, 3000);
	ringfile_int(&f, U_HEAP, 300, 2000);
	ringfile_int(&f, U_PEAK, 300, 2000);
	ringfile_int(&f, U_PEAK_NS, 300, 300);
	done(&f);
	create(&f, argv[1], 51);
	ringfile_lc(&f, RTE_LC_RING_START, 10, 51);
	ringfile_int(&f, U_PEAK_NS, 50, 77);
	ringfile_int(&f, U_PEAK, 600, 500);
	ringfile_int(&f, U_PEAK_NS, 600, 600);
	done(&f);
	create(&f, argv[1], 52);
	ringfile_lc(&f, RTE_LC_RING_START, 10, 52);
	ringfile_int(&f, U_PEAK, 400, 0);
	ringfile_int(&f, U_PEAK_NS, 400, 400);
	ringfile_int(&f, U_PEAK, 700, 4000);
	ringfile_int(&f, U_PEAK_NS, 700, 700);
	ringfile_int(&f, U_PEAK, 900, 4000);
	ringfile_int(&f, U_PEAK_NS, 900, 900);
	done(&f);
	return 0;
}
