/*
 * fakeocamllib.c - a program whose OCaml-5-like runtime is a shared
 * library (libfakecamlrt.so): the symbol caml_runtime_events_init is in
 * no table of the executable, only in a loaded object's.
 */
#include <stdio.h>

void caml_runtime_events_init(void);

int main(void)
{
	caml_runtime_events_init();
	printf("ocaml-like\n");
	return 0;
}
