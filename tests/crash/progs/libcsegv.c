/* libcsegv [thread]: a SIGSEGV inside libc's strlen (code built without
 * frame pointers) three calls deep (in_libc_one -> in_libc_two ->
 * in_libc_three -> strlen). With "thread", a thread is made and joined
 * first. Before crashing it writes on stderr whether libunwind.so.8 is
 * mapped: the shim loads it lazily (at the first pthread_create), and the
 * test checks the stack both ways. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

void in_libc_three(const char *s);
void in_libc_two(const char *s);
void in_libc_one(const char *s);

static int unwind_mapped(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/libunwind.so"))
			found = 1;
	fclose(f);
	return found;
}

void in_libc_three(const char *s)
{
	printf("length %zu\n", strlen(s));
}

void in_libc_two(const char *s)
{
	in_libc_three(s);
	printf("not reached\n");
}

void in_libc_one(const char *s)
{
	in_libc_two(s);
	printf("not reached\n");
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	const char *volatile bad = NULL;

	if (argc > 1 && !strcmp(argv[1], "thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) == 0)
			pthread_join(t, NULL);
	}
	fprintf(stderr, "libunwind %s\n",
	        unwind_mapped() ? "mapped" : "not mapped");
	printf("before the crash\n");
	fflush(stdout);
	in_libc_one(bad);
	return 0;
}
