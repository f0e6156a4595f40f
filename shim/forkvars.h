/*
 * forkvars.h - RTE_FORKVAR: where the variables written around fork live.
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

#endif
