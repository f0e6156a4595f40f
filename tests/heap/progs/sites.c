/*
 * sites.c - allocation sites of known weights for the top-5 comparison
 * with heaptrack (tests/heap t_sites): seven functions allocate 28, 24,
 * 20, 16, 12, 8 and 4 MiB in all (each at least a sixth more than the
 * next: the fifth, 12 MiB, half as much again as the sixth), through
 * malloc, calloc, realloc, posix_memalign, aligned_alloc and valloc
 * (not memalign: heaptrack 1.4 does not see it), in blocks of different sizes, freed at once or kept a while. Prints
 * the bytes each asked for ("site NAME BYTES").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024L * 1024)

void *volatile sink;

static void out(const char *name, long bytes)
{
	printf("site %s %ld\n", name, bytes);
}

/* 28 MiB: blocks of 64..191 bytes, freed at once */
__attribute__((noinline)) void site_small(void)
{
	long total = 0;

	for (int i = 0; total < 28 * MIB; i++) {
		size_t n = 64 + (size_t)(i % 128);
		char *p = malloc(n);

		p[0] = 1;
		sink = p;
		free(p);
		total += (long)n;
	}
	out("site_small", total);
}

/* 24 MiB: calloc of 4 KiB blocks, 64 live at a time */
__attribute__((noinline)) void site_calloc(void)
{
	static void *keep[64];
	long total = 0;

	for (int i = 0; total < 24 * MIB; i++) {
		free(keep[i % 64]);
		keep[i % 64] = calloc(16, 256);
		total += 4096;
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	out("site_calloc", total);
}

/* 20 MiB: realloc growth by 2 KiB to 64 KiB (each call asks for the
 * whole new size) */
__attribute__((noinline)) void site_realloc(void)
{
	long total = 0;

	while (total < 20 * MIB) {
		char *p = NULL;

		for (size_t n = 2048; n <= 65536 && total < 20 * MIB; n += 2048) {
			char *q = realloc(p, n);

			if (!q)
				break;
			p = q;
			p[n - 1] = 1;
			total += (long)n;
		}
		free(p);
	}
	out("site_realloc", total);
}

/* 16 MiB: posix_memalign of 512-byte blocks aligned to 64 */
__attribute__((noinline)) void site_memalign(void)
{
	long total = 0;

	while (total < 16 * MIB) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 512) == 0)
			free(p);
		total += 512;
	}
	out("site_memalign", total);
}

/* 12 MiB: malloc of 256 KiB blocks (glibc's mmap threshold and above) */
__attribute__((noinline)) void site_big(void)
{
	long total = 0;

	while (total < 12 * MIB) {
		char *p = malloc(256 * 1024);

		memset(p, 2, 4096);
		free(p);
		total += 256 * 1024;
	}
	out("site_big", total);
}

/* 8 MiB: aligned_alloc of 1 KiB blocks */
__attribute__((noinline)) void site_aligned(void)
{
	long total = 0;

	while (total < 8 * MIB) {
		void *p = aligned_alloc(256, 1024);

		sink = p;
		free(p);
		total += 1024;
	}
	out("site_aligned", total);
}

/* 4 MiB: valloc of 128-byte blocks (a page each) */
__attribute__((noinline)) void site_tiny(void)
{
	long total = 0;

	while (total < 4 * MIB) {
		void *p = valloc(128);

		sink = p;
		free(p);
		total += 128;
	}
	out("site_tiny", total);
}

int main(void)
{
	site_tiny();
	site_small();
	site_aligned();
	site_calloc();
	site_big();
	site_realloc();
	site_memalign();
	return 0;
}
