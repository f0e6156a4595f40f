/*
 * drain_read.c - the live drain's reads of one ring file (drain_int.h):
 * which rings a round reads, and the guard against a file truncated
 * under the drain's mapping. Called by the drain thread only.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#include "capture.h"
#include "drain_int.h"
#include "rte/consumer.h"

#define FULL_EVERY 64       /* rounds: every ring of a file looked at */
#define ROUND_WORDS (1u << 22) /* per ring and round: no ring starves the rest */

/* Is ring r of t to be read this round? rte's writers claim the lowest
 * free ring (doc/FORMAT.md, 12.1), so the rings ever used are a prefix
 * and a new one is the next: a round reads the rings seen used and looks
 * at the next one's header alone, not at all 128 (a load each, from a
 * page of its own, every round of every file: a tenth of the drain's
 * time). Every FULL_EVERY-th round, and the last, look at every ring
 * (a file of another writer may skip some). */
static int ring_due(struct tfile *t, unsigned r)
{
	if (r < t->prefix)
		return 1; /* a ring used stays used */
	if (!rte_cursor_ring_used(t->c, r))
		return 0;
	if (r == t->prefix)
		t->prefix++;
	if (r >= t->hi)
		t->hi = r + 1;
	return 1;
}

static uint64_t drain_file(struct tfile *t, int all)
{
	uint64_t total = 0;

	if (!t->c)
		return 0;
	all = all || t->rounds++ % FULL_EVERY == 0;
	for (unsigned r = 0; r < t->rings; r++) {
		uint64_t round = 0;

		if (!all && r > t->hi)
			break;
		if (t->failed[r] || !ring_due(t, r))
			continue;
		while (round < ROUND_WORDS) {
			const uint64_t *w;
			uint64_t lost = 0;
			int got = rte_cursor_next_words(t->c, r, &w, &lost);

			if (got > 0) {
				cap_append(t->sp, r, w, (size_t)got);
				round += (uint64_t)got;
			} else if (got == 0 && lost) {
				cap_lost(t->sp, r, lost);
			} else if (got == 0) {
				break;
			} else {
				t->failed[r] = 1;
				drain_say("%s%s (captured up to there)", rte_cursor_errmsg(t->c), "");
				break;
			}
		}
		total += round;
	}
	return total;
}

/*
 * A ring file truncated under the drain's mapping raises SIGBUS in the
 * drain thread when it touches a page past the new end: rte-run must
 * not die of it (the command's status would be lost). The handler jumps
 * back to drain_safe(), which stops reading that file (what was read is
 * captured). A SIGBUS anywhere else is fatal as before.
 */
static __thread sigjmp_buf *bus_jmp;

void drain_on_sigbus(int sig)
{
	if (bus_jmp)
		siglongjmp(*bus_jmp, 1);
	signal(sig, SIG_DFL); /* not ours: the fault comes again, fatal */
}

uint64_t drain_safe(struct tfile *t, int all)
{
	sigjmp_buf jb;
	volatile uint64_t n = 0;

	if (t->truncated)
		return 0;
	/* The mask is not saved (that is a system call, and this runs for
	 * every file in every round): the handler's return by longjmp
	 * leaves SIGBUS blocked, so it is unblocked here, on that rare
	 * path only. */
	if (sigsetjmp(jb, 0)) {
		sigset_t bus;

		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		bus_jmp = NULL;
		t->truncated = 1;
		drain_say("%s: truncated while it was read (SIGBUS): captured up to there%s", t->name, "");
		return 0;
	}
	bus_jmp = &jb;
	n = drain_file(t, all);
	bus_jmp = NULL;
	return n;
}
