/*
 * rte/proc.h - the payloads of rte's process events (doc/FORMAT.md 11.7):
 * what every traced process says of itself, so that a trace of a process
 * tree can name each process, its parent, how it ended and what it cost.
 *
 *   rte.proc   custom  after ring_start (and fork_child) of every file:
 *                      struct rte_proc_rec, then the argument vector
 *   rte.exit   custom  just before the ring_stop of a process that ends
 *                      (exit, _exit, return from main, a terminating or
 *                      fatal signal; not exec): struct rte_exit_rec, pid
 *                      the process itself
 *   rte.reap   custom  on the ring of a parent whose wait4, waitpid, wait,
 *                      wait3 or waitid reaped a child: struct
 *                      rte_exit_rec, pid the child
 *   rte.spawn  int     on the parent's ring after posix_spawn,
 *                      posix_spawnp, vfork or system() made a child: its pid
 *   rte.spawn_failed custom  on the caller's ring after posix_spawn,
 *                      posix_spawnp or system() failed (the program could
 *                      not be executed: its child, if one was made, was
 *                      reaped by libc and its pid never given): struct
 *                      rte_spawn_fail_rec, then the argument vector
 *
 * Byte order and versions as in rte/crash.h: a reader must check that the
 * payload holds the fixed part and ignore a version it does not know.
 * The structs are pure data; the decoders at the end are in
 * librteconsumer.
 *
 *   rte.proc:  0        2        4        8        12       16
 *              +--------+--------+--------+--------+--------+------------
 *              |version | flags  |  ppid  |  argc  | bytes  | argv ...
 *              +--------+--------+--------+--------+--------+------------
 *   argv: each argument's bytes then a NUL, at most RTE_PROC_ARGV_MAX
 *   bytes in all; when cut (RTE_PROC_ARGV_CUT) the last argument may lack
 *   its NUL and later arguments are missing; `argc` and `bytes` are those
 *   of the whole vector.
 */
#ifndef RTE_PROC_H
#define RTE_PROC_H

#include <stddef.h>
#include <stdint.h>

#define RTE_PROC_VERSION 1u
#define RTE_EXIT_VERSION 1u

/* At most this many bytes of argv are recorded. */
#define RTE_PROC_ARGV_MAX 4096u

/* rte.proc flags */
#define RTE_PROC_FORK_CHILD 1u /* made by fork: the image (and argv) of its
                                  parent, ppid the pid that forked */
#define RTE_PROC_ARGV_CUT 2u   /* argv was longer than RTE_PROC_ARGV_MAX */
#define RTE_PROC_NO_ARGV 4u    /* the argument vector was not known */
#define RTE_PROC_PRESERVE 8u   /* written with OCAML_RUNTIME_EVENTS_PRESERVE:
                                  a fork child of this process that has
                                  no file never wrote, and exited or was
                                  killed before it exec'd (its end is in
                                  this process's rte.reap) */

struct rte_proc_rec {
	uint16_t version; /* RTE_PROC_VERSION */
	uint16_t flags;   /* RTE_PROC_* */
	int32_t ppid;     /* the parent: the forking process, else getppid()
	                     when this image started */
	uint32_t argc;    /* arguments in the whole vector */
	uint32_t bytes;   /* bytes of the whole vector, NULs included */
};

/* rte_exit_rec.how */
enum rte_exit_how {
	RTE_EXIT_UNKNOWN = 0, /* the process ended by a way rte cannot see
	                         (the status is then its parent's rte.reap) */
	RTE_EXIT_STATUS = 1,  /* value: the exit status, 0 to 255 */
	RTE_EXIT_SIGNAL = 2,  /* value: the signal that ended it */
};

/* rte_exit_rec.flags */
#define RTE_EXIT_CORE 1u       /* a core was dumped (rte.reap only) */
#define RTE_EXIT_NO_RUSAGE 2u  /* the usage fields are unknown (0) */

struct rte_exit_rec {
	uint16_t version;    /* RTE_EXIT_VERSION */
	uint8_t how;         /* enum rte_exit_how */
	uint8_t flags;       /* RTE_EXIT_* */
	int32_t pid;         /* the process that ended */
	int32_t value;       /* exit status or signal number */
	uint32_t reserved;   /* 0 */
	uint64_t utime_ns;   /* user CPU time */
	uint64_t stime_ns;   /* system CPU time */
	uint64_t maxrss_kib; /* peak resident set */
	uint64_t minflt;     /* page faults without I/O */
	uint64_t majflt;     /* page faults with I/O */
	uint64_t nvcsw;      /* voluntary context switches */
	uint64_t nivcsw;     /* involuntary context switches */
};

#define RTE_SPAWN_FAIL_VERSION 1u

/* rte.spawn_failed: the argument vector is encoded as rte.proc's (the
 * same bound, RTE_PROC_ARGV_CUT and RTE_PROC_NO_ARGV flags). */
struct rte_spawn_fail_rec {
	uint16_t version; /* RTE_SPAWN_FAIL_VERSION */
	uint16_t flags;   /* RTE_PROC_ARGV_CUT, RTE_PROC_NO_ARGV */
	int32_t err;      /* the error number posix_spawn returned */
	uint32_t argc;    /* arguments in the whole vector */
	uint32_t bytes;   /* bytes of the whole vector, NULs included */
};

_Static_assert(sizeof(struct rte_proc_rec) == 16, "rte_proc_rec layout");
_Static_assert(sizeof(struct rte_spawn_fail_rec) == 16,
               "rte_spawn_fail_rec layout");
_Static_assert(sizeof(struct rte_exit_rec) == 72, "rte_exit_rec layout");

/*
 * Decoders of untrusted payloads (librteconsumer; thread-safe, no
 * allocation). rte_proc_decode: 0 with *r and the argument bytes (*argv,
 * *argv_len: each argument NUL-terminated but perhaps the last one of a cut
 * vector; they point into payload), or -1 if the payload is shorter than
 * the fixed part, of another version, or its counts are impossible.
 * rte_exit_decode: 0 with *r, or -1 (too short, another version, an
 * unknown `how`). rte_proc_argv_next: the next argument from *pos (its
 * length in *len, without NUL) or NULL at the end.
 */
int rte_proc_decode(const void *payload, size_t n, struct rte_proc_rec *r,
                    const char **argv, size_t *argv_len);
int rte_exit_decode(const void *payload, size_t n, struct rte_exit_rec *r);
/* rte_spawn_fail_decode: as rte_proc_decode, for rte.spawn_failed. */
int rte_spawn_fail_decode(const void *payload, size_t n,
                          struct rte_spawn_fail_rec *r, const char **argv,
                          size_t *argv_len);
const char *rte_proc_argv_next(const char *argv, size_t argv_len,
                               size_t *pos, size_t *len);

/*
 * The one walk of rte's process events that every renderer uses (the
 * JSONL and text outputs): which of them an event named `name` with this
 * custom payload is, its payload decoded. rte_proc_event_decode returns
 * RTE_PROC_EV_PROC (rte.proc: d->proc, d->argv, d->argv_len, as
 * rte_proc_decode gives them), RTE_PROC_EV_EXIT or RTE_PROC_EV_REAP
 * (rte.exit, rte.reap: d->exit), or RTE_PROC_EV_NONE if it is none of
 * them (name NULL included) or its payload is malformed;
 * RTE_PROC_EV_SPAWN_FAIL (rte.spawn_failed: d->fail, d->argv,
 * d->argv_len). Thread-safe, no allocation; d->argv points into payload.
 */
enum rte_proc_ev_kind {
	RTE_PROC_EV_NONE = 0,
	RTE_PROC_EV_PROC,
	RTE_PROC_EV_EXIT,
	RTE_PROC_EV_REAP,
	RTE_PROC_EV_SPAWN_FAIL,
};
struct rte_proc_event {
	union { /* by kind: the same 16 bytes, the same layout as before */
		struct rte_proc_rec proc;
		struct rte_spawn_fail_rec fail;
	};
	const char *argv;
	size_t argv_len;
	struct rte_exit_rec exit;
};
enum rte_proc_ev_kind rte_proc_event_decode(const char *name,
                                            const void *payload, size_t n,
                                            struct rte_proc_event *d);

#endif
