/*
 * prof/perf.h - the CPU profiler's perf_event clock (RTE_PROFILE_CLOCK=perf,
 * prof/perf.c; a leaf of prof/, for profiler.c only).
 */
#ifndef RTE_SHIM_PROF_PERF_H
#define RTE_SHIM_PROF_PERF_H

#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* The highest rate the perf clock is used for: the kernel's software
 * clock events run on an hrtimer of at least 10 us. */
#define RTE_PERF_HZ_MAX 10000u

/* Open a software cpu-clock event of thread `tid` (user time only, the
 * only kind perf_event_paranoid 2 allows a process on itself), one sample
 * every 1/hz s of its CPU time, each one delivered to that thread alone as
 * signal `sig` (F_SETOWN_EX F_OWNER_TID, F_SETSIG, O_ASYNC; si_fd is the
 * descriptor). The descriptor is moved to RTE_FD_MIN or above, O_CLOEXEC,
 * before the signal is set up; the event starts disabled. Returns it and
 * *id (the event's kernel id, PERF_EVENT_IOC_ID), or -1 with errno.
 * Async-signal-safe (system calls only). */
int rte_perf_open(unsigned hz, int sig, pid_t tid, uint64_t *id);
/* 1 if fd is still the event `id` that rte_perf_open() made for signal
 * sig (the program may have closed it and reused the number). */
int rte_perf_ours(int fd, int sig, uint64_t id);
/* Start (on) or stop the event. Returns 0 or -1. */
int rte_perf_enable(int fd, int on);
/* A one-line reason of why perf_event_open failed with errno e, into
 * buf (for the warning). */
const char *rte_perf_why(int e, char *buf, unsigned len);

/* RTE_PROFILE_CLOCK (clk): timer (default) or perf, for rate hz and
 * signal sig; perf is tried on the calling thread once, and one line
 * (RTE_LOG) says which clock samples and why. Returns the RTE_SAMPLE_*
 * clock flags of every sample; *perf: 1 if the perf clock is used. Not
 * signal-safe. */
uint32_t rte_prof_choose_clock(const char *clk, unsigned hz, int sig,
                               int *perf);

#pragma GCC visibility pop

#endif
