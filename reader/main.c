/*
 * main.c - rte-read: wires the parts together.
 *
 * options.c parses the command line, discover.c turns the inputs into
 * sources of a merge (merge.c), procs.c annotates each event, filter.c
 * picks events, the files of fmt/ write them, follow.c reads live processes,
 * signals.c handles SIGBUS and Ctrl-C, status.c keeps the exit status.
 * commands.c holds the table of subcommands and formats: main looks the
 * words up and follows the row (what the format needs of the read loop).
 * What is left here: the output's opening and closing, the read loop, and
 * the crash report's second pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clean.h"
#include "commands.h"
#include "crashrep.h"
#include "discover.h"
#include "follow.h"
#include "inputs.h"
#include "merge.h"
#include "ocamlver.h"
#include "options.h"
#include "profile.h"
#include "rundir.h"
#include "signals.h"
#include "sinks.h"
#include "status.h"

/* What the read loop shares (options, the merge, the output). */
static struct {
	struct rd_opts o;
	rd_merge *merge;
	struct rd_procs procs;
	struct rd_filter filter;
	struct rd_out out;
	struct rd_sink *sink;
	struct rd_ctx ctx;
	struct rd_crash *crash;   /* NULL for jsonl */
	rd_merge *merge2;         /* the crash report's second pass */
	struct rd_procs procs2;
	struct rd_discover disc;  /* the inputs */
	const struct rd_format *fmt; /* the row of -f FMT (commands.h) */
	int unordered;            /* a summary: ring after ring, in runs */
} g;

/* ---- the read loop ---------------------------------------------------- */

/* Pass one merged event through procs, the crash recorder, the filters
 * and the sink. */
static void deliver(const struct rd_merge_item *mi, int all)
{
	struct rd_item it;

	rd_procs_update(&g.procs, mi, &it);
	if (mi->ev->kind == RTE_EV_LOST)
		g.ctx.lost_total += mi->ev->u.lost_words;
	/* Live, every event (there is no second pass); else only the
	 * crash recorder's own, for symbolising: cheap to test. */
	if (g.crash && (g.o.follow || (mi->ev->kind == RTE_EV_USER_CUSTOM &&
	                               rd_crash_is_own(mi->ev))))
		rd_crash_update(g.crash, &it);
	it.pass = all || rd_filter_pass_item(&g.filter, &it);
	/* Spans given up on matter to a format even if the event that
	 * gave up on them is filtered out. */
	if (it.pass || it.ab[0].n || it.ab[1].n)
		g.sink->event(g.sink, &g.ctx, &it);
}

/* Unordered (a summary of finished files): run after run of one ring,
 * through the sink's fast path when nothing else needs the events.
 * Returns how many were delivered. */
static uint64_t drain_runs(int all)
{
	struct rd_merge_run run;
	struct rd_merge_item mi;
	uint64_t n = 0;
	int r, fast = all && g.sink->run && !g.o.follow;

	while ((r = rd_merge_next_run(g.merge, &run)) != 0) {
		size_t i = 0;

		if (r < 0) {
			rd_fail(rd_exit_of(r), "%s", rd_merge_errmsg(g.merge));
			continue;
		}
		n += run.n;
		for (;;) {
			if (fast)
				i += g.sink->run(g.sink, &g.ctx, run.src, run.ev + i,
				                 run.n - i);
			if (i == run.n)
				break;
			mi.ev = &run.ev[i];
			mi.src = run.src;
			mi.ts = mi.ev->kind == RTE_EV_LOST ? run.prev_ts : mi.ev->ts;
			deliver(&mi, all);
			i++;
			if (g.out.state != RD_OUT_OK || rd_signals_stop())
				return n;
		}
	}
	return n;
}

/* Deliver every event available now. Returns how many. */
static uint64_t drain(void)
{
	struct rd_merge_item mi;
	uint64_t n = 0;
	int r, all = rd_filter_all(&g.filter);

	if (g.unordered)
		return drain_runs(all);
	while ((r = rd_merge_next(g.merge, &mi)) != 0) {
		if (r < 0) {
			rd_fail(rd_exit_of(r), "%s", rd_merge_errmsg(g.merge));
			continue;
		}
		n++;
		deliver(&mi, all);
		if (g.out.state != RD_OUT_OK || rd_signals_stop())
			break;
	}
	return n;
}


static uint64_t drain_cb(void *arg)
{
	(void)arg;
	return drain();
}

/* Every input as a source of g.merge (discover.c). */
static void add_inputs(void)
{
	g.disc.merge = g.merge;
	g.disc.procs = &g.procs;
	g.disc.filter = &g.filter;
	g.disc.dir = g.o.dir;
	g.disc.wait = g.o.wait;
	g.disc.follow = g.o.follow;
	g.disc.wait_secs = g.o.wait_secs;
	rd_discover_inputs(&g.disc, g.o.inputs, g.o.ninputs);
}

/* ---- crash reports ---------------------------------------------------- */

/*
 * A crash report shows the last events of every ring before the crash.
 * Keeping them for every event would cost the fast formats dearly, so the
 * main pass only feeds the crash recorder's own events; when it saw a
 * crash, a second pass over the same files (fresh cursors) feeds every
 * event to a new collector that writes the report. Live (--follow) there is
 * one pass that feeds everything.
 */
static struct rd_crash *crash_report(void)
{
	struct rd_merge_item mi;
	struct rd_crash *c;
	struct rd_item it;
	int r;

	if (!g.crash || g.o.follow || !rd_crash_count(g.crash, 0))
		return g.crash;
	g.merge2 = rd_merge_new();
	c = rd_crash_new();
	if (!g.merge2 || !c) {
		rd_crash_free(c);
		return g.crash;
	}
	rd_procs_init(&g.procs2);
	for (unsigned i = 0; i < g.procs.nsrc; i++) {
		const struct rd_src *s = &g.procs.src[i];
		rte_cursor *cur;
		int src;

		if (rte_cursor_open(s->path, &cur, NULL, 0) != RTE_OK ||
		    rd_ocaml_reuse(cur, s->path) < 0 ||
		    (src = rd_merge_add(g.merge2, cur)) < 0 ||
		    rd_procs_add_src(&g.procs2, (unsigned)src, s->path, s->pid,
		                     rte_cursor_rings(cur)) < 0) {
			rd_crash_free(c);
			return g.crash; /* the first pass said what was wrong */
		}
	}
	rd_signals_reading(g.merge2);
	rd_merge_refill(g.merge2);
	while ((r = rd_merge_next(g.merge2, &mi)) != 0)
		if (r > 0) {
			rd_procs_update(&g.procs2, &mi, &it);
			rd_crash_update(c, &it);
		}
	rd_signals_reading(g.merge);
	rd_crash_free(g.crash);
	return g.crash = c;
}

/* ---- main ---------------------------------------------------------------- */

/* --clean [DIR]: DIR, else the default directory (-d DIR, else
 * $OCAML_RUNTIME_EVENTS_DIR, else librte.so's: rte_rundir_default). */
static int clean_dir(void)
{
	char buf[4096];

	return rd_clean(g.o.ninputs ? g.o.inputs[0]
	                            : rte_rundir_default(g.o.dir, buf, sizeof buf),
	                g.o.dry_run);
}

/*
 * -o naming an input (the same file through any name or link) would be
 * truncated before it is read, and a new file in an input directory would
 * be read as an input: refuse both before anything is opened for writing.
 * Returns 0, or -1 after saying why.
 */
static int output_is_input(const char *out)
{
	char *copy = strdup(out);
	const char *slash;
	struct stat st;
	int bad = 0;

	if (!copy) {
		rd_fail(RD_EX_NOMEM, "out of memory");
		return -1;
	}
	if (stat(out, &st) == 0 && rd_discover_is_input(&g.disc, &st)) {
		bad = 1;
	} else {
		slash = strrchr(copy, '/');
		if (slash)
			copy[slash - copy + (slash == copy)] = '\0'; /* "/x": "/" */
		if (stat(slash ? copy : ".", &st) == 0 && rd_discover_is_input(&g.disc, &st))
			bad = 2;
	}
	free(copy);
	if (bad)
		rd_fail(RD_EX_NOINPUT, "-o %s: %s; nothing was written", out,
		          bad == 1 ? "is one of the inputs"
		                   : "is inside an input directory");
	return bad ? -1 : 0;
}

static int open_output(void)
{
	int fd = 1;

	if (g.o.output && output_is_input(g.o.output) < 0)
		return -1;
	if (g.o.output) {
		fd = open(g.o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			rd_fail(RD_EX_OUTPUT, "%s: %s", g.o.output, strerror(errno));
			return -1;
		}
	}
	if (rd_out_init(&g.out, fd, g.o.output ? g.o.output : "standard output")) {
		rd_fail(RD_EX_NOMEM, "out of memory");
		return -1;
	}
	return 0;
}

/* Flush and report an output failure; a closed pipe ends quietly. */
static int finish_output(void)
{
	int epipe;

	rd_out_fini(&g.out);
	epipe = g.out.state == RD_OUT_EPIPE;
	if (g.out.state == RD_OUT_EIO)
		rd_fail(RD_EX_OUTPUT, "%s: write error: %s", g.out.name,
		          strerror(g.out.err));
	if (g.o.output && g.out.fd >= 0 && close(g.out.fd) < 0 && !g.out.state)
		rd_fail(RD_EX_OUTPUT, "%s: %s", g.o.output, strerror(errno));
	return epipe;
}

static void report_lost(void)
{
	if (g.ctx.lost_total && (g.fmt->needs & RD_WARN_LOST))
		fprintf(stderr, "rte-read: warning: %llu words were lost (overwritten before they were read)\n",
		        (unsigned long long)g.ctx.lost_total);
}

/* Read every input into the sink and finish the output. */
static void run(void)
{
	g.ctx = (struct rd_ctx){ &g.out, &g.procs, &g.filter, 0, g.crash, NULL, 0, NULL };
	if (g.sink->start)
		g.sink->start(g.sink, &g.ctx);
	if (g.o.follow) {
		struct rd_follow f = { g.merge, &g.procs, &g.disc, &g.out,
		                       drain_cb, NULL, 0 };

		rd_follow(&f);
	} else {
		/* A summary needs each ring's order, not the timeline's. */
		if (!(g.fmt->needs & RD_NEED_ORDER)) {
			rd_merge_set_unordered(g.merge, 1);
			g.unordered = 1;
			g.ctx.files_in_order = 1;
			g.ctx.merge = g.merge;
		}
		rd_merge_refill(g.merge);
		drain();
		/* Files without ring_stop: killed writers (the formats say). */
		rd_procs_judge_writers(&g.procs, g.merge);
	}
	if (g.out.state == RD_OUT_OK) {
		g.ctx.report = crash_report();
		g.ctx.crash = g.crash;
		g.sink->finish(g.sink, &g.ctx);
	}
	if (finish_output())
		return; /* the reader went away: not our failure, say nothing */
	report_lost();
}

static void cleanup(void)
{
	if (g.sink)
		g.sink->destroy(g.sink);
	rd_crash_free(g.crash);
	rd_merge_free(g.merge);
	rd_merge_free(g.merge2);
	rd_procs_fini(&g.procs);
	rd_procs_fini(&g.procs2);
	rd_discover_fini(&g.disc);
	rd_ocaml_free();
}

int main(int argc, char **argv)
{
	const struct rd_command *cmd = rd_command_find(argc, argv);
	int rc;

	/* diff, --serve, --push: their own options (commands.c). */
	if (cmd)
		return cmd->main(argc - !cmd->anywhere, argv + !cmd->anywhere);
	rd_filter_init(&g.filter);
	rd_procs_init(&g.procs);
	rc = rd_options_parse(argc, argv, &g.o, &g.filter);
	if (rc)
		return rc;
	g.fmt = rd_format_find(g.o.format);
	if (g.o.top && (!g.fmt || !(g.fmt->needs & RD_WITH_TOP)))
		return rd_usage_error("--top goes with --format=text or json, not '%s'", g.o.format);
	if (!g.fmt || (!g.o.top && (g.fmt->needs & RD_TOP_ONLY)))
		return rd_usage_error("--format: unknown format '%s'", g.o.format);
	g.sink = rd_format_sink(g.fmt, g.o.top);
	if (!g.sink) {
		rd_fail(RD_EX_NOMEM, "out of memory");
		return RD_EX_NOMEM;
	}
	rd_signals_setup(&g.out, g.o.follow || g.o.wait);
	if (g.o.clean)
		return clean_dir();
	g.merge = rd_merge_new();
	rd_signals_reading(g.merge);
	if (!g.merge || ((g.fmt->needs & RD_NEED_CRASH) && !(g.crash = rd_crash_new()))) {
		rd_fail(RD_EX_NOMEM, "out of memory");
		cleanup();
		return RD_EX_NOMEM;
	}
	add_inputs();
	if (g.procs.nsrc == 0)
		rd_status_set(RD_EX_NOINPUT);
	else if (open_output() == 0)
		run();
	cleanup();
	return rd_status();
}
