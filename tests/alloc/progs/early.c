/*
 * early.c - libearly.so, preloaded after librte.so: a library that
 * allocates in its constructor (before librte.so's constructor runs) and
 * that wraps dlsym, allocating, reallocating and freeing inside it. When
 * librte.so looks up the real malloc with dlsym, these allocations come
 * back into its own malloc before it has one: they must be served by its
 * bootstrap arena, and their later realloc and free (in our destructor,
 * after librte.so is running) must never reach the real allocator with an
 * arena pointer (glibc would take the block into its cache and hand it
 * out again: we abort if it does).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *kept_ctor[8];
static void *kept_dlsym, *kept_dlsym2;
static void *(*real_dlsym)(void *, const char *);

static void find_real(void)
{
	if (!real_dlsym)
		real_dlsym = (void *(*)(void *, const char *))dlvsym(
			RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real_dlsym)
		real_dlsym = (void *(*)(void *, const char *))dlvsym(
			RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

void *dlsym(void *handle, const char *name)
{
	char *p = malloc(32), *q;

	if (p) {
		strcpy(p, "early");
		q = realloc(p, 64);
		free(q ? q : p);
	}
	if (!kept_dlsym) {
		/* 96: a size glibc would take as a chunk's header */
		kept_dlsym = calloc(1, 96);
		kept_dlsym2 = malloc(1000);
	}
	find_real();
	if (!real_dlsym)
		return NULL;
	/* RTLD_NEXT is then taken from here, not from our caller: the same
	 * objects for librte.so, preloaded just before us, as we define
	 * nothing it looks up but dlsym. */
	return real_dlsym(handle, name);
}

__attribute__((constructor)) static void early_init(void)
{
	for (int i = 0; i < 8; i++)
		kept_ctor[i] = malloc(1000);
}

__attribute__((destructor)) static void early_fini(void)
{
	kept_dlsym2 = realloc(kept_dlsym2, 200);
	free(kept_dlsym2);
	free(kept_dlsym);
	/* Had that free reached glibc, its cache would hand the block out
	 * again (and the program would write into the arena). */
	for (int i = 0; i < 8; i++)
		if (malloc(88) == kept_dlsym)
			abort();
	for (int i = 0; i < 8; i++)
		free(kept_ctor[i]);
}
