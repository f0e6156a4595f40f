/*
 * fmt/summary_sink.c - the sink of the summary formats (fmt/summary.h):
 * the run model's accounting (model.h) of every event, the crash report
 * of summary-json, the finish.
 *
 * Files read one after another (rd_ctx.files_in_order): a process whose
 * files were all read and all ended with ring_stop is written at once to
 * an unlinked temporary file and forgotten (rd_model_forget_proc: its
 * entries, GC state, rings and cursors); the finish copies each
 * process's text from there in order (a crash report still comes first).
 * Memory then stays flat in the number of processes, whatever their
 * number: the temporary file holds the output meanwhile.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gcstats.h"
#include "ptree.h"
#include "summary.h"

/* ---- processes written early ------------------------------------------- */

/* Open the spool: an unlinked file in $TMPDIR (else /tmp). 0 or -1. */
static int spool_open(struct summary *S)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof path, "%s/rte-read-XXXXXX", dir) >= sizeof path)
		return -1;
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return -1;
	unlink(path);
	if (rd_out_init(&S->spool, fd, "a temporary file") < 0) {
		close(fd);
		return -1;
	}
	return 0;
}

/* The position of the next byte written to the spool. */
static uint64_t spool_pos(struct summary *S)
{
	off_t at = lseek(S->spool.fd, 0, SEEK_CUR);

	return (uint64_t)(at < 0 ? 0 : at) + S->spool.len;
}

/* 1 if every file of pr was read (the next source read is `src`) and
 * ended with ring_stop: nothing can change what is said of it. */
static int proc_done(const struct rd_procs *P, const struct rd_proc *pr,
                     unsigned src)
{
	if (pr->last_src == RD_NO_SRC || pr->last_src >= src)
		return 0;
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		if (!P->src[i].stopped)
			return 0;
	return 1;
}

/* Write pr to the spool and free its state. */
static void spool_proc(struct summary *S, struct rd_ctx *c, struct rd_proc *pr)
{
	S->report = c->report;
	struct rd_procs *P = c->procs;
	uint64_t off;

	if (pr->index >= S->nseg) {
		unsigned n = S->nseg ? 2 * S->nseg : 1024;
		struct seg *g;

		while (n <= pr->index)
			n *= 2;
		if (!(g = realloc(S->seg, n * sizeof *g)))
			return; /* written at the end instead */
		memset(g + S->nseg, 0, (n - S->nseg) * sizeof *g);
		S->seg = g;
		S->nseg = n;
	}
	rd_model_end_open_spans(&S->m, c, pr);
	if (rd_filter_pid_pass(c->filter, pr->pid)) { /* else not shown (--pid) */
		off = spool_pos(S);
		rd_sum_write_proc(S, &S->spool, P, pr);
		S->seg[pr->index] = (struct seg){ off, spool_pos(S) - off };
	}
	rd_model_forget_proc(&S->m, c, pr);
}

/* An event of source src comes: write the processes finished before it. */
static void spool_ready(struct summary *S, struct rd_ctx *c, unsigned src)
{
	struct rd_procs *P = c->procs;

	if (!c->files_in_order || src <= S->cur_src || S->spooling < 0)
		return;
	S->cur_src = src;
	for (; S->scan < P->nproc; S->scan++) {
		struct rd_proc *pr = P->proc[S->scan];

		if (pr->last_src == RD_NO_SRC || pr->last_src >= src)
			break; /* not read yet: wait (the processes stay in order) */
		if (!proc_done(P, pr, src))
			continue; /* written at the end */
		if (!S->spooling)
			S->spooling = spool_open(S) < 0 ? -1 : 1;
		if (S->spooling < 0 || S->spool.state != RD_OUT_OK)
			return;
		spool_proc(S, c, pr);
	}
}

/* Copy process pr's text from the spool to o. 0, or -1 if it cannot be
 * read back. */
static int spool_copy(struct summary *S, struct rd_out *o, const struct seg *g)
{
	char b[65536];
	uint64_t done = 0;

	while (done < g->len) {
		size_t want = g->len - done < sizeof b ? (size_t)(g->len - done) : sizeof b;
		ssize_t n = pread(S->spool.fd, b, want, (off_t)(g->off + done));

		if (n <= 0)
			return -1;
		rd_out_mem(o, b, (size_t)n);
		done += (uint64_t)n;
	}
	return 0;
}

/* ---- the crash report of summary-json (crashrep.h) --------------------- */

struct jlast {
	struct rd_out *o;
	int open;  /* a ring's object is open */
	int first; /* no event written in it yet */
};

/* [{"ring":"ring 0 (...)","events":["...",...]},...] */
static void json_last(void *ud, const char *ring, const char *line)
{
	struct jlast *j = ud;

	if (ring) {
		if (j->open)
			rd_out_str(j->o, "]},");
		rd_out_str(j->o, "{\"ring\":");
		rd_out_json_str(j->o, ring);
		rd_out_str(j->o, ",\"events\":[");
		j->open = 1;
		j->first = 1;
		return;
	}
	if (!j->first)
		rd_out_ch(j->o, ',');
	j->first = 0;
	rd_out_json_str(j->o, line);
}

/* `,"crashes":[...]` (always written, [] if none; doc/SUMMARY-JSON.md). */
static void json_crashes(struct rd_out *o, const struct rd_crash *c)
{
	unsigned n = rd_crash_count(c, 0);

	rd_out_str(o, ",\"crashes\":[");
	for (unsigned i = 0; i < n; i++) {
		struct rd_crash_view v;
		struct jlast jl = { .o = o };

		rd_crash_view(c, i, &v);
		if (i)
			rd_out_ch(o, ',');
		rd_outf(o, "{\"pid\":%ld,\"file\":", v.pid);
		rd_out_json_str(o, v.path);
		rd_outf(o, ",\"ring\":%u,\"thread\":", v.ring);
		rd_out_json_str(o, v.thread);
		rd_outf(o, ",\"ts\":%" PRIu64 ",", v.ts);
		rd_crash_json_fields(o, v.r);
		rd_out_str(o, ",\"stack\":");
		rd_crash_json_frames(o, v.frames, v.nframes);
		if (v.nmade) {
			rd_outf(o, ",\"made_by_ring\":%d,\"made_by_stack\":",
			     v.made_ring);
			rd_crash_json_frames(o, v.made_by, v.nmade);
		}
		rd_out_str(o, ",\"last_events\":[");
		rd_crash_each_last(c, i, json_last, &jl);
		rd_out_str(o, jl.open ? "]}]}" : "]}");
	}
	rd_out_ch(o, ']');
}

static void summary_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct summary *S = (struct summary *)s;
	struct rd_procs *P = c->procs;
	struct rd_out *o = c->out;
	uint64_t events = 0;
	int tree;

	S->report = c->report;
	for (unsigned i = 0; i < P->nproc; i++)
		events += P->proc[i]->events;
	/* Spans still open at the end of their file are unfinished. */
	for (unsigned i = 0; i < P->nproc; i++)
		rd_model_end_open_spans(&S->m, c, P->proc[i]);
	if (S->spooling > 0 && rd_out_flush(&S->spool) < 0)
		S->m.oom = 1; /* the processes written there are lost */
	if (S->json)
		rd_out_str(o, "{\"schema_version\":1,\"processes\":[");
	else
		rd_text_crash_report(c->report, o); /* a crash comes first */
	tree = !S->json && rd_sum_tree_mode(P, c->filter);
	if (tree)
		rd_sum_write_tree(o, P);
	for (unsigned i = 0, shown = tree; i < P->nproc; i++) {
		struct rd_proc *pr = P->proc[i];

		if (!rd_filter_pid_pass(c->filter, pr->pid)) /* --pid */
			continue;
		if (tree && !rd_sum_tree_detail(P, c->filter, pr->pid))
			continue; /* in the tree only */
		if (shown++)
			rd_out_ch(o, S->json ? ',' : '\n');
		if (i < S->nseg && S->seg[i].len) {
			if (spool_copy(S, o, &S->seg[i]) < 0)
				S->m.oom = 1;
		} else {
			rd_sum_write_proc(S, o, P, pr);
		}
	}
	if (S->json) {
		int f = 0;

		rd_out_ch(o, ']');
		rd_sum_json_run(o, &S->run);
		rd_sum_json_tree(o, P);
		json_crashes(o, c->report);
		rd_out_json_u(o, &f, "events", events);
		rd_out_json_u(o, &f, "lost_words", c->lost_total);
		rd_out_str(o, ",\"complete\":");
		rd_out_str(o, S->m.oom ? "false" : "true");
		rd_out_str(o, "}\n");
	} else {
		/* processes without a file (known from their parent's
		 * fork_parent and rte.reap) count too, and are told apart */
		struct rd_ptree *T = rd_ptree_build(P);
		unsigned n = T && !T->oom && T->nn - T->nspawn > P->nproc
		                     ? T->nn - T->nspawn : P->nproc;

		rd_outf(o, "\ntotal: %u process%s", n, n == 1 ? "" : "es");
		if (n > P->nproc)
			rd_outf(o, " (%u with a file of %s own)", P->nproc,
			        P->nproc == 1 ? "its" : "their");
		rd_outf(o, ", %llu events, %llu lost words\n",
		        (unsigned long long)events, (unsigned long long)c->lost_total);
		if (S->m.oom)
			rd_outf(o, "(incomplete: out of memory while summarising)\n");
	}
	rd_model_fini(&S->m, P);
}

static void summary_destroy(struct rd_sink *s)
{
	struct summary *S = (struct summary *)s;

	rd_model_fini(&S->m, NULL); /* if finish did not */
	free(S->seg);
	rd_sum_run_free(&S->run);
	if (S->spooling > 0) {
		int fd = S->spool.fd;

		rd_out_fini(&S->spool);
		close(fd);
	}
	free(S);
}

static void summary_event(struct rd_sink *s, struct rd_ctx *c,
                          const struct rd_item *it)
{
	struct summary *S = (struct summary *)s;

	spool_ready(S, c, (unsigned)(it->src - c->procs->src));
	rd_model_event(&S->m, c, it);
}

static size_t summary_run(struct rd_sink *s, struct rd_ctx *c, unsigned src,
                          const struct rte_event *ev, size_t n)
{
	struct summary *S = (struct summary *)s;

	spool_ready(S, c, src);
	return rd_model_run(&S->m, c, src, ev, n);
}

struct rd_sink *rd_sink_summary(int json)
{
	struct summary *S = calloc(1, sizeof *S);

	if (!S)
		return NULL;
	S->sink = (struct rd_sink){ NULL, summary_event, summary_finish, summary_destroy,
	                           summary_run };
	S->json = json;
	/* without the GC section or the profiles if out of memory for them */
	rd_model_init(&S->m, RD_MODEL_ENTRIES | RD_MODEL_GC | RD_MODEL_PROF);
	return &S->sink;
}

