/*
 * fd.h - the descriptors librte.so keeps (a leaf: depends on nothing
 * else in shim/).
 */
#ifndef RTE_SHIM_FD_H
#define RTE_SHIM_FD_H

#pragma GCC visibility push(hidden)

/* Where rte_fd_high() moves a descriptor (never 0, 1 or 2). */
#define RTE_FD_MIN 100

/* Move fd to a descriptor >= RTE_FD_MIN (else >= 3), O_CLOEXEC, closing the
 * original. Returns the new fd, or -1 with errno (fd closed) if no
 * descriptor above 2 is free. fd < 0 is returned as is. Signal-safe. */
int rte_fd_high(int fd);
/* fd if it is not 0, 1 or 2, else rte_fd_high(fd): for a descriptor held
 * for a moment only (the shim keeps none while the program runs). */
int rte_fd_nostd(int fd);

#pragma GCC visibility pop

#endif
