/*
 * maps.c - the /proc/PID/maps loop of maps.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "maps.h"

int rte_maps_scan(long pid, rte_maps_fn fn, void *arg)
{
	char path[64], line[4096 + 128];
	FILE *f;
	int r = 0;

	if (pid)
		snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	else
		snprintf(path, sizeof path, "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return RTE_MAPS_NOFILE;
	while (!r && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		struct rte_maps_file id;
		int kind = rte_maps_line(line, &lo, &hi, &id);

		if (kind >= 0)
			r = fn(arg, kind, lo, hi, &id);
	}
	if (!r && ferror(f))
		r = RTE_MAPS_IOERR;
	fclose(f);
	return r;
}

/* The mapping at address want: its device and inode as maps shows them. */
struct at {
	unsigned long long want;
	struct rte_maps_file *id;
};

static int at_address(void *arg, int kind, unsigned long long lo,
                      unsigned long long hi, const struct rte_maps_file *id)
{
	struct at *a = arg;

	(void)kind;
	(void)hi;
	if (lo != a->want)
		return 0;
	*a->id = *id;
	return 1;
}

int rte_maps_id_of_fd(int fd, struct rte_maps_file *id)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	struct at a = { 0, id };
	int r;

	if (m == MAP_FAILED)
		return -1;
	a.want = (uintptr_t)m;
	r = rte_maps_scan(0, at_address, &a) == 1 ? 0 : -1;
	munmap(m, (size_t)page);
	return r;
}
