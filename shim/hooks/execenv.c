/*
 * hooks/execenv.c - the environment the exec family passes to a new
 * image (execenv.h), made on the caller's stack: exec must not allocate,
 * and in a vfork child nothing of the parent's memory may change.
 *
 * Two entries are rewritten, each only where it must be:
 * - a relative OCAML_RUNTIME_EVENTS_DIR becomes the absolute directory
 *   it was resolved to when tracing started (filedir.c), so that a
 *   chdir() before exec does not move the new image's file;
 * - LD_PRELOAD loses librte.so's own entry when the calling process can
 *   no longer read it: a process that switched user (a daemon dropping
 *   privileges, su, subprocess.run(user=...)) would otherwise have ld.so
 *   print "object ... cannot be preloaded" on the new image's stderr.
 *   The new image runs untraced, as it would have anyway, and its output
 *   is what it is without the shim; RTE_LOG's file says so. The check is the kernel's own
 *   (access(2): the real user, with no capability unless it is root,
 *   which is what the new image opens the file with: a process that
 *   switched user may still hold capabilities, which exec drops), made
 *   only when the entry names our file by a path (one with a '/': a
 *   bare name is searched for by ld.so, in directories every user
 *   reads).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "execenv.h"
#include "file.h"
#include "forkvars.h"
#include "log.h"
#include "sys.h"
#include "tracer.h"

#define PRELOAD_VAR "LD_PRELOAD="
/* Longer (on the stack of exec's caller): passed as it is. */
#define PRELOAD_MAX 16384

/* librte.so as ld.so loaded it (its link map's name, which ld.so keeps
 * for the library's lifetime), or NULL if it is not a path. */
static const char *g_self;

void rte_execenv_init(void)
{
	Dl_info di;

	if (dladdr((void *)&rte_execenv_init, &di) && di.dli_fname &&
	    strchr(di.dli_fname, '/'))
		g_self = di.dli_fname;
}

/* 1 if the token [s, s + n) is our own path. */
RTE_FORKTEXT static int is_self(const char *s, size_t n)
{
	return n == strlen(g_self) && !memcmp(s, g_self, n);
}

/* 1 if the LD_PRELOAD entry names librte.so by our own path. */
RTE_FORKTEXT static int preloads_self(const char *entry)
{
	const char *v = entry + sizeof(PRELOAD_VAR) - 1;

	while (g_self && *v) {
		size_t n = strcspn(v, " :");

		if (n && is_self(v, n))
			return 1;
		v += n + (v[n] != 0);
	}
	return 0;
}

/* 1 if entry is LD_PRELOAD naming librte.so, which this process cannot
 * read (ld.so in the new image could not load it). No errno written: a
 * vfork child shares its parent's. */
RTE_FORKTEXT static int preload_unreadable(const char *entry)
{
	long r;

	if (!g_self || strncmp(entry, PRELOAD_VAR, sizeof(PRELOAD_VAR) - 1) ||
	    !preloads_self(entry))
		return 0;
	/* access(2): the real user and groups, and no capability unless
	 * the real user is root: what the new image has (a plain program;
	 * a set-user-ID one runs in ld.so's secure mode, which skips a
	 * preloaded path without a word). */
	r = rte_sys3(SYS_faccessat, AT_FDCWD, (long)g_self, R_OK);
	/* Only the answers ld.so would fail on too: a sandbox's EPERM or
	 * ENOSYS keeps the entry. */
	return r == -EACCES || r == -ENOENT || r == -ENOTDIR;
}

/* The value of the first entry `name=` (name with its '=') of envp, as
 * getenv() finds it, or NULL. */
RTE_FORKTEXT static const char *env_value(char *const envp[], const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp[i]; i++)
		if (!strncmp(envp[i], name, n))
			return envp[i] + n;
	return NULL;
}

RTE_FORKTEXT int rte_env_traces_here(char *const envp[], const char *dir)
{
	const char *pre = NULL, *d;

	if (!envp || !dir || !env_value(envp, "OCAML_RUNTIME_EVENTS_START=") ||
	    !env_value(envp, "OCAML_RUNTIME_EVENTS_PRESERVE="))
		return 0;
	d = env_value(envp, "OCAML_RUNTIME_EVENTS_DIR=");
	if (!d || strcmp(d, dir))
		return 0;
	for (size_t i = 0; envp[i]; i++) /* ld.so's: the last one */
		if (!strncmp(envp[i], PRELOAD_VAR, sizeof(PRELOAD_VAR) - 1))
			pre = envp[i];
	/* one too long for rte_env_plan's check of it: not known */
	return pre && strlen(pre) < PRELOAD_MAX && preloads_self(pre);
}

/* ld.so reads the last LD_PRELOAD of the environment: that one is
 * rewritten. */
RTE_FORKTEXT struct rte_env_plan rte_env_plan(char *const envp[])
{
	static int noted;
	struct rte_env_plan p = {0, 0, 0};
	size_t n = 0, at = 0;
	int found = 0, pre = 0;

	if (!envp)
		return p;
	for (; envp[n]; n++) {
		found |= rte_file_env_dir(envp[n]) != NULL;
		if (!strncmp(envp[n], PRELOAD_VAR, sizeof(PRELOAD_VAR) - 1)) {
			at = n;
			pre = 1;
		}
	}
	if (pre && strlen(envp[at]) < PRELOAD_MAX &&
	    preload_unreadable(envp[at])) {
		p.preload = strlen(envp[at]) + 1;
		p.preload_at = at;
		found = 1;
		/* RTE_LOG's file only (a descendant stands aside without a
		 * word on stderr), once (a PATH search execs many times);
		 * not from a vfork child, which must change nothing of its
		 * parent's. */
		if (!rte_tracer_vforked() && !noted) {
			noted = 1;
			rte_note("user %ld cannot read %s: left out of "
			         "LD_PRELOAD, the new image runs untraced",
			         (long)getuid(), g_self);
		}
	}
	if (found)
		p.n = n + 1;
	return p;
}

/* entry without our own token into out (its size: strlen(entry) + 1),
 * each token kept with the separator before it; 0 if no token is left
 * (the variable is then left out). */
RTE_FORKTEXT static int preload_without_self(const char *entry, char *out)
{
	const char *v0 = entry + sizeof(PRELOAD_VAR) - 1, *v = v0;
	size_t o = sizeof(PRELOAD_VAR) - 1, kept = 0;

	memcpy(out, entry, o);
	while (*v) {
		size_t n = strcspn(v, " :");

		if (n && !is_self(v, n)) {
			if (kept++)
				out[o++] = v > v0 ? v[-1] : ':';
			memcpy(out + o, v, n);
			o += n;
		}
		v += n + (v[n] != 0);
	}
	out[o] = 0;
	return kept != 0;
}

RTE_FORKTEXT char *const *rte_env_fix(char *const envp[],
                                      const struct rte_env_plan *p,
                                      char **copy, char *entry, char *pre)
{
	size_t o = 0;

	if (!p->n)
		return envp;
	for (size_t i = 0; i + 1 < p->n; i++) {
		const char *dir = rte_file_env_dir(envp[i]);

		copy[o] = envp[i];
		if (dir && snprintf(entry, RTE_ENV_ENTRY_MAX,
		                    "OCAML_RUNTIME_EVENTS_DIR=%s",
		                    dir) < RTE_ENV_ENTRY_MAX)
			copy[o] = entry;
		if (p->preload && i == p->preload_at) {
			if (!preload_without_self(envp[i], pre))
				continue; /* nothing left: no LD_PRELOAD */
			copy[o] = pre;
		}
		o++;
	}
	copy[o] = NULL;
	return copy;
}
