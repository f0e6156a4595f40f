/*
 * fmt/text_proc.c - the text format's VALUE of rte's process events
 * (rte/proc.h: rte.proc, rte.exit, rte.reap, rte.spawn_failed), decoded
 * by the one walk the renderers share (rte_proc_event_decode).
 */
#include <inttypes.h>
#include <string.h>

#include "crashrep.h"
#include "out.h"
#include "rte/proc.h"
#include "text.h"

/* " argc N argv [...]" (and the cut) of an argument vector: each
 * argument a JSON string, newlines and other bytes escaped. */
static void argv_value(struct rd_out *o, uint32_t argc, unsigned flags,
                       uint32_t bytes, const char *argv, size_t argv_len)
{
	const char *a;
	size_t pos = 0, len;
	int first = 1;

	rd_outf(o, " argc %u", argc);
	if (!(flags & RTE_PROC_NO_ARGV)) {
		rd_out_str(o, " argv [");
		while ((a = rte_proc_argv_next(argv, argv_len, &pos, &len))) {
			if (!first)
				rd_out_str(o, ", ");
			first = 0;
			rd_out_json_mem(o, a, len);
		}
		rd_out_ch(o, ']');
	}
	if (flags & RTE_PROC_ARGV_CUT)
		rd_outf(o, " (cut: %u bytes in all)", bytes);
}

/* rte.proc: "ppid 12 fork child argc 3 argv ["sh", "-c", "x"]". */
static void proc_value(struct rd_out *o, const struct rte_proc_event *d)
{
	const struct rte_proc_rec *r = &d->proc;

	rd_outf(o, "ppid %d%s", r->ppid,
	        r->flags & RTE_PROC_FORK_CHILD ? " fork child" : "");
	argv_value(o, r->argc, r->flags, r->bytes, d->argv, d->argv_len);
}

/* rte.spawn_failed: "ENOENT (No such file or directory) argc 2 argv [...]". */
static void spawn_fail_value(struct rd_out *o, const struct rte_proc_event *d)
{
	const struct rte_spawn_fail_rec *r = &d->fail;
	const char *name = r->err > 0 ? strerrorname_np(r->err) : NULL;
	const char *desc = r->err > 0 ? strerrordesc_np(r->err) : NULL;

	if (name && desc)
		rd_outf(o, "%s (%s)", name, desc);
	else
		rd_outf(o, "error %d", r->err);
	argv_value(o, r->argc, r->flags, r->bytes, d->argv, d->argv_len);
}

/* rte.exit, rte.reap: "pid 12 status 3, user 1.2ms sys 0.3ms max rss 1860
 * KiB, faults 104+3, switches 1+0". */
static void exit_value(struct rd_out *o, const struct rte_exit_rec *r)
{
	char sb[24];

	rd_outf(o, "pid %d ", r->pid);
	if (r->how == RTE_EXIT_STATUS)
		rd_outf(o, "status %d", r->value);
	else if (r->how == RTE_EXIT_SIGNAL)
		rd_outf(o, "signal %s%s",
		        rd_crash_sig_name(r->value, sb, sizeof(sb)),
		        r->flags & RTE_EXIT_CORE ? " (core dumped)" : "");
	else
		rd_out_str(o, "end unknown");
	if (!(r->flags & RTE_EXIT_NO_RUSAGE))
		rd_outf(o, ", user %.3fms sys %.3fms max rss %" PRIu64
		        " KiB, faults %" PRIu64 "+%" PRIu64 ", switches %" PRIu64
		        "+%" PRIu64, (double)r->utime_ns / 1e6,
		        (double)r->stime_ns / 1e6, r->maxrss_kib, r->minflt,
		        r->majflt, r->nvcsw, r->nivcsw);
}

int rd_text_proc_value(struct rd_out *o, const struct rte_event *ev)
{
	struct rte_proc_event d;

	switch (rte_proc_event_decode(ev->name, ev->u.custom.bytes,
	                              ev->u.custom.len, &d)) {
	case RTE_PROC_EV_PROC:
		proc_value(o, &d);
		return 1;
	case RTE_PROC_EV_EXIT:
	case RTE_PROC_EV_REAP:
		exit_value(o, &d.exit);
		return 1;
	case RTE_PROC_EV_SPAWN_FAIL:
		spawn_fail_value(o, &d);
		return 1;
	default:
		return 0;
	}
}
