/*
 * alloc/arena.c - the state of the allocation profiler that the malloc
 * wrappers (hooks/alloc.c) switch on: the mode, the bootstrap arena, and
 * which allocator is behind us (see alloc/arena.h). Moved here from
 * hooks/alloc.c so that alloc/sample.c, which asks whether profiling is
 * on and turns it on, calls down into its own folder, never up into
 * hooks/; hooks/alloc.c keeps the interposed functions and the
 * resolution of the real ones.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "forkvars.h"
#include "alloc/alloc.h"
#include "alloc/arena.h"
#include "real.h"

int rte_alloc_g_mode;
int rte_alloc_g_glibc;
int rte_alloc_g_wanted;
int rte_alloc_g_ours = 1;

/* ---- the bootstrap arena --------------------------------------------------- */

#define ARENA_HDR 16u

RTE_BIGVAR char rte_alloc_g_arena[RTE_ALLOC_ARENA_BYTES] __attribute__((aligned(4096)));
size_t rte_alloc_g_arena_used;

/* n bytes aligned to align (a power of two, at least 16) from the arena,
 * zero-filled (the arena is never reused), or NULL with ENOMEM. The block's
 * size is in the 8 bytes before it (for realloc). Lock-free. */
void *rte_alloc_arena_alloc(size_t n, size_t align)
{
	size_t off, start, end;

	if (align < ARENA_HDR)
		align = ARENA_HDR;
	if (n > RTE_ALLOC_ARENA_BYTES || align > 4096)
		goto none;
	off = __atomic_load_n(&rte_alloc_g_arena_used, __ATOMIC_RELAXED);
	do {
		start = (off + ARENA_HDR + align - 1) & ~(align - 1);
		end = start + ((n + 15) & ~(size_t)15);
		if (end > RTE_ALLOC_ARENA_BYTES)
			goto none;
	} while (!__atomic_compare_exchange_n(&rte_alloc_g_arena_used, &off, end, 1,
	                                      __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	memcpy(rte_alloc_g_arena + start - 8, &n, sizeof(n));
	return rte_alloc_g_arena + start;
none:
	errno = ENOMEM;
	return NULL;
}

size_t rte_alloc_arena_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - 8, sizeof(n));
	return n;
}

/* ---- the allocator behind us, and the mode -------------------------------- */

/* 1 if fn is defined in glibc's libc.so.6. */
int rte_alloc_is_glibc(void *fn)
{
	Dl_info info;
	const char *base;

	if (!fn || !dladdr(fn, &info) || !info.dli_fname)
		return 0;
	base = strrchr(info.dli_fname, '/');
	return strcmp(base ? base + 1 : info.dli_fname, "libc.so.6") == 0;
}

/*
 * The malloc the program's calls reach. dlsym(RTLD_DEFAULT) looks in the
 * executable first: a non-PIE executable that takes malloc's address
 * (Debian's python3) has a canonical PLT entry there, an undefined
 * symbol with a value, which only jumps to the first definition after
 * the executable. That one is found by walking the objects in lookup
 * order.
 */
void *rte_alloc_first_malloc(void)
{
	void *first = dlsym(RTLD_DEFAULT, "malloc"), *h, *p = NULL;
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm = NULL;
	Dl_info info;

	if (!first || !dladdr1(first, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    !sym || sym->st_shndx != SHN_UNDEF)
		return first;
	/* libc's dlopen, not hooks/dl.c's (a layer above): an RTLD_NOLOAD
	 * look-up loads nothing the module map would need to hear of. */
	rte_real_resolve();
	if (!rte_real.dlopen || !rte_real.dlclose ||
	    !(h = rte_real.dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD)))
		return first;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0)
		lm = NULL;
	rte_real.dlclose(h);
	for (lm = lm ? lm->l_next : NULL; lm && !p; lm = lm->l_next) {
		void *q;

		if (!lm->l_name || !lm->l_name[0] ||
		    !(h = rte_real.dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD)))
			continue;
		/* Its own definition, not one of its dependencies'. */
		if ((q = dlsym(h, "malloc")) && dladdr(q, &info) && info.dli_fname &&
		    !strcmp(info.dli_fname, lm->l_name))
			p = q;
		rte_real.dlclose(h);
	}
	return p ? p : first;
}
RTE_FORKTEXT int rte_alloc_enabled(void)
{
	int m = rte_alloc_mode();

	return rte_alloc_g_wanted && rte_alloc_g_ours && (m == MODE_CHECK || m >= MODE_ON);
}

void rte_alloc_on(void)
{
	/* The arena is used only before MODE_EARLY: its use is final. */
	if (rte_alloc_enabled())
		__atomic_store_n(&rte_alloc_g_mode,
		                 rte_alloc_g_glibc && !__atomic_load_n(&rte_alloc_g_arena_used,
		                                             __ATOMIC_RELAXED)
		                         ? MODE_FAST
		                         : MODE_ON,
		                 __ATOMIC_RELEASE);
}

const char *rte_alloc_first_owner(void)
{
	Dl_info info;
	void *first;

	if (!rte_alloc_g_wanted || rte_alloc_g_ours)
		return NULL;
	first = rte_alloc_first_malloc();
	if (first && dladdr(first, &info) && info.dli_fname)
		return info.dli_fname;
	return "another library";
}
