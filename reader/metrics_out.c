/*
 * metrics_out.c - the Prometheus exporter's exposition (text format and
 * OpenMetrics), and the output buffer it and the label text are written
 * to (see metrics.h; every metric is in doc/METRICS.md).
 *
 * The exposition is written in place (render_hist): room made once, no
 * stdio; the same bytes as sample by sample.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics_int.h"

/* ---- families ------------------------------------------------------------ */

enum ftype { T_COUNTER, T_GAUGE, T_HIST };

struct famdef {
	const char *name; /* without _total for counters */
	enum ftype type;
	const char *help;
};

static const struct famdef fams[PF_N] = {
	[PF_EVENTS] = { "rte_events", T_COUNTER,
		"Events read from the process's ring files, by kind." },
	[PF_LOST] = { "rte_lost_words", T_COUNTER,
		"Ring words overwritten by the writer before they were read." },
	[PF_PHASE] = { "rte_runtime_phase_duration_seconds", T_HIST,
		"Durations of runtime phases (matched begin/end), by phase name." },
	[PF_PAUSE] = { "rte_gc_pause_duration_seconds", T_HIST,
		"Durations of outermost runtime phases on a thread (GC pauses)." },
	[PF_PHASE_TIME] = { "rte_runtime_phase_seconds", T_COUNTER,
		"Time with a runtime phase open, summed over threads (GC time)." },
	[PF_SPAN] = { "rte_span_duration_seconds", T_HIST,
		"Durations of user spans (matched begin/end), by span name." },
	[PF_COUNTER] = { "rte_runtime_stat", T_GAUGE,
		"Last value of each runtime counter (OCaml's EV_C_* statistics)." },
	[PF_COUNTER_ACC] = { "rte_runtime_stat_accumulated", T_COUNTER,
		"Sum of the values of each runtime counter." },
	[PF_INT] = { "rte_user_int", T_GAUGE,
		"Last value of each user int event." },
	[PF_USER] = { "rte_user_events", T_COUNTER,
		"User unit, int and custom events, by name and kind." },
	[PF_LIFECYCLE] = { "rte_lifecycle_events", T_COUNTER,
		"Lifecycle events (ring_start, fork_child, ...), by name." },
	[PF_ALLOC_CALLS] = { "rte_alloc_calls", T_COUNTER,
		"Allocation calls counted by alloc events (allocation profiler), exact." },
	[PF_ALLOC_BYTES] = { "rte_alloc_bytes", T_COUNTER,
		"Bytes asked for by the allocations rte's profiler counted (rte.alloc.bytes), exact." },
	[PF_ALLOC_USABLE] = { "rte_alloc_usable_bytes", T_COUNTER,
		"Usable bytes (malloc_usable_size) of those allocations (rte.alloc.usable)." },
	[PF_ALLOC_FREES] = { "rte_alloc_frees", T_COUNTER,
		"Frees rte's profiler counted (rte.alloc.frees)." },
	[PF_ALLOC_FREED] = { "rte_alloc_freed_bytes", T_COUNTER,
		"Usable bytes (malloc_usable_size) of those frees (rte.alloc.freed)." },
	[PF_ALLOC_TEMP] = { "rte_alloc_temporary", T_COUNTER,
		"Temporary allocations: freed by their thread with no other allocation in between (rte.alloc.temporary)." },
	[PF_ALLOC_PEAK] = { "rte_alloc_peak_live_bytes", T_GAUGE,
		"Highest usable bytes live at once in one process of the label set (rte.alloc.peak)." },
	[PF_CRASHES] = { "rte_crashes", T_COUNTER,
		"Crashes recorded (rte.crash events)." },
};

/* The `le` label of each bucket and what follows it up to the count. */
#define LE_MAX 18 /* at least the longest: ,le="2.5e-06"} */
static const struct { char s[LE_MAX + 1]; unsigned char n; } le_txt[NB + 1] = {
#define LE(t) { ",le=\"" t "\"} ", sizeof ",le=\"" t "\"} " - 1 }
	LE("1e-06"), LE("2.5e-06"), LE("5e-06"), LE("1e-05"), LE("2.5e-05"),
	LE("5e-05"), LE("0.0001"), LE("0.00025"), LE("0.0005"), LE("0.001"),
	LE("0.0025"), LE("0.005"), LE("0.01"), LE("0.025"), LE("0.05"), LE("0.1"),
	LE("0.25"), LE("0.5"), LE("1"), LE("2.5"), LE("5"), LE("10"), LE("+Inf"),
#undef LE
};

/* ---- output buffer ------------------------------------------------------- */

/* Room for n more bytes and a NUL at the end of b: where they go, or NULL
 * if out of memory (b->oom is set). */
static char *room(struct rd_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->n;
}

/* What was written at room()'s pointer ends at o. */
static void grown(struct rd_buf *b, char *o)
{
	b->n = (size_t)(o - b->p);
	*o = 0;
}

static inline char *put(char *o, const void *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* v in decimal: at most 20 bytes. */
static char *put_u64(char *o, uint64_t v)
{
	char t[20];
	size_t i = sizeof t;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return put(o, t + i, sizeof t - i);
}

/* Nanoseconds as exact decimal seconds: at most 30 bytes. */
static char *put_secs(char *o, uint64_t ns)
{
	unsigned f = (unsigned)(ns % 1000000000u);

	o = put_u64(o, ns / 1000000000u);
	*o++ = '.';
	for (int i = 8; i >= 0; i--, f /= 10)
		o[i] = (char)('0' + f % 10);
	return o + 9;
}

void rd_buf_mem(struct rd_buf *b, const void *s, size_t n)
{
	char *o = room(b, n);

	if (o)
		grown(b, put(o, s, n));
}

void rd_buf_str(struct rd_buf *b, const char *s)
{
	rd_buf_mem(b, s, strlen(s));
}

void rd_buf_u64(struct rd_buf *b, uint64_t v)
{
	char *o = room(b, 20);

	if (o)
		grown(b, put_u64(o, v));
}

void rd_buf_i64(struct rd_buf *b, int64_t v)
{
	if (v < 0) {
		rd_buf_mem(b, "-", 1);
		rd_buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		rd_buf_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as exact decimal seconds. */
static void buf_secs(struct rd_buf *b, uint64_t ns)
{
	char *o = room(b, 30);

	if (o)
		grown(b, put_secs(o, ns));
}

/* A label value: valid UTF-8 kept, other bytes as '?', and \\ \" \n
 * escaped as both formats want. */
void rd_buf_label(struct rd_buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned n = 0, c = *u;

		if (c == '\\' || c == '"') {
			char e[2] = { '\\', (char)c };

			rd_buf_mem(b, e, 2);
			u++;
			continue;
		}
		if (c == '\n') {
			rd_buf_mem(b, "\\n", 2);
			u++;
			continue;
		}
		if (c < 0x80)
			n = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		for (unsigned k = 1; k < n; k++)
			if ((u[k] & 0xc0) != 0x80)
				n = 0;
		if (n == 0 || (c < 0x20 && c != '\t')) {
			rd_buf_mem(b, "?", 1);
			u++;
		} else {
			rd_buf_mem(b, u, n);
			u += n;
		}
	}
}

/* ---- exposition ----------------------------------------------------------- */

static void head(struct rd_buf *b, const char *name, enum ftype t,
                 const char *help, int om)
{
	static const char *const tn[] = { "counter", "gauge", "histogram" };
	const char *suffix = t == T_COUNTER && !om ? "_total" : "";

	rd_buf_str(b, "# HELP ");
	rd_buf_str(b, name);
	rd_buf_str(b, suffix);
	rd_buf_str(b, " ");
	rd_buf_str(b, help);
	rd_buf_str(b, "\n# TYPE ");
	rd_buf_str(b, name);
	rd_buf_str(b, suffix);
	rd_buf_str(b, " ");
	rd_buf_str(b, tn[t]);
	rd_buf_str(b, "\n");
}

/*
 * One histogram's samples, written in place: room for all of them is made
 * once, the first bucket line's head (name_bucket{ and the labels) is
 * written from its parts and copied for the other buckets, and the counts
 * are formatted without stdio. The text is what render_series() wrote
 * sample by sample before (tests/prom compares it with Prometheus).
 */
/* name_created{labels} SECONDS: OpenMetrics' creation time of a counter
 * or histogram (ms precision). */
static char *put_created(char *o, const char *name, size_t nl, const char *l1,
                         size_t n1, const char *l2, size_t n2, uint64_t ms)
{
	o = put(o, name, nl);
	o = put(o, "_created{", sizeof "_created{" - 1);
	o = put(o, l1, n1);
	o = put(o, l2, n2);
	o = put(o, "} ", 2);
	o = put_u64(o, ms / 1000u);
	*o++ = '.';
	*o++ = (char)('0' + ms / 100u % 10u);
	*o++ = (char)('0' + ms / 10u % 10u);
	*o++ = (char)('0' + ms % 10u);
	*o++ = '\n';
	return o;
}

static void render_hist(struct rd_buf *b, const char *name,
                        const struct proc *P, const struct series *s, int om)
{
	size_t nl = strlen(name), head = nl + sizeof "_bucket{" - 1 + P->nlabels +
	                               s->nlabels;
	char *o = room(b, (NB + 4) * (head + LE_MAX + 24 + 1) + 32), *h;
	uint64_t cum = 0;

	if (!o)
		return;
	h = o;
	o = put(o, name, nl);
	o = put(o, "_bucket{", sizeof "_bucket{" - 1);
	o = put(o, P->labels, P->nlabels);
	o = put(o, s->labels, s->nlabels);
	for (unsigned i = 0; i <= NB; i++) {
		if (i)
			o = put(o, h, head);
		cum += s->b[i];
		o = put(o, le_txt[i].s, le_txt[i].n);
		o = put_u64(o, cum);
		*o++ = '\n';
	}
	o = put(o, name, nl);
	o = put(o, "_sum{", sizeof "_sum{" - 1);
	o = put(o, h + nl + sizeof "_bucket{" - 1, P->nlabels + s->nlabels);
	o = put(o, "} ", 2);
	o = put_secs(o, s->sum_ns);
	*o++ = '\n';
	o = put(o, name, nl);
	o = put(o, "_count{", sizeof "_count{" - 1);
	o = put(o, h + nl + sizeof "_bucket{" - 1, P->nlabels + s->nlabels);
	o = put(o, "} ", 2);
	o = put_u64(o, s->count);
	*o++ = '\n';
	if (om)
		o = put_created(o, name, nl, P->labels, P->nlabels, s->labels,
		                s->nlabels, s->created_ms);
	grown(b, o);
}

static void render_series(struct rd_buf *b, int fam, const struct proc *P,
                          const struct series *s, int om)
{
	const struct famdef *d = &fams[fam];
	size_t nl;
	char *o;

	if (d->type == T_HIST) {
		render_hist(b, d->name, P, s, om);
		return;
	}
	nl = strlen(d->name);
	if (!(o = room(b, 2 * (nl + P->nlabels + s->nlabels) + 128)))
		return;
	o = put(o, d->name, nl);
	if (d->type == T_COUNTER)
		o = put(o, "_total", sizeof "_total" - 1);
	*o++ = '{';
	o = put(o, P->labels, P->nlabels);
	o = put(o, s->labels, s->nlabels);
	o = put(o, "} ", 2);
	if (fam == PF_PHASE_TIME) {
		o = put_secs(o, s->v);
	} else if (fam == PF_INT) {
		if (s->last < 0)
			*o++ = '-';
		o = put_u64(o, s->last < 0 ? (uint64_t)0 - (uint64_t)s->last
		                           : (uint64_t)s->last);
	} else {
		o = put_u64(o, s->v);
	}
	*o++ = '\n';
	if (om && d->type == T_COUNTER)
		o = put_created(o, d->name, nl, P->labels, P->nlabels, s->labels,
		                s->nlabels, s->created_ms);
	grown(b, o);
}

/* A family of one sample per label set: v(P) each. */
static void per_set(struct rd_prom *p, struct rd_buf *b, const char *name,
                    enum ftype t, const char *help, int om,
                    uint64_t (*v)(const struct proc *))
{
	size_t nl = strlen(name);

	if (!p->np)
		return;
	head(b, name, t, help, om);
	for (size_t i = 0; i < p->np; i++) {
		const struct proc *P = p->p[i];
		char *o = room(b, 2 * (nl + P->nlabels) + 96);

		if (!o)
			return;
		o = put(o, name, nl);
		if (t == T_COUNTER)
			o = put(o, "_total", sizeof "_total" - 1);
		*o++ = '{';
		o = put(o, P->labels, P->nlabels);
		o = put(o, "} ", 2);
		o = put_u64(o, v(P));
		*o++ = '\n';
		if (om && t == T_COUNTER)
			o = put_created(o, name, nl, P->labels, P->nlabels, "", 0,
			                P->created_ms);
		grown(b, o);
	}
}

static uint64_t v_alive(const struct proc *P) { return P->nlive != 0; }
static uint64_t v_limited(const struct proc *P) { return P->limited || P->oom; }
static uint64_t v_live(const struct proc *P) { return P->nlive; }
static uint64_t v_started(const struct proc *P) { return P->started; }
static uint64_t v_ended(const struct proc *P) { return P->ended; }

/* The families of one sample per label set (rte_process_alive with
 * --per-process only). */
static const struct {
	const char *name;
	enum ftype type;
	const char *help;
	uint64_t (*v)(const struct proc *);
} set_fams[] = {
	{ "rte_process_alive", T_GAUGE,
	  "1 while a ring file of the process is still read (--per-process).", v_alive },
	{ "rte_processes", T_GAUGE,
	  "Processes (ring files: an exec starts a new one) still being read, from their first event read.", v_live },
	{ "rte_processes_started", T_COUNTER,
	  "Processes (ring files) picked up since the exporter started.", v_started },
	{ "rte_processes_ended", T_COUNTER,
	  "Processes (ring files) read to their end after their writer was gone.", v_ended },
	{ "rte_names_limited", T_GAUGE,
	  "1 if the label set had more user event names than --max-names (the rest are name=\"other\").",
	  v_limited },
};

static void simple(struct rd_buf *b, const char *name, enum ftype t,
                   const char *help, int om, uint64_t v)
{
	head(b, name, t, help, om);
	rd_buf_str(b, name);
	rd_buf_str(b, t == T_COUNTER ? "_total " : " ");
	rd_buf_u64(b, v);
	rd_buf_mem(b, "\n", 1);
}

static void render_exporter(struct rd_prom *p, struct rd_buf *b, int om)
{
	size_t done = 0;

	for (size_t i = 0; i < p->nf; i++)
		done += p->f[i]->done;
	simple(b, "rte_exporter_files_followed", T_GAUGE,
	       "Ring files being read (not yet finished).", om, p->nf - done);
	simple(b, "rte_exporter_files", T_COUNTER,
	       "Ring files picked up since the exporter started.", om, p->files_total);
	simple(b, "rte_exporter_label_sets", T_GAUGE,
	       "Label sets (exe, --label pairs, pid with --per-process) with series.",
	       om, p->np);
	simple(b, "rte_exporter_label_sets_limited", T_GAUGE,
	       "1 once label sets past --max-label-sets went to exe=\"other\".",
	       om, (uint64_t)p->sets_warned);
	simple(b, "rte_exporter_read_events", T_COUNTER,
	       "Events read from ring files.", om, p->events_read);
	simple(b, "rte_exporter_read_bytes", T_COUNTER,
	       "Ring bytes read (sizes of the messages read).", om, p->bytes_read);
	simple(b, "rte_exporter_errors", T_COUNTER,
	       "Ring files that could not be opened or read, and corrupt rings.",
	       om, p->errors);
	simple(b, "rte_exporter_scrapes", T_COUNTER,
	       "Scrapes of /metrics answered.", om, p->scrapes);
	head(b, "rte_exporter_scrape_duration_seconds", T_GAUGE,
	     "Time the previous scrape took to render.", om);
	rd_buf_str(b, "rte_exporter_scrape_duration_seconds ");
	buf_secs(b, p->scrape_ns);
	rd_buf_mem(b, "\n", 1);
}

int rd_prom_render(rd_prom *p, struct rd_buf *b, int om, int mark)
{
	size_t start = b->n;

	/* about the size of the last one: one allocation, not a doubling
	 * series of copies (if it fails, room() tries again as it goes) */
	if (p->last_len && b->cap < b->n + p->last_len + p->last_len / 8) {
		size_t cap = b->n + p->last_len + p->last_len / 8;
		char *q = realloc(b->p, cap);

		if (q) {
			b->p = q;
			b->cap = cap;
		}
	}
	for (size_t i = 0; i < sizeof set_fams / sizeof *set_fams; i++)
		if (p->o.per_process || set_fams[i].v != v_alive)
			per_set(p, b, set_fams[i].name, set_fams[i].type,
			        set_fams[i].help, om, set_fams[i].v);
	for (int fam = 0; fam < PF_N; fam++) {
		int any = 0;

		for (size_t i = 0; i < p->np && !any; i++)
			any = p->p[i]->fam[fam].n != 0;
		if (!any)
			continue;
		head(b, fams[fam].name, fams[fam].type, fams[fam].help, om);
		for (size_t i = 0; i < p->np; i++)
			for (size_t k = 0; k < p->p[i]->fam[fam].n; k++)
				render_series(b, fam, p->p[i], p->p[i]->fam[fam].v[k], om);
	}
	if (mark)
		p->scrapes++;
	if (p->o.exporter)
		render_exporter(p, b, om);
	if (om)
		rd_buf_str(b, "# EOF\n");
	if (b->oom)
		return -1;
	p->last_len = b->n - start;
	return 0;
}
