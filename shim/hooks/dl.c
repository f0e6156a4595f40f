/*
 * hooks/dl.c - dlopen and dlclose: the loaded objects change, so the
 * crash recorder's module events are brought up to date (crash/modules.c).
 *
 * glibc resolves a bare name with the RUNPATH of the object that called
 * dlopen (found from the return address) and expands $ORIGIN relative to
 * it, so a wrapper that calls the real dlopen would change what gets
 * loaded. The wrapper therefore calls it normally only when the caller
 * cannot matter (NULL, a path without '$', or a caller without
 * RPATH/RUNPATH), and otherwise jumps to it as a tail call, leaving the
 * caller's return address in place; the module is then recorded at the
 * next sync.
 *
 * librte.so's own dlopen (libunwind, backtrace.c) calls the real one from
 * real.h, never this wrapper.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "crash/crash.h"
#include "tracer.h"

/* 1 if the object containing `addr` has DT_RPATH or DT_RUNPATH. */
static int caller_has_paths(const void *addr)
{
	struct link_map *lm = NULL;
	Dl_info info;

	if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !lm->l_ld)
		return 1; /* unknown: assume it matters */
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return 1;
	return 0;
}

static int caller_matters(const char *file, const void *ret)
{
	if (!file)
		return 0;
	if (strchr(file, '$'))
		return 1;
	return !strchr(file, '/') && caller_has_paths(ret);
}

RTE_EXPORT void *dlopen(const char *file, int mode)
{
	void *(*real)(const char *, int);
	void *h;

	rte_real_resolve();
	if (!(real = rte_real.dlopen))
		return NULL;
	/* Relaxed: only decides whether to record. */
	if (!rte_modules_enabled() || !__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) ||
	    caller_matters(file, __builtin_return_address(0)) ||
	    rte_tracer_vforked())
		return real(file, mode); /* tail call: see above */
	h = real(file, mode);
	rte_modules_sync(0);
	return h;
}

RTE_EXPORT int dlclose(void *handle)
{
	int r;

	rte_real_resolve();
	if (!rte_real.dlclose)
		return -1;
	r = rte_real.dlclose(handle);
	/* Relaxed: only decides whether to record. */
	if (rte_modules_enabled() && __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) &&
	    !rte_tracer_vforked())
		rte_modules_sync(0);
	return r;
}
