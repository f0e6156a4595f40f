/*
 * fmt/summary_tree.c - the summary of a trace of several processes as a
 * tree (ptree.h): one line per process (pid, wall, CPU, max RSS, end,
 * lost words, command line cut to the terminal width), runs of three or
 * more like children folded into one line, failed processes marked '!',
 * the critical path (from the first root, each step the child that ended
 * last), and with --by exe a table per executable. summary-json's
 * "tree" array is written here too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ptree.h"
#include "rte/proc.h"
#include "summary.h"

#define TREE_LINES 45 /* lines of the tree before it is cut */
#define FOLD_MIN 3    /* like siblings folded from this many */
#define PATH_MAX_STEPS 10

struct tw {
	struct rd_out *o;
	const struct rd_ptree *T;
	unsigned width, lines, left;
	char cmd[8192];
};

static unsigned term_width(const struct rd_out *o)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	long v;

	if (c && (v = strtol(c, NULL, 10)) >= 40 && v < 4096)
		return (unsigned)v;
	if (isatty(o->fd) && ioctl(o->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	return 100;
}

static const char *end_str(const struct rd_ptnode *x, char *b, unsigned n)
{
	char sb[32];

	if (x->spawn_err) /* the column's 8: the whole name is in the text */
		snprintf(b, n, "%s", strlen(rd_ptree_errname(x->spawn_err, sb, sizeof sb)) <= 8
		                             ? sb : "spawn");
	else if (x->how == RTE_EXIT_STATUS)
		snprintf(b, n, "%d", x->value);
	else if (x->how == RTE_EXIT_SIGNAL)
		snprintf(b, n, "%s", rd_ptree_signame(x->value, sb, sizeof sb));
	else
		snprintf(b, n, "%s", x->end_ts ? "?" : "running");
	return b;
}

static const char *rss_str(uint64_t kib, int known, char *b, unsigned n)
{
	if (!known)
		snprintf(b, n, "-");
	else if (kib >= 10240)
		snprintf(b, n, "%" PRIu64 "M", kib / 1024);
	else
		snprintf(b, n, "%" PRIu64 "K", kib);
	return b;
}

static const char *dur_str(uint64_t ns, int known, char *b)
{
	if (!known)
		return strcpy(b, "-");
	b[rd_fmt_dur(b, ns)] = '\0';
	return b;
}

/* The prefix columns then the indented text (pid 0: unknown, "-"). */
static void line(struct tw *w, int failed, long pid, const char *wall,
                 const char *cpu, const char *rss, const char *end,
                 uint64_t lost, unsigned depth, const char *text)
{
	char ls[24] = "", ps[24] = "-";

	if (lost)
		snprintf(ls, sizeof ls, "%" PRIu64, lost);
	if (pid)
		snprintf(ps, sizeof ps, "%ld", pid);
	rd_outf(w->o, "%c%7s %9s %9s %6s %8s %5s  %*s%s\n", failed ? '!' : ' ',
	        ps, wall, cpu, rss, end, ls, (int)(2 * depth), "", text);
	w->lines++;
}

static unsigned text_width(const struct tw *w, unsigned depth)
{
	unsigned used = 52 + 2 * depth;

	return w->width > used + 20 ? w->width - used : 20;
}

static unsigned count_sub(const struct rd_ptree *T, int x)
{
	unsigned n = 1;

	for (int c = T->n[x].first_child; c >= 0; c = T->n[c].next_sibling)
		n += count_sub(T, c);
	return n;
}

static uint64_t cpu_sub(const struct rd_ptree *T, int x)
{
	uint64_t n = T->n[x].utime_ns + T->n[x].stime_ns;

	for (int c = T->n[x].first_child; c >= 0; c = T->n[c].next_sibling)
		n += cpu_sub(T, c);
	return n;
}

static int sub_failed(const struct rd_ptree *T, int x)
{
	if (T->n[x].failed || T->n[x].user_events)
		return 1;
	for (int c = T->n[x].first_child; c >= 0; c = T->n[c].next_sibling)
		if (sub_failed(T, c))
			return 1;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void node_line(struct tw *w, int x, unsigned depth)
{
	const struct rd_ptnode *n = &w->T->n[x];
	char wall[32], cpu[32], rss[24], end[32];

	rd_ptree_cmdline(n, w->cmd, sizeof w->cmd, text_width(w, depth));
	if (n->spawn_err) { /* after the command, cut or not */
		char eb[32];

		rd_ptree_errname(n->spawn_err, eb, sizeof eb);
		snprintf(w->cmd + strlen(w->cmd), sizeof w->cmd - strlen(w->cmd),
		         " (spawn failed: %s%s%s)",
		         n->spawn_err > 0 && strerrordesc_np(n->spawn_err)
		                 ? strerrordesc_np(n->spawn_err) : "unknown error",
		         strlen(eb) > 8 ? ", " : "", strlen(eb) > 8 ? eb : "");
	}
	line(w, n->failed, n->pid,
	     dur_str(rd_ptree_wall(n), n->start_ts != 0 && !n->spawn_err, wall),
	     dur_str(n->utime_ns + n->stime_ns, n->usage, cpu),
	     rss_str(n->maxrss_kib, n->usage, rss, sizeof rss),
	     end_str(n, end, sizeof end), n->lost_words, depth, w->cmd);
}

/* The folded line of the siblings kids[0..k) of one executable. */
static void fold_line(struct tw *w, const int *kids, unsigned k, unsigned depth,
                      const char *exe)
{
	uint64_t *walls = malloc(k * sizeof *walls), cpu = 0, rssmax = 0, lost = 0;
	unsigned sub = 0;
	char wall[32], wmax[32], cs[32], rss[24], txt[512];

	if (!walls)
		return;
	for (unsigned i = 0; i < k; i++) {
		const struct rd_ptnode *n = &w->T->n[kids[i]];

		walls[i] = rd_ptree_wall(n);
		cpu += cpu_sub(w->T, kids[i]);
		sub += count_sub(w->T, kids[i]) - 1;
		lost += n->lost_words;
		if (n->maxrss_kib > rssmax)
			rssmax = n->maxrss_kib;
	}
	qsort(walls, k, sizeof *walls, cmp_u64);
	dur_str(walls[(k - 1) / 2], 1, wall);
	dur_str(walls[k - 1], 1, wmax);
	dur_str(cpu, 1, cs);
	snprintf(txt, sizeof txt, "%s ×%u: wall p50 %s max %s, CPU sum %s%s", exe, k,
	         wall, wmax, cs, "");
	if (sub)
		snprintf(txt + strlen(txt), sizeof txt - strlen(txt),
		         " (with %u descendants)", sub);
	line(w, 0, w->T->n[kids[0]].pid, "", cs, rss_str(rssmax, 1, rss, sizeof rss),
	     "0", lost, depth, txt);
	free(walls);
}

static void walk(struct tw *w, int x, unsigned depth)
{
	const struct rd_ptree *T = w->T;
	unsigned nk = 0;
	int *kids;
	char *done;

	if (w->lines >= TREE_LINES) {
		w->left += count_sub(T, x);
		return;
	}
	node_line(w, x, depth);
	for (int c = T->n[x].first_child; c >= 0; c = T->n[c].next_sibling)
		nk++;
	if (!nk)
		return;
	kids = malloc(nk * sizeof *kids);
	done = calloc(nk, 1);
	if (!kids || !done) {
		free(kids);
		free(done);
		return;
	}
	nk = 0;
	for (int c = T->n[x].first_child; c >= 0; c = T->n[c].next_sibling)
		kids[nk++] = c;
	for (unsigned i = 0; i < nk; i++) {
		char exe[256], e2[256];
		int *run;
		unsigned k = 0;

		if (done[i])
			continue;
		if (!sub_failed(T, kids[i]) && (run = malloc(nk * sizeof *run))) {
			rd_ptree_exe(&T->n[kids[i]], exe, sizeof exe);
			for (unsigned j = i; j < nk; j++)
				if (!done[j] && !sub_failed(T, kids[j]) &&
				    !strcmp(rd_ptree_exe(&T->n[kids[j]], e2, sizeof e2), exe))
					run[k++] = kids[j];
			if (k >= FOLD_MIN && w->lines < TREE_LINES) {
				for (unsigned j = i; j < nk; j++)
					for (unsigned m = 0; m < k; m++)
						if (kids[j] == run[m])
							done[j] = 1;
				fold_line(w, run, k, depth + 1, exe);
				free(run);
				continue;
			}
			free(run);
		}
		done[i] = 1;
		walk(w, kids[i], depth + 1);
	}
	free(kids);
	free(done);
}

static void critical_path(struct tw *w, int root)
{
	const struct rd_ptree *T = w->T;
	char exe[256], d[32];
	unsigned steps = 0;

	rd_out_str(w->o, "critical path:");
	for (int x = root; x >= 0 && steps < PATH_MAX_STEPS; steps++) {
		const struct rd_ptnode *n = &T->n[x];
		int next = -1;

		rd_outf(w->o, "%s %ld %s %s", steps ? " →" : "", n->pid,
		        rd_ptree_exe(n, exe, sizeof exe),
		        dur_str(rd_ptree_wall(n), n->start_ts != 0, d));
		for (int c = n->first_child; c >= 0; c = T->n[c].next_sibling)
			if (T->n[c].spawn_err) /* took no time of its own */
				continue;
			else if (next < 0 || T->n[c].end_ts > T->n[next].end_ts ||
			    (T->n[c].end_ts == T->n[next].end_ts &&
			     rd_ptree_wall(&T->n[c]) > rd_ptree_wall(&T->n[next])))
				next = c;
		x = next;
		if (x >= 0 && steps + 1 == PATH_MAX_STEPS)
			rd_out_str(w->o, " → …");
	}
	rd_out_ch(w->o, '\n');
	w->lines++;
}

struct exe_row {
	char name[64];
	unsigned n, failed;
	uint64_t wall, wmax, cpu, rss;
};

static int by_cpu(const void *a, const void *b)
{
	const struct exe_row *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void by_exe(struct tw *w)
{
	const struct rd_ptree *T = w->T;
	struct exe_row *r = calloc(T->nn ? T->nn : 1, sizeof *r);
	unsigned nr = 0;
	char a[32], b[32], c[32], s[24];

	if (!r)
		return;
	for (unsigned k = 0; k < T->nn; k++) {
		const struct rd_ptnode *n = &T->n[k];
		char exe[64];
		unsigned i;

		rd_ptree_exe(n, exe, sizeof exe);
		for (i = 0; i < nr && strcmp(r[i].name, exe); i++)
			;
		if (i == nr)
			memcpy(r[nr++].name, exe, sizeof exe);
		r[i].n++;
		r[i].failed += (unsigned)n->failed;
		r[i].wall += rd_ptree_wall(n);
		if (rd_ptree_wall(n) > r[i].wmax)
			r[i].wmax = rd_ptree_wall(n);
		r[i].cpu += n->utime_ns + n->stime_ns;
		if (n->maxrss_kib > r[i].rss)
			r[i].rss = n->maxrss_kib;
	}
	qsort(r, nr, sizeof *r, by_cpu);
	rd_outf(w->o, "\nby executable:\n%-24s %6s %6s %10s %10s %10s %7s\n", "exe",
	        "procs", "failed", "wall sum", "wall max", "CPU sum", "max RSS");
	for (unsigned i = 0; i < nr; i++)
		rd_outf(w->o, "%-24s %6u %6u %10s %10s %10s %7s\n", r[i].name, r[i].n,
		        r[i].failed, dur_str(r[i].wall, 1, a), dur_str(r[i].wmax, 1, b),
		        dur_str(r[i].cpu, 1, c), rss_str(r[i].rss, 1, s, sizeof s));
	free(r);
}

int rd_sum_tree_mode(struct rd_procs *P, const struct rd_filter *f)
{
	struct rd_ptree *T = rd_ptree_build(P);
	unsigned known = 0;

	if (!T || T->nn < 1 || f->npids)
		return 0;
	for (unsigned k = 0; k < T->nn && !known; k++) /* librte.so's records */
		known += T->n[k].argv != NULL || T->n[k].how != 0 || T->n[k].reaped_only; /* not a ppid from fork events alone: OCaml writes those */
	return known > 0;
}

int rd_sum_tree_detail(struct rd_procs *P, const struct rd_filter *f,
                       long pid)
{
	const struct rd_ptree *T = P->tree;

	if (f->all || T->nn - T->nspawn < 2)
		return 1;

	/* the lives of pid: the file nodes before its last one */
	for (int k = rd_ptree_find(T, pid); k >= 0 && T->n[k].pid == pid; k--)
		if (T->n[k].user_events)
			return 1;
	return 0;
}

void rd_sum_write_tree(struct rd_out *o, struct rd_procs *P)
{
	const struct rd_ptree *T = P->tree;
	struct tw *w = calloc(1, sizeof *w);
	unsigned failed = 0, spawns = 0, shown = 0, np;
	int root = -1;

	if (!w || !T)
		goto out;
	w->o = o;
	w->T = T;
	w->width = term_width(o);
	np = T->nn - T->nspawn;
	rd_outf(o, "process tree: %u process%s", np, np == 1 ? "" : "es");
	if (T->nspawn)
		rd_outf(o, ", %u spawn%s that failed", T->nspawn, T->nspawn == 1 ? "" : "s");
	rd_outf(o, "\n%c%7s %9s %9s %6s %8s %5s  %s\n",
	        ' ', "pid", "wall", "CPU", "maxRSS", "exit", "lost", "command");
	for (unsigned k = 0; k < T->nn; k++) {
		if (T->n[k].parent >= 0)
			continue;
		if (root < 0 || rd_ptree_wall(&T->n[k]) > rd_ptree_wall(&T->n[root]))
			root = (int)k;
		walk(w, (int)k, 0);
	}
	if (w->left)
		rd_outf(o, "  … %u more processes (--all or -f summary-json for every one)\n",
		        w->left);
	for (unsigned k = 0; k < T->nn; k++) {
		failed += (unsigned)(T->n[k].failed && !T->n[k].spawn_err);
		spawns += (unsigned)(T->n[k].spawn_err != 0);
	}
	if ((failed || spawns) && w->left) {
		rd_outf(o, "failed (%u):\n", failed + spawns);
		for (unsigned k = 0; k < T->nn && shown < 10; k++)
			if (T->n[k].failed) {
				node_line(w, (int)k, 0);
				shown++;
			}
	} else if (failed || spawns) {
		rd_out_str(o, "failed:");
		if (failed)
			rd_outf(o, " %u process%s", failed, failed == 1 ? "" : "es");
		if (spawns)
			rd_outf(o, "%s %u spawn%s", failed ? " and" : "", spawns,
			        spawns == 1 ? "" : "s");
		rd_out_str(o, " (marked !)\n");
	}
	if (root >= 0 && np > 1)
		critical_path(w, root);
	if (rd_ptree_opts.by_exe)
		by_exe(w);
out:
	free(w);
}

void rd_sum_json_tree(struct rd_out *o, struct rd_procs *P)
{
	const struct rd_ptree *T = rd_ptree_build(P);

	rd_out_str(o, ",\"tree\":[");
	for (unsigned k = 0; T && k < T->nn; k++) {
		if (k)
			rd_out_ch(o, ',');
		rd_out_ch(o, '{');
		rd_ptree_json_fields(o, &T->n[k]);
		rd_out_str(o, ",\"parent_pid\":");
		if (T->n[k].parent >= 0)
			rd_outf(o, "%ld", T->n[T->n[k].parent].pid);
		else
			rd_out_str(o, "null");
		rd_out_ch(o, '}');
	}
	rd_out_ch(o, ']');
}
