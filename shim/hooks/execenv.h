/*
 * hooks/execenv.h - the environment an exec passes to the new image
 * (execenv.c says which entries are rewritten, and why). Inside hooks/.
 *
 * FIXED_ENV(name, envp) declares `name`: envp itself when nothing needs
 * a change (the common case: one pass over envp, no system call), else a
 * copy on the caller's stack (exec must not allocate; a vfork child may
 * write only its own stack). Async-signal-safe, errno kept, nothing but
 * the caller's stack written: callable from a vfork child and from a
 * signal handler, as the exec family is.
 */
#ifndef RTE_SHIM_HOOKS_EXECENV_H
#define RTE_SHIM_HOOKS_EXECENV_H

#include <limits.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

#define RTE_ENV_ENTRY_MAX (PATH_MAX + 32)

struct rte_env_plan {
	size_t n;          /* pointers of the copy, with its NULL (0: none) */
	size_t preload;    /* size of the rewritten LD_PRELOAD (0: none) */
	size_t preload_at; /* its index in envp */
};

/* The constructor's part: librte.so's own path, as ld.so loaded it. */
void rte_execenv_init(void);
struct rte_env_plan rte_env_plan(char *const envp[]);
char *const *rte_env_fix(char *const envp[], const struct rte_env_plan *p,
                         char **copy, char *entry, char *pre);

/* 1 if envp starts tracing into `dir` (absolute) with PRESERVE and
 * preloads librte.so by our own path: the new image traces itself there
 * if ld.so loads us (execimage.c says if it will). */
int rte_env_traces_here(char *const envp[], const char *dir);

/* execimage.c: the interpreter of our executable, noted (constructor);
 * then 1 if the image at path will be started by that interpreter, not
 * in secure mode (see execimage.c). Raw system calls: errno kept. */
void rte_execimage_init(void);
int rte_exec_image_traced(const char *path);

#define FIXED_ENV(name, envp)                                                  \
	struct rte_env_plan name##_plan = rte_env_plan(envp);                   \
	char *name##_copy[name##_plan.n ? name##_plan.n : 1];                   \
	char name##_entry[name##_plan.n ? RTE_ENV_ENTRY_MAX : 1];               \
	char name##_pre[name##_plan.preload ? name##_plan.preload : 1];         \
	char *const *name = rte_env_fix(envp, &name##_plan, name##_copy,        \
	                                name##_entry, name##_pre)

#pragma GCC visibility pop

#endif
