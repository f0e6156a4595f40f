/*
 * fd.c - moving the shim's descriptors out of the program's way (fd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fd.h"

int rte_fd_high(int fd)
{
	int n;

	if (fd < 0 || fd >= RTE_FD_MIN)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, RTE_FD_MIN);
	if (n < 0) /* RLIMIT_NOFILE below RTE_FD_MIN: above stdio at least */
		n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (n < 0 && fd > 2)
		return fd;
	close(fd);
	if (n < 0)
		errno = EMFILE;
	return n;
}

int rte_fd_nostd(int fd)
{
	return fd >= 0 && fd <= 2 ? rte_fd_high(fd) : fd;
}
