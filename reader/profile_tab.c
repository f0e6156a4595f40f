/*
 * profile_tab.c - the profiles' options (rd_prof_options()) and the
 * aggregator's tables (profile_int.h): the hash table
 * of byte strings (ptab.h) every table of the profiles is, the string
 * table, and the aggregator made and
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
