/*
 * sizes.c - allocates known sizes with every function of the malloc
 * family, so that the `alloc` events' bucket counts can be checked
 * exactly. Prints one "fn size count" line per kind of call it made (at
 * the end, with write(): stdio would allocate its buffer). Exits 2..4 if
 * errno was not preserved (success leaves it alone, failure sets ENOMEM
 * or returns EINVAL without touching it).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const size_t sizes[] = {0, 1, 8, 9, 16, 72, 80, 81, 799, 800, 801,
                               4096, 100000};
#define COUNT 1000

static char out[4096];
static size_t used;

static void say(const char *fn, size_t size, int count)
{
	used += (size_t)snprintf(out + used, sizeof(out) - used, "%s %zu %d\n",
	                         fn, size, count);
}

int main(void)
{
	void *p;
	size_t i;
	int k;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (k = 0; k < COUNT; k++) {
			p = malloc(sizes[i]);
			if (!p && sizes[i])
				return 1;
			free(p);
		}
		say("malloc", sizes[i], COUNT);
	}
	free(calloc(3, 24));
	say("calloc", 72, 1);
	p = realloc(NULL, 40);
	say("realloc", 40, 1);
	p = realloc(p, 400);
	say("realloc", 400, 1);
	p = reallocarray(p, 10, 100);
	say("reallocarray", 1000, 1);
	free(p);
	if (posix_memalign(&p, 64, 24))
		return 1;
	free(p);
	say("posix_memalign", 24, 1);
	free(aligned_alloc(64, 128));
	say("aligned_alloc", 128, 1);
	free(memalign(64, 56));
	say("memalign", 56, 1);
	free(valloc(10));
	say("valloc", 10, 1);
	free(pvalloc(10));
	say("pvalloc", 10, 1);
	errno = 1234;
	p = malloc(10);
	free(p);
	if (errno != 1234)
		return 2;
	say("malloc", 10, 1);
	errno = 0;
	p = malloc((size_t)-1 / 2);
	if (p || errno != ENOMEM)
		return 3;
	say("malloc", (size_t)-1 / 2, 1);
	errno = 4321;
	if (posix_memalign(&p, 3, 8) != EINVAL || errno != 4321)
		return 4;
	say("posix_memalign", 8, 1);
	return write(1, out, used) == (ssize_t)used ? 0 : 1;
}
