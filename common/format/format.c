/*
 * format.c - names of ids, custom payload coding and the file layout.
 * See include/rte/format.h for the picture of the file.
 */
#include <string.h>

#include "rte/format.h"

static const char *const lifecycle_names[RTE_LC_COUNT] = {
	"ring_start",  "ring_stop",  "ring_pause",   "ring_resume",
	"fork_parent", "fork_child", "domain_spawn", "domain_terminate",
};

static const char *const counter_names[RTE_C_COUNT] = {
	"force_minor_alloc_small",
	"force_minor_make_vect",
	"force_minor_set_minor_heap_size",
	"force_minor_memprof",
	"minor_promoted",
	"minor_allocated",
	"request_major_alloc_shr",
	"request_major_adjust_gc_speed",
	"request_minor_realloc_ref_table",
	"request_minor_realloc_ephe_ref_table",
	"request_minor_realloc_custom_table",
	"major_heap_pool_words",
	"major_heap_pool_live_words",
	"major_heap_large_words",
	"major_heap_pool_frag_words",
	"major_heap_pool_live_blocks",
	"major_heap_large_blocks",
};

static const char *const phase_names[RTE_P_COUNT] = {
	"explicit_gc_set",
	"explicit_gc_stat",
	"explicit_gc_minor",
	"explicit_gc_major",
	"explicit_gc_full_major",
	"explicit_gc_compact",
	"major",
	"major_sweep",
	"major_mark_roots",
	"major_mark",
	"minor",
	"minor_local_roots",
	"minor_finalized",
	"explicit_gc_major_slice",
	"finalise_update_first",
	"finalise_update_last",
	"interrupt_remote",
	"major_ephe_mark",
	"major_ephe_sweep",
	"major_finish_marking",
	"major_gc_cycle_domains",
	"major_gc_phase_change",
	"major_gc_stw",
	"major_mark_opportunistic",
	"major_slice",
	"major_finish_cycle",
	"minor_clear",
	"minor_finalizers_oldify",
	"minor_global_roots",
	"minor_leave_barrier",
	"stw_api_barrier",
	"stw_handler",
	"stw_leader",
	"major_finish_sweeping",
	"minor_finalizers_admin",
	"minor_remembered_set",
	"minor_remembered_set_promote",
	"minor_local_roots_promote",
	"domain_condition_wait",
	"domain_resize_heap_reservation",
	"compaction",
	"compaction_evacuate",
	"compaction_forward",
	"compaction_release",
};

const char *rte_lifecycle_name(unsigned id)
{
	return id < RTE_LC_COUNT ? lifecycle_names[id] : NULL;
}

const char *rte_counter_name(unsigned id)
{
	return id < RTE_C_COUNT ? counter_names[id] : NULL;
}

const char *rte_phase_name(unsigned id)
{
	return id < RTE_P_COUNT ? phase_names[id] : NULL;
}

size_t rte_custom_encode(const void *bytes, size_t n, uint64_t *out)
{
	size_t w = rte_custom_words(n);
	unsigned char *p = (unsigned char *)out;

	memset(out, 0, w * 8);
	if (n)
		memcpy(p, bytes, n);
	p[w * 8 - 1] = (unsigned char)(w * 8 - 1 - n);
	return w;
}

int rte_custom_decode(const uint64_t *in, size_t words, size_t *n)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t pad;

	if (words == 0)
		return -1;
	pad = p[words * 8 - 1];
	if (pad > words * 8 - 1)
		return -1;
	*n = words * 8 - 1 - pad;
	return 0;
}

void rte_layout_write_header(const struct rte_layout *l, void *base)
{
	const uint64_t w[RTE_METADATA_WORDS] = {
		l->version,          l->max_domains,
		l->ring_header_size_bytes, l->ring_size_bytes,
		l->ring_size_elements, l->headers_offset,
		l->data_offset,      l->custom_events_offset,
	};

	memcpy(base, w, sizeof w);
}

int rte_layout_compute(struct rte_layout *l, unsigned max_domains,
                       unsigned log2_words)
{
	if (max_domains < 1 || max_domains > 4096 ||
	    log2_words < RTE_RING_LOG2_MIN || log2_words > RTE_RING_LOG2_MAX)
		return -1;
	l->version = RTE_FORMAT_VERSION;
	l->max_domains = max_domains;
	l->ring_header_size_bytes = RTE_RING_HEADER_BYTES;
	l->ring_size_elements = (uint64_t)1 << log2_words;
	l->ring_size_bytes = l->ring_size_elements * 8;
	l->headers_offset = RTE_METADATA_BYTES;
	l->data_offset =
		l->headers_offset + (uint64_t)max_domains * RTE_RING_HEADER_BYTES;
	l->custom_events_offset =
		l->data_offset + (uint64_t)max_domains * l->ring_size_bytes;
	l->total_size = l->custom_events_offset +
	                (uint64_t)RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
	return 0;
}
