/*
 * prof/reg.c - the registry of the CPU profiler's per-thread clocks
 * (reg.h): every timer id and perf descriptor in one table, so that one
 * thread can stop them all (at exit, or when the program takes the
 * signal over) and a fork child can close the descriptors it inherited.
 *
 * A page-granular table, mapped with MADV_WIPEONFORK for timers (a child
 * never sees its parent's ids); for perf descriptors it is kept across
 * fork, and the child's atfork handler closes its copies of them
 * (rte_prof_reg_forget_all). Whoever exchanges a slot to 0 deletes that
 * timer or closes that descriptor, the latter only while it is still the
 * event it was (rte_perf_ours).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf.h"
#include "reg.h"

static int *g_reg;              /* timer id + 1, -1 - descriptor, or 0; atomic */
static unsigned g_reg_hint;     /* atomic */
static unsigned g_reg_top;      /* atomic: above every slot ever taken */
static uint64_t *g_reg_id;      /* perf: the event id of each slot */

void rte_prof_reg_map(int perf)
{
	size_t len = RTE_PROF_REG_SLOTS * sizeof(int);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (!perf && madvise(p, len, MADV_WIPEONFORK) < 0) {
		munmap(p, len);
		return;
	}
	if (perf) {
		void *q = mmap(NULL, RTE_PROF_REG_SLOTS * sizeof(uint64_t),
		               PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (q == MAP_FAILED) {
			munmap(p, len);
			return;
		}
		g_reg_id = q;
	}
	g_reg = p;
}

/* Take a slot for timer id `id` (>= 0), or perf descriptor -2 - id with
 * event id `eid`. Returns its index + 1, or 0. */
int rte_prof_reg_add(int id, uint64_t eid)
{
	/* Relaxed: only a place to start looking. */
	unsigned h = __atomic_load_n(&g_reg_hint, __ATOMIC_RELAXED);

	if (!g_reg)
		return 0;
	for (unsigned n = 0; n < RTE_PROF_REG_SLOTS; n++) {
		unsigned i = (h + n) % RTE_PROF_REG_SLOTS;
		int zero = 0;

		/* Relaxed: the slot is the only datum (a perf slot's event id
		 * follows it: one that another thread empties in between is
		 * left open, and its signals ignored, until the thread ends). */
		if (__atomic_compare_exchange_n(&g_reg[i], &zero, id + 1, 0,
		                                __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			if (g_reg_id)
				__atomic_store_n(&g_reg_id[i], eid,
				                 __ATOMIC_RELAXED);
			__atomic_store_n(&g_reg_hint, i + 1, __ATOMIC_RELAXED);
			/* Relaxed: how far reg_delete_all() looks. */
			for (unsigned top = __atomic_load_n(&g_reg_top,
			                                    __ATOMIC_RELAXED);
			     top < i + 1 &&
			     !__atomic_compare_exchange_n(&g_reg_top, &top, i + 1,
			                                  1, __ATOMIC_RELAXED,
			                                  __ATOMIC_RELAXED);)
				;
			return (int)i + 1;
		}
	}
	return 0;
}

/* A perf descriptor is closed only while it is still our event: the
 * program may have closed it (a daemon's close-all loop) and reused the
 * number. */
void rte_prof_reg_kill(int id, uint64_t eid, int sig)
{
	if (id >= 0)
		syscall(SYS_timer_delete, id);
	else if (rte_perf_ours(-2 - id, sig, eid))
		close(-2 - id);
}

/* Delete the timer of slot `slot` (index + 1) if nobody did yet. */
void rte_prof_reg_delete(int slot, int sig)
{
	int id;

	if (slot <= 0 || !g_reg)
		return;
	/* Relaxed: whoever takes the id deletes it. */
	id = __atomic_exchange_n(&g_reg[slot - 1], 0, __ATOMIC_RELAXED);
	if (id)
		rte_prof_reg_kill(id - 1, g_reg_id ? __atomic_load_n(&g_reg_id[slot - 1],
		                                              __ATOMIC_RELAXED)
		                            : 0, sig);
}

void rte_prof_reg_delete_all(int sig)
{
	unsigned top = __atomic_load_n(&g_reg_top, __ATOMIC_RELAXED);

	if (!g_reg)
		return;
	for (unsigned i = 0; i < top && i < RTE_PROF_REG_SLOTS; i++)
		/* Relaxed peek: most slots are empty (untouched pages). */
		if (__atomic_load_n(&g_reg[i], __ATOMIC_RELAXED))
			rte_prof_reg_delete((int)i + 1, sig);
}

/* A fork child (perf mode): the registry is its parent's, and so are the
 * descriptors it names; the child closes its copies of them (the events
 * are the parent's threads', which keep them). */
void rte_prof_reg_forget_all(int sig)
{
	unsigned top = __atomic_load_n(&g_reg_top, __ATOMIC_RELAXED);

	if (!g_reg || !g_reg_id)
		return;
	for (unsigned i = 0; i < top && i < RTE_PROF_REG_SLOTS; i++) {
		int id = g_reg[i] - 1;

		g_reg[i] = 0;
		if (id < -1 && rte_perf_ours(-2 - id, sig, g_reg_id[i]))
			close(-2 - id);
	}
	g_reg_top = 0;
	g_reg_hint = 0;
}
