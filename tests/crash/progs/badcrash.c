/*
 * badcrash.c - a ring file whose crash-recorder payloads are malformed in
 * every way rte-read checks (rte/crash.h), written with the project's own
 * ring writer:
 *
 *   badcrash FILE FIFO   FILE gets, on ring 0 of process 4343: a module
 *                        whose path is FIFO (a named pipe: rte-read must
 *                        never open it for reading, or it would block), a
 *                        module that is a directory, modules that are too
 *                        short, of an unknown version, with a build id
 *                        longer than the payload, ending before they start
 *                        or with a NUL in the path; rte.crash and
 *                        rte.backtrace records that are too short, of an
 *                        unknown version or with more frames than bytes;
 *                        then one valid fatal SIGSEGV whose two frames lie
 *                        in the FIFO's module.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"
#include "rte/crash.h"

enum { E_MOD = 0, E_UNMOD, E_CRASH, E_BT, E_TID };

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *create(struct rte_layout *l, const char *path)
{
	void *base;
	int fd;

	if (rte_layout_compute(l, 2, 12) < 0)
		die("layout");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, (off_t)l->total_size) < 0)
		die("ftruncate");
	base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	            0);
	if (base == MAP_FAILED)
		die("mmap");
	close(fd);
	rte_layout_write_header(l, base);
	return base;
}

static void set_name(void *base, const struct rte_layout *l, unsigned id,
                     const char *s)
{
	strcpy((char *)base + l->custom_events_offset +
	       (uint64_t)id * RTE_NAME_SLOT_BYTES, s);
}

static uint64_t g_ts = 5000000000ull;

static void custom(struct rte_ring_writer *w, unsigned id, const void *p,
                   size_t n)
{
	uint64_t words[600];
	size_t k = rte_custom_encode(p, n, words);

	rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, id), g_ts += 1000,
	               words, (unsigned)k);
}

/* A module record followed by `bid` build-id bytes and `path`. */
static void module(struct rte_ring_writer *w, uint16_t version, uint16_t bid,
                   uint64_t start, uint64_t end, const char *path,
                   size_t pathlen, size_t cut)
{
	char buf[512];
	struct rte_module_rec r;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.version = version;
	r.build_id_len = bid;
	r.bias = start;
	r.start = start;
	r.end = end;
	memcpy(buf, &r, sizeof(r));
	memset(buf + sizeof(r), 0xab, bid < 64 ? bid : 0);
	n = sizeof(r) + (bid < 64 ? bid : 0);
	memcpy(buf + n, path, pathlen);
	n += pathlen;
	custom(w, E_MOD, buf, cut ? cut : n);
}

static void crash(struct rte_ring_writer *w, uint16_t version,
                  uint16_t nframes, unsigned have, size_t cut)
{
	char buf[256];
	struct rte_crash_rec r;
	uint64_t pc = 0x7000000010ull;

	memset(&r, 0, sizeof(r));
	r.version = version;
	r.nframes = nframes;
	r.signo = SIGSEGV;
	r.code = SEGV_MAPERR;
	r.tid = 4343;
	r.flags = RTE_CRASH_FATAL;
	memcpy(buf, &r, sizeof(r));
	for (unsigned i = 0; i < have; i++, pc += 0x10)
		memcpy(buf + sizeof(r) + 8 * i, &pc, 8);
	custom(w, E_CRASH, buf, cut ? cut : sizeof(r) + 8 * (size_t)have);
}

static void bt(struct rte_ring_writer *w, uint16_t version, uint32_t kind,
               uint16_t nframes, unsigned have)
{
	char buf[256];
	struct rte_backtrace_rec r;
	uint64_t pc = 0x7000000020ull;

	memset(&r, 0, sizeof(r));
	r.version = version;
	r.nframes = nframes;
	r.kind = kind;
	memcpy(buf, &r, sizeof(r));
	for (unsigned i = 0; i < have; i++)
		memcpy(buf + sizeof(r) + 8 * i, &pc, 8);
	custom(w, E_BT, buf, sizeof(r) + 8 * (size_t)have);
}

int main(int argc, char **argv)
{
	struct rte_layout l;
	struct rte_ring_writer w;
	void *base;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE FIFO\n", argv[0]);
		return 2;
	}
	base = create(&l, argv[1]);
	set_name(base, &l, E_MOD, "rte.module");
	set_name(base, &l, E_UNMOD, "rte.module.unload");
	set_name(base, &l, E_CRASH, "rte.crash");
	set_name(base, &l, E_BT, "rte.backtrace");
	set_name(base, &l, E_TID, "rte.thread.tid");
	rte_ring_writer_attach(&w, base, &l, 0);
	rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE,
	                                 RTE_LC_RING_START),
	                g_ts, 4343);
	rte_ring_write1(&w, rte_hdr_make(0, 1, RTE_UMSG_INT, E_TID), g_ts, 4343);
	/* the FIFO, at 0x7000000000: where the valid crash's frames are */
	module(&w, 1, 4, 0x7000000000ull, 0x7000100000ull, argv[2],
	       strlen(argv[2]), 0);
	module(&w, 1, 0, 0x7100000000ull, 0x7100001000ull, "/", 1, 0);
	module(&w, 1, 0, 0x7200000000ull, 0x7200001000ull, "/x", 2, 10);
	module(&w, 9, 0, 0x7300000000ull, 0x7300001000ull, "/x", 2, 0);
	module(&w, 1, 200, 0x7400000000ull, 0x7400001000ull, "/x", 2, 0);
	module(&w, 1, 0, 0x7500001000ull, 0x7500000000ull, "/x", 2, 0);
	module(&w, 1, 0, 0x7600000000ull, 0x7600001000ull, "/a\0b", 4, 0);
	custom(&w, E_UNMOD, "short", 5);
	crash(&w, 1, 0, 0, 7);      /* too short */
	crash(&w, 2, 0, 0, 0);      /* unknown version */
	crash(&w, 1, 500, 3, 0);    /* more frames than bytes */
	bt(&w, 1, RTE_BT_FORK, 0, 0);
	custom(&w, E_BT, "x", 1);   /* too short */
	bt(&w, 7, RTE_BT_THREAD, 1, 1);
	bt(&w, 1, 99, 1, 1);        /* unknown kind */
	bt(&w, 1, RTE_BT_THREAD, 40, 2);
	crash(&w, 1, 2, 2, 0);      /* the valid one */
	return 0;
}
