/*
 * fmt/gcstats.c - the gc-stats and gc-stats-json formats: per process,
 * the GC statistics of gcstats.h, named as olly gc-stats names them,
 * rendered from the run model (model.h) of the GC figures: the model's
 * accounting, its fast path specialised without the entries
 * (rd_model_run_gc). Memory grows with the number of files and rings,
 * never with the number of events.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "gcstats.h"
#include "model.h"
#include "ptree.h"
#include "sinks.h"

struct gcsink {
	struct rd_sink sink;
	struct rd_model m; /* of the GC figures only (model.h) */
	int json;
};

static void gcs_event(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it)
{
	rd_model_event(&((struct gcsink *)s)->m, c, it);
}

static size_t gcs_run(struct rd_sink *s, struct rd_ctx *c, unsigned src,
                      const struct rte_event *ev, size_t n)
{
	return rd_model_run_gc(&((struct gcsink *)s)->m, c, src, ev, n);
}

static void text_proc(struct gcsink *G, struct rd_ctx *c, struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	struct rd_out *o = c->out;
	char line[64];
	int x;

	if (pr->pid >= 0)
		snprintf(line, sizeof line, "process %ld\n", pr->pid);
	else
		snprintf(line, sizeof line, "process (pid unknown)\n");
	rd_out_str(o, line);
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		snprintf(line, sizeof line, "  file %u: ", i);
		rd_out_str(o, line);
		rd_out_str(o, P->src[i].path);
		rd_out_ch(o, '\n');
	}
	if ((x = rd_ptree_find(rd_ptree_build(P), pr->pid)) >= 0 && P->tree->n[x].usage) {
		snprintf(line, sizeof line, "  max RSS: %" PRIu64 " KiB\n",
		         P->tree->n[x].maxrss_kib); /* its rte.exit or rte.reap */
		rd_out_str(o, line);
	}
	if (!rd_gc_has_runtime(G->m.gc, P, pr)) {
		rd_out_str(o, "  no OCaml runtime events (phases or GC counters)\n");
		return;
	}
	rd_gc_text(G->m.gc, o, P, pr, "  ");
}

static void json_proc(struct gcsink *G, struct rd_ctx *c, struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	struct rd_out *o = c->out;
	int x;

	rd_out_str(o, "{\"pid\":");
	rd_out_i64(o, pr->pid);
	rd_out_str(o, ",\"files\":");
	rd_proc_json_files(o, P, pr, 0);
	rd_out_str(o, ",\"runtime_events\":");
	rd_out_str(o, rd_gc_has_runtime(G->m.gc, P, pr) ? "true" : "false");
	rd_out_str(o, ",\"max_rss_kib\":"); /* ptree.h: rte.exit, rte.reap */
	if ((x = rd_ptree_find(rd_ptree_build(P), pr->pid)) >= 0 && P->tree->n[x].usage)
		rd_out_u64(o, P->tree->n[x].maxrss_kib);
	else
		rd_out_str(o, "null");
	rd_out_str(o, ",\"gc\":");
	rd_gc_json(G->m.gc, o, P, pr);
	rd_out_ch(o, '}');
}

static void gcs_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct gcsink *G = (struct gcsink *)s;
	struct rd_procs *P = c->procs;
	struct rd_out *o = c->out;

	if (G->json)
		rd_out_str(o, "{\"version\":1,\"processes\":[");
	for (unsigned i = 0, shown = 0; i < P->nproc; i++) {
		if (!rd_filter_pid_pass(c->filter, P->proc[i]->pid)) /* --pid */
			continue;
		if (shown++)
			rd_out_ch(o, G->json ? ',' : '\n');
		if (G->json)
			json_proc(G, c, P->proc[i]);
		else
			text_proc(G, c, P->proc[i]);
	}
	if (G->json) {
		rd_out_str(o, "],\"lost_words\":");
		rd_out_u64(o, c->lost_total);
		rd_out_str(o, "}\n");
	}
}

static void gcs_destroy(struct rd_sink *s)
{
	struct gcsink *G = (struct gcsink *)s;

	rd_model_fini(&G->m, NULL);
	free(G);
}

struct rd_sink *rd_sink_gcstats(int json)
{
	struct gcsink *G = calloc(1, sizeof *G);

	if (!G)
		return NULL;
	rd_model_init(&G->m, RD_MODEL_GC);
	if (!G->m.gc) {
		free(G);
		return NULL;
	}
	G->sink = (struct rd_sink){ NULL, gcs_event, gcs_finish, gcs_destroy, gcs_run };
	G->json = json;
	return &G->sink;
}
