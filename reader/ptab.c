/*
 * ptab.c - the hash table of byte strings (ptab.h): keys hashed with
 * FNV-1a, open addressing on an index array, entries in insertion order.
 */
#include <stdlib.h>
#include <string.h>

#include "ptab.h"

static uint32_t hash_bytes(const void *k, uint32_t len)
{
	const unsigned char *p = k;
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h ? h : 1;
}

static int ptab_grow(struct ptab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 256;
	uint32_t *s = calloc(cap, sizeof *s);

	if (!s)
		return -1;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = t->e[i].hash & (cap - 1);

		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->cap = cap;
	return 0;
}

int64_t ptab_get(struct ptab *t, const void *key, uint32_t len, int *isnew)
{
	uint32_t h = hash_bytes(key, len), j;
	struct pent *e;

	*isnew = 0;
	if ((t->n + 1) * 2 > t->cap && ptab_grow(t) < 0)
		return -1;
	for (j = h & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
		e = &t->e[t->slot[j] - 1];
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return t->slot[j] - 1;
	}
	if (t->n == t->ecap) {
		uint32_t c = t->ecap ? t->ecap * 2 : 256;
		struct pent *n = realloc(t->e, c * sizeof *n);

		if (!n)
			return -1;
		t->e = n;
		t->ecap = c;
	}
	e = &t->e[t->n];
	/* keys stay NUL-terminated (strings) and 8-byte aligned (malloc) */
	if (!(e->key = malloc(len + 1)))
		return -1;
	memcpy(e->key, key, len);
	e->key[len] = '\0';
	e->len = len;
	e->hash = h;
	t->slot[j] = ++t->n;
	*isnew = 1;
	return t->n - 1;
}

void ptab_fini(struct ptab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->e[i].key);
	free(t->e);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
