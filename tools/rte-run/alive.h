/*
 * alive.h - is the writer of a ring file still there? For rte-run's
 * drain (drain.c), asked of /proc, never by signalling: the shim keeps
 * its ring file mapped shared and writable until its process ends, so
 * the writer is there while process PID (the pid in the file's name)
 * maps the file that way. An exec'd image, a fork child (which drops
 * its parent's mapping), a zombie and a dead process do not.
 *
 * /proc/PID/maps names a file by the device and inode the kernel's
 * mapping holds, which are not always fstat()'s (btrfs gives maps the
 * file system's device; overlayfs the file of the layer below):
 * alive_maps_id() finds the pair maps shows for a file (fstat's on tmpfs,
 * ext2/3/4 and xfs, where they are the same).
 *
 * Thread-safe (no state); not async-signal-safe (stdio).
 */
#ifndef RTE_RUN_ALIVE_H
#define RTE_RUN_ALIVE_H

#include <sys/types.h>

/* The device and inode /proc/PID/maps shows for the file open on fd
 * (fstat's dev and ino), into *mdev, *mino: its first page mapped, our
 * own maps read. Left as dev and ino if that cannot be told. */
void alive_maps_id(int fd, dev_t dev, ino_t ino, dev_t *mdev, ino_t *mino);

/* 1 while process pid maps the file (mdev, mino) shared and writable,
 * 0 if it does not (or is gone); 1 if its maps cannot be read for
 * another reason than its absence (we cannot tell: not gone). */
int alive_writer(long pid, dev_t mdev, ino_t mino);

#endif
