/*
 * crash/recorder.h - what the files of the crash recorder share among
 * themselves (handler.c, actions.c, stacks.c): the crash signals, the
 * program's actions and their lock, the events' writers, the per-thread
 * state. Not for the rest of the shim (crash/crash.h is its interface).
 */
#ifndef RTE_SHIM_CRASH_RECORDER_H
#define RTE_SHIM_CRASH_RECORDER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "crash/altstack.h"

#pragma GCC visibility push(hidden)

struct rte_ring_writer;

#define SIGMAX 65

/* handler.c: the crash signals; RTE_BACKTRACE's bits (acquire); the ids
 * of rte.backtrace and rte.signal (-1 until registered). */
extern const int rte_crash_sigs[5];
#define NSIGS (sizeof(rte_crash_sigs) / sizeof(rte_crash_sigs[0]))
unsigned rte_crash_mode(void);
extern int rte_crash_id_bt;
extern int rte_crash_id_signal;
/* handler.c: our handler of the crash signals; fn(arg) on a stack with
 * room (0, or -1 if there was none); the signal again with its default
 * action. Async-signal-safe. */
LEAN void rte_crash_on_crash(int sig, siginfo_t *si, void *uc);
LEAN int rte_crash_run_with_room(void (*fn)(void *), void *arg);
void rte_crash_resend_default(int sig, siginfo_t *si);

/* actions.c: the program's action of each signal we handle, and its spin
 * lock (taken with every signal blocked); our handlers installed (at
 * start). */
extern struct sigaction rte_crash_prog[SIGMAX];
void rte_crash_prog_lock(sigset_t *old);
void rte_crash_prog_unlock(const sigset_t *old);
void rte_crash_install(void);

/* stacks.c: the calling thread's writer even while paused and over its
 * interrupted write (a crash that never returns to it); a stack record
 * written (see there); an alternate stack for the calling thread if
 * crashes are recorded; libunwind loaded (not from a signal handler). */
struct rte_ring_writer *rte_crash_enter_forced(void);
int rte_crash_emit_stack(int id, uint64_t *rec, size_t head, unsigned frames,
                         int force);
void rte_crash_alt_start(void);
void rte_crash_unwind_load(void);

/* Per-thread state, kept in struct rte_thread (tracer.h), not in TLS. */
#define t_recording (rte_self.crash_recording) /* inside our own work */
#define t_first_sig (rte_self.crash_first_sig) /* signal being recorded */
#define t_chained (rte_self.crash_chained) /* inside the program's handler */
#define t_chain_sp (rte_self.crash_chain_sp) /* see tracer.h */
#define t_bt (rte_self.crash_bt)               /* record buffer */

#pragma GCC visibility pop

#endif
