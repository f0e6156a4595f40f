/*
 * alive.c - is the writer of a ring file still there (alive.h).
 */
#include <errno.h>

#include "alive.h"
#include "maps.h"

void alive_maps_id(int fd, dev_t dev, ino_t ino, dev_t *mdev, ino_t *mino)
{
	struct rte_maps_file id = { dev, ino };

	rte_maps_id_of_fd(fd, &id);
	*mdev = id.dev;
	*mino = id.ino;
}

/* A writable shared mapping of the file *arg (device and inode as maps
 * shows them). */
static int maps_ring(void *arg, int kind, unsigned long long lo,
                     unsigned long long hi, const struct rte_maps_file *id)
{
	const struct rte_maps_file *want = arg;

	(void)lo;
	(void)hi;
	return kind == 1 && id->dev == want->dev && id->ino == want->ino;
}

int alive_writer(long pid, dev_t mdev, ino_t mino)
{
	struct rte_maps_file want = { mdev, mino };
	int r = rte_maps_scan(pid, maps_ring, &want);

	if (r == RTE_MAPS_NOFILE)
		return errno != ENOENT && errno != ESRCH;
	return r == 1;
}
