/*
 * init.c - the one constructor (and destructor) of librte.so, which wires
 * the modules together.
 *
 * The layers of shim/: this table is the one place they are written
 * (doc/DESIGN.md, README.md and mk/shim.mk point here). A module is a
 * file with its header, or a folder (hooks/, prof/, crash/, alloc/); it
 * may use only what the modules of its own layer and of the layers below
 * define (symbols, as nm shows them in build/obj/shim/; and the headers it
 * includes), and no two modules use each other. tests/unit/layers.sh
 * reads the rows between the two lines of '=' and checks both.
 *
 * ==========================================================================
 * 10 init.c          wiring: constructor, destructor, observer lists
 *  9 api.c           the exported rte_* functions (rte/rte.h)
 *  8 hooks/          the interposed libc functions, one file an area:
 *                    threads.c process.c spawn.c start.c signals.c dl.c
 *                    masks.c identity.c execenv.c alloc.c (hooks/hooks.h)
 *  7 prof/           CPU profiler: profiler.c (timers, samples),
 *                    actions.c (the program's calls on the signal), perf.c
 *                    and reg.c (the perf_event clock, the timers registry;
 *                    prof/profiler.h), parse.c (its variables)
 *  6 crash/ alloc/   crash recorder: handler.c actions.c stacks.c
 *                    modules.c altstack.c (crash/crash.h; crash/recorder.h
 *                    inside it); allocation profiler: sample.c
 *                    (counts, samples), set.c (the live sampled
 *                    addresses), arena.c (the mode the malloc
 *                    wrappers switch on, the bootstrap arena), heap.c (the
 *                    process-wide live bytes, the peak, the heap series;
 *                    alloc/alloc.h)
 *  5 tracer/ tracer.h  the tracer (tracer.h; tracer/internal.h inside
 *                    it): state.c (the state machine), attach.c (threads
 *                    bound to rings, rte.* and lifecycle event writers),
 *                    fork.c (fork children), life.c (start, stop, exec)
 *  4 slots.c pool.c  ring slots (claim, release, reserve), name slots;
 *                    per-thread state pool, rte_self_p, rte_self_get
 *  3 file.c filedir.c  the ring file; the directory it is made in
 *  2 config.c ocaml.c sweep.c  environment; OCaml detection; the sweep
 *                    of what SIGKILLed processes left (under file.c)
 *  1 log.c real.c registry.c proc.c backtrace.c btscan.c alloc/state.h
 *                    RTE_LOG and warnings; the real libc functions; event
 *                    names; the rte.proc and rte.exit payloads; stack
 *                    capture with libunwind (used by crash/, prof/, alloc/)
 *                    and the stack scan of a crash (crash/); the
 *                    allocation profiler's per-thread state (data)
 *  0 fd.c sys.h forkvars.h  high descriptors; inline system calls for
 *                    atfork child handlers; RTE_FORKVAR and its kin
 * ==========================================================================
 *
 * Lower layers learn of upper ones only through the observer lists defined
 * here (rte_tracer_observers, rte_hook_observers: the only symbols of an
 * upper layer that a lower one may name; layers.sh knows them): to add a
 * module (an allocation profiler in hooks/alloc.c, a per-thread CPU
 * profiler), add its hook file or module to mk/shim.mk and its entries to
 * these lists; the tracer and the other hooks do not change.
 */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>

#include "forkvars.h"
#include "alloc/alloc.h"
#include "crash/crash.h"
#include "hooks/hooks.h"
#include "prof/profiler.h"
#include "proc.h"
#include "tracer.h"

/* ---- who hears what ---------------------------------------------------------- */

static const struct rte_tracer_observer g_crash_tracer = {
	.started = rte_crash_start, /* handlers, modules, RTE_BACKTRACE */
	.keep_file = rte_crash_keep_file,
};

/* After the crash recorder's: the profiler uses its libunwind and
 * module events. */
static const struct rte_tracer_observer g_prof_tracer = {
	.started = rte_prof_start,           /* RTE_PROFILE */
	.thread_end = rte_prof_thread_end,   /* its timer deleted */
	.attached = rte_prof_thread_arm,     /* threads older than tracing */
	.fork_child = rte_prof_fork_child,   /* the forking thread's timer */
	.final_stop = rte_prof_stop,         /* every timer deleted */
};

/* A fork child that profiles allocations makes its file at once, with
 * the module events its samples' stacks are symbolised with. */
RTE_FORKTEXT static void alloc_fork_child(void)
{
	if (rte_alloc_enabled()) {
		int saved = errno;

		rte_alloc_heap_fork_child();
		rte_tracer_settle();
		rte_modules_sync(1);
		errno = saved;
	}
}

/* The allocation profiler (RTE_ALLOC): after the crash recorder, whose
 * start loads libunwind. Each thread writes its counts at its end, and
 * the calling thread when tracing stops and before a fork. */
static const struct rte_tracer_observer g_alloc_tracer = {
	.started = rte_alloc_start,
	.thread_end = rte_alloc_flush_self,
	.stopping = rte_alloc_flush_self,
	.fork_child = alloc_fork_child,
};

const struct rte_tracer_observer *const rte_tracer_observers[] = {
	&g_crash_tracer,
	&g_prof_tracer,
	&g_alloc_tracer,
	NULL,
};

static const struct rte_hook_observer g_crash_hooks = {
	.thread_create = rte_crash_thread_create,
	.thread_create_failed = rte_crash_thread_create_failed,
	.thread_start = rte_crash_thread_start, /* alternate signal stack */
	.fork_parent = rte_crash_fork_parent,   /* RTE_BACKTRACE=fork */
	.fork_lock = rte_crash_fork_lock,       /* the program's actions */
	.fork_unlock_parent = rte_crash_fork_unlock_parent,
	.fork_unlock_child = rte_crash_fork_unlock_child,
};

static const struct rte_hook_observer g_alloc_hooks = {
	.fork_prepare = rte_alloc_flush_self, /* the child starts from zero */
};

const struct rte_hook_observer *const rte_hook_observers[] = {
	&g_crash_hooks,
	&g_alloc_hooks,
	NULL,
};

_Static_assert(sizeof(rte_hook_observers) / sizeof(rte_hook_observers[0]) <=
                       RTE_HOOK_OBSERVERS_MAX + 1,
               "raise RTE_HOOK_OBSERVERS_MAX");

/* ---- load and unload -------------------------------------------------------- */

/*
 * Our own writable pages, mapped in at once when tracing starts at load.
 * A traced start touches a dozen pages of librte.so's .data and .bss (the
 * tables of the tracer, slots, pool, crash recorder), each first touch a
 * page fault; one MADV_POPULATE_WRITE maps them all for less (twice less
 * on the VMs measured, and a process started under rte-run pays it at
 * every exec). The range: from the end of the read-only-after-relocation
 * part of our RW segment to the end of .bss, found with rte_bss_end: GNU
 * ld places common symbols after every .bss input section, and the large
 * tables (RTE_BIGVAR, .lbss) come after that; of those, the pages named
 * with RTE_HOTPAGE. Best effort.
 */
char rte_bss_end __attribute__((common));
/* The RTE_HOTPAGE pointers (forkvars.h), bounds made by ld. */
extern const void *const __start_rte_hot[], *const __stop_rte_hot[];

static int own_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&rte_bss_end, lo = 0, relro_end = 0;
	int found = 0;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) &&
		    me >= start && me < start + ph->p_memsz) {
			lo = start;
			found = 1;
		} else if (ph->p_type == PT_GNU_RELRO) {
			relro_end = start + ph->p_memsz;
		}
	}
	if (!found)
		return 0;
	if (relro_end > lo)
		lo = relro_end;
	lo = (lo + 4095) & ~(uintptr_t)4095;
#ifdef MADV_POPULATE_WRITE
	if (me + 1 > lo)
		madvise((void *)lo, me + 1 - lo, MADV_POPULATE_WRITE);
	for (const void *const *h = __start_rte_hot; h < __stop_rte_hot; h++)
		madvise((void *)((uintptr_t)*h & ~(uintptr_t)4095), 4096,
		        MADV_POPULATE_WRITE);
#endif
	return 1;
}

/* glibc passes (argc, argv, envp) to every ELF constructor. */
__attribute__((constructor)) static void rte_init(int argc, char **argv)
{
	int saved = errno;
	sigset_t old;

	rte_proc_load(argc, argv);

	if (rte_config_start_at_load())
		dl_iterate_phdr(own_segment, NULL);
	rte_log_load(); /* first: the fd 2 of the start */
	rte_real_resolve();
	rte_alloc_init(); /* hooks/alloc.c: the real allocator, RTE_ALLOC */
	rte_tracer_load();
	if (!rte_hooks_interposed())
		rte_tracer_not_preloaded(); /* dlopen: see tracer.h */
	rte_hooks_process_init();
	if (rte_config_start_at_load()) {
		rte_lock(&old);
		rte_tracer_start_locked();
		rte_unlock(&old);
		/* prof/ armed this thread under the lock (every signal
		 * blocked): its timer runs if the program's mask lets its
		 * signal in. */
		rte_prof_thread_check();
	}
	errno = saved;
}

/* Runs from exit() after the program's atexit handlers (ld.so finalises a
 * preloaded library last), including the exit(0) glibc makes when the last
 * thread calls pthread_exit. */
__attribute__((destructor)) static void rte_fini(void)
{
	int saved = errno;

	rte_tracer_stop();
	errno = saved;
}
