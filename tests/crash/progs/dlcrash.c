/*
 * dlcrash: crashes inside a library loaded with dlopen.
 *   dlcrash path DIR   dlopen("DIR/libcrashplug.so")
 *   dlcrash bare       dlopen("libcrashplug.so"), found through this
 *                      program's RUNPATH ($ORIGIN): only works if the
 *                      loader still sees this program as the caller
 *   dlcrash unload DIR dlopen, dlclose, then crash in main's own code
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static volatile int *volatile g_null;

void after_unload(void);

void after_unload(void)
{
	*g_null = 2;
}

int main(int argc, char **argv)
{
	char path[4096];
	void *h;
	void (*entry)(int);

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "bare"))
		snprintf(path, sizeof(path), "libcrashplug.so");
	else if (argc > 2)
		snprintf(path, sizeof(path), "%s/libcrashplug.so", argv[2]);
	else
		return 2;
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	if (!strcmp(argv[1], "unload")) {
		dlclose(h);
		after_unload();
		return 0;
	}
	*(void **)&entry = dlsym(h, "plugin_entry");
	if (!entry)
		return 1;
	entry(1);
	return 0;
}
