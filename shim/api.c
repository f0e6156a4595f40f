/*
 * api.c - the public producer API (rte/rte.h): start/pause/resume,
 * rte_register (on registry.h) and the lock-free event writers.
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "prof/profiler.h"
#include "registry.h"
#include "rte/rte.h"
#include "tracer.h"

RTE_EXPORT int rte_register(const char *name, enum rte_type type)
{
	int saved = errno, len = rte_registry_name_len(name), r;
	sigset_t old_mask;

	if (len < 0 || !strncmp(name, "rte.", 4))
		return RTE_EBADNAME;
	if ((unsigned)type > RTE_TYPE_CUSTOM)
		return RTE_EINVAL;
	rte_lock(&old_mask);
	r = rte_registry_add(name, (size_t)len, type, 0, rte_tracer_write_name);
	rte_unlock(&old_mask);
	errno = saved;
	return r;
}

/* ---- control --------------------------------------------------------------- */

RTE_EXPORT int rte_start(void)
{
	int saved = errno, r;
	sigset_t old_mask;

	rte_lock(&old_mask);
	r = rte_tracer_start_locked();
	rte_unlock(&old_mask);
	rte_prof_thread_check(); /* armed under the lock: the real mask now */
	errno = saved;
	return r;
}

RTE_EXPORT void rte_pause(void)
{
	int saved = errno;
	sigset_t old_mask;

	rte_lock(&old_mask);
	rte_tracer_pause_locked();
	rte_unlock(&old_mask);
	errno = saved;
}

RTE_EXPORT void rte_resume(void)
{
	int saved = errno;
	sigset_t old_mask;

	rte_lock(&old_mask);
	rte_tracer_resume_locked();
	rte_unlock(&old_mask);
	rte_prof_thread_check();
	errno = saved;
}

RTE_EXPORT int rte_is_active(void)
{
	/* Relaxed: a snapshot; nothing is read on the strength of it. */
	return __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) != 0;
}

RTE_EXPORT int rte_path(char *buf, size_t len)
{
	int r, st;
	size_t n;
	sigset_t old_mask;

	rte_tracer_materialize(); /* a fork child's file is made on demand */
	rte_lock(&old_mask);
	st = rte_tracer_state();
	if (st != ST_RUNNING && st != ST_STOPPED) {
		r = RTE_ESTATE;
	} else if (!buf || (n = strlen(rte_tracer_file()->path)) + 1 > len) {
		r = RTE_EINVAL;
	} else {
		memcpy(buf, rte_tracer_file()->path, n + 1);
		r = (int)n;
	}
	rte_unlock(&old_mask);
	return r;
}

/* ---- user events ----------------------------------------------------------- */

/* The writer for a user event of type `type`, or NULL. */
static inline struct rte_ring_writer *enter_user(int id, enum rte_type type)
{
	struct rte_ring_writer *w = rte_enter();

	if (w && ((unsigned)id >= RTE_MAX_USER_EVENTS ||
	          rte_registry_type(id) != (unsigned)type + 1)) {
		rte_leave_w(w);
		return NULL;
	}
	return w;
}

/*
 * The write path of the fixed-size events (2 or 3 words), in two parts.
 *
 * emit() is the fast path: the thread attached to the current file, not
 * inside another write, the clock inside its anchor's period and room at
 * the tail. It is a leaf that keeps everything in call-clobbered
 * registers: every other case leaves it by a tail call to one of the
 * slow paths below, which do what rte_enter(), rte_clock_ns() and
 * rte_ring_write() do in full. So the common event pays for no stack
 * frame and no saved register (before the split: four pushes and four
 * pops per event, kept for calls the fast path never makes) and reads
 * the ring's tail pointer once.
 *
 * The order is rte_enter()'s: busy is set (and fenced) before the
 * generation, the tail and the clock's anchor are read, so a signal
 * handler that interrupts us either ran before (we see its tail, its
 * attach) or drops its event.
 */

/* The whole path, as before the split: for any case emit() leaves.
 * type: as emit's (the id's type is checked here, after rte_enter, as
 * before). */
__attribute__((noinline)) static void emit_slow(int id, unsigned type,
                                                uint64_t hdr, unsigned np,
                                                uint64_t v)
{
	struct rte_ring_writer *w =
		type ? enter_user(id, (enum rte_type)(type - 1)) : rte_enter();

	if (!w)
		return;
	rte_ring_write(w, hdr, rte_clock_ns(), &v, np);
	rte_leave_w(w);
}

/* Busy is set on w's thread: the clock needs a re-anchor or the ring
 * room (its slow paths). */
__attribute__((noinline)) static void emit_slow_w(struct rte_ring_writer *w,
                                                  uint64_t hdr, unsigned np,
                                                  uint64_t v)
{
	rte_ring_write(w, hdr, rte_clock_ns(), &v, np);
	rte_leave_w(w);
}

/* Write an event of np (0 or 1) payload words, header hdr (without the
 * id). type: the user event type + 1 its id must have, or 0 (a runtime
 * event: id < RTE_MAX_USER_EVENTS checked by the caller). */
static inline __attribute__((always_inline)) void
emit(int id, unsigned type, uint64_t hdr, unsigned np, uint64_t v)
{
	uint32_t a = __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED);
	struct rte_thread *t = rte_self_p;
	const struct rte_clock_anchor *c = &rte_clock_tls;
	struct rte_ring_writer *w;
	uint64_t tsc, d, tail, *tail_p, *dst, len = 2 + np;
	unsigned uid = (unsigned)id;
	int stale;

	if (__builtin_expect(a == 0, 0))
		return;
	hdr |= (uint64_t)uid << RTE_HDR_ID_SHIFT | len << RTE_HDR_LEN_SHIFT;
	if (__builtin_expect(!t || t->busy, 0)) {
		emit_slow(id, type, hdr, np, v);
		return;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Checked with busy set, as rte_enter() does: from here on no signal
	 * handler of ours attaches, detaches or writes on this thread. */
	stale = t->gen != a;
	if (__builtin_expect(stale, 0) ||
	    (type && (uid >= RTE_MAX_USER_EVENTS || rte_g_types[uid] != type))) {
		/* Not attached to this file yet (the full path attaches), or
		 * an id of another type (nothing written). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
		if (stale)
			emit_slow(id, type, hdr, np, v);
		return;
	}
	w = &t->w;
	tsc = rte_clock_tsc();
	d = tsc - c->tsc0;
	tail_p = w->tail_p;
	tail = __atomic_load_n(tail_p, __ATOMIC_RELAXED); /* rte_ring_tail */
	if (__builtin_expect(d >= c->period || tail + len > w->limit, 0)) {
		emit_slow_w(w, hdr, np, v);
		return;
	}
	dst = w->data + (tail & w->mask);
	rte_ring_store_word(dst, hdr);
	rte_ring_store_word(dst + 1, rte_clock_at(c, d));
	if (np)
		rte_ring_store_word(dst + 2, v);
	rte_ring_commit_at(w, tail_p, tail, (unsigned)len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* The header of a user event of message type t, without its id and
 * length (emit adds them). */
static uint64_t user_hdr(unsigned t)
{
	return rte_hdr_make(0, 1, t, 0);
}

RTE_EXPORT void (rte_unit)(int id)
{
	emit(id, RTE_TYPE_UNIT + 1, user_hdr(RTE_UMSG_UNIT), 0, 0);
}

RTE_EXPORT void (rte_int)(int id, int64_t value)
{
	emit(id, RTE_TYPE_INT + 1, user_hdr(RTE_UMSG_INT), 1, (uint64_t)value);
}

RTE_EXPORT void (rte_span_begin)(int id)
{
	emit(id, RTE_TYPE_SPAN + 1, user_hdr(RTE_UMSG_SPAN_BEGIN), 0, 0);
}

RTE_EXPORT void (rte_span_end)(int id)
{
	emit(id, RTE_TYPE_SPAN + 1, user_hdr(RTE_UMSG_SPAN_END), 0, 0);
}

RTE_EXPORT void (rte_custom)(int id, const void *bytes, size_t len)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_CUSTOM);

	if (!w)
		return;
	if (!bytes)
		len = 0;
	rte_tracer_write_custom(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, (unsigned)id),
	                        bytes, len);
	rte_leave_w(w);
}

/* ---- runtime events -------------------------------------------------------- */

/* The header of a runtime event of message type t, without its id and
 * length (emit adds them). */
static uint64_t rt_hdr(unsigned t)
{
	return rte_hdr_make(0, 0, t, 0);
}

RTE_EXPORT void (rte_runtime_begin)(unsigned phase)
{
	if (phase < RTE_MAX_USER_EVENTS)
		emit((int)phase, 0, rt_hdr(RTE_MSG_BEGIN), 0, 0);
}

RTE_EXPORT void (rte_runtime_end)(unsigned phase)
{
	if (phase < RTE_MAX_USER_EVENTS)
		emit((int)phase, 0, rt_hdr(RTE_MSG_EXIT), 0, 0);
}

RTE_EXPORT void (rte_runtime_counter)(unsigned counter, uint64_t value)
{
	if (counter < RTE_MAX_USER_EVENTS)
		emit((int)counter, 0, rt_hdr(RTE_MSG_COUNTER), 1, value);
}

RTE_EXPORT void (rte_runtime_lifecycle)(unsigned lifecycle, int64_t data)
{
	if (lifecycle < RTE_MAX_USER_EVENTS)
		emit((int)lifecycle, 0, rt_hdr(RTE_MSG_LIFECYCLE), 1,
		     (uint64_t)data);
}

RTE_EXPORT void (rte_runtime_alloc)(const uint64_t buckets[RTE_ALLOC_BUCKETS])
{
	struct rte_ring_writer *w;

	if (!buckets || !(w = rte_enter()))
		return;
	rte_ring_write(w, rt_hdr(RTE_MSG_ALLOC), rte_clock_ns(), buckets,
	               RTE_ALLOC_BUCKETS);
	rte_leave_w(w);
}
