/*
 * backtrace.h - stack capture for librte.so (backtrace.c), with libunwind
 * loaded privately. Hidden inside the shim; the benchmark links it alone.
 */
#ifndef RTE_BACKTRACE_H
#define RTE_BACKTRACE_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Most frames a captured stack holds. */
#define RTE_BT_MAX 64u

/* Load libunwind (once) with `open` (and `close` it again if incomplete)
 * and set its caching policy: cached != 0 is UNW_CACHE_PER_THREAD, 0 is
 * UNW_CACHE_NONE. librte.so passes the real dlopen/dlclose of real.h, so
 * that loading libunwind never goes through its own dlopen wrapper; the
 * benchmark passes libc's. Returns 0, or -1 if libunwind is not available
 * (captures then return 0 frames). Only the first call tries: a call made
 * while another thread loads returns 1 at once rather than wait, and a
 * failed load is not retried. Thread-safe; not signal-safe (dlopen). */
int rte_bt_init(int cached, void *(*open)(const char *, int),
                int (*close)(void *));
/* 1 once libunwind is loaded (the captures below walk with it), else 0.
 * Async-signal-safe. */
int rte_bt_loaded(void);
/* Change the caching policy (benchmark). Not signal-safe. */
void rte_bt_set_cached(int cached);
/* fast = 0: never use unw_backtrace's trace cache, always walk frame by
 * frame with unw_step (benchmark). Not signal-safe. */
void rte_bt_set_fast(int fast);
/* Forget cached unwind information (after a module is unloaded). */
void rte_bt_flush(void);
/* The stack of the interrupted code of a signal handler: uc is the
 * handler's third argument. Fills up to max PCs, the interrupted PC first;
 * returns how many. Async-signal-safe as far as libunwind's local
 * unwinding is (it reads the loaded objects' unwind tables through
 * dl_iterate_phdr; it does not allocate with malloc), provided that
 * `primed` is 0 unless the calling thread made a capture outside any
 * signal handler before (rte_bt_capture_here, rte_bt_prime):
 *  - primed != 0: unw_backtrace's per-thread trace cache first (a fraction
 *    of a microsecond a frame), the frame-by-frame walk if it fails;
 *  - primed == 0: the frame-by-frame walk only (unw_step, tens of
 *    microseconds a stack). The first unw_backtrace of a thread makes its
 *    trace cache: it allocates libunwind's thread-local storage (that of a
 *    library loaded with dlopen: glibc's __tls_get_addr calls malloc) and
 *    sets a pthread key (calloc), and maps the cache (about a millisecond
 *    here): never in a signal handler. */
unsigned rte_bt_capture_signal(void *uc, uint64_t *pcs, unsigned max,
                               int primed);
/* The caller's stack, without this function and `skip` more frames. Not
 * signal-safe (the first one of a thread allocates: see above). */
unsigned rte_bt_capture_here(uint64_t *pcs, unsigned max, unsigned skip);
/* Make the calling thread's libunwind state (see rte_bt_capture_signal),
 * so that its signal handlers may capture with primed != 0. Not
 * signal-safe. */
void rte_bt_prime(void);
/* The stack of the interrupted code of a signal handler, without
 * libunwind and without any lock: the interrupted PC, then the return
 * addresses found by following the frame-pointer chain (code built
 * without frame pointers ends the walk early). Every word is read with
 * rte_bt_peek, so a broken chain ends the walk instead of faulting. For a
 * crash where the loader's lock may be held by a thread that no longer
 * exists (a fork child). x86-64 only (elsewhere: 0 frames).
 * Async-signal-safe. */
unsigned rte_bt_capture_signal_fp(void *uc, uint64_t *pcs, unsigned max);
/* Copy up to n bytes at src into dst without ever faulting: a read of our
 * own memory through process_vm_readv. Returns the number of bytes copied
 * (fewer at the first unreadable page; 0 if the call is refused).
 * Async-signal-safe. */
size_t rte_bt_peek(void *dst, const void *src, size_t n);

/* Where the walks of a signal start, read from its ucontext: the
 * interrupted instruction, stack pointer and frame pointer. */
struct rte_bt_start_regs {
	uint64_t pc, sp, fp;
};

/* Fills *r from uc; returns 0 (nothing read) on an architecture whose
 * walks are not written (x86-64 only). Reads memory only: async-signal-
 * safe. (The walks here and btscan.c's.) */
int rte_bt_signal_regs(const void *uc, struct rte_bt_start_regs *r);
/* The farthest a frame is taken to be above the stack pointer, or a
 * saved frame pointer above the frame that saved it. */
#define RTE_BT_FRAME_SPAN (64u << 20)

#pragma GCC visibility pop

#endif
