/*
 * registry.c - the event-name registry (registry.h).
 */
#include <string.h>

#include "forkvars.h"
#include "registry.h"

#define HASH_SLOTS (2 * RTE_MAX_USER_EVENTS)

uint8_t rte_g_types[RTE_MAX_USER_EVENTS];
static RTE_BIGVAR char g_names[RTE_MAX_USER_EVENTS][RTE_NAME_SLOT_BYTES];
/* The shim's own names, registered from the top. */
RTE_HOTPAGE(names_own, &g_names[RTE_MAX_USER_EVENTS - 1][0]);
static RTE_BIGVAR uint16_t g_hash[HASH_SLOTS]; /* id + 1, 0 = empty; under the lock */
static unsigned g_low;              /* lowest id that may be free */
static unsigned g_high = RTE_MAX_USER_EVENTS - 1; /* highest, for rte.* */
/* The ids of the first names registered from the top (the shim's own
 * rte.* events, a dozen, registered by every traced process at start):
 * kept in this list, not in g_hash, whose 32 KiB they would scatter over
 * six or seven pages (a page fault each in a short process). Under the
 * lock. */
#define OWN_LISTED 64
static uint16_t g_own[OWN_LISTED];
static unsigned g_nown;

int rte_registry_name_len(const char *name)
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

void rte_registry_bounds(unsigned *low_end, unsigned *high_start)
{
	/* free_id() hands out g_low and g_high themselves, moving them on
	 * only at the next call: the registered ids are those below g_low
	 * + 1 and from g_high up. */
	*low_end = g_low < RTE_MAX_USER_EVENTS ? g_low + 1 : RTE_MAX_USER_EVENTS;
	*high_start = g_high;
}

/* The id of `name` in g_own, or -1. */
static int own_find(const char *name)
{
	for (unsigned i = 0; i < g_nown; i++)
		if (!strcmp(g_names[g_own[i]], name))
			return g_own[i];
	return -1;
}

int rte_registry_add(const char *name, size_t len, enum rte_type type,
                     int top, rte_registry_sink *sink)
{
	/* The two ends never share a name (the program's may not start
	 * with "rte.", api.c): a name from the top is looked up in g_own
	 * (and in the hash only once g_own is full), never reading g_hash's
	 * pages at start. */
	int listed = top && g_nown < OWN_LISTED;
	unsigned h = listed ? 0 : hash_find(name);
	int id = listed ? own_find(name) : g_hash[h] ? g_hash[h] - 1 : -1;

	if (id < 0 && top && !listed)
		id = own_find(name);
	if (id >= 0)
		return rte_registry_type(id) == (unsigned)type + 1 ? id
		                                                    : RTE_ETYPE;
	id = free_id(top);
	if (id < 0)
		return RTE_ETOOMANY;
	memcpy(g_names[id], name, len + 1);
	if (listed)
		g_own[g_nown++] = (uint16_t)id;
	else
		g_hash[h] = (uint16_t)(id + 1);
	if (sink)
		sink((unsigned)id, g_names[id]);
	/* Relaxed: see rte_registry_type(); the lock orders registrations. */
	__atomic_store_n(&rte_g_types[id], (uint8_t)(type + 1),
	                 __ATOMIC_RELAXED);
	return id;
}

const char *rte_registry_name(unsigned id)
{
	if (id >= RTE_MAX_USER_EVENTS || !rte_g_types[id])
		return NULL;
	return g_names[id];
}
