/*
 * ptree_int.h - what the two halves of the process tree share (ptree.h):
 * the records collected per file (ptree_note.c) that the building
 * (ptree.c) turns into processes. Not for renderers.
 */
#ifndef RD_PTREE_INT_H
#define RD_PTREE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ptree.h"
#include "rte/proc.h"

/* A pid a file names: a reaped child (with its end), a spawned child or
 * a fork child (pid only). */
struct pt_link {
	long pid;
	uint64_t ts;
	int reap;
	int fork;  /* a fork_parent (not an rte.spawn) */
	int used;  /* the fork of a child known only from this file */
	struct rte_exit_rec r;
};

/* A spawn that failed (rte.spawn_failed): its error and argv. */
struct pt_fail {
	uint64_t ts;
	int err;
	uint32_t argc;
	int cut;
	char *argv;
	size_t argv_len;
};

struct pt_file {
	int seen;
	int has_proc, has_exit;
	struct rte_proc_rec pr;
	char *argv;
	size_t argv_len;
	struct rte_exit_rec ex;
	uint64_t start_ts, stop_ts;
	int user;
	struct pt_link *l;
	unsigned nl;
	size_t lcap;
	struct pt_fail *fails;
	unsigned nfails;
	size_t failcap;
	int node;
};

/* Room for element i of the array *pp (capacity *cap, elements of `each`
 * bytes; vec.h), what is added zeroed. 0, or -1 with T->oom set. */
int rd_pt_room(struct rd_ptree *T, void *pp, size_t *cap, size_t i,
               size_t each, size_t first);

#endif
