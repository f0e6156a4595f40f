/*
 * stress_weak.h - the producer API of rte/rte.h as weak references, so
 * that one binary runs both under LD_PRELOAD=librte.so and without it (the
 * fault tests compare the two runs). RTE_LOADED() is true under the shim.
 */
#ifndef RTE_STRESS_WEAK_H
#define RTE_STRESS_WEAK_H

#define RTE_WEAK /* rte.h: every declaration weak, calls no-ops without it */
#include "rte/rte.h"

#define RTE_LOADED() (rte_register != 0)

/* Register an int event; -1 without the shim (or if it refused). */
static inline int weak_register_int(const char *name)
{
	int id = RTE_LOADED() ? rte_register(name, RTE_TYPE_INT) : -1;

	return id < 0 ? -1 : id;
}

/* Write an int event; nothing without the shim. */
static inline void weak_int(int id, int64_t v)
{
	if (RTE_LOADED() && id >= 0)
		rte_int(id, v);
}

#endif
