/*
 * ptree.c - the process tree of a run (ptree.h): the building of the
 * processes and their links from what ptree_note.c collected per file.
 * (Naming them: ptree_name.c.)
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs.h"
#include "ptree_int.h"
#include "rte/proc.h"

struct rd_ptree_opts rd_ptree_opts;


/* A new node of pid; the first one makes room for `first` (one a file:
 * a tree of 100,000 processes takes no doubling slack). */
static int new_node(struct rd_ptree *T, long pid, unsigned first)
{
	if (rd_pt_room(T, &T->n, &T->cap, T->nn, sizeof *T->n, first > 64 ? first : 64) < 0)
		return -1;
	memset(&T->n[T->nn], 0, sizeof T->n[T->nn]);
	T->n[T->nn].pid = pid;
	T->n[T->nn].ppid = -1;
	T->n[T->nn].parent = T->n[T->nn].first_child = T->n[T->nn].next_sibling = -1;
	return (int)T->nn++;
}

static void set_end(struct rd_ptnode *x, const struct rte_exit_rec *r)
{
	if (r->how == RTE_EXIT_STATUS || r->how == RTE_EXIT_SIGNAL) {
		x->how = r->how;
		x->value = r->value;
	}
	if (r->flags & RTE_EXIT_CORE)
		x->core = 1;
	if (!(r->flags & RTE_EXIT_NO_RUSAGE) && !x->usage) {
		x->usage = 1;
		x->utime_ns = r->utime_ns;
		x->stime_ns = r->stime_ns;
		x->maxrss_kib = r->maxrss_kib;
	}
}

/* Node x's argv: a copy of file f's (the file keeps its own, the argv
 * of its fork children that have no file). */
static void set_argv(struct rd_ptree *T, struct rd_ptnode *x, const struct pt_file *f)
{
	char *a = NULL;

	if (f->argv_len && !(a = malloc(f->argv_len))) {
		T->oom = 1;
		return;
	}
	if (a)
		memcpy(a, f->argv, f->argv_len);
	free(x->argv);
	x->argv = a;
	x->argv_len = (uint32_t)f->argv_len;
	x->argc = f->pr.argc;
	x->argv_cut = !!(f->pr.flags & RTE_PROC_ARGV_CUT);
}

/* Add file i (of pid's process x) to node x. */
static void take_file(struct rd_ptree *T, struct rd_procs *P, int xi, unsigned i)
{
	struct rd_ptnode *x = &T->n[xi];
	struct pt_file *f = i < T->nf ? &T->f[i] : NULL;
	uint64_t st, en;

	if (!x->nsrc++)
		x->first_src = i;
	struct rd_src_rings rs = rd_src_rings(&P->src[i]);

	/* The file's time as the model's process wall (rd_proc_wall): from
	 * ring_start to ring_stop when both were seen, else from its first
	 * event to its last (an OCaml file whose start was overwritten). */
	if (f && f->start_ts && f->stop_ts >= f->start_ts) {
		st = f->start_ts;
		en = f->stop_ts;
	} else {
		st = rs.first_ts;
		en = rs.last_ts;
	}
	if (st && (!x->start_ts || st < x->start_ts))
		x->start_ts = st;
	if (en > x->end_ts)
		x->end_ts = en;
	x->lost_words += rs.lost;
	x->user_events |= rs.phases; /* runtime phases (fast path too) */
	if (!f)
		return;
	f->node = xi;
	x->user_events |= f->user;
	if (f->has_proc) {
		if (x->ppid < 0 || (f->pr.flags & RTE_PROC_FORK_CHILD))
			x->ppid = f->pr.ppid;
		if (!(f->pr.flags & RTE_PROC_NO_ARGV)) /* the last image's */
			set_argv(T, x, f);
	}
	if (f->has_exit)
		set_end(x, &f->ex);
}

/* Source order by pid then start time. */
static struct rd_procs *sort_P;
static struct rd_ptree *sort_T;

static uint64_t src_start(unsigned i)
{
	return i < sort_T->nf && sort_T->f[i].start_ts ? sort_T->f[i].start_ts
	                                              : rd_src_rings(&sort_P->src[i]).last_ts;
}

static int by_pid_time(const void *a, const void *b)
{
	unsigned i = *(const unsigned *)a, j = *(const unsigned *)b;
	long p = sort_P->src[i].pid, q = sort_P->src[j].pid;
	uint64_t s = src_start(i), t = src_start(j);

	if (p != q)
		return p < q ? -1 : 1;
	if (s != t)
		return s < t ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Node indices sorted by (pid, start): the lookups of node_at(). */
static const struct rd_ptree *byp_T;

static int by_pid_start(const void *a, const void *b)
{
	const struct rd_ptnode *x = &byp_T->n[*(const int *)a], *y = &byp_T->n[*(const int *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_ts != y->start_ts)
		return x->start_ts < y->start_ts ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* The node of pid alive at ts (the latest that began at or before it; ts
 * or a start 0 is "any time"), or -1. idx: the n file nodes sorted by
 * by_pid_start. */
static int node_at(const struct rd_ptree *T, const int *idx, unsigned n,
                   long pid, uint64_t ts)
{
	unsigned lo = 0, hi = n;
	int best = -1;

	while (lo < hi) { /* the first of pid */
		unsigned mid = lo + (hi - lo) / 2;

		if (T->n[idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && T->n[idx[lo]].pid == pid; lo++) {
		const struct rd_ptnode *x = &T->n[idx[lo]];

		if (best >= 0 && x->start_ts && ts && x->start_ts > ts)
			break;
		if (best < 0 || !x->start_ts || !ts || x->start_ts <= ts)
			best = idx[lo];
	}
	if (best >= 0 && T->n[best].start_ts && ts && T->n[best].start_ts > ts)
		return -1;
	return best;
}

/* The node of pid that began nearest to ts (a fork_parent or rte.spawn
 * at ts names a child that began just before or after it), or -1. */
static int node_near(const struct rd_ptree *T, const int *idx, unsigned n,
                     long pid, uint64_t ts)
{
	unsigned lo = 0, hi = n;
	int best = -1;
	uint64_t bd = 0;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (T->n[idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && T->n[idx[lo]].pid == pid; lo++) {
		uint64_t st = T->n[idx[lo]].start_ts, d = st > ts ? st - ts : ts - st;

		if (best < 0 || d < bd) {
			best = idx[lo];
			bd = d;
		}
	}
	return best;
}

/* Children by (parent, start, pid): linked in that order. */
static int by_parent(const void *a, const void *b)
{
	const struct rd_ptnode *x = &byp_T->n[*(const int *)a], *y = &byp_T->n[*(const int *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->start_ts != y->start_ts)
		return x->start_ts < y->start_ts ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void link_children(struct rd_ptree *T)
{
	int *k = malloc((T->nn + 1) * sizeof *k);

	if (!k) {
		T->oom = 1;
		return;
	}
	for (unsigned i = 0; i < T->nn; i++)
		k[i] = (int)i;
	byp_T = T;
	qsort(k, T->nn, sizeof *k, by_parent);
	for (unsigned i = T->nn; i-- > 0;) {
		struct rd_ptnode *x = &T->n[k[i]];

		if (x->parent < 0)
			continue;
		x->next_sibling = T->n[x->parent].first_child;
		T->n[x->parent].first_child = k[i];
	}
	free(k);
}

/*
 * A child of file i's process that has no file of its own: known from
 * its reap (l, reaped 1) or from its fork alone (reaped 0). With PRESERVE
 * a fork child that never wrote and that its parent reaps makes no file
 * (doc/DESIGN.md): where the image that forked it says so
 * (RTE_PROC_PRESERVE), it runs that image, so it takes that image's argv
 * and begins at its fork (the latest fork of its pid by any image of the
 * parent before the reap; nfirst/fnext: the files of each node). Without
 * that flag a fork alone makes no node (its child's file may just be
 * gone: no PRESERVE, or OCaml's own fork_parent). reaped 2: a pid reaped
 * twice, whose first life has the file: a second life whose file could
 * not be made (its name taken) looks the same, so its image stays
 * unknown. 0, or -1 out of memory.
 */
static int fileless(struct rd_ptree *T, struct rd_procs *P, unsigned i,
                    struct pt_link *l, int reaped, const int *nfirst,
                    const int *fnext)
{
	struct pt_file *f = &T->f[i], *ff = reaped ? NULL : f;
	struct pt_link *fk = reaped ? NULL : l;
	int x, told;

	for (int j = reaped == 1 && f->node >= 0 ? nfirst[f->node] : -1; j >= 0;
	     j = fnext[j])
		for (unsigned m = 0; m < T->f[j].nl; m++) {
			struct pt_link *k = &T->f[j].l[m];

			if (k->fork && !k->used && k->pid == l->pid && k->ts <= l->ts &&
			    (!fk || k->ts > fk->ts)) {
				fk = k;
				ff = &T->f[j];
			}
		}
	told = fk && ff->has_proc && (ff->pr.flags & RTE_PROC_PRESERVE);
	if (!reaped && !told)
		return 0;
	if ((x = new_node(T, l->pid, P->nsrc)) < 0)
		return -1;
	T->n[x].reaped_only = reaped != 0;
	T->n[x].ppid = P->src[i].pid;
	T->n[x].parent = f->node;
	if (reaped) {
		T->n[x].reaped = 1;
		set_end(&T->n[x], &l->r);
		T->n[x].end_ts = l->ts;
	}
	if (told) {
		fk->used = 1;
		T->n[x].forked_only = 1;
		T->n[x].start_ts = fk->ts;
		if (!(ff->pr.flags & RTE_PROC_NO_ARGV))
			set_argv(T, &T->n[x], ff);
	}
	return 0;
}

/* A signal that kills with a core dump by default, or SIGKILL: a crash
 * (a signal that only terminates, SIGTERM, SIGINT, SIGHUP, is a process
 * stopped on purpose; SIGPIPE the end of a pipeline's writer). */
static int crash_signal(int sig)
{
	switch (sig) {
	case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS:
	case SIGFPE: case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
	case SIGKILL:
		return 1;
	default:
		return 0;
	}
}

struct rd_ptree *rd_ptree_build(struct rd_procs *P)
{
	struct rd_ptree *T = rd_ptree_of(P);
	unsigned *ord, n = P->nsrc;

	if (!T || T->built)
		return T;
	T->built = 1;
	if (!(ord = malloc((n + 1) * sizeof *ord))) {
		T->oom = 1;
		return T;
	}
	for (unsigned i = 0; i < n; i++)
		ord[i] = i;
	sort_P = P;
	sort_T = T;
	qsort(ord, n, sizeof *ord, by_pid_time);
	/* processes: the files of a pid in time order; a new one after an
	 * end, or at a fork child's file */
	for (unsigned k = 0, cur = 0; k < n; k++) {
		unsigned i = ord[k];
		struct pt_file *f = i < T->nf ? &T->f[i] : NULL;
		long pid = P->src[i].pid;
		int fresh = k == 0 || P->src[ord[k - 1]].pid != pid || pid < 0;

		if (!fresh) {
			struct pt_file *pf = ord[k - 1] < T->nf ? &T->f[ord[k - 1]] : NULL;

			fresh = (pf && pf->has_exit) ||
			        (f && f->has_proc && (f->pr.flags & RTE_PROC_FORK_CHILD));
		}
		if (fresh) {
			int x = new_node(T, pid, P->nsrc);

			if (x < 0)
				break;
			cur = (unsigned)x;
		}
		take_file(T, P, (int)cur, i);
	}
	/* links a parent's file gives (fork_parent, rte.spawn, rte.reap) */
	unsigned nfile_nodes = T->nn;

	T->nfile = nfile_nodes;
	int *idx = malloc((nfile_nodes + 1) * sizeof *idx);

	if (!idx) {
		T->oom = 1;
		free(ord);
		return T;
	}
	for (unsigned k = 0; k < nfile_nodes; k++)
		idx[k] = (int)k;
	byp_T = T;
	qsort(idx, nfile_nodes, sizeof *idx, by_pid_start);
	/* the files of each node (a process's images), for its forks */
	int *nfirst = malloc((nfile_nodes + 1) * sizeof *nfirst);
	int *fnext = malloc((T->nf + 1) * sizeof *fnext);

	if (!nfirst || !fnext) {
		T->oom = 1;
		free(nfirst);
		free(fnext);
		free(idx);
		free(ord);
		return T;
	}
	for (unsigned k = 0; k < nfile_nodes; k++)
		nfirst[k] = -1;
	for (unsigned i = T->nf; i-- > 0;) {
		if (!T->f[i].seen || i >= n || T->f[i].node < 0 ||
		    (unsigned)T->f[i].node >= nfile_nodes)
			continue;
		fnext[i] = nfirst[T->f[i].node];
		nfirst[T->f[i].node] = (int)i;
	}
	/* reaps first (pass 0), of every file: a child no file speaks of is
	 * made from its reap and, if its parent's images forked it, from its
	 * fork; then forks and spawns (pass 1) */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < T->nf; i++) {
			struct pt_file *f = &T->f[i];

			for (unsigned j = 0; f->seen && i < n && j < f->nl; j++) {
				struct pt_link *l = &f->l[j];
				int c;

				if (l->reap != (pass == 0) || l->used)
					continue;
				if (l->reap) {
					c = node_at(T, idx, nfile_nodes, l->pid, l->ts);
					if (c >= 0 && !T->n[c].reaped) {
						T->n[c].reaped = 1; /* once a life */
						set_end(&T->n[c], &l->r);
					} else if (fileless(T, P, i, l, c >= 0 ? 2 : 1,
					                    nfirst, fnext) < 0) {
						break;
					}
					continue;
				}
				c = node_near(T, idx, nfile_nodes, l->pid, l->ts);
				if (c < 0 && l->fork) { /* forked, never reaped */
					if (fileless(T, P, i, l, 0, nfirst, fnext) < 0)
						break;
				} else if (c >= 0 && T->n[c].parent < 0 &&
				           (T->n[c].ppid < 0 ||
				            T->n[c].ppid == P->src[i].pid)) {
					T->n[c].parent = f->node;
					T->n[c].ppid = P->src[i].pid;
				}
			}
		}
	free(nfirst);
	free(fnext);
	/* parents by ppid: the process of that pid alive when it began */
	for (unsigned k = 0; k < nfile_nodes; k++) {
		struct rd_ptnode *x = &T->n[k];

		if (x->parent < 0 && x->ppid > 0) {
			int p = node_at(T, idx, nfile_nodes, x->ppid, x->start_ts);

			if (p >= 0 && p != (int)k)
				x->parent = p;
		}
	}
	/* spawns that failed: a child of pid 0 under the file's process */
	for (unsigned i = 0; i < T->nf && i < n; i++)
		for (unsigned j = 0; T->f[i].seen && j < T->f[i].nfails; j++) {
			struct pt_fail *sf = &T->f[i].fails[j];
			int x = new_node(T, 0, P->nsrc);

			if (x < 0)
				break;
			T->n[x].ppid = P->src[i].pid;
			T->n[x].parent = T->f[i].node;
			T->n[x].spawn_err = sf->err ? sf->err : -1;
			T->nspawn++;
			T->n[x].start_ts = T->n[x].end_ts = sf->ts;
			T->n[x].argv = sf->argv; /* moved to the node */
			T->n[x].argv_len = (uint32_t)sf->argv_len;
			T->n[x].argc = sf->argc;
			T->n[x].argv_cut = sf->cut;
			sf->argv = NULL;
		}
	/* no cycles: a parent must have begun first */
	for (unsigned k = 0; k < T->nn; k++) {
		int p = T->n[k].parent, hops = 0;

		while (p >= 0 && p != (int)k && hops++ < (int)T->nn)
			p = T->n[p].parent;
		if (p == (int)k)
			T->n[k].parent = -1;
	}
	for (unsigned k = 0; k < T->nn; k++) {
		struct rd_ptnode *x = &T->n[k];

		x->failed = (x->how == RTE_EXIT_STATUS && x->value != 0) ||
		            (x->how == RTE_EXIT_SIGNAL && x->value != SIGPIPE) ||
		            x->spawn_err != 0;
		x->crashed = x->how == RTE_EXIT_SIGNAL && crash_signal(x->value);
	}
	link_children(T);
	free(idx);
	free(ord);
	return T;
}
