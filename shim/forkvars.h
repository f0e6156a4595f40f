/*
 * forkvars.h - RTE_FORKVAR, RTE_BIGVAR, RTE_FORKTEXT: where the variables
 * written around fork, the large tables and the code a fork child runs
 * first live.
 *
 * After fork every page the parent or the child writes is a page fault
 * (copy on write) in that process. The shim's small globals written by
 * its atfork handlers and the fork wrapper (locks, the tracer's state,
 * the pool's top) were spread over its 1.5 MB of .bss between large
 * tables, about eight pages; a section of their own keeps them on one or
 * two. (A fork+_exit of a traced process took 48 faults, 20 untraced.)
 */
#ifndef RTE_FORKVARS_H
#define RTE_FORKVARS_H

/* Not ".data.*": ld would interleave it with each file's .data. */
#define RTE_FORKVAR __attribute__((section("rte_forkvars")))

/*
 * RTE_BIGVAR: the shim's large zero-initialised tables (16 KiB and more),
 * placed after .bss (ld puts .lbss there), so that the small variables a
 * process touches as it starts share a few pages of .bss instead of being
 * spread between the tables: each page a process touches first is a page
 * fault, and every traced exec pays them (and init.c maps all of .data
 * and .bss in at a traced start: tests/shim/footprint.sh test_start_pages
 * fails on a table of 16 KiB or more left there).
 */
#define RTE_BIGVAR __attribute__((section(".lbss.rte")))

/*
 * RTE_HOTPAGE(tag, address): a page of such a table that every traced
 * start writes (its first entries, say). init.c maps these pages in with
 * .data and .bss, one system call each instead of a page fault (a
 * pointer in section rte_hot, read through __start_rte_hot/__stop_rte_hot).
 */
#define RTE_HOTPAGE(tag, addr)                                                 \
	static const void *const rte_hot_##tag                                  \
		__attribute__((section("rte_hot"), used)) = (addr)

/*
 * RTE_FORKTEXT: the code a fork child runs before it settles (the atfork
 * child handlers, the fork, exec and _exit wrappers' way through). After
 * fork the child has no page table entries for our text (file mappings
 * are not copied): each 64 KiB of it the child runs is a page fault, so
 * this code is kept together (ld places .text.hot.* first).
 */
#define RTE_FORKTEXT __attribute__((section(".text.hot.rte_fork")))

#endif
