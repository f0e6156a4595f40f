/*
 * alive.c - is the writer of a ring file still there (alive.h).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alive.h"
#include "maps.h"

/* The mapping at address want: its device and inode as maps shows them. */
struct at {
	unsigned long long want;
	dev_t dev;
	ino_t ino;
};

static int at_address(void *arg, int kind, unsigned long long lo,
                      unsigned long long hi, const struct rte_maps_file *id)
{
	struct at *a = arg;

	(void)kind;
	(void)hi;
	if (lo != a->want)
		return 0;
	a->dev = id->dev;
	a->ino = id->ino;
	return 1;
}

void alive_maps_id(int fd, dev_t dev, ino_t ino, dev_t *mdev, ino_t *mino)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	struct at a;

	*mdev = dev;
	*mino = ino;
	if (m == MAP_FAILED)
		return;
	a.want = (uintptr_t)m;
	if (rte_maps_scan(0, at_address, &a) == 1) {
		*mdev = a.dev;
		*mino = a.ino;
	}
	munmap(m, (size_t)page);
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
