/*
 * fmt/chrome_tracks.c - the tracks of the Chrome format (see chrome.c): one
 * per thread, keyed by (pid, tid); without a tid (OCaml's own files), one
 * per tenancy of a ring (a ring reused by a later domain gets a track of
 * its own). Each gets its thread_name and sort index at the end, and each
 * process its process_name.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chrome.h"
#include "ptree.h"

/* Note the time of an event of source src (for ordering the files of a
 * process). */
void chrome_note_first(struct chrome *C, unsigned src, uint64_t ts)
{
	if (src >= C->nfirst) {
		unsigned n = src + 8;
		uint64_t *p = realloc(C->first, n * sizeof *p);

		if (!p)
			return;
		memset(p + C->nfirst, 0, (n - C->nfirst) * sizeof *p);
		C->first = p;
		C->nfirst = n;
	}
	if (!C->first[src] || ts + 1 < C->first[src])
		C->first[src] = ts + 1;
}

static size_t track_hash(long pid, long id, int is_ring)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^
	             ((uint64_t)id * 2 + (unsigned)is_ring) * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

static int track_grow(struct chrome *C)
{
	size_t cap = C->trcap ? C->trcap * 2 : 64;
	struct track *t = calloc(cap, sizeof *t);

	if (!t)
		return -1;
	for (size_t i = 0; i < C->trcap; i++) {
		struct track *o = &C->tr[i];
		size_t j;

		if (!o->used)
			continue;
		j = track_hash(o->pid, o->id, o->is_ring) & (cap - 1);
		while (t[j].used)
			j = (j + 1) & (cap - 1);
		t[j] = *o;
	}
	free(C->tr);
	C->tr = t;
	C->trcap = cap;
	return 0;
}

/* The track (pid, id), made if new; NULL if out of memory. */
static struct track *track_get(struct chrome *C, long pid, long id, int is_ring)
{
	size_t j;

	if ((C->ntr + 1) * 2 > C->trcap && track_grow(C) < 0)
		return NULL;
	j = track_hash(pid, id, is_ring) & (C->trcap - 1);
	while (C->tr[j].used) {
		struct track *t = &C->tr[j];

		if (t->pid == pid && t->id == id && t->is_ring == is_ring)
			return t;
		j = (j + 1) & (C->trcap - 1);
	}
	C->tr[j].used = 1;
	C->tr[j].pid = pid;
	C->tr[j].id = id;
	C->tr[j].is_ring = is_ring;
	C->tr[j].order = (unsigned)C->ntr++;
	return &C->tr[j];
}

/* The ring state of (src, ring), made if new; NULL if out of memory. */
struct ring_names *chrome_ring(struct chrome *C, struct rd_ctx *c,
                               unsigned src, unsigned ring)
{
	struct rd_src *s = &c->procs->src[src];

	if (src >= C->nrn) {
		unsigned n = src + 8;
		struct ring_names **p = realloc(C->rn, n * sizeof *p);

		if (!p)
			return NULL;
		memset(p + C->nrn, 0, (n - C->nrn) * sizeof *p);
		C->rn = p;
		C->nrn = n;
	}
	if (!C->rn[src]) {
		if (!(C->rn[src] = calloc(s->rings, sizeof **C->rn)))
			return NULL;
		for (unsigned r = 0; r < s->rings; r++) {
			C->rn[src][r].ttid = C->rn[src][r].last_tid = -1;
			C->rn[src][r].nrings = s->rings;
		}
	}
	return ring < s->rings ? &C->rn[src][ring] : NULL;
}

unsigned chrome_src(struct rd_ctx *c, const struct rd_item *it)
{
	return (unsigned)(it->src - c->procs->src);
}

/* The chrome tid of an event: its thread's tid, else its ring. */
long chrome_ring_tid(unsigned r, unsigned k)
{
	return (long)r + (long)k * CHROME_TENANCY_STRIDE;
}

long chrome_tid(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	struct ring_names *rn;

	if (it->th->tid >= 0)
		return it->th->tid;
	rn = chrome_ring(C, c, chrome_src(c, it), it->ev->ring);
	return chrome_ring_tid(it->ev->ring, rn ? rn->tenancy : 0);
}

/* Make sure the event's track exists and carries its thread's name:
 * called for every event, written or not (a name taken between written
 * events, set by a hidden rte.thread.name, is one the thread took). */
void chrome_track_note(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	unsigned src = chrome_src(c, it);
	struct ring_names *rn = chrome_ring(C, c, src, it->ev->ring);
	const struct rd_thread *th = it->th;
	struct track *t;
	long id;
	size_t len;

	if (!rn)
		return;
	if (th->tid >= 0)
		rn->last_tid = th->tid;
	id = chrome_tid(C, c, it);
	if (rn->tgen == th->name_gen + 1 && rn->ttid == id)
		return;
	rn->tgen = th->name_gen + 1;
	rn->ttid = id;
	t = track_get(C, it->src->pid, id, th->tid < 0);
	rn->tshown = t && t->shown;
	if (!t || !th->name[0] || !strcmp(t->last, th->name))
		return;
	len = strlen(t->names);
	snprintf(t->names + len, sizeof t->names - len, "%s%s",
	         !len ? "" : t->last_src == src ? ", " : ARROW, th->name);
	snprintf(t->last, sizeof t->last, "%s", th->name);
	t->last_src = src;
}

/* The event's track gets a thread_name record: an event is written on it. */
void chrome_track_show(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	struct ring_names *rn = chrome_ring(C, c, chrome_src(c, it), it->ev->ring);
	struct track *t;

	chrome_track_note(C, c, it);
	if (!rn || rn->tshown)
		return;
	t = track_get(C, it->src->pid, chrome_tid(C, c, it), it->th->tid < 0);
	if (t && !t->shown) {
		t->shown = 1;
		t->order = C->nshown++;
	}
	rn->tshown = t != NULL;
}

void chrome_note_thread_name(struct chrome *C, struct rd_ctx *c,
                             const struct rd_item *it)
{
	struct ring_names *rn = chrome_ring(C, c, chrome_src(c, it), it->ev->ring);
	size_t len;

	if (!rn)
		return;
	if (rn->gen == it->th->name_gen)
		return;
	rn->gen = it->th->name_gen;
	if (!it->th->name[0] || strstr(rn->names, it->th->name))
		return;
	len = strlen(rn->names);
	snprintf(rn->names + len, sizeof rn->names - len, "%s%s",
	         len ? ", " : "", it->th->name);
}

/* The start of a metadata record of track (pid, tid), up to its name. */
static void meta_open(struct chrome *C, struct rd_out *o, long pid, long tid)
{
	rd_out_str(o, C->any ? ",\n{\"ph\":\"M\",\"pid\":" : "\n{\"ph\":\"M\",\"pid\":");
	C->any = 1;
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_i64(o, tid);
}

static void metadata(struct chrome *C, struct rd_out *o, const char *what,
                     long pid, long tid, const char *name)
{
	meta_open(C, o, pid, tid);
	rd_out_str(o, ",\"name\":\"");
	rd_out_str(o, what);
	rd_out_str(o, "\",\"args\":{\"name\":\"");
	/* the bytes escaped one by one (rd_out_json_chars), the arrows
	 * between the files of a process as the character they are */
	for (const char *a; (a = strstr(name, ARROW)); name = a + strlen(ARROW)) {
		rd_out_json_chars(o, name, (size_t)(a - name));
		rd_out_str(o, " \\u2192 ");
	}
	rd_out_json_chars(o, name, strlen(name));
	rd_out_str(o, "\"}}");
}

static void sort_index(struct chrome *C, struct rd_out *o, long pid,
                       long tid, unsigned order)
{
	meta_open(C, o, pid, tid);
	rd_out_str(o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	rd_out_u64(o, order);
	rd_out_str(o, "}}");
}

/* One thread_name and sort index for each track of process pid. */
static void finish_tracks(struct chrome *C, struct rd_ctx *c, long pid)
{
	char label[400];

	for (size_t i = 0; i < C->trcap; i++) {
		const struct track *t = &C->tr[i];

		if (!t->used || !t->shown || t->pid != pid)
			continue;
		if (t->is_ring && t->id >= CHROME_TENANCY_STRIDE)
			snprintf(label, sizeof label, "ring %ld, domain %ld on it%s%s",
			         t->id % CHROME_TENANCY_STRIDE,
			         t->id / CHROME_TENANCY_STRIDE + 1,
			         t->names[0] ? ": " : "", t->names);
		else if (t->is_ring)
			snprintf(label, sizeof label, "ring %ld%s%s", t->id,
			         t->names[0] ? ": " : "", t->names);
		else if (t->names[0])
			snprintf(label, sizeof label, "%s (tid %ld)", t->names, t->id);
		else
			snprintf(label, sizeof label, "tid %ld", t->id);
		metadata(C, c->out, "thread_name", pid, t->id, label);
		sort_index(C, c->out, pid, t->id, t->order);
	}
}

/* The sources of process pr in the order of their first event (execs
 * follow each other); n set to their number. Caller frees. */
static unsigned *proc_files(struct chrome *C, struct rd_procs *P,
                            const struct rd_proc *pr, unsigned *n)
{
	unsigned *v = malloc((P->nsrc ? P->nsrc : 1) * sizeof *v);

	*n = 0;
	if (!v)
		return NULL;
	for (unsigned i = 0; i < P->nsrc; i++) {
		uint64_t fi = i < C->nfirst ? C->first[i] : 0, fj;
		unsigned k = *n;

		if (P->src[i].proc != pr)
			continue;
		/* insertion sort: a process has a few files */
		while (k > 0 && (fj = v[k - 1] < C->nfirst ? C->first[v[k - 1]] : 0) > fi) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = i;
		(*n)++;
	}
	return v;
}

/* Append part to buf (of cap bytes) after sep, unless it repeats the part
 * appended last (prev: where that one starts). */
static void join(char *buf, size_t cap, size_t *prev, const char *sep,
                 const char *part)
{
	size_t len = strlen(buf);

	if (!part[0] || (len && !strcmp(buf + *prev, part)))
		return;
	snprintf(buf + len, cap - len, "%s", len ? sep : "");
	*prev = strlen(buf);
	snprintf(buf + *prev, cap - *prev, "%s", part);
}

/* One thread_name per ring of process pr (all its files merged), and its
 * process_name. */
void chrome_finish_proc(struct chrome *C, struct rd_ctx *c, struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	unsigned nf, *f = proc_files(C, P, pr, &nf);
	char names[1024], label[1100], exe[RD_THREAD_NAME_MAX], cmd[1024];
	size_t prev = 0;
	int x;

	if (!f)
		return;
	finish_tracks(C, c, pr->pid);
	/* the process: after ring 0's first thread name of each file */
	names[0] = '\0';
	for (unsigned k = 0; k < nf; k++) {
		unsigned i = f[k];
		const char *n = i < C->nrn && C->rn[i] ? C->rn[i][0].names : "";
		size_t l = strcspn(n, ",");

		if (l >= sizeof exe)
			l = sizeof exe - 1;
		memcpy(exe, n, l);
		exe[l] = '\0';
		join(names, sizeof names, &prev, ARROW, exe);
	}
	if (pr->pid >= 0 && (x = rd_ptree_find(rd_ptree_build(P), pr->pid)) >= 0 &&
	    P->tree->n[x].argv) /* its command line (ptree.h), its images */
		snprintf(label, sizeof label, "pid %ld: %s%s%s%s", pr->pid,
		         rd_ptree_cmdline(&P->tree->n[x], cmd, sizeof cmd, 600),
		         strstr(names, ARROW) ? " (" : "",
		         strstr(names, ARROW) ? names : "", strstr(names, ARROW) ? ")" : "");
	else if (pr->pid >= 0)
		snprintf(label, sizeof label, "pid %ld%s%s", pr->pid,
		         names[0] ? ": " : "", names);
	else
		snprintf(label, sizeof label, "pid unknown%s%s", names[0] ? ": " : "", names);
	metadata(C, c->out, "process_name", pr->pid, 0, label);
	free(f);
}

/* A process without a file of its own (ptree.h) has one track, tid =
 * pid, its lifetime slice's: named as a process with a file is, by its
 * command line (the image that forked it, or "(untraced: reaped only)"),
 * and its thread by that image. Named once a pid: a pid with a file is
 * named by chrome_finish_proc, and a pid two such lives had shares the
 * track (its later life's slice follows the earlier one's). */
void chrome_name_fileless(struct chrome *C, struct rd_ctx *c, const struct rd_ptnode *x)
{
	char label[1100], cmd[1024], exe[256];
	struct track *t;

	if (x->pid <= 0 || rd_ptree_find(c->procs->tree, x->pid) >= 0)
		return;
	t = track_get(C, x->pid, x->pid, 0);
	if (t && t->shown)
		return;
	if (t)
		t->shown = 1; /* no rd_proc of this pid: finish_tracks never sees it */
	snprintf(label, sizeof label, "%s (tid %ld)",
	         rd_ptree_exe(x, exe, sizeof exe), x->pid);
	metadata(C, c->out, "thread_name", x->pid, x->pid, label);
	snprintf(label, sizeof label, "pid %ld: %s", x->pid,
	         rd_ptree_cmdline(x, cmd, sizeof cmd, 600));
	metadata(C, c->out, "process_name", x->pid, 0, label);
}
