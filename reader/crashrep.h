/*
 * crashrep.h - rte-read's view of the crash recorder's events (rte/crash.h):
 * rte.module / rte.module.unload feed a symboliser per file
 * (symbolize.h), rte.crash and rte.backtrace are decoded and their stacks
 * symbolised, and for every crash the last events of every ring of the
 * process before it are kept for the report.
 *
 * The formats render what is kept here through the view below: the crash
 * report of `text` and `summary` in fmt/text.c (rd_text_crash_report), of
 * summary-json in fmt/summary_sink.c, the instant events of chrome in
 * fmt/chrome.c.
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
#include "rte/crash.h"
#include "symbolize.h"

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

/* Number of crashes seen (rte.crash events), and of fatal ones. */
unsigned rd_crash_count(const struct rd_crash *c, int fatal_only);

/* ---- what the formats read (fmt/text.c, fmt/summary_sink.c, fmt/chrome.c) ---- */

/* The n-th crash (0 <= n < rd_crash_count(c, 0)), in arrival order: its
 * process, file, ring and thread, its record, its stack symbolised when it
 * came (one line a frame: "#N 0xPC symbol"), and with RTE_BACKTRACE=thread
 * the stack that made its thread. Valid until rd_crash_free(). */
struct rd_crash_view {
	long pid;
	const char *path;
	unsigned ring;
	const char *thread; /* "" if the thread had no name */
	uint64_t ts;
	const struct rte_crash_rec *r;
	char *const *frames;
	unsigned nframes;
	char *const *made_by; /* nmade == 0: none recorded */
	unsigned nmade;
	int made_ring;
	long made_tid;
};
void rd_crash_view(const struct rd_crash *c, unsigned n,
                   struct rd_crash_view *v);

/* For the n-th crash, the last events of every ring of its process before
 * it: fn(ud, ring, NULL) with the ring's heading ("ring 0 (thread main,
 * tid 12), the crashing thread"), then fn(ud, NULL, line) for each of its
 * events, oldest first ("-0.000012345s KIND NAME VALUE", the time
 * relative to the crash). Rings with no event before it are left out. */
void rd_crash_each_last(const struct rd_crash *c, unsigned n,
                        void (*fn)(void *ud, const char *ring, const char *line),
                        void *ud);

/* One rte.crash, rte.backtrace, rte.module or rte.module.unload event,
 * decoded; for the first two, its stack symbolised with the modules of
 * the event's file known to c (none if c is NULL or stack is 0). */
enum rd_crash_kind { RD_CRASH_NONE, RD_CRASH_CRASH, RD_CRASH_BT, RD_CRASH_MOD,
                     RD_CRASH_UNMOD };
struct rd_crash_event {
	enum rd_crash_kind kind;
	int malformed;                 /* the payload did not decode */
	struct rte_crash_rec crash;    /* RD_CRASH_CRASH */
	struct rte_backtrace_rec bt;   /* RD_CRASH_BT */
	struct rd_module mod;          /* RD_CRASH_MOD (with path), _UNMOD */
	char **frames;
	unsigned nframes;
};
/* Fills e from it's event (kind RD_CRASH_NONE for any other event);
 * release it with rd_crash_event_fini(). */
void rd_crash_decode(struct rd_crash *c, const struct rd_item *it, int stack,
                     struct rd_crash_event *e);
void rd_crash_event_fini(struct rd_crash_event *e);

/* "SIGSEGV" (or "signal N") into buf, returned; the si_code's name and
 * meaning ("SEGV_MAPERR: address not mapped"), or NULL if unknown. */
const char *rd_crash_sig_name(int sig, char *buf, size_t len);
const char *rd_crash_code_name(int sig, int code);

/* JSON members of a crash record, shared by summary-json and chrome:
 * "signal":...,"signo":...,"si_code":...[,"si_code_name":...],"addr":...,
 * "tid":...,"fatal":...,"handled":... */
void rd_crash_json_fields(struct rd_out *o, const struct rte_crash_rec *r);
/* A JSON array of the n frame lines v[0..n). */
void rd_crash_json_frames(struct rd_out *o, char *const *v, unsigned n);

#endif
