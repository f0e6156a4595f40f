/*
 * profile_tab.c - the profiles' options (rd_prof_options()) and the
 * aggregator's tables (profile_int.h): the hash table
 * of byte strings every table of the profiles is (ptab_get(), keys
 * hashed with FNV-1a), the string table, and the aggregator made and
 * freed whole (rd_prof_new(), rd_prof_free()). Filled by profile.c,
 * read by fmt/profile.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "rte/crash.h"
#include "rte/profile.h"

int rd_prof_which_opt, rd_prof_by_thread;
const char *rd_prof_span_opt;

int rd_prof_parse_which(const char *s)
{
	if (!strcmp(s, "cpu"))
		return RD_PROF_CPU;
	if (!strcmp(s, "alloc"))
		return RD_PROF_ALLOC;
	if (!strcmp(s, "inuse"))
		return RD_PROF_INUSE;
	return -1;
}

void rd_prof_options(int which, const char *span, int by_thread)
{
	rd_prof_which_opt = which;
	rd_prof_span_opt = span;
	rd_prof_by_thread = by_thread;
}

/* ---- tables ----------------------------------------------------------- */

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


uint32_t pstr_id(struct rd_prof *p, const char *s)
{
	int isnew;
	int64_t i = ptab_get(&p->strs, s, (uint32_t)strlen(s), &isnew);

	if (i < 0) {
		p->oom = 1;
		return 0;
	}
	return (uint32_t)i;
}

void rd_prof_lockey(struct plockey *k, unsigned src, const struct psrc *s,
                    uint64_t pc, int ret, unsigned depth)
{
	memset(k, 0, sizeof *k);
	k->src = src;
	k->gen = s->modgen;
	k->pc = pc;
	k->ret = (uint32_t)ret;
	k->depth = depth;
}

int rd_prof_loc_room(struct rd_prof *p)
{
	return rd_prof_room(p, (void **)&p->loc, &p->loccap, p->locs.n, sizeof *p->loc) < 0 ||
	               rd_prof_room(p, (void **)&p->fn, &p->fncap, p->funcs.n, sizeof *p->fn) < 0
	       ? -1 : 0;
}

int64_t rd_prof_func(struct rd_prof *p, const char *name, const char *file)
{
	struct pfunc fk;
	int64_t fi;
	int isnew;

	memset(&fk, 0, sizeof fk);
	fk.name = pstr_id(p, name);
	fk.file = file ? pstr_id(p, file) : 0;
	if ((fi = ptab_get(&p->funcs, &fk, sizeof fk, &isnew)) >= 0)
		p->fn[fi] = fk;
	return fi;
}

struct rd_prof *rd_prof_new(void)
{
	struct rd_prof *p = calloc(1, sizeof *p);

	if (p && pstr_id(p, "") != 0) { /* string 0 is "" (pprof's rule) */
		rd_prof_free(p);
		return NULL;
	}
	return p;
}

void rd_prof_free(struct rd_prof *p)
{
	if (!p)
		return;
	ptab_fini(&p->strs);
	ptab_fini(&p->locs);
	ptab_fini(&p->funcs);
	ptab_fini(&p->cst);
	ptab_fini(&p->ast);
	ptab_fini(&p->inl);
	free(p->inlv);
	for (unsigned i = 0; i < p->npp; i++) {
		free(p->pp[i].thr);
		rd_heap_fini(&p->pp[i]);
	}
	for (unsigned i = 0; i < p->nps; i++)
		rd_sym_free(p->ps[i].sym);
	free(p->loc);
	free(p->fn);
	free(p->cv);
	free(p->av);
	free(p->map);
	free(p->pp);
	free(p->ps);
	free(p->aev);
	free(p);
}
