/*
 * ptree_note.c - the process tree's collection (ptree.h): per file, the
 * records of rd_ptree_note() (rte.proc, rte.exit, rte.reap, rte.spawn,
 * rte.spawn_failed, fork_parent, its times and whether it wrote events
 * of its own), which rd_ptree_build() (ptree.c) turns into processes;
 * and the freeing of both.
 */
#include <stdlib.h>
#include <string.h>

#include "procs.h"
#include "ptree_int.h"
#include "vec.h"

struct rd_ptree *rd_ptree_of(struct rd_procs *P)
{
	if (!P->tree)
		P->tree = calloc(1, sizeof *P->tree);
	return P->tree;
}

/* Room for element i of the array *pp (capacity *cap, elements of `each`
 * bytes; vec.h), what is added zeroed. 0, or -1 with T->oom set. */
int rd_pt_room(struct rd_ptree *T, void *pp, size_t *cap, size_t i,
               size_t each, size_t first)
{
	size_t old = *cap;
	char *p;

	if (rd_vec_room(pp, cap, i, each, first) < 0) {
		T->oom = 1;
		return -1;
	}
	memcpy(&p, pp, sizeof p);
	memset(p + old * each, 0, (*cap - old) * each);
	return 0;
}

/* The file record of source src; the first call makes room for every
 * source there is (nsrc), so that 100,000 files take no doubling slack. */
static struct pt_file *file_of(struct rd_ptree *T, unsigned src, unsigned nsrc)
{
	if (rd_pt_room(T, &T->f, &T->fcap, src, sizeof *T->f, nsrc > 64 ? nsrc : 64) < 0)
		return NULL;
	if (src >= T->nf)
		T->nf = src + 1;
	T->f[src].seen = 1;
	return &T->f[src];
}

static void add_link(struct rd_ptree *T, struct pt_file *f, long pid,
                     uint64_t ts, const struct rte_exit_rec *r, int fork)
{
	if (pid <= 0)
		return;
	if (rd_pt_room(T, &f->l, &f->lcap, f->nl, sizeof *f->l, 4) < 0)
		return;
	f->l[f->nl] = (struct pt_link){ .pid = pid, .ts = ts, .reap = r != NULL,
	                                .fork = fork };
	if (r)
		f->l[f->nl].r = *r;
	f->nl++;
}

static int named(const char *name, const char *want)
{
	return name && name[0] == 'r' && !strcmp(name, want);
}

static void add_fail(struct rd_ptree *T, struct pt_file *f, uint64_t ts,
                     const void *payload, size_t n)
{
	struct rte_spawn_fail_rec r;
	struct pt_fail *x;
	const char *a;
	size_t len;

	if (rte_spawn_fail_decode(payload, n, &r, &a, &len) < 0 ||
	    rd_pt_room(T, &f->fails, &f->failcap, f->nfails, sizeof *f->fails, 2) < 0)
		return;
	x = &f->fails[f->nfails];
	*x = (struct pt_fail){ .ts = ts, .err = r.err, .argc = r.argc,
	                       .cut = !!(r.flags & RTE_PROC_ARGV_CUT) };
	if (!(r.flags & RTE_PROC_NO_ARGV) && len) {
		if (!(x->argv = malloc(len))) {
			T->oom = 1;
			return;
		}
		memcpy(x->argv, a, len);
		x->argv_len = len;
	}
	f->nfails++;
}

void rd_ptree_note(struct rd_procs *P, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	unsigned src = (unsigned)(it->src - P->src);
	struct rd_ptree *T;
	struct pt_file *f;
	struct rte_exit_rec r;

	if ((ev->kind < RTE_EV_LIFECYCLE && ev->kind != RTE_EV_BEGIN) ||
	    ev->kind == RTE_EV_LOST || ev->kind == RTE_EV_USER_SPAN_END)
		return;
	if (!(T = rd_ptree_of(P)) || !(f = file_of(T, src, P->nsrc)))
		return;
	if (ev->kind == RTE_EV_BEGIN) { /* runtime phases: a detail block */
		f->user = 1;
		return;
	}
	if (ev->kind == RTE_EV_LIFECYCLE) {
		if (ev->id == RTE_LC_RING_START && (!f->start_ts || it->ts < f->start_ts))
			f->start_ts = it->ts;
		else if (ev->id == RTE_LC_RING_STOP && it->ts > f->stop_ts)
			f->stop_ts = it->ts;
		else if (ev->id == RTE_LC_FORK_PARENT)
			add_link(T, f, (long)ev->u.data, it->ts, NULL, 1);
		return;
	}
	if (ev->name && (strncmp(ev->name, "rte.", 4) || !strcmp(ev->name, "rte.sample") ||
	                 !strncmp(ev->name, "rte.alloc", 9) || !strncmp(ev->name, "rte.crash", 9))) {
		f->user = 1; /* its own events, profiles, crashes: a detail block */
		return;
	}
	if (ev->kind == RTE_EV_USER_INT && named(ev->name, "rte.spawn")) {
		add_link(T, f, (long)ev->u.value, it->ts, NULL, 0);
	} else if (ev->kind != RTE_EV_USER_CUSTOM) {
		return;
	} else if (named(ev->name, "rte.proc") && !f->has_proc) {
		const char *a;
		size_t n;

		if (rte_proc_decode(ev->u.custom.bytes, ev->u.custom.len, &f->pr,
		                    &a, &n) < 0)
			return;
		f->has_proc = 1;
		if (n && (f->argv = malloc(n)) != NULL) {
			memcpy(f->argv, a, n);
			f->argv_len = n;
		} else if (n) {
			T->oom = 1;
		}
	} else if (named(ev->name, "rte.exit")) {
		if (rte_exit_decode(ev->u.custom.bytes, ev->u.custom.len, &f->ex) == 0)
			f->has_exit = 1;
	} else if (named(ev->name, "rte.reap")) {
		if (rte_exit_decode(ev->u.custom.bytes, ev->u.custom.len, &r) == 0)
			add_link(T, f, r.pid, it->ts, &r, 0);
	} else if (named(ev->name, "rte.spawn_failed")) {
		add_fail(T, f, it->ts, ev->u.custom.bytes, ev->u.custom.len);
	}
}

void rd_ptree_free(struct rd_ptree *T)
{
	if (!T)
		return;
	for (unsigned i = 0; i < T->nf; i++) {
		free(T->f[i].argv);
		free(T->f[i].l);
		for (unsigned j = 0; j < T->f[i].nfails; j++)
			free(T->f[i].fails[j].argv);
		free(T->f[i].fails);
	}
	for (unsigned k = 0; k < T->nn; k++)
		free(T->n[k].argv);
	free(T->f);
	free(T->n);
	free(T);
}
