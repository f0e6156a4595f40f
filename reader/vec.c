/*
 * vec.c - growable arrays (vec.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

int rd_vec_room(void *pp, size_t *cap, size_t n, size_t each, size_t first)
{
	size_t ncap = *cap ? 2 * *cap : first;
	void *p, *q;

	if (n < *cap)
		return 0;
	if (ncap < n + 1)
		ncap = n + 1;
	if (ncap > SIZE_MAX / each)
		return -1;
	memcpy(&p, pp, sizeof p);
	if (!(q = realloc(p, ncap * each)))
		return -1;
	memcpy(pp, &q, sizeof q);
	*cap = ncap;
	return 0;
}
