/*
 * grow.c - buffers grown step by step with realloc (tests/heap t_grow):
 * grow_here grows 256 buffers from 1 KiB to 64 KiB by 1 KiB (64
 * reallocs each, 520 MiB asked for in all), each freed at the end;
 * malloc_here allocates 64 MiB in blocks of 4 KiB, freed at once. Prints
 * the bytes each asked for ("site NAME BYTES") and how many of them a
 * realloc added to its block ("growth BYTES").
 */
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline)) void grow_here(long *bytes, long *growth)
{
	for (int i = 0; i < 256; i++) {
		char *p = NULL;

		for (size_t k = 1; k <= 64; k++) {
			char *q = realloc(p, k * 1024);

			if (!q)
				exit(1);
			p = q;
			p[0] = (char)k;
			*bytes += (long)(k * 1024);
			*growth += 1024;
		}
		sink = p;
		free(p);
	}
}

__attribute__((noinline)) void malloc_here(long *bytes)
{
	for (int i = 0; i < 16384; i++) {
		char *p = malloc(4096);

		if (!p)
			exit(1);
		p[0] = 1;
		sink = p;
		free(p);
		*bytes += 4096;
	}
}

int main(void)
{
	long g = 0, growth = 0, m = 0;

	grow_here(&g, &growth);
	malloc_here(&m);
	printf("site grow_here %ld\n", g);
	printf("growth %ld\n", growth);
	printf("site malloc_here %ld\n", m);
	return 0;
}
