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
 * frames end at the end of the file.
 */
#ifndef RTE_FORMAT_PACKED_H
#define RTE_FORMAT_PACKED_H

#define RTE_PACK_MAGIC "RTEPACK1"
#define RTE_PACK_HEADER_WORDS 4u
#define RTE_PACK_RECORD_WORDS 3u
#define RTE_PACK_MAX_EXTENTS 65536u

#endif
