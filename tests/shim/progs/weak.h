/*
 * weak.h - the producer API as weak references, so a test program runs
 * unchanged with and without LD_PRELOAD=librte.so (the same binary is
 * compared both ways). RTE(f) is true when librte.so is loaded.
 */
#ifndef RTE_TEST_WEAK_H
#define RTE_TEST_WEAK_H

#define RTE_WEAK /* rte.h declares everything weak */
#include "rte/rte.h"

#define RTE_LOADED() (rte_register != 0)

/* Register an int event, or -1 without the shim. */
static inline int weak_register_int(const char *name)
{
	return RTE_LOADED() ? rte_register(name, RTE_TYPE_INT) : -1;
}

static inline void weak_int(int id, int64_t v)
{
	if (RTE_LOADED())
		rte_int(id, v);
}

#endif
