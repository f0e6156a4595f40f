/*
 * rte/crash.h - the payloads of rte's crash-recorder events (doc/DESIGN.md,
 * "Crash flight recorder"): rte.crash, rte.backtrace, rte.module and
 * rte.module.unload. All four are custom user events; their payload is one
 * of the records below, in the byte order of the machine that wrote it
 * (the ring file's own order), followed by the variable part.
 *
 * Every record starts with a 16-bit version; a reader must check it and
 * ignore records of a version it does not know. Fields may be appended to
 * a version only together with a new version number. Pure data: include it
 * anywhere.
 */
#ifndef RTE_CRASH_H
#define RTE_CRASH_H

#include <stdint.h>

#define RTE_CRASH_VERSION 1u
#define RTE_BACKTRACE_VERSION 1u
#define RTE_MODULE_VERSION 1u

/* rte.crash flags */
#define RTE_CRASH_FATAL 1u    /* the default action (death) follows */
#define RTE_CRASH_HANDLED 2u  /* passed on to the program's own handler */
#define RTE_CRASH_NESTED 4u   /* a second crash signal arrived while the
                                 first was being recorded */

/*
 * rte.crash: written by the thread that received SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE or SIGABRT, on its own ring; then `nframes` return addresses
 * (uint64_t), the interrupted instruction first.
 */
struct rte_crash_rec {
	uint16_t version;  /* RTE_CRASH_VERSION */
	uint16_t nframes;
	int32_t signo;     /* the signal number */
	int32_t code;      /* siginfo si_code */
	int32_t tid;       /* kernel thread id of the crashing thread */
	uint32_t flags;    /* RTE_CRASH_* */
	int32_t sender;    /* si_pid when a process sent it (code <= 0), else 0 */
	uint64_t addr;     /* si_addr: the faulting address (0 for SIGABRT) */
};                         /* 32 bytes */

/* rte.backtrace kinds */
#define RTE_BT_FORK 1u   /* at fork, on the parent's ring; data = child pid */
#define RTE_BT_THREAD 2u /* on a new thread's ring, its first event after
                            domain_spawn; data = creator's ring (-1: none);
                            the stack is the creator's at pthread_create */

/* rte.backtrace (RTE_BACKTRACE): then `nframes` return addresses, the
 * innermost first (the caller of fork/pthread_create). */
struct rte_backtrace_rec {
	uint16_t version;  /* RTE_BACKTRACE_VERSION */
	uint16_t nframes;
	uint32_t kind;     /* RTE_BT_* */
	int64_t data;
	int32_t tid;       /* kernel tid of the thread that forked / created */
	uint32_t reserved;
};                         /* 24 bytes */

/*
 * rte.module (an object mapped into the process: at start, and after
 * dlopen) and rte.module.unload (after dlclose unmapped it): then
 * `build_id_len` bytes of GNU build id, then the path (no NUL, up to the
 * end of the payload; the executable's is its /proc/self/exe target,
 * "linux-vdso.so.1" has no file). An address A inside [start, end) belongs
 * to the object at file virtual address A - bias.
 */
struct rte_module_rec {
	uint16_t version;  /* RTE_MODULE_VERSION */
	uint16_t build_id_len;
	uint32_t reserved;
	uint64_t bias;     /* load bias (dl_iterate_phdr's dlpi_addr) */
	uint64_t start;    /* lowest mapped address of its PT_LOAD segments */
	uint64_t end;      /* one past the highest */
};                         /* 32 bytes */

#endif
