/*
 * ocaml.h - detection of a program that runs OCaml 5's own runtime events
 * (ocaml.c; a leaf).
 */
#ifndef RTE_SHIM_OCAML_H
#define RTE_SHIM_OCAML_H

#pragma GCC visibility push(hidden)

/* 1 if this process contains OCaml 5's runtime events (the symbol
 * caml_runtime_events_init in the main executable's symbol tables or in any
 * loaded object), else 0. Not signal-safe. */
int rte_ocaml_in_process(void);

#pragma GCC visibility pop

#endif
