/*
 * follow.c - --follow (follow.h): read live rings until every writer has
 * ended, rescanning the DIR inputs for new files and picking up the file
 * of a process that exec'd.
 */
#include <stdlib.h>
#include <string.h>

#include "follow.h"
#include "inputs.h"
#include "signals.h"
#include "status.h"

#define IDLE_MIN_MS 1
#define IDLE_MAX_MS 10
#define DIR_RESCAN_MS 100
#define EXEC_GRACE_MS 1000 /* after ring_stop, a live process may exec */

/* --follow: 1 while some source may still write. Reports the ones that
 * ended without ring_stop. `alive` holds each source's liveness sampled
 * before the last drain, so nothing written before death is missed. */
static int any_live(struct rd_follow *f, const int *alive, int *done)
{
	int live = 0;

	for (unsigned i = 0; i < f->procs->nsrc; i++) {
		struct rd_src *s = &f->procs->src[i];

		if (done[i])
			continue;
		if (s->stopped && alive[i]) {
			/* Still mapped after ring_stop: an exec may fail and
			 * the writer write ring_start and go on. */
			live = 1;
		} else if (s->stopped) {
			done[i] = 1;
			f->last_stop_ms = rd_now_ms();
		} else if (!alive[i] && s->pid > 0) {
			done[i] = 1;
			rd_fail(RD_EX_KILLED, "%s: process %ld ended without ring_stop (killed?)",
			          s->path, s->pid);
		} else {
			live = 1;
		}
	}
	return live;
}

/* 1 if a process whose file ended is still running: it may exec. */
static int stopped_but_alive(struct rd_follow *f)
{
	for (unsigned i = 0; i < f->procs->nsrc; i++)
		if (f->procs->src[i].stopped && rd_pid_alive(f->procs->src[i].pid))
			return 1;
	return 0;
}

/* Per-source follow state, grown as sources are added: alive[] sampled
 * each round, done[] once a source can write no more. */
struct follow_state {
	int *alive, *done;
	unsigned cap;
};

static int grow_state(struct rd_follow *f, struct follow_state *fs)
{
	unsigned ncap = f->procs->nsrc * 2;
	int *a, *d;

	if (f->procs->nsrc <= fs->cap)
		return 0;
	a = realloc(fs->alive, ncap * sizeof *a);
	if (a)
		fs->alive = a;
	d = a ? realloc(fs->done, ncap * sizeof *d) : NULL;
	if (!d)
		return -1;
	fs->done = d;
	memset(fs->done + fs->cap, 0, (ncap - fs->cap) * sizeof *d);
	fs->cap = ncap;
	return 0;
}

/* Every source has ended: 1 to stop following, 0 to go on because new
 * files appeared (children, an exec) or may still appear (a process that
 * wrote ring_stop is still running: it may be exec'ing). */
static int follow_finished(struct rd_follow *f)
{
	size_t before = f->procs->nsrc;
	int grace = rd_now_ms() - f->last_stop_ms < EXEC_GRACE_MS;

	for (size_t d = 0; d < f->disc->ndirs; d++)
		rd_discover_scan_dir(f->disc, f->disc->dirs[d], 1, grace);
	rd_discover_reopen_replaced(f->disc);
	if (f->procs->nsrc != before)
		return 0;
	if (!grace || !stopped_but_alive(f))
		return 1;
	rd_sleep_ms(IDLE_MAX_MS);
	return 0;
}

/* --follow: may source i still be written? After its ring_stop, only
 * while its writer still maps it (the maps are read again). */
static int source_alive(struct rd_follow *f, unsigned i, int done)
{
	struct rd_src *s = &f->procs->src[i];

	if (done || !rd_src_alive(s, rd_merge_cursor(f->merge, i)))
		return 0;
	return !s->stopped || rd_writer_maps_now(&s->writer);
}

void rd_follow(struct rd_follow *f)
{
	struct follow_state fs = { NULL, NULL, 0 };
	unsigned idle = IDLE_MIN_MS;
	uint64_t last_scan = rd_now_ms();

	for (;;) {
		uint64_t got;

		if (grow_state(f, &fs) < 0) {
			rd_fail(RD_EX_NOMEM, "out of memory");
			break;
		}
		for (unsigned i = 0; i < f->procs->nsrc; i++)
			fs.alive[i] = source_alive(f, i, fs.done[i]);
		rd_merge_refill(f->merge);
		got = f->drain(f->arg);
		if (f->out->state != RD_OUT_OK || rd_signals_stop())
			break;
		if (!any_live(f, fs.alive, fs.done)) {
			if (follow_finished(f))
				break;
			continue;
		}
		/* Live output: what was read this round goes out now. */
		rd_out_flush(f->out);
		if (got) {
			idle = IDLE_MIN_MS;
		} else {
			rd_sleep_ms(idle);
			idle = idle * 2 > IDLE_MAX_MS ? IDLE_MAX_MS : idle * 2;
		}
		if (f->disc->ndirs && rd_now_ms() - last_scan >= DIR_RESCAN_MS) {
			for (size_t d = 0; d < f->disc->ndirs; d++)
				rd_discover_scan_dir(f->disc, f->disc->dirs[d], 1, 1);
			last_scan = rd_now_ms();
		}
	}
	free(fs.alive);
	free(fs.done);
}
