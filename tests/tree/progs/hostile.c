/*
 * hostile.c - ring files whose process records lie (tests/tree/run.sh
 * test_hostile): rte-read's process tree must show them without a crash,
 * a cycle or a wrong parent.
 *
 *   hostile DIR   writes DIR/10.events ... DIR/36.events:
 *     10, 20   each the other's ppid (a cycle: 10 began first, a root);
 *              20's argv without its NUL
 *     30       its own ppid; an rte.exit of an unknown `how`; reaps of
 *              pids -5, 0, and of 40 twice (two reaped-only lives); spawns
 *              of -1 and of 10 (begun before 30: not its child); spawns
 *              that failed: ENOENT of "m\nx", error 99999 of "y", and
 *              three to ignore (version 9, 3 bytes, impossible counts)
 *     31       a 3-byte rte.proc; 32 one of version 9; 33 argc and bytes
 *              that cannot be; 34 an argv of newlines, quotes and bytes
 *              0x80..0xff; 35 an rte.exit 1 byte short; 36 ppid 35 with
 *              no ring_start (times from its other events)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rte/proc.h"
#include "../../progs/ringfile.h"

enum { U_PROC = 0, U_EXIT, U_REAP, U_SPAWN, U_SPAWN_FAIL };

static const char *const names[] = { "rte.proc", "rte.exit", "rte.reap", "rte.spawn",
                                     "rte.spawn_failed" };

static void create(struct ringfile *f, const char *dir, int pid)
{
	ringfile_create(f, dir, pid, names, 5);
}

/* rte.spawn_failed of version v, error err, the argv's counts and bytes. */
static void spawn_fail(struct ringfile *f, uint64_t ts, unsigned v, int err,
                       uint32_t argc, uint32_t nbytes, const char *argv, size_t n)
{
	unsigned char b[512];
	struct rte_spawn_fail_rec r = { (uint16_t)v, 0, err, argc, nbytes };

	memcpy(b, &r, sizeof r);
	memcpy(b + sizeof r, argv, n);
	ringfile_bytes(f, U_SPAWN_FAIL, ts, b, sizeof r + n);
}

static void proc(struct ringfile *f, uint64_t ts, int ppid, uint32_t argc,
                 uint32_t nbytes, const char *argv, size_t n)
{
	unsigned char b[512];
	struct rte_proc_rec r = { RTE_PROC_VERSION, 0, ppid, argc, nbytes };

	memcpy(b, &r, sizeof r);
	memcpy(b + sizeof r, argv, n);
	ringfile_bytes(f, U_PROC, ts, b, sizeof r + n);
}

static void ex(struct ringfile *f, unsigned id, uint64_t ts, int pid, int how,
               int value, size_t cut)
{
	struct rte_exit_rec r;

	memset(&r, 0, sizeof r);
	r.version = RTE_EXIT_VERSION;
	r.how = (uint8_t)how;
	r.pid = pid;
	r.value = value;
	r.utime_ns = 1000;
	r.maxrss_kib = 77;
	ringfile_bytes(f, id, ts, &r, sizeof r - cut);
}

int main(int argc, char **argv)
{
	struct ringfile f;
	const char *d;
	char odd[300];
	size_t n = 0;

	if (argc != 2)
		return 2;
	d = argv[1];
	create(&f, d, 10);
	ringfile_lc(&f, RTE_LC_RING_START, 1000, 10);
	proc(&f, 1001, 20, 1, 2, "a", 2);
	ex(&f, U_EXIT, 1900, 10, RTE_EXIT_STATUS, 0, 0);
	ringfile_lc(&f, RTE_LC_RING_STOP, 2000, 0);
	create(&f, d, 20);
	ringfile_lc(&f, RTE_LC_RING_START, 1100, 20);
	proc(&f, 1101, 10, 2, 3, "b\0c", 3);
	ringfile_lc(&f, RTE_LC_RING_STOP, 2100, 0);
	create(&f, d, 30);
	ringfile_lc(&f, RTE_LC_RING_START, 1200, 30);
	proc(&f, 1201, 30, 1, 2, "s", 2);
	ex(&f, U_EXIT, 1202, 30, 99, 0, 0);
	ex(&f, U_REAP, 1203, -5, RTE_EXIT_SIGNAL, 9, 0);
	ex(&f, U_REAP, 1204, 0, RTE_EXIT_STATUS, 1, 0);
	ex(&f, U_REAP, 1205, 40, RTE_EXIT_SIGNAL, 9, 0);
	ex(&f, U_REAP, 1206, 40, RTE_EXIT_STATUS, 3, 0);
	rte_ring_write1(&f.w, rte_hdr_make(0, 1, RTE_UMSG_INT, U_SPAWN), 1207, (uint64_t)-1);
	rte_ring_write1(&f.w, rte_hdr_make(0, 1, RTE_UMSG_INT, U_SPAWN), 1208, 10);
	spawn_fail(&f, 1209, RTE_SPAWN_FAIL_VERSION, 2, 1, 4, "m\nx", 4);
	spawn_fail(&f, 1210, RTE_SPAWN_FAIL_VERSION, 99999, 1, 2, "y", 2);
	spawn_fail(&f, 1211, 9, 2, 1, 2, "z", 2);
	ringfile_bytes(&f, U_SPAWN_FAIL, 1212, "\1\0\0", 3);
	spawn_fail(&f, 1213, RTE_SPAWN_FAIL_VERSION, 2, 1, 1, "w", 2);
	ringfile_lc(&f, RTE_LC_RING_STOP, 2200, 0);
	create(&f, d, 31);
	ringfile_lc(&f, RTE_LC_RING_START, 1300, 31);
	ringfile_bytes(&f, U_PROC, 1301, "\1\0\0", 3);
	create(&f, d, 32);
	ringfile_lc(&f, RTE_LC_RING_START, 1400, 32);
	{
		unsigned char b[24] = { 9, 0 };

		ringfile_bytes(&f, U_PROC, 1401, b, sizeof b);
	}
	create(&f, d, 33);
	ringfile_lc(&f, RTE_LC_RING_START, 1500, 33);
	proc(&f, 1501, 30, 0xffffffffu, 0xffffffffu, "x", 2);
	create(&f, d, 34);
	ringfile_lc(&f, RTE_LC_RING_START, 1600, 34);
	n += (size_t)snprintf(odd, sizeof odd, "l1\nl2") + 1;
	n += (size_t)snprintf(odd + n, sizeof odd - n, "it's \"q\" \\") + 1;
	for (int c = 0x80; c <= 0xff; c++)
		odd[n++] = (char)c;
	odd[n++] = '\0';
	proc(&f, 1601, 30, 3, (uint32_t)n, odd, n);
	ex(&f, U_EXIT, 1602, 34, RTE_EXIT_SIGNAL, 200, 0);
	ringfile_lc(&f, RTE_LC_RING_STOP, 1700, 0);
	create(&f, d, 35);
	ringfile_lc(&f, RTE_LC_RING_START, 1800, 35);
	proc(&f, 1801, 30, 1, 2, "t", 2);
	ex(&f, U_EXIT, 1802, 35, RTE_EXIT_STATUS, 0, 1);
	create(&f, d, 36);
	proc(&f, 1901, 35, 1, 2, "u", 2);
	ex(&f, U_EXIT, 1902, 36, RTE_EXIT_STATUS, 5, 0);
	return 0;
}
