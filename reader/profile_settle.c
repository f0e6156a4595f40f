/*
 * profile_settle.c - the end of the profilers' events (profile.c): the
 * sampled allocations and frees replayed in time order, so that a free
 * read before its allocation still frees it, and the live bytes weighted
 * by the exact counts per size class (rd_prof_settle(),
 * rd_prof_exact_live()); what the aggregates hold (rd_prof_any_cpu(),
 * rd_prof_pick(), rd_prof_malformed()).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "rte/crash.h"
#include "rte/profile.h"

/* ---- the end ---------------------------------------------------------- */

static int by_addr_time(const void *a, const void *b)
{
	const struct aev *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* 1 if aev i is a sampled allocation live at the end: among the events
 * of its address in time order, it is the last (a second allocation at
 * the same address means the first was freed, its free unsampled or
 * lost). */
static int aev_live(const struct rd_prof *p, size_t i)
{
	const struct aev *e = &p->aev[i];

	return e->stack != UINT32_MAX &&
	       !(i + 1 < p->naev && p->aev[i + 1].proc == e->proc &&
	         p->aev[i + 1].addr == e->addr);
}

static unsigned size_class(uint64_t size)
{
	return rte_alloc_bucket(size < 800 ? (size + 7) / 8 : 100);
}

/* The exact bytes live at the end of process pp (usable bytes allocated
 * less freed, from the counts), or -1 when its files do not give them
 * (before rte.alloc.usable, the bytes allocated were those asked for). */
double rd_prof_exact_live(const struct pproc *pp)
{
	if (!pp->has_usable)
		return -1;
	return pp->usable > pp->freed ? (double)(pp->usable - pp->freed) : 0;
}

/*
 * The live sampled allocations, by stack, with what they stand for: each
 * sample's weight (1/q, the allocations it stands for) is bounded twice
 * by what the counts say exactly. In each size class (the `alloc`
 * event's buckets), the weights of the live samples together stand for
 * no more allocations than the calls of that class (nor fewer than the
 * samples): one sampled 33-byte block among few calls of its size is not
 * taken for the 2^19 bytes its probability alone suggests. And a
 * process's estimate is scaled down, if need be, to its exact live bytes
 * (rd_prof_exact_live).
 */
void rd_prof_settle(struct rd_prof *p)
{
	double (*w)[RTE_ALLOC_BUCKETS] = NULL, *est = NULL;

	if (p->settled)
		return;
	p->settled = 1;
	for (uint32_t i = 0; i < p->ast.n; i++) {
		p->av[i].iobj = p->av[i].ibytes = 0;
		p->av[i].nlive = p->av[i].live_sampled = 0;
	}
	if (p->naev)
		qsort(p->aev, p->naev, sizeof *p->aev, by_addr_time);
	if (p->npp && (!(w = calloc(p->npp, sizeof *w)) ||
	               !(est = calloc(p->npp, sizeof *est)))) {
		p->oom = 1;
		goto out;
	}
	for (size_t i = 0; i < p->naev; i++) /* weights per class */
		if (aev_live(p, i) && p->aev[i].proc < p->npp)
			w[p->aev[i].proc][size_class(p->aev[i].size)] += p->aev[i].obj;
	for (unsigned k = 0; k < p->npp; k++)
		for (unsigned b = 0; b < RTE_ALLOC_BUCKETS; b++)
			w[k][b] = w[k][b] > (double)p->pp[k].hist[b]
			                  ? (double)p->pp[k].hist[b] / w[k][b] : 1;
	for (size_t i = 0; i < p->naev; i++) {
		const struct aev *e = &p->aev[i];
		struct aval *v;
		double f;

		if (!aev_live(p, i) || e->proc >= p->npp)
			continue;
		f = w[e->proc][size_class(e->size)];
		if (e->obj * f < 1) /* a sample is one allocation at least */
			f = e->obj > 0 ? 1 / e->obj : 1;
		v = &p->av[e->stack];
		v->nlive++;
		v->iobj += e->obj * f;
		v->ibytes += e->bytes * f;
		v->live_sampled += e->size;
		est[e->proc] += e->bytes * f;
	}
	for (uint32_t i = 0; i < p->ast.n; i++) { /* at most the exact total */
		uint32_t k = pkey(&p->ast, i)->proc;
		double x = k < p->npp ? rd_prof_exact_live(&p->pp[k]) : -1;

		if (p->av[i].nlive && x >= 0 && est[k] > x) {
			p->av[i].ibytes *= x / est[k];
			p->av[i].iobj *= x / est[k];
		}
	}
out:
	free(w);
	free(est);
}

int rd_prof_any_cpu(const struct rd_prof *p)
{
	for (unsigned i = 0; i < p->npp; i++)
		if (p->pp[i].has_cpu)
			return 1;
	return 0;
}

int rd_prof_pick(const struct rd_prof *p)
{
	if (rd_prof_which_opt != RD_PROF_AUTO)
		return rd_prof_which_opt;
	return rd_prof_any_cpu(p) ? RD_PROF_CPU : RD_PROF_ALLOC;
}

uint64_t rd_prof_malformed(const struct rd_prof *p)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < p->npp; i++)
		n += p->pp[i].bad_cpu + p->pp[i].bad_alloc + p->pp[i].bad_free;
	return n;
}
