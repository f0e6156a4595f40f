/*
 * fuzz_input.h - the structured input of the consumer fuzz target.
 *
 * A raw byte string almost never survives header validation (every ring
 * file is at least 1 MiB and its eight header words must agree), so the
 * target does not take its input as the file. It takes a small program that
 * BUILDS a ring file with the real ring writer (common/writer/ring.h), corrupts it
 * where told to, and reads it back while it is being written:
 *
 *   byte  0       log2 of the ring size in words: 4 + b % 13  (16 .. 64Ki)
 *   bytes 1..2    max_domains - 1, little-endian, % 4096      (1 .. 4096)
 *   byte  3       flags: bits 0-1 ring header size (80, 16, 24, 256 bytes);
 *                 bit 2: truncate the file before the first cursor opens
 *                 it, as `trim` says
 *   bytes 4..5    trim, little-endian: below 0x8000, cut that many bytes
 *                 off the end; else the file keeps trim - 0x8000 bytes
 *   byte  6       poll batch: rte_cursor_poll max_events (0 = no limit)
 *   byte  7       poll stop: the callback of event number b (from 1)
 *                 returns non-zero once (0 = never)
 *   then ops until the input ends.
 *
 * If max_domains rings of that size would exceed FZ_MAX_RING_BYTES the
 * ring size is halved until they fit. The file is laid out as OCaml 5.2
 * would (headers at 64, data, then 8192 name slots), with the chosen ring
 * header size. Each op is one byte, (kind << 4) | r, followed by its
 * arguments (little-endian; missing bytes read as 0). r selects the ring:
 * r % max_domains, or for r == 15 the next u16 % max_domains.
 *
 *   LIFECYCLE  u16 id (bit 15: no payload word, as ring_stop), u64 data
 *   BEGIN/EXIT u16 id                        runtime phase
 *   COUNTER    u16 id, u64 value
 *   ALLOC      20 x u8 buckets
 *   FLUSH      -
 *   UNIT       u16 id                         user events; id & 0x1fff
 *   INT        u16 id, u64 value
 *   SPAN_BEGIN u16 id / SPAN_END u16 id
 *   CUSTOM     u16 id, u16 n (% (RTE_CUSTOM_MAX_BYTES + 1)), n bytes
 *   RAW        u64 header word (the writer ORs the real length into it, so
 *              its own length bits garble it), u8 n, n x u64 payload
 *   NAME       u16 id, u8 n (% 129), n bytes: name slot id & 0x1fff is set
 *              to those bytes, NUL-filled (n = 128 leaves no NUL)
 *   PATCH      u8 region, u16 index, u32 offset, u16 n, n bytes: copied
 *              over the file at region base + offset (clipped to the file);
 *              region % 4: 0 ring header index, 1 ring data index,
 *              2 name slot index, 3 the file start (header words)
 *   SYNC       -: open the live cursor if not yet open and read every ring
 *              to its current end (reading while the file is written)
 *   BURST      u8 n: 4n user int events on the ring (wraps rings fast)
 *
 * At the end every ring is read to its end by the live cursor and by fresh
 * cursors with rte_cursor_next and rte_cursor_poll, which must agree.
 */
#ifndef RTE_FUZZ_INPUT_H
#define RTE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "rte/format.h"

#define FZ_PRELUDE_BYTES 8u
#define FZ_MAX_RING_BYTES ((uint64_t)16 << 20) /* all rings together */
#define FZ_FLAG_TRIM 4u
#define FZ_TRIM_ABSOLUTE 0x8000u

enum fz_op {
	FZ_OP_LIFECYCLE = 0,
	FZ_OP_BEGIN,
	FZ_OP_EXIT,
	FZ_OP_COUNTER,
	FZ_OP_ALLOC,
	FZ_OP_FLUSH,
	FZ_OP_UNIT,
	FZ_OP_INT,
	FZ_OP_SPAN_BEGIN,
	FZ_OP_SPAN_END,
	FZ_OP_CUSTOM,
	FZ_OP_RAW,
	FZ_OP_NAME,
	FZ_OP_PATCH,
	FZ_OP_SYNC,
	FZ_OP_BURST,
};

enum fz_region {
	FZ_REG_RING_HEADER = 0,
	FZ_REG_RING_DATA = 1,
	FZ_REG_NAME = 2,
	FZ_REG_FILE = 3,
};

#define FZ_RING_EXT 15u /* ring nibble: the ring index follows as a u16 */
#define FZ_LC_NO_PAYLOAD 0x8000u

/* The ring header size selected by flags bits 0-1. */
static inline unsigned fz_header_size(unsigned flags)
{
	static const unsigned sizes[4] = { 80, 16, 24, 256 };

	return sizes[flags & 3u];
}

static inline uint8_t fz_op_byte(enum fz_op kind, unsigned ring)
{
	return (uint8_t)((unsigned)kind << 4 | (ring & 15u));
}

/*
 * The layout the target builds: OCaml's, with `rhs`-byte ring headers, the
 * ring size halved (not below 2^RTE_RING_LOG2_MIN words) until all rings
 * fit FZ_MAX_RING_BYTES.
 */
static inline void fz_layout(struct rte_layout *l, unsigned log2,
                             unsigned domains, unsigned rhs)
{
	while (log2 > RTE_RING_LOG2_MIN &&
	       ((uint64_t)domains << (log2 + 3)) > FZ_MAX_RING_BYTES)
		log2--;
	l->version = RTE_FORMAT_VERSION;
	l->max_domains = domains;
	l->ring_header_size_bytes = rhs;
	l->ring_size_elements = (uint64_t)1 << log2;
	l->ring_size_bytes = l->ring_size_elements * 8;
	l->headers_offset = RTE_METADATA_BYTES;
	l->data_offset = l->headers_offset + (uint64_t)domains * rhs;
	l->custom_events_offset =
		l->data_offset + (uint64_t)domains * l->ring_size_bytes;
	l->total_size = l->custom_events_offset +
	                (uint64_t)RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
}

/* The fuzz entry point (libFuzzer's name); also called by fuzz/replay.c. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
