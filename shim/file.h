/*
 * file.h - the ring file <dir>/<pid>.events (file.c). Depends on config.h
 * (the directory, sizes) and fd.h.
 */
#ifndef RTE_SHIM_FILE_H
#define RTE_SHIM_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "fd.h"
#include "rte/format.h"

#pragma GCC visibility push(hidden)

/* Bytes of a ring's data reserved when the ring is first used (ring 0 by
 * rte_file_create()); the rest as it is written (slots.h). A process that
 * writes a hundred small events stays within them: its file holds about
 * 32 KiB of blocks instead of the whole ring's 512 KiB. */
#define RTE_FILE_RING_FIRST 16384u

struct rte_file {
	char *base;             /* shared mapping of l.total_size bytes */
	struct rte_layout l;
	dev_t dev;              /* identity of the file, to recognise it */
	ino_t ino;
	uid_t uid;              /* its owner */
	int unlinked;           /* exec without PRESERVE removed the name */
	int denied;             /* creation failed: this identity may not use
	                         * the directory, another user's (EACCES,
	                         * EPERM: a child that switched user) */
	char name[32];          /* <pid>.events, in the held directory */
	char exec_name[48];     /* <pid>.exec<N>.events while exec runs */
	char path[PATH_MAX];    /* absolute <dir>/<pid>.events, for messages */
};

/* Create, size, reserve, map and initialise <dir>/<pid>.events, publishing
 * it under its final name only when complete. Returns 0, or -1 with a
 * one-line reason in err. errno is clobbered. *c must outlive the image
 * (the tracer's config): rte_file_env_dir() compares with its dir. */
int rte_file_create(struct rte_file *f, const struct rte_config *c, pid_t pid,
                    char *err, size_t errlen);
/* Allocate the blocks of [off, off + len) so that stores through the
 * mapping cannot raise SIGBUS, through the mapping (MADV_POPULATE_WRITE,
 * then MADV_DONTNEED: no resident memory kept), or before Linux 5.14
 * through the file opened by its name for the moment. Returns 0 or an
 * errno value. Signal-safe. */
int rte_file_reserve(const struct rte_file *f, uint64_t off, uint64_t len);
/* Map in now the pages of [off, off + len) that are about to be written
 * (reserved first): one system call instead of a page fault per page,
 * and a fault on a shared tmpfs page costs tens of microseconds on the
 * VMs measured (doc/BENCHMARKS.md). Best effort: errors, and kernels
 * before 5.14 (no MADV_POPULATE_WRITE), leave the faults to happen. */
void rte_file_prefault(const struct rte_file *f, uint64_t off, uint64_t len);
/* madvise the mapping for sparse use (no read-around). */
void rte_file_advise(const struct rte_file *f);
/* RTE_FILE_MARK, the mode bit of a file made without PRESERVE: sweep.h. */
/* Clear RTE_FILE_MARK: the file is kept (a crash record). Signal-safe. */
void rte_file_keep(const struct rte_file *f);
/* Unlink the file if its name is still ours. Signal-safe. */
void rte_file_remove(const struct rte_file *f);
/* Before exec: move the file out of the way of the next image, to
 * <pid>.exec<N>.events with preserve, else unlink it (kept mapped), so
 * that nothing is left after a successful exec. Returns 0 or an errno
 * (f->denied set if this identity may not use the directory). */
int rte_file_exec_away(struct rte_file *f, int preserve);
/* After a failed exec: give the file its name back (without PRESERVE, a
 * copy of it replaces the mapping at the same address: the caller must
 * reserve again the blocks it had reserved). Returns 0 or errno. */
int rte_file_exec_back(struct rte_file *f, pid_t pid);
/* exec: if the environment entry `entry` is the relative
 * OCAML_RUNTIME_EVENTS_DIR=<dir> that tracing started with, the absolute
 * directory it was resolved to (the new image must use the same directory
 * even if the program changed its working directory since), else NULL.
 * Signal-safe. */
const char *rte_file_env_dir(const char *entry);
/* The absolute directory of the ring files once resolved (by this
 * image's first file, or its parent's), else NULL. Signal-safe. */
const char *rte_file_dir(void);
/* Unmap (only where no other thread can write: fork child). */
void rte_file_drop(struct rte_file *f);

#pragma GCC visibility pop

#endif
