/*
 * heap.c - the heap of an allocation profile (rte/profile.h): the peak
 * (rte.alloc.peak, rte.alloc.peak_ns), the heap series (rte.alloc.heap),
 * the temporary allocations (rte.alloc.temporary), and the sites the
 * samples show live at the peak and freed as temporaries. The peak's own
 * rule (heap.h, rd_heap_peak_fold) is shared with the exporter.
 *
 * Sites at the peak: the sampled allocations made at or before the peak
 * whose address saw no later event by then (profile.c's events sorted by
 * address and time), each standing for size / q bytes, summed by the
 * allocator's caller; the whole is scaled down, if above, to the exact
 * peak. Temporary sites: the sampled allocations whose free carried
 * RTE_ALLOC_FREE_TEMPORARY, each standing for 1 / q allocations, scaled
 * to the exact count of temporaries.
 *
 * Values are untrusted: any order, any size; nothing here indexes by them.
 * Not thread-safe.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "profile_int.h"

#define TOP_HEAP_SITES 10u
#define SPARK_COLS 48u

int rd_alloc_fig_of(const char *name)
{
	static const char *const names[RD_AF_N] = {
		[RD_AF_BYTES] = "bytes", [RD_AF_USABLE] = "usable",
		[RD_AF_FREES] = "frees", [RD_AF_FREED] = "freed",
		[RD_AF_TEMP] = "temporary", [RD_AF_PEAK] = "peak",
	};

	for (int i = 0; i < RD_AF_N; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

uint64_t rd_alloc_calls(const uint64_t *buckets)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		n += buckets[i];
	return n;
}

int rd_heap_peak_fold(struct rd_heap_peak *h, const char *name, uint64_t v)
{
	if (!strcmp(name, "peak")) {
		/* 0 is never written: no peak (and no pending one) */
		if (!v)
			return 1;
		if (!h->has || v > h->bytes) {
			h->bytes = v;
			h->ns = 0; /* until its peak_ns comes */
			h->has = 1;
		}
		h->pending = v;
		return 1;
	}
	if (!strcmp(name, "peak_ns")) {
		/* right after its rte.alloc.peak: the time of the peak if that
		 * rte.alloc.peak is the highest, else of a lower one */
		if (h->has && h->pending && h->pending == h->bytes)
			h->ns = v;
		h->pending = 0;
		return 1;
	}
	return 0;
}

int rd_heap_int(struct rd_prof *p, struct pproc *pp, const char *name,
                uint64_t ts, uint64_t v)
{
	(void)p;
	if (!strcmp(name, "temporary")) {
		pp->temps += v;
		pp->has_temps = 1;
	} else if (!strcmp(name, "peak") || !strcmp(name, "peak_ns")) {
		struct rd_heap_peak h = { pp->has_peak, pp->peak, pp->peak_ns,
		                          pp->peak_pending };

		rd_heap_peak_fold(&h, name, v);
		pp->has_peak = h.has;
		pp->peak = h.bytes;
		pp->peak_ns = h.ns;
		pp->peak_pending = h.pending;
	} else if (!strcmp(name, "heap")) {
		if (pp->nheap == pp->heapcap) {
			size_t c = pp->heapcap ? pp->heapcap * 2 : 256;
			struct hpt *n = realloc(pp->heap, c * sizeof *n);

			if (!n) {
				p->oom = 1;
				return 1;
			}
			pp->heap = n;
			pp->heapcap = c;
		}
		pp->heap[pp->nheap++] = (struct hpt){ ts, v };
	} else {
		return 0;
	}
	return 1;
}

void rd_heap_fini(struct pproc *pp)
{
	free(pp->heap);
	pp->heap = NULL;
	pp->nheap = pp->heapcap = 0;
}

/* Per function name (string id): an estimate and its samples. */
struct site {
	uint32_t name;
	double v;
	uint64_t n;
};

static int by_v(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* 1 if aev i (an allocation) was live at time t: made by then, and its
 * address saw no later event by then (events sorted by address, time). */
static int live_at(const struct rd_prof *p, size_t i, uint64_t t)
{
	const struct aev *e = &p->aev[i];

	if (e->ts > t)
		return 0;
	return !(i + 1 < p->naev && p->aev[i + 1].proc == e->proc &&
	         p->aev[i + 1].addr == e->addr && p->aev[i + 1].ts <= t);
}

/* 1 if aev i (an allocation) was freed as a temporary. */
static int temp_freed(const struct rd_prof *p, size_t i)
{
	const struct aev *e = &p->aev[i], *f = e + 1;

	return i + 1 < p->naev && f->proc == e->proc && f->addr == e->addr &&
	       f->stack == UINT32_MAX && (f->flags & RTE_ALLOC_FREE_TEMPORARY);
}

/* The sites of process proc: at the peak (which 0) or of temporaries (1),
 * sorted, scaled to `total` (down only for the peak); *n their count.
 * NULL if none (or out of memory). */
static struct site *sites(struct rd_prof *p, uint32_t proc, int which,
                          uint64_t peak_ns, double total, uint32_t *nout)
{
	uint32_t *slot = calloc(p->strs.n + 1, sizeof *slot), n = 0;
	struct site *s = calloc(p->strs.n + 1, sizeof *s);
	double sum = 0;

	*nout = 0;
	if (!slot || !s) {
		p->oom = 1;
		goto fail;
	}
	for (size_t i = 0; i < p->naev; i++) {
		const struct aev *e = &p->aev[i];
		const struct skey *k;
		uint32_t id;
		double v;

		if (e->proc != proc || e->stack == UINT32_MAX ||
		    e->stack >= p->ast.n)
			continue;
		if (which ? !temp_freed(p, i) : !live_at(p, i, peak_ns))
			continue;
		k = pkey(&p->ast, e->stack);
		id = k->n ? p->fn[p->loc[k->loc[0]].func].name
		          : pstr_id(p, "(no stack)");
		if (id > p->strs.n)
			continue;
		if (!slot[id]) {
			s[n].name = id;
			slot[id] = ++n;
		}
		v = which ? e->obj : e->bytes;
		s[slot[id] - 1].v += v;
		s[slot[id] - 1].n++;
		sum += v;
	}
	if (sum > 0 && total >= 0 && (which || sum > total))
		for (uint32_t i = 0; i < n; i++)
			s[i].v *= total / sum;
	qsort(s, n, sizeof *s, by_v);
	free(slot);
	*nout = n;
	if (!n) {
		free(s);
		return NULL;
	}
	return s;
fail:
	free(slot);
	free(s);
	return NULL;
}

static void site_list(const struct rd_prof *p, struct rd_out *o, int json,
                      const struct site *s, uint32_t n, const char *unit)
{
	if (json)
		rd_out_ch(o, '[');
	for (uint32_t i = 0; i < n && i < TOP_HEAP_SITES; i++) {
		if (json) {
			if (i)
				rd_out_ch(o, ',');
			rd_out_str(o, "{\"function\":");
			rd_out_json_str(o, pstr(p, s[i].name));
			rd_outf(o, ",\"est_%s\":%.3f,\"samples\":%" PRIu64 "}", unit,
			        s[i].v, s[i].n);
		} else {
			rd_outf(o, "      %14.0f %-7s %6" PRIu64 " samples  %s\n", s[i].v,
			        unit, s[i].n, pstr(p, s[i].name));
		}
	}
	if (json)
		rd_out_ch(o, ']');
}

static int by_ts(const void *a, const void *b)
{
	const struct hpt *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The heap series as one line of block characters: SPARK_COLS columns
 * over the series' span, each the highest point in it (else the last
 * before), in eighths of the peak. */
static void sparkline(struct rd_out *o, const struct pproc *pp, uint64_t top)
{
	static const char *const lvl[9] = { " ", "\u2581", "\u2582", "\u2583",
	                                    "\u2584", "\u2585", "\u2586",
	                                    "\u2587", "\u2588" };
	uint64_t t0 = pp->heap[0].ts, span = pp->heap[pp->nheap - 1].ts - t0;
	uint64_t cur = 0;
	size_t j = 0;

	for (unsigned c = 0; c < SPARK_COLS; c++) {
		/* the column's end: t0 + span * (c + 1) / cols, no overflow */
		uint64_t end = t0 + span / SPARK_COLS * (c + 1) +
		               span % SPARK_COLS * (c + 1) / SPARK_COLS;
		uint64_t hi = 0;
		int any = 0;

		for (; j < pp->nheap && pp->heap[j].ts <= end; j++) {
			cur = pp->heap[j].v;
			if (!any || cur > hi)
				hi = cur;
			any = 1;
		}
		if (!any)
			hi = cur;
		rd_out_str(o, lvl[top ? (unsigned)((double)hi / (double)top * 8 + 0.5) > 8
		                            ? 8
		                            : (unsigned)((double)hi / (double)top * 8 + 0.5)
		                      : 0]);
	}
}

void rd_heap_section(struct rd_prof *p, struct rd_out *o,
                     const struct pproc *pp, uint32_t proc, int json)
{
	struct site *ps = NULL, *ts = NULL;
	uint32_t nps = 0, nts = 0;
	uint64_t top = pp->peak;

	if (pp->nheap)
		qsort(((struct pproc *)pp)->heap, pp->nheap, sizeof *pp->heap, by_ts);
	for (size_t i = 0; i < pp->nheap; i++)
		if (pp->heap[i].v > top)
			top = pp->heap[i].v;
	if (pp->has_peak)
		ps = sites(p, proc, 0, pp->peak_ns, (double)pp->peak, &nps);
	if (pp->has_temps)
		ts = sites(p, proc, 1, 0, (double)pp->temps, &nts);
	if (json) {
		if (pp->has_peak && pp->peak_ns)
			rd_outf(o, ",\"peak_bytes\":%" PRIu64 ",\"peak_ns\":%" PRIu64,
			        pp->peak, pp->peak_ns);
		else if (pp->has_peak) /* its rte.alloc.peak_ns lost */
			rd_outf(o, ",\"peak_bytes\":%" PRIu64 ",\"peak_ns\":null",
			        pp->peak);
		else
			rd_out_str(o, ",\"peak_bytes\":null,\"peak_ns\":null");
		rd_out_str(o, ",\"live_bytes_at_exit\":");
		if (pp->has_usable)
			rd_out_u64(o, pp->usable > pp->freed ? pp->usable - pp->freed : 0);
		else
			rd_out_str(o, "null");
		rd_out_str(o, ",\"temporary_allocations\":");
		if (pp->has_temps)
			rd_out_u64(o, pp->temps);
		else
			rd_out_str(o, "null");
		rd_outf(o, ",\"heap_points\":%zu,\"peak_sites\":", pp->nheap);
		site_list(p, o, 1, ps, nps, "bytes");
		rd_out_str(o, ",\"temporary_sites\":");
		site_list(p, o, 1, ts, nts, "objects");
		goto out;
	}
	if (pp->has_peak) {
		rd_outf(o, "    peak heap: %" PRIu64 " usable bytes", pp->peak);
		if (pp->t0 && pp->peak_ns >= pp->t0)
			rd_outf(o, ", at +%.3f s", (double)(pp->peak_ns - pp->t0) / 1e9);
		rd_out_ch(o, '\n');
		if (nps) {
			rd_outf(o, "    live at the peak (estimated from the samples, at most the peak):\n");
			site_list(p, o, 0, ps, nps, "bytes");
		}
	}
	if (pp->nheap >= 2) {
		rd_outf(o, "    heap over time (%zu points, top %" PRIu64 " bytes): |", pp->nheap, top);
		sparkline(o, pp, top);
		rd_out_str(o, "|\n");
	}
	if (pp->has_temps) {
		rd_outf(o, "    temporary allocations (freed with no allocation in between, per thread): %" PRIu64 "\n",
		        pp->temps);
		site_list(p, o, 0, ts, nts, "objects");
	}
out:
	free(ps);
	free(ts);
}
