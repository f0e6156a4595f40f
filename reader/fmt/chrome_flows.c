/*
 * fmt/chrome_flows.c - the flow arrows of the Chrome format (see chrome.c):
 * fork, from the parent's fork_parent to the child's fork_child; exec,
 * from the old image's rte.exec to the new image's ring_start; and the
 * exec tries held until they are known to have failed (execvp's PATH
 * search), which are bookkeeping. And from the process tree (ptree.h):
 * a slice for each process's lifetime (its end and usage in args) and a
 * "spawn" arrow from the parent to every child however it was made
 * (fork, posix_spawn, vfork, system(), a ppid), the processes without a
 * file of their own included (a fork child reaped by a traced parent: a
 * subshell, a pipeline's stage, a SIGKILLed child, an image that failed
 * in ld.so), so that Chrome shows every process the summary does.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chrome.h"
#include "ptree.h"
#include "rte/proc.h"

static struct src_flow *flow_of(struct chrome *C, unsigned src)
{
	if (src >= C->nsf) {
		unsigned n = src + 8;
		struct src_flow *p = realloc(C->sf, n * sizeof *p);

		if (!p)
			return NULL;
		memset(p + C->nsf, 0, (n - C->nsf) * sizeof *p);
		C->sf = p;
		C->nsf = n;
	}
	return &C->sf[src];
}

/* Note an end of a flow arrow: ring_start, fork_parent, fork_child,
 * rte.exec (drawn as 1 ns slices on track tid). */
void chrome_flow_note(struct chrome *C, struct rd_ctx *c,
                      const struct rd_item *it, const struct rte_event *ev,
                      uint64_t ts, long tid)
{
	struct src_flow *f = flow_of(C, chrome_src(c, it));

	if (!f)
		return;
	if (ev->kind == RTE_EV_USER_CUSTOM) {
		f->has_exec = 1; /* the last one: a failed exec is followed */
		f->exec_ts = ts;
		f->exec_tid = tid;
	} else if (ev->id == RTE_LC_RING_START && !f->has_start) {
		f->has_start = 1;
		f->start_ts = ts;
		f->start_tid = tid;
	} else if (ev->id == RTE_LC_FORK_CHILD && !f->has_fc) {
		f->has_fc = 1;
		f->fc_ts = ts;
		f->fc_tid = tid;
	} else if (ev->id == RTE_LC_FORK_PARENT && ev->u.data > 0) {
		if (C->nforks == C->forkcap) {
			size_t n = C->forkcap ? C->forkcap * 2 : 16;
			struct fork_pt *p = realloc(C->forks, n * sizeof *p);

			if (!p)
				return;
			C->forks = p;
			C->forkcap = n;
		}
		C->forks[C->nforks++] = (struct fork_pt){ it->src->pid, tid,
		                                          (long)ev->u.data, ts };
	}
}

int chrome_is_flow_point(const struct rte_event *ev)
{
	if (ev->kind == RTE_EV_LIFECYCLE)
		return ev->id == RTE_LC_RING_START || ev->id == RTE_LC_FORK_PARENT ||
		       ev->id == RTE_LC_FORK_CHILD;
	return ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
	       !strcmp(ev->name, "rte.exec");
}

static void unhold(struct chrome *C, unsigned src, unsigned ring)
{
	for (unsigned i = 0; i < C->nholding; i++)
		if (C->holding[i].src == src && C->holding[i].ring == ring) {
			C->holding[i] = C->holding[--C->nholding];
			return;
		}
}

/* An event of another file of a process holding an exec: the exec
 * succeeded (this is the next image), write it first. */
void chrome_flush_other_holds(struct chrome *C, struct rd_ctx *c,
                              const struct rd_item *it)
{
	unsigned src = chrome_src(c, it);

	for (unsigned i = 0; i < C->nholding; i++) {
		unsigned hs = C->holding[i].src, hr = C->holding[i].ring;
		struct rd_src *s = &c->procs->src[hs];
		struct rd_item p;

		if (hs == src || s->proc != it->proc)
			continue;
		p = *it;
		p.src = s;
		p.th = &s->threads[hr];
		chrome_flush_held(C, c, &p, &C->rn[hs][hr]);
		C->holding[i--] = C->holding[--C->nholding];
	}
}

/* Without --all, an exec that fails (rte.exec, ring_stop, ring_start,
 * rte.exec_failed: one try of execvp's PATH search) is bookkeeping too.
 * Returns 1 if the event was taken (held or dropped). */
int chrome_hold_exec(struct chrome *C, struct rd_ctx *c,
                     const struct rd_item *it, struct ring_names *rn)
{
	const struct rte_event *ev = it->ev;
	int is_exec = ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
	              !strcmp(ev->name, "rte.exec");

	if (c->filter->all || !rn || !it->pass)
		return 0;
	if (rn->nheld && ev->kind == RTE_EV_USER_INT && ev->name &&
	    !strcmp(ev->name, "rte.exec_failed")) {
		rn->nheld = 0; /* the try failed: nothing of it is shown */
		free(rn->held_bytes);
		rn->held_bytes = NULL;
		unhold(C, chrome_src(c, it), ev->ring);
		return 1;
	}
	if (rn->nheld && !is_exec && rn->nheld < 3 && ev->kind == RTE_EV_LIFECYCLE &&
	    (ev->id == RTE_LC_RING_STOP || ev->id == RTE_LC_RING_START)) {
		rn->held[rn->nheld] = *ev;
		rn->held_ts[rn->nheld++] = it->ts;
		return 1;
	}
	if (rn->nheld) {
		chrome_flush_held(C, c, it, rn);
		unhold(C, chrome_src(c, it), ev->ring);
	}
	if (!is_exec || C->nholding == 16 ||
	    !(rn->held_bytes = malloc(ev->u.custom.len ? ev->u.custom.len : 1)))
		return 0;
	C->holding[C->nholding].src = chrome_src(c, it);
	C->holding[C->nholding++].ring = ev->ring;
	memcpy(rn->held_bytes, ev->u.custom.bytes, ev->u.custom.len);
	rn->held[0] = *ev;
	rn->held[0].u.custom.bytes = rn->held_bytes;
	rn->held_ts[0] = it->ts;
	rn->nheld = 1;
	return 1;
}

static void flow(struct chrome *C, struct rd_out *o, const char *name,
                 unsigned long long id, long pid, long tid, uint64_t ts,
                 long pid2, long tid2, uint64_t ts2)
{
	chrome_ev_open(C, o, "s", pid, tid, ts);
	rd_out_kv_u64(o, ",\"id\":", id);
	chrome_put_name(o, name, "process");
	rd_out_ch(o, '}');
	chrome_ev_open(C, o, "f", pid2, tid2, ts2);
	rd_out_kv_u64(o, ",\"bp\":\"e\",\"id\":", id);
	chrome_put_name(o, name, "process");
	rd_out_ch(o, '}');
}

static int by_pid(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The arrows whose two ends were written: fork_parent to the child's
 * fork_child; an image's rte.exec to the next image's ring_start. */
void chrome_finish_flows(struct chrome *C, struct rd_ctx *c)
{
	struct rd_procs *P = c->procs;
	unsigned long long id = 1;

	struct child { long pid; unsigned src; } *ch = NULL;
	unsigned nch = 0;

	/* the files that begin with fork_child, by pid: one lookup a fork */
	if (C->nforks && (ch = malloc((C->nsf ? C->nsf : 1) * sizeof *ch))) {
		for (unsigned i = 0; i < P->nsrc && i < C->nsf; i++)
			if (C->sf[i].has_fc)
				ch[nch++] = (struct child){ P->src[i].pid, i };
		qsort(ch, nch, sizeof *ch, by_pid);
	}
	for (size_t k = 0; ch && k < C->nforks; k++) {
		const struct fork_pt *fp = &C->forks[k];
		struct child key = { fp->child, 0 };
		const struct child *hit = bsearch(&key, ch, nch, sizeof *ch, by_pid);

		if (hit) {
			const struct src_flow *f = &C->sf[hit->src];

			flow(C, c->out, "fork", id++, fp->pid, fp->tid, fp->ts,
			     fp->child, f->fc_tid, f->fc_ts);
		}
	}
	free(ch);
	for (unsigned i = 0; i < P->nsrc && i < C->nsf; i++) {
		const struct src_flow *a = &C->sf[i];
		const struct src_flow *b = NULL;
		uint64_t at = i < C->nfirst ? C->first[i] : 0, bt = 0;

		if (!a->has_exec)
			continue;
		/* the next image: the file of the same pid that starts next */
		for (unsigned j = 0; j < P->nsrc && j < C->nsf; j++) {
			uint64_t jt = j < C->nfirst ? C->first[j] : 0;

			if (j == i || P->src[j].proc != P->src[i].proc ||
			    !C->sf[j].has_start || jt <= at || (b && jt >= bt))
				continue;
			b = &C->sf[j];
			bt = jt;
		}
		if (b)
			flow(C, c->out, "exec", id++, P->src[i].pid, a->exec_tid,
			     a->exec_ts, P->src[i].pid, b->start_tid, b->start_ts);
	}
}

static size_t fc_slot(const struct chrome *C, long pid)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (C->fcap - 1);
}

void chrome_note_fork_child(struct chrome *C, long pid, uint64_t ts)
{
	size_t j;

	if (pid <= 0)
		return;
	if ((C->nfc + 1) * 2 > C->fcap) {
		size_t cap = C->fcap ? C->fcap * 2 : 64;
		struct fork_child_ts *n = calloc(cap, sizeof *n), *o = C->fc;
		size_t ocap = C->fcap;

		if (!n)
			return; /* the arrow is drawn where it was written */
		C->fc = n;
		C->fcap = cap;
		for (size_t i = 0; i < ocap; i++) {
			if (!o[i].pid)
				continue;
			for (j = fc_slot(C, o[i].pid); n[j].pid; j = (j + 1) & (cap - 1))
				;
			n[j] = o[i];
		}
		free(o);
	}
	for (j = fc_slot(C, pid); C->fc[j].pid && C->fc[j].pid != pid;
	     j = (j + 1) & (C->fcap - 1))
		;
	if (!C->fc[j].pid)
		C->nfc++;
	C->fc[j].pid = pid; /* the latest: a reused pid is a later process */
	C->fc[j].ts = ts;
}

uint64_t chrome_fork_anchor(struct chrome *C, long child, uint64_t ts)
{
	if (!C->fcap || child <= 0)
		return ts;
	for (size_t j = fc_slot(C, child); C->fc[j].pid; j = (j + 1) & (C->fcap - 1))
		if (C->fc[j].pid == child)
			return C->fc[j].ts < ts ? C->fc[j].ts : ts;
	return ts;
}

/* 1 if x has no file of its own (ptree.h: reaped or forked only): the
 * model knows it from its parent's records alone. */
static int fileless(const struct rd_ptnode *x)
{
	return x->reaped_only || x->forked_only;
}

/* Where x's lifetime slice begins: its start, or for a child known only
 * from its reap (its start unknown) the reap. */
static uint64_t life_at(const struct rd_ptnode *x)
{
	return x->start_ts ? x->start_ts : x->end_ts;
}

/* One process of the tree: its lifetime slice on its main thread's track
 * (tid = pid). A process without a file gets one too, from what the
 * model has: from the fork to the reap, else a 0 ns slice at the one it
 * knows, its args saying which end is unknown. */
static void life_slice(struct chrome *C, struct rd_out *o, const struct rd_ptnode *x)
{
	char sb[32], cmd[1100];

	chrome_ev_open(C, o, "X", x->pid, x->pid, life_at(x)); /* main thread */
	rd_out_str(o, ",\"dur\":");
	rd_out_us3(o, rd_ptree_wall(x));
	chrome_put_name(o, rd_ptree_cmdline(x, cmd, sizeof cmd, 1000), "lifetime");
	rd_out_str(o, ",\"args\":{\"exit\":");
	if (x->how == RTE_EXIT_STATUS)
		rd_out_i64(o, x->value);
	else if (x->how == RTE_EXIT_SIGNAL)
		rd_out_json_str(o, rd_ptree_signame(x->value, sb, sizeof sb));
	else
		rd_out_str(o, "null");
	if (x->usage) {
		rd_out_kv_u64(o, ",\"cpu_user_ns\":", x->utime_ns);
		rd_out_kv_u64(o, ",\"cpu_sys_ns\":", x->stime_ns);
		rd_out_kv_u64(o, ",\"max_rss_kib\":", x->maxrss_kib);
	}
	rd_out_kv_i64(o, ",\"ppid\":", x->ppid);
	if (x->reaped_only)
		rd_out_str(o, ",\"reaped_only\":true");
	if (x->forked_only)
		rd_out_str(o, ",\"forked_only\":true");
	if (fileless(x) && !x->start_ts)
		rd_out_str(o, ",\"start_unknown\":true");
	if (fileless(x) && !x->end_ts)
		rd_out_str(o, ",\"end_unknown\":true");
	rd_out_str(o, "}}");
}

/* 1 if x's main thread has the track tid = pid: a librte.so file whose
 * ring 0 said its tid, or a process without a file (its one track):
 * where its slice and arrows go. */
static int main_track(const struct rd_procs *P, const struct rd_ptnode *x)
{
	return fileless(x) || (x->nsrc && x->argv &&
	                       rd_src_rings(&P->src[x->first_src]).tid0 == x->pid);
}

/* A spawn that failed (pid unknown, no process of its own): an instant
 * on its parent's main thread, named by its command line. */
static void spawn_failed(struct chrome *C, struct rd_ctx *c, const struct rd_ptnode *x)
{
	const struct rd_ptree *T = c->procs->tree;
	const struct rd_ptnode *p = x->parent >= 0 ? &T->n[x->parent] : NULL;
	char cmd[1100], eb[32];

	if (!p || !main_track(c->procs, p))
		return;
	chrome_ev_open(C, c->out, "i", p->pid, p->pid, x->start_ts);
	rd_out_str(c->out, ",\"s\":\"t\"");
	chrome_put_name(c->out, rd_ptree_cmdline(x, cmd, sizeof cmd, 1000), "spawn failed");
	rd_out_str(c->out, ",\"args\":{\"spawn_failed\":");
	rd_out_json_str(c->out, rd_ptree_errname(x->spawn_err, eb, sizeof eb));
	rd_out_kv_i64(c->out, ",\"errno\":", x->spawn_err);
	rd_out_str(c->out, "}}");
}

void chrome_finish_ptree(struct chrome *C, struct rd_ctx *c)
{
	const struct rd_ptree *T = rd_ptree_build(c->procs);
	unsigned long long id = 1ull << 40; /* apart from the fork/exec ids */

	for (unsigned k = 0; T && k < T->nn; k++) {
		const struct rd_ptnode *x = &T->n[k], *p;
		uint64_t at;

		if (x->spawn_err) {
			spawn_failed(C, c, x);
			continue;
		}
		if (!main_track(c->procs, x) || (!fileless(x) && !x->start_ts))
			continue;
		if (fileless(x) || x->end_ts > x->start_ts)
			life_slice(C, c->out, x);
		if (fileless(x))
			chrome_name_fileless(C, c, x);
		if (x->parent < 0 || !main_track(c->procs, &T->n[x->parent]))
			continue;
		p = &T->n[x->parent];
		at = life_at(x) > life_at(p) ? life_at(x) : life_at(p);
		chrome_ev_open(C, c->out, "s", p->pid, p->pid, at);
		rd_out_str(c->out, ",\"id\":");
		rd_out_u64(c->out, id);
		chrome_put_name(c->out, "spawn", "spawn");
		rd_out_ch(c->out, '}');
		chrome_ev_open(C, c->out, "f", x->pid, x->pid, life_at(x));
		rd_out_str(c->out, ",\"bp\":\"e\",\"id\":");
		rd_out_u64(c->out, id++);
		chrome_put_name(c->out, "spawn", "spawn");
		rd_out_ch(c->out, '}');
	}
}
