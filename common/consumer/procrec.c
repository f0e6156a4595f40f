/*
 * procrec.c - the decoders of rte.proc, rte.exit, rte.reap and
 * rte.spawn_failed payloads (rte/proc.h), and the one walk of those
 * events the renderers share. Every payload comes from a file someone
 * else wrote: the fixed part is copied out (no alignment assumed), its
 * version and counts checked against the payload's length before
 * anything is trusted.
 */
#include <string.h>

#include "rte/proc.h"

/* The argument bytes after a 16-byte fixed part that says the vector
 * has `bytes` bytes in all: 0, or -1 if impossible. */
static int argv_part(const void *payload, size_t n, uint32_t bytes,
                     unsigned flags, const char **argv, size_t *argv_len)
{
	size_t rest = n - 16;

	if (rest > RTE_PROC_ARGV_MAX ||
	    (rest < bytes && !(flags & RTE_PROC_ARGV_CUT)) || rest > bytes)
		return -1;
	*argv = (const char *)payload + 16;
	*argv_len = rest;
	return 0;
}

int rte_proc_decode(const void *payload, size_t n, struct rte_proc_rec *r,
                    const char **argv, size_t *argv_len)
{
	if (!payload || n < sizeof(*r))
		return -1;
	memcpy(r, payload, sizeof(*r));
	if (r->version != RTE_PROC_VERSION)
		return -1;
	return argv_part(payload, n, r->bytes, r->flags, argv, argv_len);
}

int rte_spawn_fail_decode(const void *payload, size_t n,
                          struct rte_spawn_fail_rec *r, const char **argv,
                          size_t *argv_len)
{
	if (!payload || n < sizeof(*r))
		return -1;
	memcpy(r, payload, sizeof(*r));
	if (r->version != RTE_SPAWN_FAIL_VERSION)
		return -1;
	return argv_part(payload, n, r->bytes, r->flags, argv, argv_len);
}

int rte_exit_decode(const void *payload, size_t n, struct rte_exit_rec *r)
{
	if (!payload || n < sizeof(*r))
		return -1;
	memcpy(r, payload, sizeof(*r));
	if (r->version != RTE_EXIT_VERSION || r->how > RTE_EXIT_SIGNAL)
		return -1;
	return 0;
}

const char *rte_proc_argv_next(const char *argv, size_t argv_len,
                               size_t *pos, size_t *len)
{
	const char *s, *nul;

	if (*pos >= argv_len)
		return NULL;
	s = argv + *pos;
	nul = memchr(s, '\0', argv_len - *pos);
	*len = nul ? (size_t)(nul - s) : argv_len - *pos;
	*pos += *len + (nul != NULL);
	return s;
}

enum rte_proc_ev_kind rte_proc_event_decode(const char *name,
                                            const void *payload, size_t n,
                                            struct rte_proc_event *d)
{
	if (!name || strncmp(name, "rte.", 4))
		return RTE_PROC_EV_NONE;
	name += 4;
	if (!strcmp(name, "proc"))
		return rte_proc_decode(payload, n, &d->proc, &d->argv,
		                       &d->argv_len) < 0 ? RTE_PROC_EV_NONE
		                                         : RTE_PROC_EV_PROC;
	if (!strcmp(name, "spawn_failed"))
		return rte_spawn_fail_decode(payload, n, &d->fail, &d->argv,
		                             &d->argv_len) < 0
		               ? RTE_PROC_EV_NONE
		               : RTE_PROC_EV_SPAWN_FAIL;
	if (strcmp(name, "exit") && strcmp(name, "reap"))
		return RTE_PROC_EV_NONE;
	if (rte_exit_decode(payload, n, &d->exit) < 0)
		return RTE_PROC_EV_NONE;
	return name[0] == 'e' ? RTE_PROC_EV_EXIT : RTE_PROC_EV_REAP;
}
