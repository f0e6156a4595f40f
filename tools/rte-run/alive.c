/*
 * alive.c - is the writer of a ring file still there (alive.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "alive.h"

void alive_maps_id(int fd, dev_t dev, ino_t ino, dev_t *mdev, ino_t *mino)
{
	long page = sysconf(_SC_PAGESIZE);
	char line[4096 + 128];
	void *m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	FILE *f;

	*mdev = dev;
	*mino = ino;
	if (m == MAP_FAILED)
		return;
	f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, in;
		unsigned maj, min;

		if (sscanf(line, "%llx-%*x %*s %*s %x:%x %llu", &lo, &maj, &min, &in) == 4 &&
		    lo == (uintptr_t)m) {
			*mdev = makedev(maj, min);
			*mino = (ino_t)in;
			break;
		}
	}
	if (f)
		fclose(f);
	munmap(m, (size_t)page);
}

int alive_writer(long pid, dev_t mdev, ino_t mino)
{
	char path[64], line[4096 + 128];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno != ENOENT && errno != ESRCH;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long long in;
		unsigned maj, min;
		char perm[8];

		found = sscanf(line, "%*x-%*x %7s %*s %x:%x %llu", perm, &maj, &min, &in) == 4 &&
		        perm[1] == 'w' && perm[3] == 's' && makedev(maj, min) == mdev &&
		        (ino_t)in == mino;
	}
	fclose(f);
	return found;
}
