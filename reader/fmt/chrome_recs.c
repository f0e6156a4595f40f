/*
 * fmt/chrome_recs.c - the shim's records in the Chrome format (see
 * chrome.c): a CPU profiler sample (rte.sample) and a crash or backtrace
 * record (rte.crash, rte.backtrace), each an instant on its thread's
 * track with its decoded fields and symbolised stack.
 */
#include <inttypes.h>
#include <stdio.h>

#include "chrome.h"
#include "profile.h"

/* If it is a well-formed rte.sample: an instant on its thread's track,
 * named by its leaf function, and 1; else 0. */
int chrome_sample_instant(struct chrome *C, struct rd_ctx *c,
                          const struct rd_item *it)
{
	struct rd_prof_stack st;
	struct rd_out *o = c->out;

	if (!rd_prof_sample(C->prof, c->procs, it, &st))
		return 0;
	chrome_ev_open(C, o, "i", it->src->pid, chrome_tid(C, c, it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	chrome_put_name(o, st.n ? st.func[0] : "rte.sample", "sample");
	rd_out_str(o, ",\"args\":{\"cpu_ns\":");
	rd_out_u64(o, st.cpu_ns);
	if (st.truncated)
		rd_out_str(o, ",\"truncated\":true");
	rd_out_str(o, ",\"stack\":[");
	for (unsigned i = 0; i < st.n; i++) {
		if (i)
			rd_out_ch(o, ',');
		rd_out_json_str(o, st.func[i]);
	}
	rd_out_str(o, "]}}");
	return 1;
}

/* An rte.crash or rte.backtrace event (crashrep.h) as a thread-scoped
 * instant event of category "crash", named "crash SIGSEGV", "signal
 * SIGUSR1", "backtrace fork", "backtrace thread" (or "... (malformed)"),
 * its args the record's fields and its symbolised stack; returns 0 (and
 * writes nothing) for any other event. */
int chrome_crash_instant(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	struct rd_out *o = c->out;
	struct rd_crash_event e;
	char name[64], sb[32];

	rd_crash_decode(c->crash, it, 1, &e);
	if (e.kind == RD_CRASH_CRASH && e.malformed)
		snprintf(name, sizeof name, "crash (malformed)");
	else if (e.kind == RD_CRASH_CRASH)
		snprintf(name, sizeof name, "%s %s",
		         e.crash.flags & RTE_CRASH_FATAL ? "crash" : "signal",
		         rd_crash_sig_name(e.crash.signo, sb, sizeof(sb)));
	else if (e.kind == RD_CRASH_BT)
		snprintf(name, sizeof name, "backtrace %s",
		         e.malformed                ? "(malformed)"
		         : e.bt.kind == RTE_BT_FORK ? "fork"
		                                    : "thread");
	else {
		rd_crash_event_fini(&e);
		return 0;
	}
	chrome_ev_open(C, o, "i", it->src->pid, chrome_tid(C, c, it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	chrome_put_name(o, name, "crash");
	rd_out_str(o, ",\"args\":{");
	if (e.malformed) {
		rd_out_str(o, "\"malformed\":true}");
	} else {
		if (e.kind == RD_CRASH_CRASH)
			rd_crash_json_fields(o, &e.crash);
		else
			rd_outf(o, "\"kind\":\"%s\",\"data\":%" PRId64 ",\"tid\":%d",
			        e.bt.kind == RTE_BT_FORK ? "fork" : "thread", e.bt.data,
			        e.bt.tid);
		rd_out_str(o, ",\"stack\":");
		rd_crash_json_frames(o, e.frames, e.nframes);
		rd_out_ch(o, '}');
	}
	rd_out_ch(o, '}');
	rd_crash_event_fini(&e);
	return 1;
}
