/*
 * packed.h - the layout of a packed capture (doc/FORMAT.md, "16.1 Packed
 * captures"): a ring file's data extents (the parts that are not holes),
 * each compressed on its own with zstd. rte-run's drain writes them
 * (tools/rte-run/pack.c); the consumer library opens them as it opens
 * ring files (common/consumer/unpack.c). Only the constants and the
 * header's fields are here: nothing of either side.
 *
 *   word 0            RTE_PACK_MAGIC (8 bytes, "RTEPACK1")
 *   word 1            total_size: the bytes of the ring file it holds
 *   word 2            n: the number of extents (1 to RTE_PACK_MAX_EXTENTS)
 *   word 3            0 (reserved)
 *   words 4 to 4+3n   n records { offset, length, zlength } (bytes)
 *   then              n zstd frames, in the records' order, frame i
 *                     zlength_i bytes long, decompressing to exactly
 *                     length_i bytes: the ring file's bytes at offset_i
 *
 * The extents are in increasing order of offset, do not overlap, are not
 * empty and end within total_size; every byte outside them is zero. The
 * frames end at the end of the file. The first extent begins at 0 and
 * holds at least the ring file's 64-byte header, and total_size is the
 * size that header gives, at most RTE_PACK_MAX_TOTAL.
 */
#ifndef RTE_FORMAT_PACKED_H
#define RTE_FORMAT_PACKED_H

#define RTE_PACK_MAGIC "RTEPACK1"
#define RTE_PACK_HEADER_WORDS 4u
#define RTE_PACK_RECORD_WORDS 3u
#define RTE_PACK_MAX_EXTENTS 65536u

/* The largest ring file a capture can be (doc/FORMAT.md 16 and 16.1):
 * its 64-byte header, 4096 rings (the consumer's bound on the file it
 * came from) of 2^32 words each with their 80-byte headers, the 8192
 * name slots of 128 bytes, no gap between them (tools/rte-run/capture.c
 * lays it out so): 2^47 + 1,376,320 bytes. A packed capture that says
 * more is corrupt, not too big for this machine. */
#define RTE_PACK_MAX_TOTAL \
	(64ull + 4096ull * 80 + 4096ull * (8ull << 32) + 8192ull * 128)

#endif
