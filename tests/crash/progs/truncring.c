/*
 * truncring READY GO: writes events (rte_int of "tr.tick" when librte.so
 * is preloaded, nothing otherwise); once its first 1000 are written it
 * creates the file READY, and waits for the file GO to exist (the test
 * truncates the ring file in between), then writes 100000 more events
 * and prints "done". A SIGBUS would kill it.
 *
 * truncring other: maps a file of its own (in the working directory),
 * truncates it and reads through the mapping: dies by SIGBUS, with or
 * without the shim.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

extern int rte_register(const char *name, int type) __attribute__((weak));
extern void rte_int(int id, long long value) __attribute__((weak));

static int g_tick = -1;

static void ticks(long long from, long long n)
{
	for (long long i = from; i < from + n; i++)
		if (g_tick >= 0)
			rte_int(g_tick, i);
}

static int other(void)
{
	int fd = open("other.map", O_RDWR | O_CREAT | O_TRUNC, 0644);
	volatile char *p;

	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 2;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || ftruncate(fd, 0) < 0)
		return 2;
	printf("reading past the end\n");
	fflush(stdout);
	return p[0];
}

int main(int argc, char **argv)
{
	struct timespec nap = {0, 1000000};
	int fd;

	if (argc == 2 && !strcmp(argv[1], "other"))
		return other();
	if (argc < 3)
		return 2;
	if (rte_register && rte_int)
		g_tick = rte_register("tr.tick", 1 /* RTE_TYPE_INT */);
	ticks(0, 1000);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return 2;
	close(fd);
	while (access(argv[2], F_OK) != 0)
		nanosleep(&nap, NULL);
	ticks(1000, 100000);
	printf("done\n");
	return 0;
}
