/*
 * addr.c - built without PIC and without PIE (mk/tests-alloc.mk), it
 * takes malloc's address in its code, so the executable holds a canonical
 * PLT entry for malloc (an undefined symbol with a value, as in Debian's
 * python3), then makes 1000 calls of 800 bytes through that address and
 * frees them. Prints "malloc 800 1000" (with write(): stdio would
 * allocate its buffer).
 */
#include <stdlib.h>
#include <unistd.h>

typedef void *(*malloc_fn)(size_t);

int main(void)
{
	malloc_fn volatile m = malloc; /* the address, taken in code */
	static void *p[1000];

	for (int i = 0; i < 1000; i++)
		p[i] = m(800);
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	static const char line[] = "malloc 800 1000\n";

	return write(1, line, sizeof(line) - 1) == (ssize_t)sizeof(line) - 1 ? 0 : 1;
}
