/*
 * ptab.h - a hash table of byte strings: each distinct key gets the next
 * index (0, 1, ...), its copy kept NUL-terminated and 8-byte aligned in
 * t->e[index].key. The one interning table of rte-read: the profiles'
 * strings, locations and stacks (profile_int.h), summary-json's run-wide
 * names (fmt/summary_run.c), the OCaml choices of files (ocamlver.c).
 * A zeroed struct ptab is empty. Not thread-safe.
 */
#ifndef RD_PTAB_H
#define RD_PTAB_H

#include <stdint.h>

struct ptab {
	uint32_t *slot;      /* index + 1, 0 empty */
	uint32_t cap, n, ecap;
	struct pent { char *key; uint32_t len, hash; } *e;
};

/* Index of key (added if new, *isnew set); -1 if out of memory. */
int64_t ptab_get(struct ptab *t, const void *key, uint32_t len, int *isnew);
/* Free every key and the table (t is empty again). */
void ptab_fini(struct ptab *t);

#endif
