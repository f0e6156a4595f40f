/*
 * metrics_series.c - the Prometheus exporter's series: one per family and
 * label set of a process, found through a hash table keyed by (family,
 * ring, id, name), their label text, and the names user events' series use
 * (metrics.c finds them through its per-file cache; metrics_int.h); and
 * two classifications of events for metrics.c's general path.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics_int.h"
#include "vec.h"

/* ---- what an event is to the exporter ------------------------------------ */

/* Ring words of an event's message, for rte_exporter_read_bytes_total. */
uint64_t rd_prom_event_words(const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_LOST:
		return 0;
	case RTE_EV_BEGIN:
	case RTE_EV_END:
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_SPAN_BEGIN:
	case RTE_EV_USER_SPAN_END:
		return 2;
	case RTE_EV_ALLOC:
		return 2 + RTE_ALLOC_BUCKETS;
	case RTE_EV_USER_CUSTOM:
		return 2 + rte_custom_words(ev->u.custom.len);
	default:
		return 3;
	}
}

/* The family of an rte.alloc.* int event of rte's allocation profiler
 * (include/rte/profile.h; its calls are counted from the alloc event),
 * or -1 for the others (rte.alloc.calls, heap, peak_ns: not exported). */
int rd_prom_alloc_fam(const char *name)
{
	static const int fam[RD_AF_N] = {
		[RD_AF_BYTES] = PF_ALLOC_BYTES, [RD_AF_USABLE] = PF_ALLOC_USABLE,
		[RD_AF_FREES] = PF_ALLOC_FREES, [RD_AF_FREED] = PF_ALLOC_FREED,
		[RD_AF_TEMP] = PF_ALLOC_TEMP, [RD_AF_PEAK] = PF_ALLOC_PEAK,
	};
	int af;

	if (strncmp(name, "rte.alloc.", 10) || (af = rd_alloc_fig_of(name + 10)) < 0)
		return -1;
	return fam[af];
}

/* ---- series --------------------------------------------------------------- */

static uint64_t key_hash(int fam, int rk, unsigned id, const char *name)
{
	uint64_t h = 1469598103934665603ull;

	h = (h ^ (uint64_t)(unsigned)fam) * 1099511628211ull;
	h = (h ^ (uint64_t)(unsigned)rk) * 1099511628211ull;
	h = (h ^ id) * 1099511628211ull;
	for (const char *s = name; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int key_eq(const struct series *s, int fam, int rk, unsigned id,
                  const char *name)
{
	if (s->fam != fam || s->rk != rk || s->id != id)
		return 0;
	if (!s->name || !name)
		return s->name == name;
	return !strcmp(s->name, name);
}

static int tab_grow(struct proc *P)
{
	size_t cap = P->tabcap ? 2 * P->tabcap : 64;
	struct series **t = calloc(cap, sizeof *t);

	if (!t)
		return -1;
	for (size_t i = 0; i < P->tabcap; i++) {
		struct series *s = P->tab[i];
		size_t j;

		if (!s)
			continue;
		j = key_hash(s->fam, s->rk, s->id, s->name) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = s;
	}
	free(P->tab);
	P->tab = t;
	P->tabcap = cap;
	return 0;
}

static int vec_push(struct vec *v, struct series *s)
{
	if (RD_VEC_ROOM(v->v, v->cap, v->n, 16) < 0)
		return -1;
	v->v[v->n++] = s;
	return 0;
}

static const char *const user_kind[] = { "user_unit", "user_int", "user_custom" };

/* The `kind` label of rte_events_total: rte_event_kind_name() but with
 * span begins and ends apart. */
static const char *const event_kind[RTE_EV_KIND_COUNT] = {
	[RTE_EV_BEGIN] = "begin", [RTE_EV_END] = "end",
	[RTE_EV_COUNTER] = "counter", [RTE_EV_ALLOC] = "alloc",
	[RTE_EV_LIFECYCLE] = "lifecycle", [RTE_EV_LOST] = "lost",
	[RTE_EV_USER_UNIT] = "user_unit", [RTE_EV_USER_INT] = "user_int",
	[RTE_EV_USER_SPAN_BEGIN] = "user_span_begin",
	[RTE_EV_USER_SPAN_END] = "user_span_end",
	[RTE_EV_USER_CUSTOM] = "user_custom",
};

/* The label text of a new series. */
static char *make_labels(int fam, int rk, unsigned id, const char *name)
{
	struct rd_buf b = { 0 };

	if (name) {
		rd_buf_str(&b, ",name=\"");
		rd_buf_label(&b, name);
		rd_buf_str(&b, "\"");
	}
	if (fam == PF_EVENTS) {
		rd_buf_str(&b, ",kind=\"");
		rd_buf_str(&b, id < RTE_EV_KIND_COUNT ? event_kind[id] : "unknown");
		rd_buf_str(&b, "\"");
	}
	if (fam == PF_USER && id < 3) {
		rd_buf_str(&b, ",kind=\"");
		rd_buf_str(&b, user_kind[id]);
		rd_buf_str(&b, "\"");
	}
	if (rk >= 0) {
		rd_buf_str(&b, ",ring=\"");
		rd_buf_u64(&b, (uint64_t)rk);
		rd_buf_str(&b, "\"");
	}
	rd_buf_mem(&b, "", 0);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p ? b.p : strdup("");
}

void rd_prom_series_free(struct series *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->labels);
	free(s->b);
	free(s);
}

/* The series of the key, created if new; NULL if out of memory. */
struct series *rd_prom_series_get(struct proc *P, int fam, int rk, unsigned id,
                                  const char *name)
{
	struct series *s;
	size_t j;

	if (P->tabcap == 0 || 2 * (P->nser + 1) > P->tabcap)
		if (tab_grow(P) < 0)
			goto oom;
	j = key_hash(fam, rk, id, name) & (P->tabcap - 1);
	for (; (s = P->tab[j]) != NULL; j = (j + 1) & (P->tabcap - 1))
		if (key_eq(s, fam, rk, id, name))
			return s;
	s = calloc(1, sizeof *s);
	if (!s)
		goto oom;
	s->fam = fam;
	s->rk = rk;
	s->id = id;
	if ((name && !(s->name = strdup(name))) ||
	    (fam != PF_NAMESET && !(s->labels = make_labels(fam, rk, id, name))) ||
	    ((fam == PF_PHASE || fam == PF_PAUSE || fam == PF_SPAN) &&
	     !(s->b = calloc(NB + 1, sizeof *s->b))) ||
	    (fam != PF_NAMESET && vec_push(&P->fam[fam], s) < 0)) {
		rd_prom_series_free(s);
		goto oom;
	}
	if (s->labels)
		s->nlabels = strlen(s->labels);
	s->created_ms = rd_prom_now_ms();
	P->tab[j] = s;
	P->nser++;
	return s;
oom:
	P->oom = 1;
	return NULL;
}

/* The name a user event's series uses: its own while the process has
 * fewer than max_names, else "other". */
const char *rd_prom_user_name(struct rd_prom *p, struct proc *P, const char *name)
{
	size_t j;
	struct series *s;

	if (P->tabcap) {
		j = key_hash(PF_NAMESET, -1, 0, name) & (P->tabcap - 1);
		for (; (s = P->tab[j]) != NULL; j = (j + 1) & (P->tabcap - 1))
			if (key_eq(s, PF_NAMESET, -1, 0, name))
				return name;
	}
	if (P->nnames >= p->o.max_names) {
		P->limited = 1;
		return "other";
	}
	if (!rd_prom_series_get(P, PF_NAMESET, -1, 0, name))
		return "other";
	P->nnames++;
	return name;
}

uint64_t rd_prom_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int user_fam(int fam)
{
	return fam == PF_SPAN || fam == PF_INT || fam == PF_USER;
}

void rd_prom_merge(struct rd_prom *p, struct proc *dst, const struct proc *src)
{
	for (int fam = 0; fam < PF_N; fam++) {
		for (size_t k = 0; k < src->fam[fam].n; k++) {
			const struct series *s = src->fam[fam].v[k];
			const char *name = s->name;
			struct series *d;

			if (name && user_fam(fam))
				name = rd_prom_user_name(p, dst, name);
			if (!(d = rd_prom_series_get(dst, fam, s->rk, s->id, name)))
				continue;
			if (s->b) {
				for (unsigned i = 0; i <= NB; i++)
					d->b[i] += s->b[i];
				d->count += s->count;
				rd_dur_sum_add(&d->sum_ns, s->sum_ns);
			} else if (fam == PF_INT) {
				d->last = s->last;
			} else if (fam == PF_COUNTER) {
				d->v = s->v;
			} else if (fam == PF_ALLOC_PEAK) {
				d->v = s->v > d->v ? s->v : d->v;
			} else {
				d->v += s->v;
			}
		}
	}
	dst->limited |= src->limited;
	dst->oom |= src->oom;
}
