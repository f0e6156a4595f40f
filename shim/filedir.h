/*
 * filedir.h - the directory of the ring files (filedir.c), for file.c.
 * Depends on file.h and config.h.
 */
#ifndef RTE_SHIM_FILEDIR_H
#define RTE_SHIM_FILEDIR_H

#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "file.h"

#pragma GCC visibility push(hidden)

/* Resolved once per image (first rte_file_create, lock held); a fork child
 * inherits it. */
struct rte_filedir {
	dev_t dev;
	ino_t ino;
	int ok;              /* resolved */
	int relative;        /* from a relative OCAML_RUNTIME_EVENTS_DIR */
	const char *spelled; /* that relative spelling (the config's dir) */
	char path[PATH_MAX]; /* absolute, for messages and re-opening */
};
extern struct rte_filedir rte_filedir;

/* 1 if st is the file of identity (dev, ino). */
int rte_filedir_same_file(const struct stat *st, dev_t dev, ino_t ino);
/* After a failure with errno e on the directory `dir`: 1 if it is because
 * this process is a descendant that switched user (see filedir.c). */
int rte_filedir_denied(int e, const char *dir);
/* Resolve c's directory into rte_filedir and hand back the directory it
 * opened to do so (as rte_filedir_open_stat would, its fstat() in *stp:
 * the first creation opens it once); -1 with a message in err (and
 * f->denied set) if it cannot be used. */
int rte_filedir_resolve(struct rte_file *f, const struct rte_config *c,
                        struct stat *stp, char *err, size_t errlen);
/* The directory, opened by its path (rte_filedir_open_stat: its fstat()
 * in *stp if not NULL); the fd, or -1 with errno. Closed, errno kept, by
 * rte_filedir_close. Signal-safe. */
int rte_filedir_open_stat(struct stat *stp);
int rte_filedir_open(void);
void rte_filedir_close(int dfd);

#pragma GCC visibility pop

#endif
