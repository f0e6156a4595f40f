/*
 * alloc/arena.h - what the malloc wrappers (hooks/alloc.c) and the
 * allocation profiler (alloc/) share: the mode every wrapper switches on,
 * the bootstrap arena, which allocator is behind us (alloc/arena.c).
 * Included by hooks/alloc.c and alloc/ only; see alloc/alloc.h for the
 * profiler's interface. Everything here is hidden.
 *
 * Thread-safety: the mode and the arena are lock-free (atomics named at
 * each access); rte_alloc_first_malloc() and rte_alloc_first_owner() call
 * dlopen/dlsym and are not signal-safe.
 */
#ifndef RTE_SHIM_ALLOC_ARENA_H
#define RTE_SHIM_ALLOC_ARENA_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Modes, in rte_alloc_g_mode. Only MODE_PASS and MODE_FAST take the fast
 * paths. */
enum {
	MODE_UNINIT = 0, /* nothing resolved yet */
	MODE_RESOLVING,  /* one thread resolving: the arena serves all */
	MODE_EARLY,      /* resolved, RTE_ALLOC not read yet: pass, with
	                    the arena check */
	MODE_PASS,       /* off, arena unused: one branch, a tail call */
	MODE_CHECK,      /* off, arena used: pass, with the arena check */
	MODE_BROKEN,     /* no real malloc: the arena serves all */
	MODE_ON,         /* profiling (arena used, or not glibc's free) */
	MODE_FAST        /* profiling, glibc's free, arena unused: free
	                    reads the block's size from its chunk header */
};
extern int rte_alloc_g_mode;   /* atomic (relaxed: each value's pointers are set) */
extern int rte_alloc_g_glibc;  /* the real allocator is glibc's (see usable8()) */
extern int rte_alloc_g_wanted; /* RTE_ALLOC asked for profiling */
extern int rte_alloc_g_ours;   /* our malloc is the one the program calls */

static inline int rte_alloc_mode(void)
{
	/* Acquire: pairs with the release stores of the mode. */
	return __atomic_load_n(&rte_alloc_g_mode, __ATOMIC_ACQUIRE);
}

/* The bootstrap arena: memory before the real functions are known. */
#define RTE_ALLOC_ARENA_BYTES (256u * 1024u)
extern char rte_alloc_g_arena[RTE_ALLOC_ARENA_BYTES];
extern size_t rte_alloc_g_arena_used; /* atomic: bytes handed out */

static inline int rte_alloc_in_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)rte_alloc_g_arena < RTE_ALLOC_ARENA_BYTES;
}

/* n bytes aligned to align (a power of two, at least 16) from the arena,
 * zero-filled, or NULL with ENOMEM. Lock-free. */
void *rte_alloc_arena_alloc(size_t n, size_t align);
/* The size asked for the arena block p. */
size_t rte_alloc_arena_size(const void *p);

/* 1 if fn is defined in glibc's libc.so.6. */
int rte_alloc_is_glibc(void *fn);
/* The malloc the program's calls reach (the first definition in lookup
 * order, past a canonical PLT entry of the executable). */
void *rte_alloc_first_malloc(void);

#pragma GCC visibility pop

#endif
