/*
 * registry.h - the event-name registry of librte.so (a leaf: depends on
 * nothing else in shim/).
 *
 * Names live in a private table (so that events registered before tracing
 * starts reach the file when it does, and again in each fork child's
 * file) and in an open-addressing hash for lookups by name.
 * rte_g_types[id] (enum rte_type + 1, 0 = free) is what the write path
 * checks: one byte load per event. User ids are handed out from 0 upwards
 * like OCaml's; rte's own rte.* events take ids from the top (8191 down),
 * so they never shift a program's ids.
 *
 * The registry does not know the ring file: its callers pass the function
 * that writes a new name into the file (emit.h's rte_emit_write_name),
 * which rte_registry_add() calls before the id becomes visible to writers.
 *
 * Locking: every function but rte_registry_type() and
 * rte_registry_name_len() is called with the shim lock held (or in a
 * single-threaded process).
 */
#ifndef RTE_SHIM_REGISTRY_H
#define RTE_SHIM_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "rte/format.h"
#include "rte/rte.h"

#pragma GCC visibility push(hidden)

/* Hot: read by every user event writer. Written only by registry.c. */
extern uint8_t rte_g_types[RTE_MAX_USER_EVENTS];

/* enum rte_type + 1 of id, 0 if free. Signal-safe, lock-free. */
static inline unsigned rte_registry_type(int id)
{
	/* Relaxed: a byte that is set once per id; the write path only needs
	 * the value (the name slot is independent of the event). */
	return __atomic_load_n(&rte_g_types[id], __ATOMIC_RELAXED);
}

/* Length of a valid name (1..127 printable ASCII bytes), or -1. */
int rte_registry_name_len(const char *name);

/* Where a new name goes before its id is published (NULL: nowhere). */
typedef void rte_registry_sink(unsigned id, const char *name);

/* Register `name` (len bytes, valid) as `type`; top: from the top of the
 * id space (rte.* events; the caller never registers one name from both
 * ends: a name is looked up only among those of its end). A new name is
 * passed to sink first. Returns the id (the existing one if the name is
 * known with this type), RTE_ETYPE or RTE_ETOOMANY. Lock held. */
int rte_registry_add(const char *name, size_t len, enum rte_type type,
                     int top, rte_registry_sink *sink);

/* Every registered id is below *low_end or at least *high_start (ids
 * are handed out from both ends): a walk of the registered ids skips
 * the free middle. Lock held. */
void rte_registry_bounds(unsigned *low_end, unsigned *high_start);

/* The name of registered id, or NULL if free. Lock held. */
const char *rte_registry_name(unsigned id);

#pragma GCC visibility pop

#endif
