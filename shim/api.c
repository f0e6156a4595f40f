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

static uint64_t user_hdr(unsigned t, int id)
{
	return rte_hdr_make(0, 1, t, (unsigned)id);
}

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

RTE_EXPORT void (rte_unit)(int id)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_UNIT);

	if (!w)
		return;
	rte_ring_write0(w, user_hdr(RTE_UMSG_UNIT, id), rte_clock_ns());
	rte_leave_w(w);
}

RTE_EXPORT void (rte_int)(int id, int64_t value)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_INT);

	if (!w)
		return;
	rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id), rte_clock_ns(),
	                (uint64_t)value);
	rte_leave_w(w);
}

RTE_EXPORT void (rte_span_begin)(int id)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_SPAN);

	if (!w)
		return;
	rte_ring_write0(w, user_hdr(RTE_UMSG_SPAN_BEGIN, id), rte_clock_ns());
	rte_leave_w(w);
}

RTE_EXPORT void (rte_span_end)(int id)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_SPAN);

	if (!w)
		return;
	rte_ring_write0(w, user_hdr(RTE_UMSG_SPAN_END, id), rte_clock_ns());
	rte_leave_w(w);
}

RTE_EXPORT void (rte_custom)(int id, const void *bytes, size_t len)
{
	struct rte_ring_writer *w = enter_user(id, RTE_TYPE_CUSTOM);

	if (!w)
		return;
	if (!bytes)
		len = 0;
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), bytes, len);
	rte_leave_w(w);
}

/* ---- runtime events -------------------------------------------------------- */

static uint64_t rt_hdr(unsigned t, unsigned id)
{
	return rte_hdr_make(0, 0, t, id);
}

RTE_EXPORT void (rte_runtime_begin)(unsigned phase)
{
	struct rte_ring_writer *w;

	if (phase >= RTE_MAX_USER_EVENTS || !(w = rte_enter()))
		return;
	rte_ring_write0(w, rt_hdr(RTE_MSG_BEGIN, phase), rte_clock_ns());
	rte_leave_w(w);
}

RTE_EXPORT void (rte_runtime_end)(unsigned phase)
{
	struct rte_ring_writer *w;

	if (phase >= RTE_MAX_USER_EVENTS || !(w = rte_enter()))
		return;
	rte_ring_write0(w, rt_hdr(RTE_MSG_EXIT, phase), rte_clock_ns());
	rte_leave_w(w);
}

RTE_EXPORT void (rte_runtime_counter)(unsigned counter, uint64_t value)
{
	struct rte_ring_writer *w;

	if (counter >= RTE_MAX_USER_EVENTS || !(w = rte_enter()))
		return;
	rte_ring_write1(w, rt_hdr(RTE_MSG_COUNTER, counter), rte_clock_ns(),
	                value);
	rte_leave_w(w);
}

RTE_EXPORT void (rte_runtime_lifecycle)(unsigned lifecycle, int64_t data)
{
	struct rte_ring_writer *w;

	if (lifecycle >= RTE_MAX_USER_EVENTS || !(w = rte_enter()))
		return;
	rte_ring_write1(w, rt_hdr(RTE_MSG_LIFECYCLE, lifecycle),
	                rte_clock_ns(), (uint64_t)data);
	rte_leave_w(w);
}

RTE_EXPORT void (rte_runtime_alloc)(const uint64_t buckets[RTE_ALLOC_BUCKETS])
{
	struct rte_ring_writer *w;

	if (!buckets || !(w = rte_enter()))
		return;
	rte_ring_write(w, rt_hdr(RTE_MSG_ALLOC, 0), rte_clock_ns(), buckets,
	               RTE_ALLOC_BUCKETS);
	rte_leave_w(w);
}
