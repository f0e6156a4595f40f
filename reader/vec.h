/*
 * vec.h - the one growable-array helper of rte-read.
 *
 *     struct item *v = NULL; size_t n = 0, cap = 0;
 *     if (RD_VEC_ROOM(v, cap, n, 16) < 0) return -1;  // out of memory
 *     v[n++] = x;
 *
 * RD_VEC_ROOM makes room for element n of array p (capacity cap, a
 * size_t): nothing if n < cap, else the capacity doubles (`first` the
 * first time). The element size comes from p's type, so an array of the
 * wrong type cannot be grown by mistake. On failure p and cap are left as
 * they were. Thread-safety: as the array's.
 */
#ifndef RD_VEC_H
#define RD_VEC_H

#include <stddef.h>

/* pp points to the array's pointer. Returns 0, or -1 (out of memory). */
int rd_vec_room(void *pp, size_t *cap, size_t n, size_t each, size_t first);

#define RD_VEC_ROOM(p, cap, n, first) \
	rd_vec_room(&(p), &(cap), (n), sizeof *(p), (first))

#endif
