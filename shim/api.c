/*
 * api.c - the public producer API (rte/rte.h): start/pause/resume, the
 * user event registry, and the lock-free event writers.
 *
 * Registry: names live in a private table (so that events registered
 * before tracing starts reach the file when it does, and again in each
 * fork child's file) and in an open-addressing hash for lookups by name.
 * rte_g_types[id] (enum rte_type + 1, 0 = free) is what the write path
 * checks: one byte load per event. User ids are handed out from 0 upwards
 * like OCaml's; rte's own rte.* events take ids from the top (8191 down),
 * so they never shift a program's ids.
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "rte/rte.h"
#include "shim.h"

#define HASH_SLOTS (2 * RTE_MAX_USER_EVENTS)

static char g_names[RTE_MAX_USER_EVENTS][RTE_NAME_SLOT_BYTES];
static uint16_t g_hash[HASH_SLOTS]; /* id + 1, 0 = empty; under the lock */
static unsigned g_low;              /* lowest id that may be free */
static unsigned g_high = RTE_MAX_USER_EVENTS - 1; /* highest, for rte.* */

int rte_api_register_own(const char *name, enum rte_type type);
void rte_api_write_all_names(void);

static unsigned type_of(int id)
{
	/* Relaxed: a byte that is set once per id; the write path only needs
	 * the value (the name slot is independent of the event). */
	return __atomic_load_n(&rte_g_types[id], __ATOMIC_RELAXED);
}

/* Length of a valid name (1..127 printable ASCII bytes), or -1. */
static int name_len(const char *name)
{
	size_t n = 0;

	if (!name)
		return -1;
	for (; name[n]; n++)
		if (n >= RTE_NAME_MAX || name[n] < 0x20 || name[n] > 0x7e)
			return -1;
	return n ? (int)n : -1;
}

static unsigned hash_name(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h & (HASH_SLOTS - 1);
}

/* Hash slot holding `name`, or the empty slot where it would go. */
static unsigned hash_find(const char *name)
{
	unsigned i = hash_name(name);

	while (g_hash[i] && strcmp(g_names[g_hash[i] - 1], name))
		i = (i + 1) & (HASH_SLOTS - 1);
	return i;
}

static int free_id(int top)
{
	if (top) {
		while (g_high > 0 && rte_g_types[g_high])
			g_high--;
		return rte_g_types[g_high] ? -1 : (int)g_high;
	}
	while (g_low < RTE_MAX_USER_EVENTS && rte_g_types[g_low])
		g_low++;
	return g_low < RTE_MAX_USER_EVENTS ? (int)g_low : -1;
}

static int add_locked(const char *name, size_t len, enum rte_type type,
                      int top)
{
	unsigned h = hash_find(name);
	int id;

	if (g_hash[h]) {
		id = g_hash[h] - 1;
		return type_of(id) == (unsigned)type + 1 ? id : RTE_ETYPE;
	}
	id = free_id(top);
	if (id < 0)
		return RTE_ETOOMANY;
	memcpy(g_names[id], name, len + 1);
	g_hash[h] = (uint16_t)(id + 1);
	rte_core_write_name((unsigned)id, g_names[id]);
	/* Relaxed: see type_of(); the lock orders registrations. */
	__atomic_store_n(&rte_g_types[id], (uint8_t)(type + 1),
	                 __ATOMIC_RELAXED);
	return id;
}

int rte_api_register_own(const char *name, enum rte_type type)
{
	int id = add_locked(name, strlen(name), type, 1);

	return id >= 0 ? id : -1;
}

void rte_api_write_all_names(void)
{
	for (unsigned id = 0; id < RTE_MAX_USER_EVENTS; id++)
		if (rte_g_types[id])
			rte_core_write_name(id, g_names[id]);
}

RTE_EXPORT int rte_register(const char *name, enum rte_type type)
{
	int saved = errno, len = name_len(name), r;
	sigset_t old_mask;

	if (len < 0 || !strncmp(name, "rte.", 4))
		return RTE_EBADNAME;
	if ((unsigned)type > RTE_TYPE_CUSTOM)
		return RTE_EINVAL;
	rte_lock(&old_mask);
	r = add_locked(name, (size_t)len, type, 0);
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
	r = rte_core_start_locked();
	rte_unlock(&old_mask);
	errno = saved;
	return r;
}

RTE_EXPORT void rte_pause(void)
{
	int saved = errno;
	sigset_t old_mask;

	rte_lock(&old_mask);
	if (rte_g_state == ST_FORKED && !rte_g_paused) {
		/* A fork child without its file yet: nothing to write. */
		rte_g_paused = 1;
		/* Release: as below. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	} else if (rte_g_state == ST_RUNNING && !rte_g_paused) {
		rte_core_lifecycle(RTE_LC_RING_PAUSE, 0, 1);
		rte_g_paused = 1;
		/* Release: pairs with nothing in particular; writers that
		 * still see the old value finish a valid write. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	}
	rte_unlock(&old_mask);
	errno = saved;
}

RTE_EXPORT void rte_resume(void)
{
	int saved = errno;
	sigset_t old_mask;

	rte_lock(&old_mask);
	if (rte_g_state == ST_FORKED && rte_g_paused) {
		rte_g_paused = 0;
		/* Release: the pending value sends the next event to the
		 * slow path, which makes the file. */
		__atomic_store_n(&rte_g_active, RTE_GEN_PENDING,
		                 __ATOMIC_RELEASE);
	} else if (rte_g_state == ST_RUNNING && rte_g_paused) {
		rte_g_paused = 0;
		/* Release: pairs with the acquire in rte_core_attach() (the
		 * generation is already published; this only re-opens). */
		__atomic_store_n(&rte_g_active, rte_g_gen, __ATOMIC_RELEASE);
		rte_core_lifecycle(RTE_LC_RING_RESUME, 0, 1);
	}
	rte_unlock(&old_mask);
	errno = saved;
}

RTE_EXPORT int rte_is_active(void)
{
	/* Relaxed: a snapshot; nothing is read on the strength of it. */
	return __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) != 0;
}

RTE_EXPORT int rte_path(char *buf, size_t len)
{
	int r;
	size_t n;
	sigset_t old_mask;

	rte_core_materialize(); /* a fork child's file is made on demand */
	rte_lock(&old_mask);
	if (rte_g_state != ST_RUNNING && rte_g_state != ST_STOPPED) {
		r = RTE_ESTATE;
	} else if (!buf || (n = strlen(rte_g_file.path)) + 1 > len) {
		r = RTE_EINVAL;
	} else {
		memcpy(buf, rte_g_file.path, n + 1);
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
	          type_of(id) != (unsigned)type + 1)) {
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
	rte_core_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, id), bytes, len);
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
