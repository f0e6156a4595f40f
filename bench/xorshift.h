/*
 * xorshift.h - the pseudo-random numbers of the malloc benchmarks
 * (mallocs.c, heapshapes.c): Marsaglia's xorshift64 (13, 7, 17), cheap
 * beside the malloc it picks a size for. *s must not be 0.
 */
#ifndef RTE_BENCH_XORSHIFT_H
#define RTE_BENCH_XORSHIFT_H

#include <stdint.h>

static inline uint64_t next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

#endif
