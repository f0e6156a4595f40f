/*
 * execer.c - allocates and frees COUNT blocks of 24 bytes (bucket 3), then
 * execs the program named by its first argument: the counts must reach
 * the file before exec.
 */
#include <stdlib.h>
#include <unistd.h>

#define COUNT 3000

int main(int argc, char **argv)
{
	for (int i = 0; i < COUNT; i++)
		free(malloc(24));
	if (argc > 1)
		execv(argv[1], argv + 1);
	return 1;
}
