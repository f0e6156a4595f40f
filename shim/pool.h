/*
 * pool.h - the per-thread state pool (pool.c): one struct rte_thread per
 * thread, reached through the one initial-exec TLS pointer rte_self_p, and
 * the hot-path accessor rte_self_get() (inline: the write path's first
 * step). Below the tracer: it knows nothing of rings, files or states;
 * the tracer binds a state to a ring and gives it back at thread end.
 *
 * Thread- and signal-safety: every function here is async-signal-safe and
 * thread-safe (no lock, no malloc: mmap and CAS). A state is only ever
 * used by its own thread (and that thread's signal handlers).
 */
#ifndef RTE_SHIM_POOL_H
#define RTE_SHIM_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/state.h"
#include "backtrace.h"
#include "ring.h"

#pragma GCC visibility push(hidden)

#define RTE_TLS __attribute__((tls_model("initial-exec")))

/*
 * Per-thread state. It lives in a pool of memory mapped with
 * MADV_WIPEONFORK (pool.c), not in TLS: the only initial-exec TLS of ours
 * is the pointer rte_self_p (plus common/writer/clock.h's anchor), so the shim
 * takes a few words of each thread's stack, not kilobytes. The state is
 * allocated on the thread's first use without malloc or locks (mmap and a
 * CAS), so it is usable in signal handlers.
 *
 * Because the pool reads zero in any child process, however it was made
 * (fork, _Fork, a raw fork or clone system call), a child's threads never
 * find a writer attached to the parent's file: gen is 0, which never
 * equals rte_g_active, so the first event takes the slow path, which sees
 * the per-process page (also wiped) and adopts the child (tracer/fork.c).
 */
struct __attribute__((aligned(64))) rte_thread {
	/* The fast path's words first: gen, busy and the writer's pointers
	 * share one cache line. */
	uint32_t gen;        /* == the file's generation while w is attached */
	int busy;            /* inside a write: a nested signal handler drops */
	struct rte_ring_writer w;
	int ring;            /* index of our ring, or -1 (0 after a wipe:
	                        only meaningful while gen matches) */
	uint32_t fail_gen;   /* claiming failed in this generation ... */
	uint32_t fail_epoch; /* ... and no ring was released since */
	int guard;           /* inside a wrapper: do not trace recursively */
	/* crash/'s per-thread state (crash/recorder.h). */
	int crash_recording;  /* inside our own work */
	int crash_first_sig;  /* signal being recorded */
	int crash_chained;    /* inside the program's handler */
	/* the stack pointer a program handler was called with on its own
	 * stack (0: none): below it, the handler is still running */
	uintptr_t crash_chain_sp;
	uint64_t crash_bt[RTE_BT_MAX + 4];  /* record buffer */
	uint64_t crash_enc[RTE_BT_MAX + 8]; /* encoding buffer */
	/* prof/profiler.c's per-thread state. */
	int prof_state;       /* not armed yet, armed, never again */
	int prof_primed;      /* libunwind's trace cache made (rte_bt_prime) */
	int prof_timer;       /* kernel timer id, or perf descriptor, while armed */
	int prof_perf;        /* prof_timer is a perf_event descriptor */
	uint64_t prof_perf_id; /* ... of this kernel event id (PERF_EVENT_IOC_ID) */
	int prof_slot;        /* its registry slot + 1 */
	uint64_t prof_last;   /* thread CPU ns at the last written sample */
	uint64_t prof_rec[3 + RTE_BT_MAX]; /* rte.sample record buffer */
	struct rte_alloc_thread alloc;      /* the allocation profiler's */
};
extern __thread struct rte_thread *rte_self_p RTE_TLS;
/* The calling thread's state, allocated on first use. Never NULL:
 * if no memory can be had, a shared state that never writes. Signal-safe. */
struct rte_thread *rte_thread_new(void);

static inline struct rte_thread *rte_self_get(void)
{
	struct rte_thread *t = rte_self_p;

	if (__builtin_expect(t != NULL, 1))
		return t;
	return rte_thread_new();
}
/* rte_self.field reads as before; it goes through the pointer. */
#define rte_self (*rte_self_get())

/* 1 if t is the shared state of threads that could get none (it never
 * writes: busy). */
int rte_pool_is_none(const struct rte_thread *t);
/* Map len bytes that read zero in any child (MADV_WIPEONFORK), or NULL. */
void *rte_pool_map_wiped(size_t len);
/* Create the pthread key whose destructor `thread_end` runs at the end of
 * every thread with a state (its value: the pool index + 1; the
 * destructor calls rte_pool_put with it last). Once, at load. Returns 0,
 * or -1 (no key: states are never given back). Not signal-safe. */
int rte_pool_load(void (*thread_end)(void *));
/* Give the calling thread's state back (v: the key's value); the TLS
 * pointer is cleared. */
void rte_pool_put(void *v);
/* Fork child (one thread): only the calling thread's state is in use;
 * it is made fresh (the pool was wiped). */
void rte_pool_fork_child(void);

#pragma GCC visibility pop

#endif
