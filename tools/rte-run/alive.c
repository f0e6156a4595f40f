/*
 * alive.c - is the writer of a ring file still there (alive.h).
 */
#include <errno.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "alive.h"
#include "maps.h"

/* 1 if maps names a file of fd's file system by fstat's pair: tmpfs,
 * ext2/3/4 and xfs keep one device per superblock and no layer below. */
static int maps_as_fstat(int fd)
{
	struct statfs f;

	if (fstatfs(fd, &f) < 0)
		return 0;
	switch ((unsigned long)f.f_type) {
	case TMPFS_MAGIC:
	case EXT4_SUPER_MAGIC: /* also ext2's and ext3's */
	case XFS_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

void alive_maps_id(int fd, dev_t dev, ino_t ino, dev_t *mdev, ino_t *mino)
{
	struct rte_maps_file id = { dev, ino };

	/* the file mapped and our own maps read only where they may differ */
	if (!maps_as_fstat(fd))
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
