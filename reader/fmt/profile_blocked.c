/*
 * fmt/profile_blocked.c - the summary's wall-mode lines (RTE_PROFILE_MODE
 * =wall) of a process's CPU profile: per thread the share of its samples
 * taken while it was blocked, and the stacks it blocked in most, for
 * fmt/profile_sum.c. Not thread-safe.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"

#define TOP_BLOCKED 3   /* blocking stacks per thread */
#define STACK_SHOWN 6   /* their innermost frames shown */

static const struct rd_prof *g_p;

static int by_samples(const void *a, const void *b)
{
	uint64_t x = g_p->cv[*(const uint32_t *)a].samples;
	uint64_t y = g_p->cv[*(const uint32_t *)b].samples;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int is_blocked(const struct rd_prof *p, const struct skey *k)
{
	return k->n && !strncmp(pstr(p, p->fn[p->loc[k->loc[0]].func].name),
	                        "[blocked", 8);
}

/* A stack, outermost shown first, its innermost STACK_SHOWN frames. */
static void stack_out(const struct rd_prof *p, struct rd_out *o,
                      const struct skey *k, int json)
{
	uint32_t n = k->n < STACK_SHOWN ? k->n : STACK_SHOWN;

	if (json)
		rd_out_ch(o, '[');
	else if (k->n > n)
		rd_out_str(o, "...;");
	for (uint32_t j = n; j-- > 0;) {
		const char *f = pstr(p, p->fn[p->loc[k->loc[j]].func].name);

		if (json) {
			rd_out_json_str(o, f);
			if (j)
				rd_out_ch(o, ',');
		} else {
			rd_outf(o, "%s%s", f, j ? ";" : "");
		}
	}
	if (json)
		rd_out_ch(o, ']');
}

void rd_prof_blocked_section(struct rd_prof *p, struct rd_out *o,
                             const struct pproc *pp, uint32_t proc, int json)
{
	uint32_t *ids = malloc((p->cst.n + 1) * sizeof *ids);
	int any = 0;

	if (!ids) {
		p->oom = 1;
		return;
	}
	if (json)
		rd_out_str(o, ",\"blocked\":[");
	for (unsigned t = 0; t < pp->nthr; t++) {
		const struct pthr *th = &pp->thr[t];
		uint32_t n = 0;

		if (!th->wall)
			continue;
		for (uint32_t i = 0; i < p->cst.n; i++) {
			const struct skey *k = pkey(&p->cst, i);

			if (k->proc == proc && k->tid == th->tid && is_blocked(p, k))
				ids[n++] = i;
		}
		g_p = p;
		qsort(ids, n, sizeof *ids, by_samples);
		if (json) {
			rd_outf(o, "%s{\"tid\":%ld,\"samples\":%" PRIu64
			        ",\"blocked\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
			        ",\"share\":%.3f,\"top\":[", any ? "," : "",
			        th->tid, th->samples, th->blocked, th->blocked_ns,
			        th->samples ? (double)th->blocked /
			                              (double)th->samples : 0.0);
		} else {
			if (!any)
				rd_out_str(o, "    blocked (wall mode: samples off CPU, "
				              "per thread):\n");
			rd_outf(o, "    tid %-8ld %-16s %6.2f%% blocked (%" PRIu64
			        " of %" PRIu64 " samples, %.3f s)\n", th->tid,
			        th->name[0] ? th->name : "-",
			        th->samples ? 100.0 * (double)th->blocked /
			                              (double)th->samples : 0.0,
			        th->blocked, th->samples,
			        (double)th->blocked_ns / 1e9);
		}
		any = 1;
		for (uint32_t i = 0; i < n && i < TOP_BLOCKED; i++) {
			const struct skey *k = pkey(&p->cst, ids[i]);

			if (json) {
				rd_outf(o, "%s{\"samples\":%" PRIu64 ",\"stack\":",
				        i ? "," : "", p->cv[ids[i]].samples);
				stack_out(p, o, k, 1);
				rd_out_ch(o, '}');
			} else {
				rd_outf(o, "      %10" PRIu64 "  ",
				        p->cv[ids[i]].samples);
				stack_out(p, o, k, 0);
				rd_out_ch(o, '\n');
			}
		}
		if (json)
			rd_out_str(o, "]}");
	}
	if (json)
		rd_out_ch(o, ']');
	free(ids);
}
