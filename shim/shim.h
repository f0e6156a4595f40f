/*
 * shim.h - internals of librte.so, shared by the files of shim/.
 *
 * Pieces:
 *   core.c    global state, start, ring slots, the per-thread writer, stop
 *   api.c     the public producer API of rte/rte.h
 *   file.c    creating, naming, renaming and removing the ring file
 *   config.c  environment variables
 *   thread.c  pthread_create/pthread_setname_np/prctl interposition
 *   proc.c    fork, exec*, _exit interposition
 *   ocaml.c   detection of a program that runs OCaml 5's own runtime events
 *   real.c    the real libc functions behind our wrappers
 *   hooks/alloc.c, alloc/sample.c  the allocation profiler (alloc/alloc.h)
 *
 * Everything here is hidden: librte.so exports only rte/rte.h, rte_strerror
 * and the libc functions it interposes (shim/librte.map).
 */
#ifndef RTE_SHIM_H
#define RTE_SHIM_H

#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/alloc.h"
#include "backtrace.h"
#include "ring.h"
#include "rte/format.h"

#pragma GCC visibility push(hidden)

#define RTE_EXPORT __attribute__((visibility("default")))
#define RTE_TLS __attribute__((tls_model("initial-exec")))
#define RTE_RINGS_MAX 4096u

/* ---- configuration (config.c) ------------------------------------------ */

struct rte_config {
	int start;           /* OCAML_RUNTIME_EVENTS_START is set */
	int preserve;        /* OCAML_RUNTIME_EVENTS_PRESERVE is set */
	int force_monotonic; /* RTE_CLOCK=monotonic */
	int trace_ocaml;     /* RTE_TRACE_OCAML is set */
	unsigned log2_words; /* OCAMLRUNPARAM e=N */
	unsigned rings;      /* RTE_RINGS */
	int dir_too_long;    /* OCAML_RUNTIME_EVENTS_DIR >= PATH_MAX bytes */
	int dir_default;     /* unset or empty: dir is lib/common/rundir.h's */
	char dir[PATH_MAX];  /* OCAML_RUNTIME_EVENTS_DIR, or the default */
};

/* Read the environment into *c (defaults for anything unset); a malformed
 * value gets its default and one "rte: " warning line. Not signal-safe. */
void rte_config_read(struct rte_config *c);

/* Print "rte: <message>\n" where RTE_LOG says (config.c): stderr (only
 * while fd 2 is still the file it was when the log was first used: device
 * and inode), none, or appended to a file. Async-signal-safe. */
void rte_log_line(const char *line, size_t n);

/* ---- the ring file (file.c) --------------------------------------------- */

/* Every descriptor the shim keeps is at least this (never 0, 1 or 2). */
#define RTE_FD_MIN 100

/* Move fd to a descriptor >= RTE_FD_MIN (else >= 3), O_CLOEXEC, closing the
 * original. Returns the new fd, or -1 with errno (fd closed) if no
 * descriptor above 2 is free. fd < 0 is returned as is. Signal-safe. */
int rte_fd_high(int fd);

struct rte_file {
	char *base;             /* shared mapping of l.total_size bytes */
	struct rte_layout l;
	int fd;                 /* O_CLOEXEC, high; may be closed by the program */
	dev_t dev;              /* identity of the file, to recognise it */
	ino_t ino;
	int unlinked;           /* exec without PRESERVE removed the name */
	char name[32];          /* <pid>.events, in the held directory */
	char exec_name[48];     /* <pid>.exec<N>.events while exec runs */
	char path[PATH_MAX];    /* absolute <dir>/<pid>.events, for messages */
};

/* Create, size, reserve, map and initialise <dir>/<pid>.events, publishing
 * it under its final name only when complete. Returns 0, or -1 with a
 * one-line reason in err. errno is clobbered. */
int rte_file_create(struct rte_file *f, const struct rte_config *c, pid_t pid,
                    char *err, size_t errlen);
/* Allocate the disk blocks of [off, off + len) so that stores through the
 * mapping cannot raise SIGBUS. Returns 0 or an errno value. Signal-safe. */
int rte_file_reserve(const struct rte_file *f, uint64_t off, uint64_t len);
/* madvise the mapping for sparse use (no read-around). */
void rte_file_advise(const struct rte_file *f);
/* 1 if <pid>.events in the directory is still our file. Signal-safe. */
int rte_file_is_ours(const struct rte_file *f);
/* Unlink the file if its name is still ours. Signal-safe. */
void rte_file_remove(const struct rte_file *f);
/* Before exec: move the file out of the way of the next image, to
 * <pid>.exec<N>.events with preserve, else unlink it (kept mapped), so
 * that nothing is left after a successful exec. Returns 0 or an errno. */
int rte_file_exec_away(struct rte_file *f, int preserve);
/* After a failed exec: give the file its name back (without PRESERVE, a
 * copy of it replaces the mapping at the same address: the caller must
 * reserve again the blocks it had reserved). Returns 0 or errno. */
int rte_file_exec_back(struct rte_file *f, pid_t pid);
/* exec: if the environment entry `entry` is the relative
 * OCAML_RUNTIME_EVENTS_DIR=<dir> that tracing started with, the absolute
 * directory it was resolved to (the new image must use the same directory
 * even if the program changed its working directory since), else NULL.
 * Signal-safe. */
const char *rte_file_env_dir(const char *entry);
/* Unmap and close (only where no other thread can write: fork child). */
void rte_file_drop(struct rte_file *f);

/* ---- OCaml detection (ocaml.c) ------------------------------------------ */

/* 1 if this process contains OCaml 5's runtime events (the symbol
 * caml_runtime_events_init in the main executable's symbol tables or in any
 * loaded object), else 0. Not signal-safe. */
int rte_ocaml_detect(void);

/* ---- real functions (real.c) -------------------------------------------- */

struct rte_real {
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
	                      void *(*)(void *), void *);
	int (*pthread_setname_np)(pthread_t, const char *);
	pid_t (*fork)(void);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	void (*exit_)(int);
	void (*quick_exit)(int);
};

extern struct rte_real rte_real;
/* dlsym() that leaves no error state behind when the symbol is missing. */
void *rte_dlsym(void *handle, const char *name);
/* Resolve every real function (idempotent, cheap after the first call).
 * Called from the constructor and lazily by each wrapper, in case another
 * library's constructor calls a wrapper before ours ran. */
void rte_real_resolve(void);

/* ---- global state (core.c) ---------------------------------------------- */

enum { SLOT_FREE = 0, SLOT_TAKEN = 1, SLOT_BROKEN = 2 };
/* ST_FORKED: a fork child whose own file is not made yet (it is made by
 * the child's first event, exec or rte_path(); with PRESERVE, at fork). */
enum { ST_OFF = 0, ST_RUNNING, ST_STOPPED, ST_DISABLED, ST_FORKED };
/* rte_g_active while ST_FORKED: matches no thread's generation, so the
 * first event takes the slow path, which makes the file. */
#define RTE_GEN_PENDING 0xffffffffu

/* The ids of rte's own events (-1 if no id was free). */
enum {
	RTE_EV_TID,       /* rte.thread.tid, int */
	RTE_EV_NAME,      /* rte.thread.name, custom */
	RTE_EV_NAME_OF,   /* rte.thread.name_of, custom "<ring>:<name>" */
	RTE_EV_DROPPED,   /* rte.dropped, int */
	RTE_EV_EXEC,      /* rte.exec, custom: the program being executed */
	RTE_EV_EXEC_FAIL, /* rte.exec_failed, int: errno of the failed exec */
	RTE_EV_OWN_COUNT
};

/* Hot: the generation of the current file while tracing runs and is not
 * paused, else 0. The only word the write path reads when tracing is off. */
extern uint32_t rte_g_active RTE_EXPORT; /* also declared in rte/rte.h */
extern uint32_t rte_g_gen;      /* generation of the current file */
extern int rte_g_state;         /* ST_* */
extern int rte_g_paused;
extern pid_t rte_g_pid;         /* process that owns rte_g_file */
extern struct rte_config rte_g_cfg;
extern struct rte_file rte_g_file;
extern pthread_mutex_t rte_g_lock; /* start, register, pause, fork */
extern uint8_t rte_g_types[RTE_MAX_USER_EVENTS]; /* enum rte_type + 1 */
extern int rte_g_own[RTE_EV_OWN_COUNT];
extern uint64_t rte_g_dropped;

/*
 * Per-thread state. It lives in a pool of memory mapped with
 * MADV_WIPEONFORK (core.c), not in TLS: the only initial-exec TLS of ours
 * is the pointer rte_self_p (plus lib/writer/clock.h's anchor), so the shim
 * takes a few words of each thread's stack, not kilobytes. The state is
 * allocated on the thread's first use without malloc or locks (mmap and a
 * CAS), so it is usable in signal handlers.
 *
 * Because the pool reads zero in any child process, however it was made
 * (fork, _Fork, a raw fork or clone system call), a child's threads never
 * find a writer attached to the parent's file: gen is 0, which never
 * equals rte_g_active, so the first event takes the slow path, which sees
 * the per-process page (also wiped) and adopts the child (core.c).
 */
struct __attribute__((aligned(64))) rte_thread {
	/* The fast path's words first: gen, busy and the writer's pointers
	 * share one cache line. */
	uint32_t gen;        /* == rte_g_gen while w is attached to a ring */
	int busy;            /* inside a write: a nested signal handler drops */
	struct rte_ring_writer w;
	int ring;            /* index of our ring, or -1 (0 after a wipe:
	                        only meaningful while gen matches) */
	uint32_t fail_gen;   /* claiming failed in this generation ... */
	uint32_t fail_epoch; /* ... and no ring was released since */
	int guard;           /* inside a wrapper: do not trace recursively */
	/* crash.c's per-thread state. */
	int crash_recording;  /* inside our own work */
	int crash_first_sig;  /* signal being recorded */
	int crash_chained;    /* inside the program's handler */
	/* the stack pointer a program handler was called with on its own
	 * stack (0: none): below it, the handler is still running */
	uintptr_t crash_chain_sp;
	uint64_t crash_bt[RTE_BT_MAX + 4];  /* record buffer */
	uint64_t crash_enc[RTE_BT_MAX + 8]; /* encoding buffer */
	struct rte_alloc_thread alloc;      /* alloc/alloc.h */
};
extern __thread struct rte_thread *rte_self_p RTE_TLS;
/* The calling thread's state, allocated on first use (core.c). Never NULL:
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

/* Take the registry lock with every signal blocked (the previous mask in
 * *old): a signal handler can never interrupt its holder, so a handler
 * that forks (atfork prepare takes the lock) or registers cannot deadlock.
 * In a fork child that no atfork handler saw, first adopts the child. */
void rte_lock(sigset_t *old);
void rte_unlock(const sigset_t *old);

/* Print "rte: <message>" as one line on stderr, at most once per *once
 * flag (NULL: always). Async-signal-safe (vsnprintf on a stack buffer +
 * write). Preserves errno. */
void rte_warn(int *once, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Start tracing (lock held by the caller). Returns RTE_OK or RTE_ESTATE. */
int rte_core_start_locked(void);
/* Disable tracing for good after an error, with one line on stderr. */
void rte_core_disable(const char *why);
/* Slow path of rte_core_writer(): attach the calling thread to a ring of
 * generation `gen`. quiet: no domain_spawn/tid/name events (exit paths).
 * Returns the writer or NULL (events are then dropped and counted). */
struct rte_ring_writer *rte_core_attach(int quiet);
/* Give the calling thread's ring back (thread end). Writes domain_terminate
 * first if tracing is active. */
void rte_core_release(void);
/* Write ring_stop (and rte.dropped) once and remove the file unless
 * PRESERVE. Safe at exit, in _exit, in a signal handler. */
void rte_core_stop(void);
/* Fork child: let go of the parent's file; our own is made lazily. The
 * calling thread keeps ring 0 of the child's file. */
void rte_core_fork_child(void);
/* The atfork child handler's work (signals blocked, one thread): re-make
 * the lock, keep only our per-thread state, mark the process page ours,
 * rte_core_fork_child(), and with PRESERVE make the file at once. */
void rte_core_atfork_child(void);
/* Fork child: make the pending file now if we can (see ST_FORKED). */
void rte_core_materialize(void);
/* Write a name into name slot `id` of the file (lock held or single). */
void rte_core_write_name(unsigned id, const char *name);
/* Write the calling thread's name as rte.thread.name on its ring. */
void rte_core_write_thread_name(void);
/* Write rte.thread.name_of "<ring>:<name>" for thread `t` on our ring. */
void rte_core_write_name_of(pthread_t t, const char *name);
/* Lifecycle event on our ring, written whether or not tracing is paused
 * (as long as it runs). */
void rte_core_lifecycle(unsigned lc, int64_t data, int with_data);
/* Write an rte.* event of the calling thread (no-op when not active). */
void rte_core_own_int(int which, int64_t v);
void rte_core_own_custom(int which, const void *bytes, size_t n);
/* Write a custom message with a payload of n bytes. Returns 0 or -1. */
int rte_core_write_custom(struct rte_ring_writer *w, uint64_t hdr,
                          const void *bytes, size_t n);

/* exec: write ring_stop and move the file out of the new image's way;
 * returns 1 if it did (then call rte_core_exec_failed if exec returns). */
int rte_core_exec_begin(const char *prog);
void rte_core_exec_failed(int err);

/* 1 if the calling process owns the file and tracing runs (false in a
 * vfork child, which shares our memory but has another pid). A fork child
 * with PRESERVE makes its pending file here. */
int rte_core_owns_process(void);

/*
 * The write path. Returns the calling thread's writer, marked busy, or NULL
 * (nothing to do: tracing is off or paused, or no ring). Pair every
 * non-NULL return with rte_leave().
 */
static inline struct rte_ring_writer *rte_enter(void)
{
	/* Relaxed: only decides whether to write at all. The writer's own
	 * pointers were published by the acquire in rte_core_attach(). */
	uint32_t a = __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED);
	struct rte_ring_writer *w;
	struct rte_thread *t;

	if (__builtin_expect(a == 0, 0))
		return NULL;
	t = rte_self_get();
	if (__builtin_expect(t->busy, 0)) {
		/* A signal handler interrupted a write of this thread: its
		 * ring is mid-message, so this event is dropped. */
		__atomic_fetch_add(&rte_g_dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	t->busy = 1;
	/* Keeps the busy store before the ring stores (same thread: only a
	 * signal handler observes it). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(t->gen == a, 1))
		return &t->w;
	w = rte_core_attach(0);
	if (!w) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
	}
	return w;
}

/* rte_leave() for the writer w that rte_enter() returned: no second
 * look at the TLS pointer. */
static inline void rte_leave_w(struct rte_ring_writer *w)
{
	struct rte_thread *t =
		(struct rte_thread *)((char *)w - offsetof(struct rte_thread, w));

	/* Keeps the ring stores before the busy store, for signal handlers. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

static inline void rte_leave(void)
{
	/* Keeps the ring stores before the busy store, for signal handlers. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rte_self_p->busy = 0; /* set by rte_enter: allocated */
}

#pragma GCC visibility pop

#endif
