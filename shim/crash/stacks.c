/*
 * crash/stacks.c - the crash recorder's events (handler.c): rte.* custom
 * events and stack records on the calling thread's ring (forced over an
 * interrupted write for a crash), and RTE_BACKTRACE's rte.backtrace
 * events at fork and thread creation (the creator's stack carried to
 * the new thread in a static pool); the lazy load of libunwind.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"
#include "clock.h"
#include "crash/altstack.h"
#include "crash/crash.h"
#include "crash/recorder.h"
#include "forkvars.h"
#include "rte/crash.h"
#include "rte/rte.h"
#include "tracer.h"

static int g_once_unw;           /* the libunwind warning, once */

/* ---- events ----------------------------------------------------------------- */

static uint64_t custom_hdr(int id)
{
	return rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, (unsigned)id);
}

struct rte_ring_writer *rte_crash_enter_forced(void)
{
	struct rte_ring_writer *w;

	if (rte_tracer_state() == ST_FORKED)
		rte_tracer_materialize();
	if (rte_tracer_state() != ST_RUNNING)
		return NULL;
	/* The interrupted write (if any) never resumes: take the ring. */
	rte_self.busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w = rte_tracer_attach(0);
	if (!w)
		rte_leave();
	return w;
}

int rte_crash_emit(int id, const void *bytes, size_t n, int force)
{
	struct rte_ring_writer *w;
	int r;

	if (id < 0)
		return -1;
	w = force ? rte_crash_enter_forced() : rte_enter();
	if (!w)
		return -1;
	r = rte_tracer_write_custom(w, custom_hdr(id), bytes, n);
	rte_leave();
	return r;
}

/* Encoding buffer of stack records (used only inside a write of this
 * thread, like the tracer's own). */
#define t_enc (rte_self.crash_enc)

/*
 * Write a stack record (rte.crash or rte.backtrace: `head` bytes of fixed
 * part whose bytes 2-3 are the frame count, then 8 bytes a frame). In a
 * ring too small for all of it, frames are dropped from the end and the
 * count fixed, so the record stays well-formed. Stamped when written,
 * like every event (a ring's timestamps never go back): after the module
 * events a crash writes first.
 */
int rte_crash_emit_stack(int id, uint64_t *rec, size_t head,
                         unsigned frames, int force)
{
	struct rte_ring_writer *w;
	size_t max, n, words;
	uint16_t nf;
	int r;

	if (id < 0)
		return -1;
	w = force ? rte_crash_enter_forced() : rte_enter();
	if (!w)
		return -1;
	max = (size_t)(w->mask + 1 - 2) * 8 - 1;
	if (max > RTE_CUSTOM_MAX_BYTES)
		max = RTE_CUSTOM_MAX_BYTES;
	r = -1;
	if (max >= head) {
		if (head + (size_t)frames * 8 > max)
			frames = (unsigned)((max - head) / 8);
		nf = (uint16_t)frames;
		memcpy((char *)rec + 2, &nf, 2);
		n = head + (size_t)frames * 8;
		words = rte_custom_encode(rec, n, t_enc);
		r = rte_ring_write(w, custom_hdr(id), rte_clock_ns(), t_enc,
		                   (unsigned)words);
	}
	rte_leave();
	return r;
}

struct bt_start {
	int ring;
	int32_t tid;
	unsigned n;
	uint64_t pcs[RTE_BT_MAX];
};

static void write_bt(uint32_t kind, int64_t data, int32_t tid,
                     const uint64_t *pcs, unsigned n);
static void bt_free(struct bt_start *s);

/* Give the calling thread an alternate stack if crashes are recorded. */
void rte_crash_alt_start(void)
{
	if (rte_crash_mode() & RTE_BTM_CRASH)
		rte_alt_thread_start();
}

void rte_crash_thread_start(void *ctx)
{
	struct bt_start *bt = ctx;

	rte_crash_alt_start();
	if (bt) {
		write_bt(RTE_BT_THREAD, bt->ring, bt->tid, bt->pcs, bt->n);
		bt_free(bt);
	}
}

/*
 * libunwind is loaded lazily, never at start: its dlopen (and liblzma's)
 * cost a short process (a test harness's /bin/true) more than the rest
 * of tracing. It is loaded by the first call that needs it outside a
 * signal handler: at start only with RTE_BACKTRACE=fork or thread (their
 * stacks are taken by the hooks), by the first pthread_create, and by the
 * CPU and allocation profilers' start. Until then a crash records the
 * frame-pointer walk (record()).
 */
void rte_crash_unwind_load(void)
{
	if (rte_bt_loaded())
		return;
	rte_real_resolve();
	if (rte_bt_init(1, rte_real.dlopen, rte_real.dlclose) < 0)
		rte_warn(&g_once_unw, "libunwind.so.8 cannot be loaded: "
		         "crash stacks are walked by frame pointers");
}

static void write_bt(uint32_t kind, int64_t data, int32_t tid,
                     const uint64_t *pcs, unsigned n)
{
	struct rte_backtrace_rec r;

	if (rte_crash_id_bt < 0 || rte_self.busy)
		return;
	rte_modules_sync(0);
	memset(&r, 0, sizeof(r));
	r.version = RTE_BACKTRACE_VERSION;
	r.nframes = (uint16_t)n;
	r.kind = kind;
	r.data = data;
	r.tid = tid;
	/* t_bt is free here: only a crash handler of this thread uses it
	 * too, and it would never return into this write. */
	memcpy(t_bt, &r, sizeof(r));
	memcpy((char *)t_bt + sizeof(r), pcs, (size_t)n * 8);
	rte_crash_emit_stack(rte_crash_id_bt, t_bt, sizeof(r), n, 0);
}

void rte_crash_fork_parent(pid_t child)
{
	uint64_t pcs[RTE_BT_MAX];
	unsigned n;
	int saved = errno;

	if (!(rte_crash_mode() & RTE_BTM_FORK))
		return;
	/* Skip this hook and the fork() wrapper: the program's frames. */
	n = rte_bt_capture_here(pcs, RTE_BT_MAX, 2);
	write_bt(RTE_BT_FORK, child, (int32_t)gettid(), pcs, n);
	errno = saved;
}

/* The creator's stack travels to the new thread in a slot of a static
 * pool (no malloc at thread creation); when all slots are in flight the
 * thread simply starts without it. */
#define BT_SLOTS 32
static RTE_BIGVAR struct bt_start g_bt_pool[BT_SLOTS];
static uint8_t g_bt_used[BT_SLOTS]; /* atomic */

static void bt_free(struct bt_start *s)
{
	/* Release: we are done reading the slot; pairs with the acquire
	 * CAS in rte_crash_thread_create(). */
	__atomic_store_n(&g_bt_used[s - g_bt_pool], 0, __ATOMIC_RELEASE);
}

void *rte_crash_thread_create(void)
{
	int saved = errno;
	struct bt_start *r = NULL;

	/* A program that makes threads lives long enough for libunwind's
	 * load to be worth it (pthread_create is never called from a
	 * signal handler, so dlopen is safe here). */
	if (rte_crash_mode() & RTE_BTM_CRASH)
		rte_crash_unwind_load();
	if (!(rte_crash_mode() & RTE_BTM_THREAD)) {
		errno = saved;
		return NULL;
	}
	for (unsigned i = 0; i < BT_SLOTS; i++) {
		uint8_t free_ = 0;
		struct bt_start *s = &g_bt_pool[i];

		/* Acquire: pairs with the release in bt_free(). */
		if (!__atomic_compare_exchange_n(&g_bt_used[i], &free_, 1, 0,
		                                 __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		s->ring = rte_self.ring;
		s->tid = (int32_t)gettid();
		/* Skip this hook and the pthread_create wrapper. */
		s->n = rte_bt_capture_here(s->pcs, RTE_BT_MAX, 2);
		r = s;
		break;
	}
	errno = saved;
	return r;
}

void rte_crash_thread_create_failed(void *ctx)
{
	if (ctx)
		bt_free(ctx);
}
