/*
 * maps.c - the /proc/PID/maps loop of maps.h.
 */
#include <stdio.h>

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
