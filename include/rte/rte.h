/*
 * rte/rte.h - the C producer API of librte.so.
 *
 * Use it by linking -lrte, or call it from a program run under
 * LD_PRELOAD=librte.so (declare the functions weak to run without it).
 * Events are written to <dir>/<pid>.events in the OCaml 5.2 runtime-events
 * format (doc/FORMAT.md), one ring per thread.
 *
 * Errors are the negative codes of rte/error.h. No function here changes
 * errno, and none ever stops or kills the program: when tracing cannot
 * work (see doc/USAGE.md, "librte.so"), it is disabled with one line on
 * stderr and every call becomes a cheap no-op.
 *
 * Safety of each call (detailed again at each function):
 *   - Writing events (rte_unit ... rte_runtime_*) takes no lock and never
 *     blocks: safe in any thread, in signal handlers and in a child after
 *     fork. Each thread writes only to its own ring. An event written by a
 *     signal handler that interrupted a write of the same thread is dropped
 *     (and counted in rte.dropped) rather than corrupting the ring.
 *   - rte_is_active() is async-signal-safe.
 *   - rte_start/pause/resume/register/path are thread-safe but take a lock:
 *     not async-signal-safe. After fork they are safe in the child (the
 *     lock is held across fork and re-made in the child).
 *
 * User event ids: rte_register() hands out ids from 0 upwards, as OCaml's
 * Runtime_events.User.register does. Once tracing runs, rte's own events
 * (the "rte.*" events documented in doc/USAGE.md) take ids from the top
 * (8191 downwards) out of the same 8192.
 */
#ifndef RTE_RTE_H
#define RTE_RTE_H

#include <stddef.h>
#include <stdint.h>

#include "rte/error.h"
#include "rte/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Start tracing, as Runtime_events.start: read the environment (README.md),
 * create the ring file <dir>/<pid>.events and write ring_start on ring 0,
 * which belongs to the calling thread. Does nothing if tracing already
 * runs (with OCAML_RUNTIME_EVENTS_START set, it runs from program start).
 * Returns RTE_OK, or RTE_ESTATE if tracing cannot run: the file could not
 * be made (the reason is printed once on stderr), the program runs OCaml
 * 5's own runtime events, an earlier error disabled tracing, or the
 * process is exiting. Thread-safe, not signal-safe.
 */
int rte_start(void);

/* Pause / resume: write ring_pause / ring_resume (data 0) on the caller's
 * ring and stop / restart recording. Event calls while paused cost about a
 * nanosecond; threads started while paused get no domain_spawn. No effect
 * when tracing does not run. Thread-safe, not signal-safe. */
void rte_pause(void);
void rte_resume(void);

/* 1 if tracing runs and is not paused, else 0. Async-signal-safe. */
int rte_is_active(void);

/*
 * Copy the absolute path of the ring file into buf (NUL-terminated).
 * Returns the length, or RTE_ESTATE if tracing never started (or was
 * disabled), or RTE_EINVAL if buf is NULL or too small. In a fork child
 * that has not written yet, this makes the child's file first.
 * Thread-safe, not signal-safe.
 */
int rte_path(char *buf, size_t len);

/* User event types (the OCaml Runtime_events.Type.t of a user event). */
enum rte_type {
	RTE_TYPE_UNIT = 0,
	RTE_TYPE_INT = 1,
	RTE_TYPE_SPAN = 2,
	RTE_TYPE_CUSTOM = 3,
};

/*
 * Register a user event and return its id (>= 0). Registering the same name
 * with the same type again returns the same id. The name must be 1 to 127
 * printable ASCII bytes (RTE_EBADNAME otherwise); names starting "rte." are
 * reserved for rte's own events (RTE_EBADNAME). At most RTE_MAX_USER_EVENTS
 * ids exist, shared with rte's own events once tracing runs
 * (RTE_ETOOMANY); a name registered with another type gives RTE_ETYPE; a
 * type outside enum rte_type gives RTE_EINVAL. Works whether or not
 * tracing runs; the name reaches the file when it does (and every fork
 * child's file). Thread-safe, not signal-safe.
 */
int rte_register(const char *name, enum rte_type type);

/*
 * Write a user event with the id rte_register() returned. An id that is
 * not registered, or registered with another type, is ignored. Lock-free,
 * async-signal-safe, safe after fork. Nothing is written when tracing is
 * not active. A thread's first event claims its ring (a thread made with
 * pthread_create while tracing runs has one from its start); when every
 * ring is taken, the event is dropped and counted (rte.dropped).
 */
void rte_unit(int id);
void rte_int(int id, int64_t value);
void rte_span_begin(int id);
void rte_span_end(int id);
/* Payloads longer than the ring allows (RTE_CUSTOM_MAX_BYTES, or less for
 * a small ring) are truncated. */
void rte_custom(int id, const void *bytes, size_t len);

/*
 * Runtime events, for a language runtime written in C: the same messages
 * OCaml's runtime writes (ids from rte/format.h; any id below 8192 is
 * written, larger ones are ignored). rte_runtime_lifecycle always writes
 * a data word. Lock-free, async-signal-safe, safe after fork.
 */
void rte_runtime_begin(unsigned phase);
void rte_runtime_end(unsigned phase);
void rte_runtime_counter(unsigned counter, uint64_t value);
void rte_runtime_lifecycle(unsigned lifecycle, int64_t data);
void rte_runtime_alloc(const uint64_t buckets[RTE_ALLOC_BUCKETS]);

/*
 * The inline check. Including this header turns each event call above
 * into `if (tracing is active) call()`, testing a flag exported by
 * librte.so in the caller, so that a call while tracing is off or paused
 * costs about one load (well under a nanosecond) instead of a function
 * call. As with any tracing macro, the arguments are not evaluated when
 * tracing is off. Taking the address of a function (&rte_int) still works.
 * Define RTE_NO_INLINE_CHECK before including to get plain calls.
 *
 * To use the API from a program that may run without librte.so (neither
 * linked with -lrte nor preloaded), define RTE_WEAK before including: every
 * declaration becomes weak and the check also tests that the library is
 * there, so the calls are no-ops without it.
 *
 * rte_g_active is not an API of its own: read it only through these
 * macros or rte_is_active().
 */
#if defined(RTE_WEAK)
#pragma weak rte_g_active
#pragma weak rte_start
#pragma weak rte_pause
#pragma weak rte_resume
#pragma weak rte_is_active
#pragma weak rte_path
#pragma weak rte_register
#pragma weak rte_unit
#pragma weak rte_int
#pragma weak rte_span_begin
#pragma weak rte_span_end
#pragma weak rte_custom
#pragma weak rte_runtime_begin
#pragma weak rte_runtime_end
#pragma weak rte_runtime_counter
#pragma weak rte_runtime_lifecycle
#pragma weak rte_runtime_alloc
#endif
extern uint32_t rte_g_active;

#if !defined(RTE_NO_INLINE_CHECK)
#if defined(RTE_WEAK)
#define RTE_ACTIVE_()                                                        \
	(&rte_g_active != 0 &&                                               \
	 __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) != 0)
#else
#define RTE_ACTIVE_() (__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) != 0)
#endif
#define rte_unit(id) (RTE_ACTIVE_() ? rte_unit(id) : (void)0)
#define rte_int(id, v) (RTE_ACTIVE_() ? rte_int(id, v) : (void)0)
#define rte_span_begin(id) (RTE_ACTIVE_() ? rte_span_begin(id) : (void)0)
#define rte_span_end(id) (RTE_ACTIVE_() ? rte_span_end(id) : (void)0)
#define rte_custom(id, b, n) (RTE_ACTIVE_() ? rte_custom(id, b, n) : (void)0)
#define rte_runtime_begin(p) (RTE_ACTIVE_() ? rte_runtime_begin(p) : (void)0)
#define rte_runtime_end(p) (RTE_ACTIVE_() ? rte_runtime_end(p) : (void)0)
#define rte_runtime_counter(c, v)                                            \
	(RTE_ACTIVE_() ? rte_runtime_counter(c, v) : (void)0)
#define rte_runtime_lifecycle(l, d)                                          \
	(RTE_ACTIVE_() ? rte_runtime_lifecycle(l, d) : (void)0)
#define rte_runtime_alloc(b) (RTE_ACTIVE_() ? rte_runtime_alloc(b) : (void)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
