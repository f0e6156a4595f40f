/*
 * life.c - each file's first and last events: start (the file made, ring
 * 0 given to the starting thread, ring_start, rte.proc), stop (rte.dropped,
 * rte.exit, ring_stop, the file removed or kept), and exec or a change of
 * identity (the file moved out of the way, and back if that fails). Part
 * of the tracer (state.c has its picture).
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "internal.h"
#include "proc.h"
#include "registry.h"
#include "sys.h"

static uint32_t g_exec_active; /* rte_g_active before exec */


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
	[RTE_OWN_SPAWN_FAIL] = {"rte.spawn_failed", RTE_TYPE_CUSTOM},
};

/* rte.proc on ring 0 (w is ours and busy; the lock is held, which
 * guards the buffer: static, so that a start costs no page of stack). */
static void write_proc(struct rte_ring_writer *w, int fork_child)
{
	static char buf[RTE_PROC_PAYLOAD_MAX];
	int id = rte_tr_own[RTE_OWN_PROC];
	size_t n;

	if (id < 0)
		return;
	n = rte_proc_start_payload(buf, fork_child,
	                           fork_child ? rte_tr_fork_ppid
	                                      : rte_sys_getppid(),
	                           rte_tr_cfg.preserve);
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), buf, n);
}

/* Fresh file mapped in rte_tr_file: reset the slots, give ring 0 to the
 * calling thread, publish the generation, write ring_start (and
 * fork_child). */
void rte_tr_begin_file(int fork_child, uint64_t start_ts)
{
	struct rte_thread *t = &rte_self;
	uint32_t gen = rte_tr_gen + 1;
	/* In a fork child, ring 0 is the forking thread's even if another
	 * thread of the child makes the file (it then writes ring 0's first
	 * events, and the forking thread attaches to it later). */
	struct rte_thread *heir =
		fork_child ? __atomic_exchange_n(&rte_tr_heir, NULL,
		                                 __ATOMIC_RELAXED)
		           : NULL;
	unsigned lo, hi; /* the registered ids' bounds */

	if (!heir)
		heir = t;

	rte_slots_reset();
	rte_g_dropped = 0;
	/* Problems are reported once per file (a fork child's too). */
	rte_tr_once_full = 0;
	t->ring = -1;
	t->gen = 0;
	rte_registry_bounds(&lo, &hi); /* not the 8192 ids: a dozen */
	for (unsigned id = 0; id < RTE_MAX_USER_EVENTS; id++) {
		if (id == lo && lo < hi)
			id = hi;
		if (rte_registry_type((int)id))
			rte_tracer_write_name(id, rte_registry_name(id));
	}
	if (rte_slots_reserve(&rte_tr_file, 0) == 0) {
		/* Ring 0's first events, before anyone can attach to it. */
		int busy = t->busy;

		rte_tr_bind_ring(t, 0, gen);
		rte_ring_writer_reset(&t->w);
		t->busy = 1;
		rte_ring_write1(&t->w, lc_hdr(RTE_LC_RING_START), start_ts,
		                (uint64_t)(int64_t)rte_tr_pid);
		if (fork_child)
			rte_ring_write1(&t->w, lc_hdr(RTE_LC_FORK_CHILD),
			                start_ts, 0);
		write_proc(&t->w, fork_child);
		if (heir == t) {
			rte_tr_write_labels(&t->w);
		} else {
			t->ring = -1;
			t->gen = 0;
			rte_slots_set_owner(0, rte_tr_heir_th);
			/* Relaxed: published by the release of rte_tr_gen. */
			__atomic_store_n(&rte_tr_heir, heir, __ATOMIC_RELAXED);
		}
		t->busy = busy;
	} else {
		rte_slots_break(0);
	}
	/* Release: publishes the file, layout, slots and ring 0's first
	 * events; pairs with the acquire load in attach_running(). */
	__atomic_store_n(&rte_tr_gen, gen, __ATOMIC_RELEASE);
	/* Release, after the generation: pairs with state() in
	 * attach_running(). */
	__atomic_store_n(&rte_tr_state, ST_RUNNING, __ATOMIC_RELEASE);
	/* Release: as for rte_tr_gen; the fast path only needs the value. */
	__atomic_store_n(&rte_g_active, rte_tr_paused ? 0 : gen,
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
		if (rte_tr_own[i] < 0)
			rte_tr_own[i] = rte_tracer_register_own(
				g_own_events[i].name, g_own_events[i].type);
}

/* A failure's one line (start and materialize: lock held). Static: the
 * start runs in every traced process, and 4 KiB more of stack there is a
 * page fault of the stack most programs never touch. */
char rte_tr_err[PATH_MAX + 160];

int rte_tracer_start_locked(void)
{
	char *err = rte_tr_err;
	const size_t errlen = sizeof(rte_tr_err);
	pid_t pid = rte_sys_getpid();

	if (rte_tr_state == ST_RUNNING || rte_tr_state == ST_FORKED)
		return RTE_OK;
	if (rte_tr_state != ST_OFF)
		return RTE_ESTATE;
	rte_config_read(&rte_tr_cfg);
	if (rte_tr_not_preloaded) {
		rte_warn(NULL, "librte.so was loaded with dlopen, not "
		         "preloaded: it cannot see this program's forks, "
		         "execs and exits, so it stands aside (LD_PRELOAD "
		         "traces)");
		/* Release: pairs with state(). */
		__atomic_store_n(&rte_tr_state, ST_DISABLED, __ATOMIC_RELEASE);
		return RTE_ESTATE;
	}
	if (!rte_tr_cfg.trace_ocaml && rte_ocaml_in_process()) {
		rte_warn(NULL, "this program runs OCaml 5 runtime events "
		         "itself; librte stands aside (RTE_TRACE_OCAML=1 "
		         "overrides)");
		/* Release: pairs with state(). */
		__atomic_store_n(&rte_tr_state, ST_DISABLED, __ATOMIC_RELEASE);
		return RTE_ESTATE;
	}
	if (!rte_tr_proc || !rte_tr_pool_ok) {
		/* Without a page that reads zero in a child, a child made by
		 * a raw fork could write into our file. */
		rte_tracer_disable("cannot map a page with MADV_WIPEONFORK "
		                 "(Linux 4.14 or later is needed)");
		return RTE_ESTATE;
	}
	rte_clock_init(rte_tr_cfg.force_monotonic);
	/* Before the file exists: rte_tr_begin_file() writes every name
	 * once. */
	register_own_events();
	if (rte_file_create(&rte_tr_file, &rte_tr_cfg, pid, err, errlen) < 0) {
		rte_tr_disable_quiet(&rte_tr_file, err);
		return RTE_ESTATE;
	}
	rte_tr_pid = pid;
	rte_tr_begin_file(0, rte_clock_ns());
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->started)
			(*o)->started();
	return RTE_OK;
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
	int id = rte_tr_own[RTE_OWN_EXIT];

	if (id < 0)
		return;
	rte_proc_exit_rec(&r);
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), &r,
	                        sizeof(r));
}

void rte_tracer_stop(void)
{
	struct rte_ring_writer *w;
	int id = rte_tr_own[RTE_OWN_DROPPED];
	uint64_t dropped;

	if (rte_tr_fileless_end())
		return; /* a fork child that never wrote: its parent tells */
	if (!rte_tracer_owns_process())
		return; /* not tracing, or a vfork child sharing our memory */
	stopping();
	/* Acq_rel: one stopper; pairs with the same exchange in a racing
	 * exec or exit. */
	if (__atomic_exchange_n(&rte_tr_stopping, 1, __ATOMIC_ACQ_REL))
		return;
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->final_stop)
			(*o)->final_stop(); /* prof/: every timer deleted */
	/* Release: from here on writers stop (those inside finish). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	w = rte_tr_enter_any(1);
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
	__atomic_store_n(&rte_tr_state, ST_STOPPED, __ATOMIC_RELEASE);
	/* A crashed process keeps its file even without PRESERVE. */
	if (!rte_tr_cfg.preserve && !keep_file())
		rte_file_remove(&rte_tr_file);
	else if (!rte_tr_cfg.preserve)
		rte_file_keep(&rte_tr_file); /* the sweep leaves it alone */
}

/* ---- exec --------------------------------------------------------------- */

/* exec, identity change: ring_stop, and the file out of the way (see
 * rte_file_exec_away). Returns 1 if it did. */
static int leave_file(const char *prog)
{
	struct rte_ring_writer *w;
	int e;

	if (!rte_tracer_owns_process())
		return 0;
	stopping();
	if (__atomic_exchange_n(&rte_tr_stopping, 1, __ATOMIC_ACQ_REL))
		return 0;
	if (prog)
		rte_tracer_own_custom(RTE_OWN_EXEC, prog, strlen(prog));
	/* Acq_rel: stops writers, keeps the value for a failed exec. */
	g_exec_active = __atomic_exchange_n(&rte_g_active, 0, __ATOMIC_ACQ_REL);
	w = rte_tr_enter_any(1);
	if (w) {
		rte_ring_write0(w, lc_hdr(RTE_LC_RING_STOP), rte_clock_ns());
		rte_leave();
	}
	/* Release: pairs with state(). */
	__atomic_store_n(&rte_tr_state, ST_STOPPED, __ATOMIC_RELEASE);
	e = rte_file_exec_away(&rte_tr_file, rte_tr_cfg.preserve);
	if (e && rte_tr_file.denied) /* switched user: stand aside quietly */
		rte_note("cannot move %s out of the way of exec: %s",
		         rte_tr_file.path, strerrordesc_np(e));
	else if (e)
		rte_warn(NULL, "cannot move %s out of the way of exec: %s",
		         rte_tr_file.path, strerrordesc_np(e));
	return 1;
}

int rte_tracer_exec_begin(const char *prog)
{
	return leave_file(prog);
}

int rte_tracer_identity_begin(void)
{
	if (rte_tr_cfg.preserve || !leave_file(NULL))
		return 0;
	rte_note("%s removed: this process switches to a user that may not "
	         "remove it; tracing stopped", rte_tr_file.path);
	return 1;
}

/* After a failed exec or identity change: the file back, tracing on. */
static void come_back(int err, int exec)
{
	int e = rte_file_exec_back(&rte_tr_file, rte_tr_pid);

	/* The blocks of the claimed rings and written names, reserved in
	 * the old file, are reserved again in the copy (a full disk must
	 * never mean SIGBUS). */
	if (!e && rte_slots_rereserve(&rte_tr_file) < 0)
		e = ENOSPC;
	if (e) {
		rte_warn(NULL, "%s failed and %s could not be restored: %s; "
		         "tracing stopped", exec ? "exec" : "the user change",
		         rte_tr_file.path, strerrordesc_np(e));
		return;
	}
	/* Release (all three): pair with state(), the exchanges on
	 * rte_tr_stopping and rte_enter(); the file is the same as before. */
	__atomic_store_n(&rte_tr_state, ST_RUNNING, __ATOMIC_RELEASE);
	__atomic_store_n(&rte_tr_stopping, 0, __ATOMIC_RELEASE);
	rte_tracer_lifecycle(RTE_LC_RING_START, rte_tr_pid, 1);
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
