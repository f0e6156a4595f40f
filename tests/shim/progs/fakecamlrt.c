/*
 * fakecamlrt.c - libfakecamlrt.so, a stand-in for OCaml 5's shared runtime
 * (libasmrun_shared.so): it defines caml_runtime_events_init in its dynamic
 * symbol table. fakeocaml-lib links it; the shim must stand aside.
 */
void caml_runtime_events_init(void);
void caml_runtime_events_init(void)
{
}
