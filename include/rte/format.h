/*
 * rte/format.h - the OCaml 5.2 runtime-events ring file format, version 1.
 *
 * This header is the single description of the on-disk format shared by the
 * producer (librte.so) and every consumer. The normative text is
 * doc/FORMAT.md; the picture below is the summary.
 *
 *   offset 0                 +--------------------------------------------+
 *                            | metadata header: 8 x u64                   |
 *                            |  0 version (1)          4 ring_size_elems  |
 *                            |  1 max_domains          5 headers_offset   |
 *                            |  2 ring_header_size     6 data_offset      |
 *                            |  3 ring_size_bytes      7 custom_evts_off  |
 *   headers_offset (64)      +--------------------------------------------+
 *                            | ring header 0: head, tail, 8 words pad     |
 *                            | ... max_domains headers of 80 bytes        |
 *   data_offset              +--------------------------------------------+
 *                            | ring 0: ring_size_elements u64 words       |
 *                            | ... max_domains rings                      |
 *   custom_events_offset     +--------------------------------------------+
 *                            | 8192 name slots x 128 bytes (NUL-ended)    |
 *                            +--------------------------------------------+
 *
 * Message header word (first word of every message):
 *
 *   63        54 53 52   49 48        36 35                 0
 *   +-----------+--+-------+------------+--------------------+
 *   | length    |U | type  | event id   | zero               |
 *   +-----------+--+-------+------------+--------------------+
 *   length: words including header and timestamp (1..1023)
 *   U: 0 runtime event, 1 user event
 *
 * Word 1 is the timestamp (CLOCK_MONOTONIC ns); the payload follows.
 *
 * Everything here is pure data and pure functions: thread-safe and
 * async-signal-safe.
 */
#ifndef RTE_FORMAT_H
#define RTE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTE_FORMAT_VERSION 1u
#define RTE_METADATA_WORDS 8u
#define RTE_METADATA_BYTES 64u
#define RTE_RING_HEADER_BYTES 80u /* head, tail, 8 words of padding */
#define RTE_MAX_DOMAINS_DEFAULT 128u
#define RTE_RING_LOG2_DEFAULT 16u /* 2^16 words = 512 KiB per ring */
#define RTE_RING_LOG2_MIN 4u
#define RTE_RING_LOG2_MAX 24u     /* our producer's limit, 128 MiB per ring */
#define RTE_MAX_USER_EVENTS 8192u
#define RTE_NAME_SLOT_BYTES 128u
#define RTE_NAME_MAX 127u         /* bytes of a name, without the NUL */
#define RTE_MAX_MSG_WORDS 1023u   /* the 10-bit length field */
#define RTE_ALLOC_BUCKETS 20u
/* Longest custom payload that fits one message: (1023 - 2) words, minus the
 * trailing count byte. */
#define RTE_CUSTOM_MAX_BYTES ((RTE_MAX_MSG_WORDS - 2u) * 8u - 1u)

/* ---- header word ------------------------------------------------------ */

#define RTE_HDR_LEN_SHIFT 54
#define RTE_HDR_USER_BIT ((uint64_t)1 << 53)
#define RTE_HDR_TYPE_SHIFT 49
#define RTE_HDR_ID_SHIFT 36
#define RTE_HDR_LOW_MASK (((uint64_t)1 << 36) - 1)

static inline uint64_t rte_hdr_make(unsigned len, int user, unsigned type,
                                    unsigned id)
{
	return ((uint64_t)(len & 0x3ffu) << RTE_HDR_LEN_SHIFT) |
	       (user ? RTE_HDR_USER_BIT : 0) |
	       ((uint64_t)(type & 0xfu) << RTE_HDR_TYPE_SHIFT) |
	       ((uint64_t)(id & 0x1fffu) << RTE_HDR_ID_SHIFT);
}
static inline unsigned rte_hdr_len(uint64_t h)
{
	return (unsigned)(h >> RTE_HDR_LEN_SHIFT);
}
static inline int rte_hdr_is_user(uint64_t h)
{
	return (h & RTE_HDR_USER_BIT) != 0;
}
static inline unsigned rte_hdr_type(uint64_t h)
{
	return (unsigned)(h >> RTE_HDR_TYPE_SHIFT) & 0xfu;
}
static inline unsigned rte_hdr_id(uint64_t h)
{
	return (unsigned)(h >> RTE_HDR_ID_SHIFT) & 0x1fffu;
}

/* ---- message types ----------------------------------------------------- */

enum rte_runtime_msg {
	RTE_MSG_INTERNAL = 0, /* id 0: padding */
	RTE_MSG_LIFECYCLE = 1,
	RTE_MSG_BEGIN = 2,
	RTE_MSG_EXIT = 3,
	RTE_MSG_COUNTER = 4,
	RTE_MSG_ALLOC = 5,
	RTE_MSG_FLUSH = 6,
};

enum rte_user_msg {
	RTE_UMSG_UNIT = 0,
	RTE_UMSG_INT = 1,
	RTE_UMSG_SPAN_BEGIN = 2,
	RTE_UMSG_SPAN_END = 3,
	RTE_UMSG_CUSTOM = 4,
};

/* ---- ids --------------------------------------------------------------- */

enum rte_lifecycle {
	RTE_LC_RING_START = 0,
	RTE_LC_RING_STOP = 1,
	RTE_LC_RING_PAUSE = 2,
	RTE_LC_RING_RESUME = 3,
	RTE_LC_FORK_PARENT = 4,
	RTE_LC_FORK_CHILD = 5,
	RTE_LC_DOMAIN_SPAWN = 6,
	RTE_LC_DOMAIN_TERMINATE = 7,
	RTE_LC_COUNT = 8,
};

enum rte_counter {
	RTE_C_FORCE_MINOR_ALLOC_SMALL = 0,
	RTE_C_FORCE_MINOR_MAKE_VECT,
	RTE_C_FORCE_MINOR_SET_MINOR_HEAP_SIZE,
	RTE_C_FORCE_MINOR_MEMPROF,
	RTE_C_MINOR_PROMOTED,
	RTE_C_MINOR_ALLOCATED,
	RTE_C_REQUEST_MAJOR_ALLOC_SHR,
	RTE_C_REQUEST_MAJOR_ADJUST_GC_SPEED,
	RTE_C_REQUEST_MINOR_REALLOC_REF_TABLE,
	RTE_C_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE,
	RTE_C_REQUEST_MINOR_REALLOC_CUSTOM_TABLE,
	RTE_C_MAJOR_HEAP_POOL_WORDS,
	RTE_C_MAJOR_HEAP_POOL_LIVE_WORDS,
	RTE_C_MAJOR_HEAP_LARGE_WORDS,
	RTE_C_MAJOR_HEAP_POOL_FRAG_WORDS,
	RTE_C_MAJOR_HEAP_POOL_LIVE_BLOCKS,
	RTE_C_MAJOR_HEAP_LARGE_BLOCKS,
	RTE_C_COUNT
};

enum rte_phase {
	RTE_P_EXPLICIT_GC_SET = 0,
	RTE_P_EXPLICIT_GC_STAT,
	RTE_P_EXPLICIT_GC_MINOR,
	RTE_P_EXPLICIT_GC_MAJOR,
	RTE_P_EXPLICIT_GC_FULL_MAJOR,
	RTE_P_EXPLICIT_GC_COMPACT,
	RTE_P_MAJOR,
	RTE_P_MAJOR_SWEEP,
	RTE_P_MAJOR_MARK_ROOTS,
	RTE_P_MAJOR_MARK,
	RTE_P_MINOR,
	RTE_P_MINOR_LOCAL_ROOTS,
	RTE_P_MINOR_FINALIZED,
	RTE_P_EXPLICIT_GC_MAJOR_SLICE,
	RTE_P_FINALISE_UPDATE_FIRST,
	RTE_P_FINALISE_UPDATE_LAST,
	RTE_P_INTERRUPT_REMOTE,
	RTE_P_MAJOR_EPHE_MARK,
	RTE_P_MAJOR_EPHE_SWEEP,
	RTE_P_MAJOR_FINISH_MARKING,
	RTE_P_MAJOR_GC_CYCLE_DOMAINS,
	RTE_P_MAJOR_GC_PHASE_CHANGE,
	RTE_P_MAJOR_GC_STW,
	RTE_P_MAJOR_MARK_OPPORTUNISTIC,
	RTE_P_MAJOR_SLICE,
	RTE_P_MAJOR_FINISH_CYCLE,
	RTE_P_MINOR_CLEAR,
	RTE_P_MINOR_FINALIZERS_OLDIFY,
	RTE_P_MINOR_GLOBAL_ROOTS,
	RTE_P_MINOR_LEAVE_BARRIER,
	RTE_P_STW_API_BARRIER,
	RTE_P_STW_HANDLER,
	RTE_P_STW_LEADER,
	RTE_P_MAJOR_FINISH_SWEEPING,
	RTE_P_MINOR_FINALIZERS_ADMIN,
	RTE_P_MINOR_REMEMBERED_SET,
	RTE_P_MINOR_REMEMBERED_SET_PROMOTE,
	RTE_P_MINOR_LOCAL_ROOTS_PROMOTE,
	RTE_P_DOMAIN_CONDITION_WAIT,
	RTE_P_DOMAIN_RESIZE_HEAP_RESERVATION,
	RTE_P_COMPACTION,
	RTE_P_COMPACTION_EVACUATE,
	RTE_P_COMPACTION_FORWARD,
	RTE_P_COMPACTION_RELEASE,
	RTE_P_COUNT
};

/* OCaml's names for ids, or NULL for an id this version does not know. */
const char *rte_lifecycle_name(unsigned id);
const char *rte_counter_name(unsigned id);
const char *rte_phase_name(unsigned id);

/* Bucket index of an allocation of `words` words (see doc/FORMAT.md). */
static inline unsigned rte_alloc_bucket(uint64_t words)
{
	if (words < 10)
		return (unsigned)words;
	if (words < 100)
		return (unsigned)(9 + words / 10);
	return 19;
}

/* ---- custom payload encoding ------------------------------------------- */

/* Words needed to carry an n-byte custom payload: (n + 8) / 8. */
static inline size_t rte_custom_words(size_t n)
{
	return (n + 8) / 8;
}

/*
 * Encode n bytes into rte_custom_words(n) words at `out` (zero-filled, then
 * the bytes, then the trailing count byte). Returns the number of words.
 */
size_t rte_custom_encode(const void *bytes, size_t n, uint64_t *out);

/*
 * Decode a payload of `words` words (>= 1). On success stores the byte count
 * in *n and returns 0 (the bytes are the first *n bytes of `in`); returns -1
 * if the trailing count byte is larger than the payload.
 */
int rte_custom_decode(const uint64_t *in, size_t words, size_t *n);

/* ---- layout ------------------------------------------------------------ */

struct rte_layout {
	uint64_t version;
	uint64_t max_domains;
	uint64_t ring_header_size_bytes;
	uint64_t ring_size_bytes;
	uint64_t ring_size_elements;
	uint64_t headers_offset;
	uint64_t data_offset;
	uint64_t custom_events_offset;
	uint64_t total_size; /* derived: custom_events_offset + names area */
};

/*
 * Compute the layout OCaml 5.2 would use for `max_domains` rings of
 * 2^log2_words words. Returns 0, or -1 if the arguments are out of range
 * (max_domains 1..4096, log2_words RTE_RING_LOG2_MIN..RTE_RING_LOG2_MAX).
 */
int rte_layout_compute(struct rte_layout *l, unsigned max_domains,
                       unsigned log2_words);

/*
 * Write the eight metadata words of `l` (version .. custom_events_offset,
 * in file order) at `base`, the start of a ring file's mapping. Writes the
 * values as they are, valid or not. Thread-safe on distinct files.
 */
void rte_layout_write_header(const struct rte_layout *l, void *base);

#ifdef __cplusplus
}
#endif
#endif
