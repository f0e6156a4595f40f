/*
 * ocaml.c - one table of phase and counter names per OCaml 5 version, and
 * the choice of a table from a trace (see rte/ocaml.h).
 *
 * Versions only ever appended ids, except 5.3, which inserted memprof
 * phases in the middle: so two arrays of phase names (before and from
 * 5.3) and two of counter names serve every table, each version using a
 * prefix of one of them.
 */
#include <string.h>

#include "rte/ocaml.h"

/* The runs of phase names both arrays below share, in their order. */
#define PHASES_FIRST \
	"explicit_gc_set", "explicit_gc_stat", "explicit_gc_minor", \
	"explicit_gc_major", "explicit_gc_full_major", "explicit_gc_compact", \
	"major", "major_sweep", "major_mark_roots"
#define PHASES_MIDDLE \
	"finalise_update_first", "finalise_update_last", "interrupt_remote", \
	"major_ephe_mark", "major_ephe_sweep", "major_finish_marking", \
	"major_gc_cycle_domains", "major_gc_phase_change", "major_gc_stw", \
	"major_mark_opportunistic", "major_slice", "major_finish_cycle", \
	"minor_clear", "minor_finalizers_oldify", "minor_global_roots", \
	"minor_leave_barrier", "stw_api_barrier", "stw_handler", "stw_leader", \
	"major_finish_sweeping"
#define PHASES_LAST \
	"minor_remembered_set", "minor_remembered_set_promote", \
	"minor_local_roots_promote", "domain_condition_wait", \
	"domain_resize_heap_reservation"

/* 5.0 and 5.1: the first 40; 5.2: all 44 (compaction appended). */
static const char *const phases_50[] = {
	PHASES_FIRST, "major_mark", "minor", "minor_local_roots",
	"minor_finalized", "explicit_gc_major_slice",
	PHASES_MIDDLE, "minor_finalizers_admin",
	PHASES_LAST,
	/* 5.2 */
	"compaction", "compaction_evacuate", "compaction_forward",
	"compaction_release",
};

/* 5.3: the first 48; 5.4dev: all 49 (empty_minor appended). */
static const char *const phases_53[] = {
	PHASES_FIRST, "major_memprof_roots", "major_mark", "minor",
	"minor_local_roots", "minor_memprof_roots", "minor_memprof_clean",
	"minor_finalized", "explicit_gc_major_slice",
	PHASES_MIDDLE, "major_memprof_clean", "minor_finalizers_admin",
	PHASES_LAST,
	"compaction", "compaction_evacuate", "compaction_forward",
	"compaction_release",
	/* 5.4dev */
	"empty_minor",
};

/* 5.0: the first 11; 5.1, 5.2: all 17; 5.3 and 5.4dev: counters_53. */
static const char *const counters_50[] = {
	"force_minor_alloc_small", "force_minor_make_vect",
	"force_minor_set_minor_heap_size", "force_minor_memprof",
	"minor_promoted", "minor_allocated", "request_major_alloc_shr",
	"request_major_adjust_gc_speed", "request_minor_realloc_ref_table",
	"request_minor_realloc_ephe_ref_table",
	"request_minor_realloc_custom_table",
	/* 5.1 */
	"major_heap_pool_words", "major_heap_pool_live_words",
	"major_heap_large_words", "major_heap_pool_frag_words",
	"major_heap_pool_live_blocks", "major_heap_large_blocks",
};

static const char *const counters_53[] = {
	"force_minor_alloc_small", "force_minor_make_vect",
	"force_minor_set_minor_heap_size", "force_minor_memprof",
	"minor_promoted", "minor_allocated", "request_major_alloc_shr",
	"request_major_adjust_gc_speed", "request_minor_realloc_ref_table",
	"request_minor_realloc_ephe_ref_table",
	"request_minor_realloc_custom_table", "major_heap_pool_words",
	"major_heap_pool_live_words", "major_heap_large_words",
	"major_heap_pool_frag_words", "major_heap_pool_live_blocks",
	"major_heap_large_blocks",
	/* 5.3 */
	"major_heap_words", "major_allocated_words", "major_allocated_work",
	"major_dependent_work", "major_extra_work", "major_work_counter",
	"major_alloc_counter", "major_slice_target", "major_slice_budget",
};

#define N(a) (sizeof a / sizeof a[0])

static const struct rte_ocaml_table tables[] = {
	{ "5.0", "ocaml/ocaml tag 5.0.0", phases_50, 40, counters_50, 11 },
	{ "5.1", "ocaml/ocaml tags 5.1.0, 5.1.1", phases_50, 40, counters_50, 17 },
	{ "5.2", "ocaml/ocaml tag 5.2.0", phases_50, 44, counters_50, 17 },
	{ "5.3", "ocaml/ocaml tag 5.3.0-alpha1, branch 5.3 (5.3.0+dev4)",
	  phases_53, 48, counters_53, 26 },
	{ "5.4dev", "ocaml/ocaml trunk fd41e1ab55 (5.4.0+dev0, 2024-10-24)",
	  phases_53, 49, counters_53, 26 },
};
#define NTABLES N(tables)
#define T52 2

_Static_assert(N(phases_50) == 44 && N(phases_53) == 49, "phase tables");
_Static_assert(N(counters_50) == 17 && N(counters_53) == 26, "counter tables");

const struct rte_ocaml_table *rte_ocaml_tables(unsigned *n)
{
	*n = NTABLES;
	return tables;
}

const struct rte_ocaml_table *rte_ocaml_default(void)
{
	return &tables[T52];
}

const struct rte_ocaml_table *rte_ocaml_table(const char *v)
{
	size_t n;

	if (!v)
		return NULL;
	if (!strcmp(v, "5.4dev") || !strncmp(v, "5.4", 3))
		return &tables[4];
	for (unsigned i = 0; i < NTABLES; i++) {
		n = strlen(tables[i].version);
		if (!strncmp(v, tables[i].version, n) && (v[n] == 0 || v[n] == '.'))
			return &tables[i];
	}
	return NULL;
}

const char *rte_ocaml_sure_name(enum rte_ocaml_sure s)
{
	static const char *const names[] = { "forced", "sure", "likely", "guess" };

	return (unsigned)s < N(names) ? names[s] : "?";
}

/* ---- detection ---------------------------------------------------------- */

/*
 * Nestings of runtime phases seen in real OCaml 5.2, 5.3 and 5.4dev
 * programs (their fixtures, and OCaml's own testsuite/tests/lib-runtime-events:
 * test_caml_slot_reuse begins thousands of major_slice with none open),
 * decoded with their own runtime's names: "parent>child", "" for a phase
 * begun with none open. Under a wrong table the same ids get other names,
 * and few of their nestings are in this list.
 */
static const char *const known[] = {
	">domain_condition_wait", ">empty_minor", ">explicit_gc_compact",
	">explicit_gc_full_major", ">explicit_gc_set", ">interrupt_remote",
	">major", ">major_finish_marking", ">major_finish_sweeping",
	">major_slice", ">minor",
	">minor_clear", ">minor_finalized", ">minor_finalizers_admin",
	">minor_leave_barrier", ">stw_api_barrier", ">stw_handler",
	">stw_leader", "compaction>compaction_evacuate",
	"compaction>compaction_forward", "compaction>compaction_release",
	"domain_condition_wait>major", "domain_condition_wait>stw_handler",
	"domain_condition_wait>stw_leader", "empty_minor>empty_minor",
	"empty_minor>major", "empty_minor>stw_handler", "empty_minor>stw_leader",
	"explicit_gc_compact>stw_leader", "explicit_gc_full_major>stw_leader",
	"explicit_gc_set>stw_leader",
	"interrupt_remote>major", "interrupt_remote>stw_handler",
	"interrupt_remote>stw_leader", "major>major", "major>major_slice",
	"major>stw_handler", "major>stw_leader",
	"major_finish_cycle>major_gc_cycle_domains",
	"major_finish_cycle>major_memprof_clean",
	"major_finish_cycle>major_slice", "major_gc_cycle_domains>major_gc_stw",
	"major_gc_cycle_domains>minor", "major_gc_cycle_domains>minor_clear",
	"major_gc_cycle_domains>minor_finalized",
	"major_gc_cycle_domains>minor_finalizers_admin",
	"major_gc_cycle_domains>minor_leave_barrier",
	"major_gc_stw>compaction", "major_gc_stw>major_mark_roots",
	"major_gc_stw>major_memprof_roots", "major_slice>finalise_update_first",
	"major_slice>finalise_update_last", "major_slice>major",
	"major_slice>major_gc_phase_change", "major_slice>major_mark",
	"major_slice>major_sweep", "major_slice>stw_handler",
	"major_slice>stw_leader", "minor>minor_global_roots",
	"minor>minor_local_roots", "minor>minor_memprof_clean",
	"minor>minor_remembered_set",
	"minor_local_roots>minor_local_roots_promote",
	"minor_remembered_set>minor_finalizers_oldify",
	"minor_remembered_set>minor_memprof_roots",
	"minor_remembered_set>minor_remembered_set_promote",
	"stw_handler>major_gc_cycle_domains", "stw_handler>major_gc_phase_change",
	"stw_handler>major_memprof_clean", "stw_handler>minor",
	"stw_handler>minor_clear", "stw_handler>minor_finalized",
	"stw_handler>minor_finalizers_admin", "stw_handler>minor_leave_barrier",
	"stw_handler>stw_api_barrier", "stw_leader>major_finish_cycle",
	"stw_leader>major_gc_cycle_domains", "stw_leader>major_gc_phase_change",
	"stw_leader>major_memprof_clean", "stw_leader>minor",
	"stw_leader>minor_clear", "stw_leader>minor_finalized",
	"stw_leader>minor_finalizers_admin", "stw_leader>minor_leave_barrier",
	"stw_leader>stw_api_barrier",
};

#define MAXID 64            /* ids counted in the nesting matrix */
#define MAXDEPTH 32
#define EVENTS_PER_RING 65536 /* a bounded cost per ring */
#define ENOUGH 4096           /* nested pairs: the scan stops there */

struct seen {
	uint32_t pair[MAXID + 1][MAXID]; /* [parent + 1][child]; row 0: none open */
	uint64_t nested; /* pairs with a parent: a phase begun at top level
	                  * tells little (most ids are named alike there), so
	                  * thousands of them must not end the scan before the
	                  * nestings that tell tables apart */
	unsigned max_phase, max_counter;
	int any_phase, any_counter;
};

static int is_known(const char *parent, const char *child)
{
	size_t pl = strlen(parent);

	for (size_t i = 0; i < N(known); i++)
		if (!strncmp(known[i], parent, pl) && known[i][pl] == '>' &&
		    !strcmp(known[i] + pl + 1, child))
			return 1;
	return 0;
}

/* Read the events of one ring into s: ids and nestings. */
static int scan_ring(rte_cursor *c, unsigned ring, struct seen *s)
{
	struct rte_event ev[64];
	unsigned stack[MAXDEPTH], depth = 0;
	size_t total = 0;
	int n = 0;

	while (total < EVENTS_PER_RING && s->nested < ENOUGH &&
	       (n = rte_cursor_next_batch(c, ring, ev, 64)) > 0) {
		total += (size_t)n;
		for (int i = 0; i < n; i++) {
			const struct rte_event *e = &ev[i];

			if (e->kind == RTE_EV_LOST) {
				depth = 0; /* what was open is unknown now */
			} else if (e->kind == RTE_EV_COUNTER) {
				s->any_counter = 1;
				if (e->id > s->max_counter)
					s->max_counter = e->id;
			} else if (e->kind == RTE_EV_BEGIN) {
				s->any_phase = 1;
				if (e->id > s->max_phase)
					s->max_phase = e->id;
				if (e->id < MAXID && (depth == 0 || stack[depth - 1] < MAXID)) {
					s->pair[depth ? stack[depth - 1] + 1 : 0][e->id]++;
					s->nested += depth > 0;
				}
				if (depth < MAXDEPTH)
					stack[depth++] = e->id;
			} else if (e->kind == RTE_EV_END) {
				unsigned d = depth;

				while (d > 0 && stack[d - 1] != e->id)
					d--;
				if (d > 0)
					depth = d - 1;
			}
		}
	}
	return n < 0 ? n : 0;
}

/* How many nestings of s the names of t explain. */
static uint64_t explained(const struct seen *s, const struct rte_ocaml_table *t)
{
	uint64_t x = 0;

	for (unsigned p = 0; p <= MAXID; p++)
		for (unsigned ch = 0; ch < MAXID; ch++) {
			if (!s->pair[p][ch])
				continue;
			if (ch >= t->nphases || (p && p - 1 >= t->nphases))
				continue;
			if (is_known(p ? t->phases[p - 1] : "", t->phases[ch]))
				x += s->pair[p][ch];
		}
	return x;
}

/* 1 if t covers every id seen. */
static int covers(const struct seen *s, const struct rte_ocaml_table *t)
{
	return (!s->any_phase || s->max_phase < t->nphases) &&
	       (!s->any_counter || s->max_counter < t->ncounters);
}

/* 1 if a and b name every id seen alike. */
static int same_names(const struct seen *s, const struct rte_ocaml_table *a,
                      const struct rte_ocaml_table *b)
{
	if (s->any_phase)
		for (unsigned i = 0; i <= s->max_phase; i++)
			if (i >= a->nphases || i >= b->nphases ||
			    strcmp(a->phases[i], b->phases[i]))
				return 0;
	if (s->any_counter)
		for (unsigned i = 0; i <= s->max_counter; i++)
			if (i >= a->ncounters || i >= b->ncounters ||
			    strcmp(a->counters[i], b->counters[i]))
				return 0;
	return 1;
}

static void decide(const struct seen *s, struct rte_ocaml_choice *out)
{
	uint64_t score[NTABLES], nest = 0;
	int best = -1;

	for (unsigned p = 0; p <= MAXID; p++)
		for (unsigned ch = 0; ch < MAXID; ch++)
			nest += s->pair[p][ch];
	for (unsigned i = 0; i < NTABLES; i++) {
		score[i] = covers(s, &tables[i]) ? explained(s, &tables[i]) : 0;
		/* a tie goes to 5.2 (rte's own files), else to the newer */
		if (covers(s, &tables[i]) &&
		    (best < 0 || score[i] > score[best] ||
		     (score[i] == score[best] && best != T52)))
			best = (int)i;
	}
	if (best < 0)
		best = NTABLES - 1; /* ids beyond every table: the newest names most */
	out->table = &tables[best];
	out->nestings = nest;
	out->explained = score[best];
	out->best_other = 0;
	out->same_from = out->same_to = tables[best].version;
	for (unsigned i = 0; i < NTABLES; i++) {
		if (same_names(s, &tables[i], &tables[best]) && covers(s, &tables[i])) {
			if (strcmp(tables[i].version, out->same_from) < 0)
				out->same_from = tables[i].version;
			if (strcmp(tables[i].version, out->same_to) > 0)
				out->same_to = tables[i].version;
		} else if (covers(s, &tables[i]) && score[i] > out->best_other) {
			out->best_other = score[i];
		}
	}
	if (nest == 0 || score[best] == 0)
		out->sure = RTE_OCAML_GUESS;
	else if (score[best] >= 2 * out->best_other + 8 && 10 * score[best] >= 9 * nest)
		out->sure = RTE_OCAML_SURE;
	else
		out->sure = score[best] > out->best_other ? RTE_OCAML_LIKELY : RTE_OCAML_GUESS;
}

int rte_ocaml_detect(const char *path, struct rte_ocaml_choice *out)
{
	return rte_ocaml_detect_fit(path, NULL, out, NULL);
}

int rte_ocaml_detect_fit(const char *path, const struct rte_ocaml_table *t,
                         struct rte_ocaml_choice *out, struct rte_ocaml_fit *fit)
{
	static __thread struct seen s; /* 17 KiB: not on the stack */
	rte_cursor *c;
	int err;

	memset(out, 0, sizeof *out);
	out->table = &tables[T52];
	out->sure = RTE_OCAML_GUESS;
	out->same_from = out->same_to = tables[T52].version;
	memset(&s, 0, sizeof s);
	err = rte_cursor_open(path, &c, NULL, 0);
	if (err)
		return err;
	for (unsigned r = 0; r < rte_cursor_rings(c) && s.nested < ENOUGH; r++)
		if (rte_cursor_ring_used(c, r))
			(void)scan_ring(c, r, &s); /* a bad ring: what was read counts */
	rte_cursor_close(c);
	decide(&s, out);
	if (fit)
		fit->runtime_ids = s.any_phase || s.any_counter;
	if (t && fit) {
		fit->covers = covers(&s, t);
		fit->explained = fit->covers ? explained(&s, t) : 0;
		fit->same = same_names(&s, t, out->table);
	}
	return RTE_OK;
}
