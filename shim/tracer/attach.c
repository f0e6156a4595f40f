/*
 * attach.c - threads bound to rings: the attach slow path of the write
 * path (a thread's first event, the ring kept for the thread that
 * forked), a thread's end, and the writers of rte.* and lifecycle events
 * (thread labels, names, custom payloads). Part of the tracer (state.c
 * has its picture).
 *
 * Rings are claimed, not assigned (slots.c): a thread takes the first FREE
 * slot on its first event and gives it back when it ends (pthread key
 * destructor, rte_tr_thread_end here), so ring indexes are reused and
 * nothing on the write path takes a lock. The thread that starts tracing
 * takes ring 0.
 *
 * Generations: each file this process maps (the first one, then a new one
 * in each fork child) has a generation number. rte_g_active holds it while
 * tracing runs unpaused, and a thread's writer is valid iff its recorded
 * generation equals it: one load and one compare decide the fast path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"

/* A warning of full rings was given for this file (rte_tr_begin_file
 * resets it). */
int rte_tr_once_full;

static void thread_name(char name[17])
{
	memset(name, 0, 17);
	/* The raw system call: our own prctl() wrapper must not see it. */
	if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) < 0)
		name[0] = '\0';
}

/* The ring labels: kernel tid and thread name, on the calling thread's
 * ring (w is ours and busy). */
void rte_tr_write_labels(struct rte_ring_writer *w)
{
	char name[17];
	int id = rte_tr_own[RTE_OWN_TID];

	if (id >= 0)
		rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id), rte_clock_ns(),
		                (uint64_t)gettid());
	id = rte_tr_own[RTE_OWN_NAME];
	thread_name(name);
	if (id >= 0)
		rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), name,
		                      strlen(name));
}

void rte_tr_bind_ring(struct rte_thread *t, unsigned r, uint32_t gen)
{
	rte_ring_writer_attach(&t->w, rte_tr_file.base, &rte_tr_file.l, r);
	rte_slots_bind(&t->w, &rte_tr_file, r); /* grows its reservation */
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
	if (child_pending() && rte_tr_adopt_child() < 0)
		return NULL;
	if (state() == ST_FORKED)
		rte_tracer_materialize();
	return attach_running(t, quiet);
}

/* The thread that forked takes the ring 0 kept for it (see rte_tr_begin_file).
 * Returns 1 if it did. */
static int take_heritage(struct rte_thread *t, uint32_t gen, int quiet)
{
	struct rte_thread *me = t;

	/* Acq_rel: one taker; pairs with the release in rte_tr_begin_file(), so
	 * ring 0's header (ring_start written there) is visible. */
	if (__atomic_load_n(&rte_tr_heir, __ATOMIC_RELAXED) != t ||
	    !__atomic_compare_exchange_n(&rte_tr_heir, &me, NULL, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	rte_tr_bind_ring(t, 0, gen);
	if (!quiet)
		rte_tr_write_labels(&t->w);
	return 1;
}

static struct rte_ring_writer *attach_running(struct rte_thread *t, int quiet)
{
	uint32_t gen, epoch;
	int r;

	/* State first: rte_tr_begin_file() publishes the generation before the
	 * state, so a thread that sees RUNNING sees the new generation (and
	 * never binds a ring of a fresh file under an old one). */
	if (state() != ST_RUNNING)
		return NULL;
	/* Acquire: pairs with the release store in rte_tr_begin_file(): the
	 * file's mapping, layout and slots are visible. */
	gen = __atomic_load_n(&rte_tr_gen, __ATOMIC_ACQUIRE);
	epoch = rte_slots_epoch();
	if (gen == 0)
		return NULL;
	if (t->gen == gen && t->ring >= 0)
		return &t->w;
	if (take_heritage(t, gen, quiet))
		return &t->w;
	if (t->fail_gen == gen && t->fail_epoch == epoch)
		goto drop; /* no ring was released since we last looked */
	r = rte_slots_claim(&rte_tr_file);
	if (r < 0) {
		t->fail_gen = gen;
		t->fail_epoch = epoch;
		if (r == -2)
			rte_warn(&rte_tr_once_full,
			         "all %u rings of %s are in use; events of "
			         "further threads are dropped and counted in "
			         "rte.dropped (RTE_RINGS sets the number)",
			         (unsigned)rte_tr_file.l.max_domains,
			         rte_tr_file.path);
		goto drop;
	}
	rte_tr_bind_ring(t, (unsigned)r, gen);
	if (quiet)
		return &t->w;
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->attached)
			(*o)->attached(); /* e.g. prof/: its timer */
	rte_ring_write1(&t->w, lc_hdr(RTE_LC_DOMAIN_SPAWN), rte_clock_ns(),
	                (uint64_t)(int64_t)rte_tr_pid);
	rte_tr_write_labels(&t->w);
	return &t->w;
drop:
	/* Relaxed: a statistic, read once at ring_stop. */
	__atomic_fetch_add(&rte_g_dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Like rte_enter() but also while paused: for lifecycle events. */
struct rte_ring_writer *rte_tr_enter_any(int quiet)
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
	struct rte_ring_writer *w = rte_tr_enter_any(0);

	if (!w)
		return;
	rte_ring_write1(w, lc_hdr(RTE_LC_FORK_PARENT), ts,
	                (uint64_t)(int64_t)child);
	rte_leave();
}

void rte_tracer_lifecycle(unsigned lc, int64_t data, int with_data)
{
	struct rte_ring_writer *w = rte_tr_enter_any(0);

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
	if (__atomic_compare_exchange_n(&rte_tr_heir, &me, NULL, 0,
	                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		rte_slots_free(0);
	/* Acquire: pairs with rte_tr_begin_file(); a ring of an older file
	 * (fork child) is simply forgotten. */
	if (t->ring < 0 || t->busy ||
	    t->gen != __atomic_load_n(&rte_tr_gen, __ATOMIC_ACQUIRE)) {
		t->ring = -1;
		t->gen = 0;
		return;
	}
	/* Relaxed: only decides whether to write domain_terminate. */
	if (__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED)) {
		t->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rte_ring_write1(&t->w, lc_hdr(RTE_LC_DOMAIN_TERMINATE),
		                rte_clock_ns(), (uint64_t)(int64_t)rte_tr_pid);
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
void rte_tr_thread_end(void *v)
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
	return which >= 0 && which < RTE_OWN_COUNT ? rte_tr_own[which] : -1;
}

void rte_tracer_own_int(int which, int64_t v)
{
	int id = rte_tr_own[which];
	struct rte_ring_writer *w;

	if (id < 0 || !(w = rte_enter()))
		return;
	rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id), rte_clock_ns(),
	                (uint64_t)v);
	rte_leave();
}

/* rte.* custom event `which`, written while paused too if `always`. */
static void own_custom(int which, const void *bytes, size_t n, int always)
{
	int id = rte_tr_own[which];
	struct rte_ring_writer *w;

	if (id < 0 || !(w = always ? rte_tr_enter_any(0) : rte_enter()))
		return;
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), bytes, n);
	rte_leave();
}

void rte_tracer_own_custom(int which, const void *bytes, size_t n)
{
	own_custom(which, bytes, n, 0);
}

void rte_tracer_own_custom_always(int which, const void *bytes, size_t n)
{
	own_custom(which, bytes, n, 1);
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
	i = rte_slots_owned_by((unsigned)rte_tr_file.l.max_domains, th);
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
	if (!rte_tr_file.base || id >= RTE_MAX_USER_EVENTS || child_pending())
		return;
	rte_slots_write_name(&rte_tr_file, id, name);
}
