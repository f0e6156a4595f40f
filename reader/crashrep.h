/*
 * crashrep.h - rte-read's view of the crash recorder's events (rte/crash.h):
 * rte.module / rte.module.unload feed a symboliser per file
 * (symbolize.h), rte.crash and rte.backtrace are decoded and their stacks
 * symbolised, and for every crash the last events of every ring of the
 * process before it are kept for the report.
 *
 * Payloads are untrusted: a record that is short, of an unknown version or
 * inconsistent (more frames than bytes) is shown as "(malformed ...)" and
 * otherwise ignored.
 *
 * Not thread-safe.
 */
#ifndef RD_CRASHREP_H
#define RD_CRASHREP_H

#include "out.h"
#include "procs.h"

/* Events of each ring kept for a crash report. */
#define RD_CRASH_LAST 8u

struct rd_crash;

/* A new collector; NULL if out of memory. */
struct rd_crash *rd_crash_new(void);
void rd_crash_free(struct rd_crash *c);

/* Account for one merged event (every event, before any filter). */
void rd_crash_update(struct rd_crash *c, const struct rd_item *it);

/* 1 if the event is rte.crash, rte.backtrace, rte.module or
 * rte.module.unload. */
int rd_crash_is_own(const struct rte_event *ev);

/* The text form of one of those events, for the VALUE column of `text`:
 * one line, then (for stacks) one indented line per frame, each ending
 * with '\n' except the first line's. */
void rd_crash_text_value(struct rd_crash *c, const struct rd_item *it,
                         struct rd_out *o);

/* Number of crashes seen (rte.crash events), and of fatal ones. */
unsigned rd_crash_count(const struct rd_crash *c, int fatal_only);

/* The crash report for `text` and `summary`: for every crash, its process,
 * signal, thread and ring, its symbolised stack (and the stack that made
 * the thread, with RTE_BACKTRACE=thread), then the last events of every
 * ring before it. Nothing if there was no crash. */
void rd_crash_report_text(const struct rd_crash *c, struct rd_out *o);

/* summary-json: `,"crashes":[...]` (always written, [] if none). */
void rd_crash_report_json(const struct rd_crash *c, struct rd_out *o);

/* chrome: the JSON object for the "args" of an instant event made from an
 * rte.crash or rte.backtrace event ({"signal":...,"stack":[...]}), and
 * its event name, written into buf ("crash SIGSEGV", "backtrace fork",
 * ...; returns buf, or NULL for any other event). */
void rd_crash_chrome_args(struct rd_crash *c, const struct rd_item *it,
                          struct rd_out *o);
const char *rd_crash_chrome_name(const struct rd_item *it, char *buf,
                                 size_t len);

#endif
