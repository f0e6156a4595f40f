/*
 * fakeocaml.c - looks like an OCaml 5 program to the shim: it defines
 * caml_runtime_events_init (in its .symtab, as a real OCaml executable
 * does). The shim must stand aside unless RTE_TRACE_OCAML is set.
 */
#include <stdio.h>

void caml_runtime_events_init(void);
void caml_runtime_events_init(void)
{
}

int main(void)
{
	caml_runtime_events_init();
	printf("ocaml-like\n");
	return 0;
}
