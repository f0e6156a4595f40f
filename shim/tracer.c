/*
 * tracer.c - the tracer: the one owner of the tracing state machine, the
 * binding of threads to rings (attach, thread end), the rte.* and
 * lifecycle event writers. The ring slots are slots.c's, the per-thread
 * states pool.c's. No other file writes g_state, rte_g_active,
 * g_paused or g_gen (they read them, with the orders noted there).
 *
 * The state machine (g_state; "paused" is a flag beside RUNNING and
 * FORKED, rte_g_active is the generation while RUNNING and not paused,
 * RTE_GEN_PENDING while FORKED and not paused, else 0):
 *
 *               start (rte_start, or the constructor with
 *               OCAML_RUNTIME_EVENTS_START): file made, ring_start
 *      +-----+ ----------------------------------------> +---------+
 *      | OFF |                                           | RUNNING |<-+
 *      +-----+ ---+  start: OCaml 5 runs its own events, +---------+  |
 *                 |  no MADV_WIPEONFORK, or no file         | |  ^    |
 *                 v                                         | |  |    | pause/resume
 *           +----------+ <--- disable: an error (any state) | |  |    | (rte_pause,
 *           | DISABLED | <--- lost: SIGBUS on the ring      | |  |    | rte_resume):
 *           +----------+      (crash handler)               | |  |    | paused flag,
 *                                                           | |  |    | ring_pause /
 *                 stop (destructor at exit, _exit wrappers, | |  |    | ring_resume
 *                 a terminating signal): ring_stop, file    | |  |    |
 *                 removed unless PRESERVE or an observer    | |  |  --+
 *                 keeps it                                  | |  |
 *           +---------+ <-----------------------------------+ |  | exec failed
 *           | STOPPED | <-------------------------------------+  | (exec wrappers):
 *           +---------+    exec begin (exec wrappers): ring_stop,|  file back,
 *                |         file moved away (<pid>.execN.events   |  ring_start,
 *                +-------- or unlinked)  ------------------------+  rte.exec_failed
 *
 *   RUNNING or FORKED --fork child (atfork child handler, or adopt_child
 *       for a child made without one)--> FORKED: the parent's mapping is
 *       dropped; generation pending
 *   FORKED --materialize (first event, exec, rte_path, or at once with
 *       PRESERVE)--> RUNNING: <childpid>.events made, ring_start +
 *       fork_child, a new generation
 *   FORKED --stop, exec--> no transition without PRESERVE (no file was
 *       made: nothing to stop or remove); with it, materialize first
 *   fork parent: no transition (fork_parent lifecycle event, hooks)
 *
 * Illegal requests change nothing: start in STOPPED or DISABLED returns
 * RTE_ESTATE, start in RUNNING or FORKED returns RTE_OK; pause/resume
 * outside RUNNING/FORKED, or twice, are no-ops; stop and exec begin run
 * once per file (g_stopping). tests/unit/test_shim_tracer.c makes each of
 * these transitions.
 *
 * Rings are claimed, not assigned (slots.c): a thread takes the first FREE
 * slot on its first event and gives it back when it ends (pthread key
 * destructor, thread_end here), so ring indexes are reused and nothing on
 * the write path takes a lock. The thread that starts tracing takes ring 0.
 *
 * Generations: each file this process maps (the first one, then a new one
 * in each fork child) has a generation number. rte_g_active holds it while
 * tracing runs unpaused, and a thread's writer is valid iff its recorded
 * generation equals it: one load and one compare decide the fast path.
 *
 * The file is never unmapped while other threads may run (only in a fork
 * child, which has one thread): at exit, other threads may still be
 * writing when ring_stop is written, and their stores must land in memory.
 *
 * Per-thread state (struct rte_thread) comes from a pool mapped with
 * MADV_WIPEONFORK (pool.c), reached through one initial-exec TLS pointer;
 * a page of per-process state is mapped the same way here. Both read zero
 * in any child, so a child made without our atfork handlers (_Fork, raw
 * fork or clone system calls) finds no writer attached (its first event
 * takes the slow path) and a zero pid in the page: it is then adopted as
 * a fork child (adopt_child), never writing into the parent's file.
 *
 * The registry lock is only ever held with every signal blocked
 * (rte_lock), so no signal handler can run in its holder.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "forkvars.h"
#include "proc.h"
#include "registry.h"
#include "sys.h"
#include "rte/rte.h"
#include "tracer.h"

/* Exported: the inline check of rte/rte.h reads it in the caller. */
RTE_FORKVAR RTE_EXPORT uint32_t rte_g_active;
static uint32_t g_gen;
static RTE_FORKVAR int g_state;
static RTE_FORKVAR int g_paused;
static RTE_FORKVAR pid_t g_pid;
static struct rte_config g_cfg;
static struct rte_file g_file;
static RTE_FORKVAR pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_own[RTE_OWN_COUNT] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
uint64_t rte_g_dropped;
static RTE_FORKVAR int g_stopping;                    /* ring_stop written, atomic */
static uint32_t g_exec_active;            /* rte_g_active before exec */
static int g_pool_ok; /* the pool's key exists (rte_pool_load) */
static int g_once_full;
static int g_not_preloaded; /* rte_tracer_not_preloaded() */


static const struct {
	const char *name;
	enum rte_type type;
} g_own_events[RTE_OWN_COUNT] = {
	[RTE_OWN_TID] = {"rte.thread.tid", RTE_TYPE_INT},
	[RTE_OWN_NAME] = {"rte.thread.name", RTE_TYPE_CUSTOM},
	[RTE_OWN_NAME_OF] = {"rte.thread.name_of", RTE_TYPE_CUSTOM},
	[RTE_OWN_DROPPED] = {"rte.dropped", RTE_TYPE_INT},
	[RTE_OWN_EXEC] = {"rte.exec", RTE_TYPE_CUSTOM},
	[RTE_OWN_EXEC_FAIL] = {"rte.exec_failed", RTE_TYPE_INT},
	[RTE_OWN_PROC] = {"rte.proc", RTE_TYPE_CUSTOM},
	[RTE_OWN_EXIT] = {"rte.exit", RTE_TYPE_CUSTOM},
	[RTE_OWN_REAP] = {"rte.reap", RTE_TYPE_CUSTOM},
	[RTE_OWN_SPAWN] = {"rte.spawn", RTE_TYPE_INT},
};

/* ---- the per-process page ---------------------------------------------- */

/*
 * Per-process page, mapped with MADV_WIPEONFORK: pid is this process's id
 * once it knows its file (the constructor, or the atfork child handler),
 * and reads 0 in a child that no atfork handler saw (_Fork, a raw fork or
 * clone system call). -1 while such a child is being adopted.
 */
struct rte_proc {
	pid_t pid;
};
static RTE_FORKVAR struct rte_proc *g_proc;
/* The state and id of the thread that forked: it keeps ring 0 in the
 * child's file (see begin_file) until it takes it or ends. */
static RTE_FORKVAR struct rte_thread *g_heir;
static RTE_FORKVAR pthread_t g_heir_th;

static int state(void);

/*
 * A fork child settles lazily: its atfork handler only re-makes the lock
 * and notes its pid here (g_forked, on the page that handler writes
 * anyway); everything else (dropping the parent's mapping, the new state,
 * the pool) is done by adopt_child() when the child first needs it: an
 * event, a lock, exec or exit with PRESERVE, a crash. A child that only
 * execs or _exits then touches no other page of ours (each one a page
 * fault after fork). 0 in any other process.
 */
static RTE_FORKVAR pid_t g_forked;
/* The parent of a fork child, for its rte.proc: noted by the atfork
 * prepare handler (in the parent, so the child inherits it), or at
 * adoption without our handlers (getppid then). */
static RTE_FORKVAR pid_t g_fork_ppid;

/* 1 in a child process not adopted yet: its atfork handler ran (g_forked)
 * or none did (the per-process page reads 0: _Fork, raw fork or clone). */
RTE_FORKTEXT static int child_pending(void)
{
	/* Relaxed (both): written by this process's only thread at fork;
	 * the page is ours alone, 0 means wiped by fork. */
	return __atomic_load_n(&g_forked, __ATOMIC_RELAXED) ||
	       (g_proc && __atomic_load_n(&g_proc->pid, __ATOMIC_RELAXED) == 0);
}

static void fork_switch(int from_handler);

/*
 * 1 in a vfork child (or a child of clone(CLONE_VM) without CLONE_THREAD):
 * it shares our memory, the per-process page included, but has another
 * pid. The owner is the pid the atfork child handler noted (a fork child
 * not adopted yet), else the page's pid. A child of a raw fork that was
 * not adopted yet reads 0 there: it and a vfork child of it look alike,
 * and are taken as the former (adopted when they first need it).
 */
RTE_FORKTEXT int rte_tracer_vforked(void)
{
	/* Relaxed (both): see child_pending(); a vfork child reads what
	 * its parent wrote before it. */
	pid_t owner = __atomic_load_n(&g_forked, __ATOMIC_RELAXED);

	if (!owner && g_proc)
		owner = __atomic_load_n(&g_proc->pid, __ATOMIC_RELAXED);
	return owner > 0 && owner != rte_sys_getpid();
}


/*
 * Adopt a child: it gets its own file, made lazily. After our atfork
 * handler, the thread that forked keeps ring 0 and ring_start carries the
 * time of the fork; without one (_Fork, raw fork or clone), the adopting
 * thread does and the time is now, and the registry lock is re-made (its
 * holder may not exist here). Returns 0 once adopted, -1 while another
 * thread of the child is adopting it, or in a vfork child of a child not
 * adopted yet (it shares that child's memory, not its pid).
 */
static int adopt_child(void)
{
	pid_t zero = 0, me = getpid();
	/* Relaxed: see child_pending(). */
	pid_t forked = __atomic_load_n(&g_forked, __ATOMIC_RELAXED);

	if (forked && forked != me)
		return -1;
	/* Acq_rel: one adopter. */
	if (!g_proc ||
	    !__atomic_compare_exchange_n(&g_proc->pid, &zero, -1, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return g_proc && __atomic_load_n(&g_proc->pid,
		                                 __ATOMIC_ACQUIRE) > 0 ? 0 : -1;
	if (!forked)
		pthread_mutex_init(&g_lock, NULL);
	/* The states of the parent's other threads are free here, if no
	 * thread was made before us (else they are only lost). */
	if (__libc_single_threaded)
		rte_pool_fork_child();
	fork_switch(forked != 0);
	/* Release: pairs with the loads above. */
	__atomic_store_n(&g_proc->pid, me, __ATOMIC_RELEASE);
	__atomic_store_n(&g_forked, 0, __ATOMIC_RELEASE);
	return 0;
}

void rte_tracer_settle(void)
{
	if (child_pending())
		adopt_child();
}

void rte_lock_blocked(void)
{
	if (child_pending())
		adopt_child();
	pthread_mutex_lock(&g_lock);
}

void rte_unlock_blocked(void)
{
	pthread_mutex_unlock(&g_lock);
}

void rte_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, old);
	rte_lock_blocked();
}

void rte_unlock(const sigset_t *old)
{
	rte_unlock_blocked();
	rte_real_sigmask(SIG_SETMASK, old, NULL);
}

void rte_tracer_disable(const char *why)
{
	rte_warn(NULL, "%s; tracing disabled", why);
	/* Release: pairs with the relaxed load in rte_enter() only as far as
	 * stopping goes; writers already inside finish into a valid map. */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	/* Release: pairs with state(); nothing is attached any more. */
	__atomic_store_n(&g_state, ST_DISABLED, __ATOMIC_RELEASE);
}

/* The file could not be made: a process whose identity may not use the
 * directory (a child that switched user, a daemon that dropped
 * privileges) stands aside without a word on the program's stderr; only
 * RTE_LOG's file records it. */
static void disable_after_create(const struct rte_file *f, const char *why)
{
	if (!f->denied) {
		rte_tracer_disable(why);
		return;
	}
	rte_note("%s; tracing disabled", why);
	/* Release: as in rte_tracer_disable(). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g_state, ST_DISABLED, __ATOMIC_RELEASE);
}

RTE_FORKTEXT static int state(void)
{
	/* Acquire: pairs with the release stores of g_state. */
	return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
}

int rte_tracer_may_write(void)
{
	pid_t me = rte_sys_getpid();
	/* Relaxed (both): see child_pending(). */
	pid_t forked = __atomic_load_n(&g_forked, __ATOMIC_RELAXED);

	if (forked)
		return forked == me; /* a fork child not adopted yet */
	if (g_proc && __atomic_load_n(&g_proc->pid, __ATOMIC_RELAXED) == 0)
		return 1; /* a child made without our handlers */
	return g_pid == me || g_pid == 0;
}

int rte_tracer_owns_process(void)
{
	int st;

	/* A child that never wrote: without PRESERVE nothing to stop or
	 * remove (and nothing to adopt: its exit costs no more). */
	if (child_pending() && (!g_cfg.preserve || adopt_child() < 0))
		return 0;
	st = state();

	if ((st != ST_RUNNING && st != ST_FORKED) || getpid() != g_pid)
		return 0;
	if (st == ST_FORKED) {
		/* A fork child that never wrote: without PRESERVE there is
		 * nothing to stop or remove; with it, the file must exist. */
		if (!g_cfg.preserve)
			return 0;
		rte_tracer_materialize();
	}
	return state() == ST_RUNNING;
}

static void thread_name(char name[17])
{
	memset(name, 0, 17);
	/* The raw system call: our own prctl() wrapper must not see it. */
	if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) < 0)
		name[0] = '\0';
}

static uint64_t user_hdr(unsigned type, int id)
{
	return rte_hdr_make(0, 1, type, (unsigned)id);
}

/* The ring labels: kernel tid and thread name, on the calling thread's
 * ring (w is ours and busy). */
static void write_labels(struct rte_ring_writer *w)
{
	char name[17];
	int id = g_own[RTE_OWN_TID];

	if (id >= 0)
		rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id), rte_clock_ns(),
		                (uint64_t)gettid());
	id = g_own[RTE_OWN_NAME];
	thread_name(name);
	if (id >= 0)
		rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), name,
		                      strlen(name));
}

static uint64_t lc_hdr(unsigned lc)
{
	return rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, lc);
}

static void bind_ring(struct rte_thread *t, unsigned r, uint32_t gen)
{
	rte_ring_writer_attach(&t->w, g_file.base, &g_file.l, r);
	rte_slots_bind(&t->w, &g_file, r); /* grows its reservation */
	t->ring = (int)r;
	t->gen = gen;
	rte_slots_set_owner(r, pthread_self());
}

static struct rte_ring_writer *attach(int quiet);
static struct rte_ring_writer *attach_running(struct rte_thread *t,
                                              int quiet);

/* The slow path makes system calls (fallocate, gettid, prctl): keep the
 * caller's errno, as every write function promises. */
struct rte_ring_writer *rte_tracer_attach(int quiet)
{
	int saved = errno;
	struct rte_ring_writer *w = attach(quiet);

	/* Only if changed: errno's page may be copy-on-write (the parent
	 * writes fork_parent right after fork), a store a page fault. */
	if (errno != saved)
		errno = saved;
	return w;
}

static struct rte_ring_writer *attach(int quiet)
{
	struct rte_thread *t = &rte_self;

	if (rte_pool_is_none(t))
		return NULL;
	if (child_pending() && adopt_child() < 0)
		return NULL;
	if (state() == ST_FORKED)
		rte_tracer_materialize();
	return attach_running(t, quiet);
}

/* The thread that forked takes the ring 0 kept for it (see begin_file).
 * Returns 1 if it did. */
static int take_heritage(struct rte_thread *t, uint32_t gen, int quiet)
{
	struct rte_thread *me = t;

	/* Acq_rel: one taker; pairs with the release in begin_file(), so
	 * ring 0's header (ring_start written there) is visible. */
	if (__atomic_load_n(&g_heir, __ATOMIC_RELAXED) != t ||
	    !__atomic_compare_exchange_n(&g_heir, &me, NULL, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	bind_ring(t, 0, gen);
	if (!quiet)
		write_labels(&t->w);
	return 1;
}

static struct rte_ring_writer *attach_running(struct rte_thread *t, int quiet)
{
	uint32_t gen, epoch;
	int r;

	/* State first: begin_file() publishes the generation before the
	 * state, so a thread that sees RUNNING sees the new generation (and
	 * never binds a ring of a fresh file under an old one). */
	if (state() != ST_RUNNING)
		return NULL;
	/* Acquire: pairs with the release store in begin_file(): the file's
	 * mapping, layout and slots are visible. */
	gen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
	epoch = rte_slots_epoch();
	if (gen == 0)
		return NULL;
	if (t->gen == gen && t->ring >= 0)
		return &t->w;
	if (take_heritage(t, gen, quiet))
		return &t->w;
	if (t->fail_gen == gen && t->fail_epoch == epoch)
		goto drop; /* no ring was released since we last looked */
	r = rte_slots_claim(&g_file);
	if (r < 0) {
		t->fail_gen = gen;
		t->fail_epoch = epoch;
		if (r == -2)
			rte_warn(&g_once_full,
			         "all %u rings of %s are in use; events of "
			         "further threads are dropped and counted in "
			         "rte.dropped (RTE_RINGS sets the number)",
			         (unsigned)g_file.l.max_domains,
			         g_file.path);
		goto drop;
	}
	bind_ring(t, (unsigned)r, gen);
	if (quiet)
		return &t->w;
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->attached)
			(*o)->attached(); /* e.g. prof/: its timer */
	rte_ring_write1(&t->w, lc_hdr(RTE_LC_DOMAIN_SPAWN), rte_clock_ns(),
	                (uint64_t)(int64_t)g_pid);
	write_labels(&t->w);
	return &t->w;
drop:
	/* Relaxed: a statistic, read once at ring_stop. */
	__atomic_fetch_add(&rte_g_dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Like rte_enter() but also while paused: for lifecycle events. */
static struct rte_ring_writer *enter_any(int quiet)
{
	struct rte_ring_writer *w;

	if (state() == ST_FORKED && !rte_self.busy)
		rte_tracer_materialize();
	if (state() != ST_RUNNING || rte_self.busy)
		return NULL;
	rte_self.busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w = rte_tracer_attach(quiet);
	if (!w)
		rte_leave();
	return w;
}

void rte_tracer_fork_parent(pid_t child, uint64_t ts)
{
	struct rte_ring_writer *w = enter_any(0);

	if (!w)
		return;
	rte_ring_write1(w, lc_hdr(RTE_LC_FORK_PARENT), ts, (uint64_t)(int64_t)child);
	rte_leave();
}

void rte_tracer_lifecycle(unsigned lc, int64_t data, int with_data)
{
	struct rte_ring_writer *w = enter_any(0);

	if (!w)
		return;
	if (with_data)
		rte_ring_write1(w, lc_hdr(lc), rte_clock_ns(), (uint64_t)data);
	else
		rte_ring_write0(w, lc_hdr(lc), rte_clock_ns());
	rte_leave();
}

void rte_tracer_release(void)
{
	struct rte_thread *t = &rte_self, *me = t;
	unsigned r;

	/* The thread that forked ends before its first event in the child:
	 * ring 0 kept for it is free again (acq_rel: one taker). */
	if (__atomic_compare_exchange_n(&g_heir, &me, NULL, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_RELAXED))
		rte_slots_free(0);
	/* Acquire: pairs with begin_file(); a ring of an older file (fork
	 * child) is simply forgotten. */
	if (t->ring < 0 || t->busy ||
	    t->gen != __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE)) {
		t->ring = -1;
		t->gen = 0;
		return;
	}
	/* Relaxed: only decides whether to write domain_terminate. */
	if (__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED)) {
		t->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rte_ring_write1(&t->w, lc_hdr(RTE_LC_DOMAIN_TERMINATE),
		                rte_clock_ns(), (uint64_t)(int64_t)g_pid);
		rte_leave();
	}
	r = (unsigned)t->ring;
	t->ring = -1;
	t->gen = 0;
	rte_slots_release(r);
}

/* Thread end, however it ends (return, pthread_exit, cancellation): the
 * key destructor runs for every thread that has a state (the key's value
 * is its pool index + 1); the ring and then the state are given back. */
static void thread_end(void *v)
{
	int saved = errno;

	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->thread_end)
			(*o)->thread_end();
	rte_tracer_release();
	rte_pool_put(v);
	errno = saved;
}

/* ---- custom payloads ----------------------------------------------------- */

int rte_tracer_write_custom(struct rte_ring_writer *w, uint64_t hdr,
                          const void *bytes, size_t n)
{
	size_t max = (size_t)(w->mask + 1 - 2) * 8 - 1;

	if (max > RTE_CUSTOM_MAX_BYTES)
		max = RTE_CUSTOM_MAX_BYTES;
	if (n > max)
		n = max; /* documented: too long a payload is truncated */
	return rte_ring_write_bytes(w, hdr, rte_clock_ns(), n ? bytes : "", n);
}

int rte_tracer_own_id(int which)
{
	return which >= 0 && which < RTE_OWN_COUNT ? g_own[which] : -1;
}

void rte_tracer_own_int(int which, int64_t v)
{
	int id = g_own[which];
	struct rte_ring_writer *w;

	if (id < 0 || !(w = rte_enter()))
		return;
	rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id), rte_clock_ns(),
	                (uint64_t)v);
	rte_leave();
}

void rte_tracer_own_custom(int which, const void *bytes, size_t n)
{
	int id = g_own[which];
	struct rte_ring_writer *w;

	if (id < 0 || !(w = rte_enter()))
		return;
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), bytes, n);
	rte_leave();
}

void rte_tracer_write_thread_name(void)
{
	char name[17];

	thread_name(name);
	rte_tracer_own_custom(RTE_OWN_NAME, name, strlen(name));
}

void rte_tracer_write_name_of(pthread_t th, const char *name)
{
	char buf[64];
	int i, len;

	if (state() != ST_RUNNING)
		return;
	i = rte_slots_owned_by((unsigned)g_file.l.max_domains, th);
	if (i < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%d:%.16s", i, name);
	rte_tracer_own_custom(RTE_OWN_NAME_OF, buf, (size_t)len);
}

void rte_tracer_write_name(unsigned id, const char *name)
{
	/* The file exists (running, or stopped but still mapped), and it
	 * is ours (a child no atfork handler saw is adopted by rte_lock(),
	 * which its caller holds). */
	if (!g_file.base || id >= RTE_MAX_USER_EVENTS || child_pending())
		return;
	rte_slots_write_name(&g_file, id, name);
}

/* ---- start, fork child, stop ---------------------------------------------- */

/* rte.proc on ring 0 (w is ours and busy; the lock is held, which
 * guards the buffer: static, so that a start costs no page of stack). */
static void write_proc(struct rte_ring_writer *w, int fork_child)
{
	static char buf[RTE_PROC_PAYLOAD_MAX];
	int id = g_own[RTE_OWN_PROC];
	size_t n;

	if (id < 0)
		return;
	n = rte_proc_start_payload(buf, fork_child,
	                           fork_child ? g_fork_ppid
	                                      : rte_sys_getppid());
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), buf, n);
}

/* Fresh file mapped in g_file: reset the slots, give ring 0 to the
 * calling thread, publish the generation, write ring_start (and
 * fork_child). */
static void begin_file(int fork_child, uint64_t start_ts)
{
	struct rte_thread *t = &rte_self;
	uint32_t gen = g_gen + 1;
	/* In a fork child, ring 0 is the forking thread's even if another
	 * thread of the child makes the file (it then writes ring 0's first
	 * events, and the forking thread attaches to it later). */
	struct rte_thread *heir =
		fork_child ? __atomic_exchange_n(&g_heir, NULL, __ATOMIC_RELAXED)
		           : NULL;
	unsigned lo, hi; /* the registered ids' bounds */

	if (!heir)
		heir = t;

	rte_slots_reset();
	rte_g_dropped = 0;
	/* Problems are reported once per file (a fork child's too). */
	g_once_full = 0;
	t->ring = -1;
	t->gen = 0;
	rte_registry_bounds(&lo, &hi); /* not the 8192 ids: a dozen */
	for (unsigned id = 0; id < RTE_MAX_USER_EVENTS; id++) {
		if (id == lo && lo < hi)
			id = hi;
		if (rte_registry_type((int)id))
			rte_tracer_write_name(id, rte_registry_name(id));
	}
	if (rte_slots_reserve(&g_file, 0) == 0) {
		/* Ring 0's first events, before anyone can attach to it. */
		int busy = t->busy;

		bind_ring(t, 0, gen);
		rte_ring_writer_reset(&t->w);
		t->busy = 1;
		rte_ring_write1(&t->w, lc_hdr(RTE_LC_RING_START), start_ts,
		                (uint64_t)(int64_t)g_pid);
		if (fork_child)
			rte_ring_write1(&t->w, lc_hdr(RTE_LC_FORK_CHILD),
			                start_ts, 0);
		write_proc(&t->w, fork_child);
		if (heir == t) {
			write_labels(&t->w);
		} else {
			t->ring = -1;
			t->gen = 0;
			rte_slots_set_owner(0, g_heir_th);
			/* Relaxed: published by the release of g_gen. */
			__atomic_store_n(&g_heir, heir, __ATOMIC_RELAXED);
		}
		t->busy = busy;
	} else {
		rte_slots_break(0);
	}
	/* Release: publishes the file, layout, slots and ring 0's first
	 * events; pairs with the acquire load in attach_running(). */
	__atomic_store_n(&g_gen, gen, __ATOMIC_RELEASE);
	/* Release, after the generation: pairs with state() in
	 * attach_running(). */
	__atomic_store_n(&g_state, ST_RUNNING, __ATOMIC_RELEASE);
	/* Release: as for g_gen; the fast path only needs the value. */
	__atomic_store_n(&rte_g_active, g_paused ? 0 : gen,
	                 __ATOMIC_RELEASE);
}

int rte_tracer_register_own(const char *name, enum rte_type type)
{
	int id = rte_registry_add(name, strlen(name), type, 1,
	                          rte_tracer_write_name);

	return id >= 0 ? id : -1;
}

static void register_own_events(void)
{
	for (int i = 0; i < RTE_OWN_COUNT; i++)
		if (g_own[i] < 0)
			g_own[i] = rte_tracer_register_own(
				g_own_events[i].name, g_own_events[i].type);
}

/* A failure's one line (start and materialize: lock held). Static: the
 * start runs in every traced process, and 4 KiB more of stack there is a
 * page fault of the stack most programs never touch. */
static char g_err[PATH_MAX + 160];

int rte_tracer_start_locked(void)
{
	char *err = g_err;
	const size_t errlen = sizeof(g_err);
	pid_t pid = rte_sys_getpid();

	if (g_state == ST_RUNNING || g_state == ST_FORKED)
		return RTE_OK;
	if (g_state != ST_OFF)
		return RTE_ESTATE;
	rte_config_read(&g_cfg);
	if (g_not_preloaded) {
		rte_warn(NULL, "librte.so was loaded with dlopen, not "
		         "preloaded: it cannot see this program's forks, "
		         "execs and exits, so it stands aside (LD_PRELOAD "
		         "traces)");
		/* Release: pairs with state(). */
		__atomic_store_n(&g_state, ST_DISABLED, __ATOMIC_RELEASE);
		return RTE_ESTATE;
	}
	if (!g_cfg.trace_ocaml && rte_ocaml_in_process()) {
		rte_warn(NULL, "this program runs OCaml 5 runtime events "
		         "itself; librte stands aside (RTE_TRACE_OCAML=1 "
		         "overrides)");
		/* Release: pairs with state(). */
		__atomic_store_n(&g_state, ST_DISABLED, __ATOMIC_RELEASE);
		return RTE_ESTATE;
	}
	if (!g_proc || !g_pool_ok) {
		/* Without a page that reads zero in a child, a child made by
		 * a raw fork could write into our file. */
		rte_tracer_disable("cannot map a page with MADV_WIPEONFORK "
		                 "(Linux 4.14 or later is needed)");
		return RTE_ESTATE;
	}
	rte_clock_init(g_cfg.force_monotonic);
	/* Before the file exists: begin_file() writes every name once. */
	register_own_events();
	if (rte_file_create(&g_file, &g_cfg, pid, err, errlen) < 0) {
		disable_after_create(&g_file, err);
		return RTE_ESTATE;
	}
	g_pid = pid;
	begin_file(0, rte_clock_ns());
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->started)
			(*o)->started();
	return RTE_OK;
}

/*
 * A fork child gets its own file, but only when it first needs one: its
 * first event, a fork of its own, exec or exit with PRESERVE. A child that
 * writes nothing and execs or exits (the common fork+exec) then costs no
 * file at all; ring_start and fork_child carry the time of the fork.
 */
static RTE_FORKVAR uint64_t g_fork_ts;

/* The prepare handler, in the parent with the lock held: what the child
 * will need, taken here, where it costs no page fault. */
void rte_tracer_atfork_prepare(void)
{
	int st = state();

	/* Peeked: each fork leaves the thread's clock anchor (TLS) and the
	 * clock's globals copy-on-write; storing there would be a fault. */
	if (st == ST_RUNNING || st == ST_FORKED)
		g_fork_ts = rte_clock_peek_ns();
	g_heir_th = pthread_self();
	/* The child's parent, known here for sure: in the child, getppid()
	 * may already name a reaper (daemon()'s parent _exits at once). */
	g_fork_ppid = rte_sys_getpid();
}

/* The child's switch to a file of its own (see adopt_child). */
static void fork_switch(int from_handler)
{
	int st = state();
	struct rte_thread *heir;

	/* Acquire: pairs with the exchange in rte_tracer_stop(). */
	if ((st != ST_RUNNING && st != ST_FORKED) ||
	    __atomic_load_n(&g_stopping, __ATOMIC_ACQUIRE))
		return;
	/* Nothing of this process writes before adoption (the per-thread
	 * states read zero). The parent's mapping goes at once, so nothing
	 * can ever write to it. */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELAXED);
	rte_file_drop(&g_file);
	g_pid = getpid();
	if (from_handler) {
		/* The thread that forked, noted by the handlers. */
		heir = __atomic_load_n(&g_heir, __ATOMIC_RELAXED);
	} else {
		/* No handler ran: the adopting thread keeps ring 0; the
		 * parent is the one we have now (it may have ended). */
		g_fork_ts = rte_clock_ns();
		g_fork_ppid = getppid();
		g_heir_th = pthread_self();
		heir = rte_self_p;
	}
	if (heir && !rte_pool_is_none(heir)) {
		heir->ring = -1;
		heir->gen = 0;
		heir->fail_gen = 0;
	}
	/* Relaxed: read by this thread or by threads it creates. */
	__atomic_store_n(&g_heir, heir, __ATOMIC_RELAXED);
	/* Release (both): pair with state() and the acquire of g_gen in
	 * attach_running(); the pending value sends writers there. */
	__atomic_store_n(&g_state, ST_FORKED, __ATOMIC_RELEASE);
	__atomic_store_n(&rte_g_active, g_paused ? 0 : RTE_GEN_PENDING,
	                 __ATOMIC_RELEASE);
}

/*
 * The atfork child handler: one thread, every signal blocked. It writes
 * only the page of RTE_FORKVAR variables and calls nothing outside this
 * file (no libc: see sys.h); adoption does the rest when needed. An
 * observer that acts in the child (the profilers) settles it first.
 */
RTE_FORKTEXT void rte_tracer_atfork_child(void)
{
	/* The lock was held by the forking thread: re-make it rather than
	 * unlock it (robust to any mutex kind). */
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	int st = state();

	g_lock = fresh;
	/* Relaxed (both): one thread. */
	/* The forking thread keeps ring 0 (not the state of threads that
	 * could get none: it never writes, and would hold ring 0 for ever). */
	if ((st == ST_RUNNING || st == ST_FORKED) && rte_self_p &&
	    !rte_pool_is_none(rte_self_p))
		__atomic_store_n(&g_heir, rte_self_p, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&g_heir, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&g_forked, (pid_t)rte_sys_getpid(), __ATOMIC_RELAXED);
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->fork_child)
			(*o)->fork_child(); /* e.g. prof/: the forker's timer */
	/* With PRESERVE the child keeps a file whatever it does: make it
	 * now, while every signal is still blocked (prepare blocked them),
	 * so that a child killed at any time leaves a complete file, never
	 * a half-made one, and its exit costs nothing more. */
	if (g_cfg.preserve) {
		int saved = errno;

		rte_tracer_settle();
		rte_tracer_materialize();
		errno = saved;
	}
}

void rte_tracer_materialize(void)
{
	sigset_t all, old;

	if (state() != ST_FORKED)
		return;
	/* Every signal blocked while the file is made: a signal that kills
	 * the process cannot leave a half-made file, and no handler of
	 * this thread can run while we hold the lock. */
	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, &old);
	/* trylock: another thread may be making the file (or registering);
	 * the event that asked is then dropped, and the next one tries
	 * again. The lock orders us against rte_register(). */
	if (pthread_mutex_trylock(&g_lock) == 0) {
		if (state() == ST_FORKED) {
			if (rte_file_create(&g_file, &g_cfg, g_pid, g_err,
			                    sizeof(g_err)) < 0)
				disable_after_create(&g_file, g_err);
			else
				begin_file(1, g_fork_ts);
		}
		pthread_mutex_unlock(&g_lock);
	}
	rte_real_sigmask(SIG_SETMASK, &old, NULL);
}

/* Tell the observers that tracing is about to stop (see
 * rte_tracer_observer). Async-signal-safe. */
static void stopping(void)
{
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->stopping)
			(*o)->stopping();
}

/* 1 if an observer wants the file kept (see rte_tracer_observer). */
static int keep_file(void)
{
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->keep_file && (*o)->keep_file())
			return 1;
	return 0;
}

/* rte.exit, the process's own end and usage (w is ours and busy). */
static void write_exit(struct rte_ring_writer *w)
{
	struct rte_exit_rec r;
	int id = g_own[RTE_OWN_EXIT];

	if (id < 0)
		return;
	rte_proc_exit_rec(&r);
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), &r,
	                        sizeof(r));
}

void rte_tracer_stop(void)
{
	struct rte_ring_writer *w;
	int id = g_own[RTE_OWN_DROPPED];
	uint64_t dropped;

	if (!rte_tracer_owns_process())
		return; /* not tracing, or a vfork child sharing our memory */
	stopping();
	/* Acq_rel: one stopper; pairs with the same exchange in a racing
	 * exec or exit. */
	if (__atomic_exchange_n(&g_stopping, 1, __ATOMIC_ACQ_REL))
		return;
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->final_stop)
			(*o)->final_stop(); /* e.g. prof/: every timer deleted */
	/* Release: from here on writers stop (those inside finish). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	w = enter_any(1);
	if (w) {
		/* Relaxed: a statistic; late increments are simply lost. */
		dropped = __atomic_load_n(&rte_g_dropped, __ATOMIC_RELAXED);
		if (dropped && id >= 0)
			rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id),
			                rte_clock_ns(), dropped);
		write_exit(w);
		rte_ring_write0(w, lc_hdr(RTE_LC_RING_STOP), rte_clock_ns());
		rte_leave();
	}
	/* Release: pairs with state(). */
	__atomic_store_n(&g_state, ST_STOPPED, __ATOMIC_RELEASE);
	/* A crashed process keeps its file even without PRESERVE. */
	if (!g_cfg.preserve && !keep_file())
		rte_file_remove(&g_file);
	else if (!g_cfg.preserve)
		rte_file_keep(&g_file); /* the sweep leaves it alone */
}

/* ---- exec ------------------------------------------------------------------ */

/* exec, identity change: ring_stop, and the file out of the way (see
 * rte_file_exec_away). Returns 1 if it did. */
static int leave_file(const char *prog)
{
	struct rte_ring_writer *w;
	int e;

	if (!rte_tracer_owns_process())
		return 0;
	stopping();
	if (__atomic_exchange_n(&g_stopping, 1, __ATOMIC_ACQ_REL))
		return 0;
	if (prog)
		rte_tracer_own_custom(RTE_OWN_EXEC, prog, strlen(prog));
	/* Acq_rel: stops writers, keeps the value for a failed exec. */
	g_exec_active = __atomic_exchange_n(&rte_g_active, 0, __ATOMIC_ACQ_REL);
	w = enter_any(1);
	if (w) {
		rte_ring_write0(w, lc_hdr(RTE_LC_RING_STOP), rte_clock_ns());
		rte_leave();
	}
	/* Release: pairs with state(). */
	__atomic_store_n(&g_state, ST_STOPPED, __ATOMIC_RELEASE);
	e = rte_file_exec_away(&g_file, g_cfg.preserve);
	if (e && g_file.denied) /* switched user: stand aside quietly */
		rte_note("cannot move %s out of the way of exec: %s",
		         g_file.path, strerrordesc_np(e));
	else if (e)
		rte_warn(NULL, "cannot move %s out of the way of exec: %s",
		         g_file.path, strerrordesc_np(e));
	return 1;
}

int rte_tracer_exec_begin(const char *prog)
{
	return leave_file(prog);
}

int rte_tracer_identity_begin(void)
{
	if (g_cfg.preserve || !leave_file(NULL))
		return 0;
	rte_note("%s removed: this process switches to a user that may not "
	         "remove it; tracing stopped", g_file.path);
	return 1;
}

/* After a failed exec or identity change: the file back, tracing on. */
static void come_back(int err, int exec)
{
	int e = rte_file_exec_back(&g_file, g_pid);

	/* The blocks of the claimed rings and written names, reserved in
	 * the old file, are reserved again in the copy (a full disk must
	 * never mean SIGBUS). */
	if (!e && rte_slots_rereserve(&g_file) < 0)
		e = ENOSPC;
	if (e) {
		rte_warn(NULL, "%s failed and %s could not be restored: %s; "
		         "tracing stopped", exec ? "exec" : "the user change",
		         g_file.path, strerrordesc_np(e));
		return;
	}
	/* Release (all three): pair with state(), the exchanges on
	 * g_stopping and rte_enter(); the file is the same as before. */
	__atomic_store_n(&g_state, ST_RUNNING, __ATOMIC_RELEASE);
	__atomic_store_n(&g_stopping, 0, __ATOMIC_RELEASE);
	rte_tracer_lifecycle(RTE_LC_RING_START, g_pid, 1);
	__atomic_store_n(&rte_g_active, g_exec_active, __ATOMIC_RELEASE);
	if (exec)
		rte_tracer_own_int(RTE_OWN_EXEC_FAIL, err);
}

void rte_tracer_exec_failed(int err)
{
	come_back(err, 1);
}

void rte_tracer_identity_failed(void)
{
	come_back(0, 0);
}

/* ---- read accessors ------------------------------------------------------ */

int rte_tracer_state(void)
{
	rte_tracer_settle();
	return state();
}

RTE_FORKTEXT int rte_tracer_stop_needed(void)
{
	int st = state();

	if (st != ST_RUNNING && st != ST_FORKED)
		return 0;
	if (st == ST_FORKED || child_pending())
		return g_cfg.preserve;
	return 1;
}

int rte_tracer_paused(void)
{
	return g_paused;
}

uint32_t rte_tracer_gen(void)
{
	/* Acquire: pairs with the release of g_gen in begin_file(). */
	return __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
}

pid_t rte_tracer_pid(void)
{
	rte_tracer_settle();
	return g_pid;
}

const struct rte_config *rte_tracer_config(void)
{
	return &g_cfg;
}

const struct rte_file *rte_tracer_file(void)
{
	return &g_file;
}

/* ---- pause and resume ---------------------------------------------------- */

void rte_tracer_pause_locked(void)
{
	if (g_state == ST_FORKED && !g_paused) {
		/* A fork child without its file yet: nothing to write. */
		g_paused = 1;
		/* Release: as below. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	} else if (g_state == ST_RUNNING && !g_paused) {
		rte_tracer_lifecycle(RTE_LC_RING_PAUSE, 0, 1);
		g_paused = 1;
		/* Release: pairs with nothing in particular; writers that
		 * still see the old value finish a valid write. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	}
}

void rte_tracer_resume_locked(void)
{
	if (g_state == ST_FORKED && g_paused) {
		g_paused = 0;
		/* Release: the pending value sends the next event to the
		 * slow path, which makes the file. */
		__atomic_store_n(&rte_g_active, RTE_GEN_PENDING,
		                 __ATOMIC_RELEASE);
	} else if (g_state == ST_RUNNING && g_paused) {
		g_paused = 0;
		/* Release: pairs with the acquire in rte_tracer_attach() (the
		 * generation is already published; this only re-opens). */
		__atomic_store_n(&rte_g_active, g_gen, __ATOMIC_RELEASE);
		rte_tracer_lifecycle(RTE_LC_RING_RESUME, 0, 1);
	}
}

void rte_tracer_lost(void)
{
	/* Release: pairs with the relaxed load in rte_enter(). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	/* Release: pairs with the state loads: no exit path writes or
	 * removes anything from now on. */
	__atomic_store_n(&g_state, ST_DISABLED, __ATOMIC_RELEASE);
	if (!g_cfg.preserve)
		rte_file_remove(&g_file);
}

/* ---- load --------------------------------------------------------------- */

void rte_tracer_not_preloaded(void)
{
	g_not_preloaded = 1;
}

void rte_tracer_load(void)
{
	g_pool_ok = rte_pool_load(thread_end) == 0;
	if ((g_proc = rte_pool_map_wiped(sizeof(*g_proc))))
		g_proc->pid = rte_sys_getpid();
}
