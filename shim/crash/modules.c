/*
 * modules.c - the loaded objects (executable, shared libraries, vdso) as
 * rte.module / rte.module.unload events, so that the addresses of a stack
 * can be symbolised after the process is gone (rte/crash.h).
 *
 * A table of the objects recorded in the current file is brought up to
 * date by rte_modules_sync(): at start, after dlopen and dlclose, and
 * before every event that carries a stack (so a fork child's file, or a
 * file that missed a dlopen while paused, gets what its stacks need).
 * Rings wrap: by the time a long-running program crashes, the module
 * events of its start are long overwritten, so a fatal crash writes them
 * all again on the crashing ring, just before rte.crash.
 * dl_iterate_phdr's load/unload counters make a sync with nothing new
 * cost one walk step.
 *
 * The loader's lock: dl_iterate_phdr takes it. A fork child can inherit
 * it held by a thread of the parent (one in dlopen, dlclose or its own
 * dl_iterate_phdr) that does not exist in the child, and glibc (2.36)
 * does not reset it there: any walk would wait forever. So the walk is
 * made only in the process that started tracing, or in a fork child of a
 * single-threaded parent (rte_modules_fork_child); elsewhere, and in every
 * child made without fork() (no atfork handler), the table recorded by
 * the last walk of the parent stands for the loaded objects: it keeps
 * each object's path and build id by address, read back with rte_bt_peek
 * (which cannot fault, even if the parent was unloading it at the fork).
 * Objects loaded by such a child are not recorded.
 *
 * The dlopen and dlclose wrappers that call rte_modules_sync() are
 * hooks/dl.c's.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "backtrace.h"
#include "crash/crash.h"
#include "forkvars.h"
#include "rte/crash.h"
#include "rte/rte.h"
#include "tracer.h"

#define MODS_MAX 1024
#define BUILD_ID_MAX 64u

struct mod {
	uint64_t bias, start, end;
	const char *name; /* the loader's copy of its path; NULL: g_exe */
	const char *bid;  /* its GNU build id, in the mapped object */
	uint32_t gen;  /* generation of the file it was recorded in, 0: not */
	uint8_t used, seen, bid_len;
};

static RTE_BIGVAR struct mod g_mods[MODS_MAX];
RTE_HOTPAGE(mods, &g_mods[0]);
/* 1 + the highest slot ever used (under g_lock): the loops stop there, so
 * a process with a few objects touches one page of the 48 KiB table, not
 * all twelve (a short process pays a page fault for each). */
static RTE_FORKVAR unsigned g_nmods;
static RTE_FORKVAR pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_id_load = -1, g_id_unload = -1;
static RTE_FORKVAR unsigned long long g_adds, g_subs; /* dl_iterate_phdr's counters */
static RTE_FORKVAR uint32_t g_synced_gen;
static char g_exe[PATH_MAX];
static RTE_FORKVAR pid_t g_loader_pid; /* atomic: where the loader's lock is sound */

/* Payload being encoded (under g_lock). */
static union {
	struct rte_module_rec r;
	char bytes[sizeof(struct rte_module_rec) + BUILD_ID_MAX + PATH_MAX];
} g_buf;

int rte_modules_enabled(void)
{
	/* Acquire: pairs with the release store in rte_modules_register(). */
	return __atomic_load_n(&g_id_load, __ATOMIC_ACQUIRE) >= 0;
}

void rte_modules_register(void)
{
	ssize_t n;

	g_id_unload = rte_tracer_register_own("rte.module.unload",
	                                   RTE_TYPE_CUSTOM);
	/* Relaxed: read by this process's threads after they see the ids. */
	__atomic_store_n(&g_loader_pid, getpid(), __ATOMIC_RELAXED);
	n = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
	g_exe[n > 0 ? n : 0] = '\0';
	/* Release: g_id_unload and g_exe are set; pairs with rte_modules_enabled(). */
	__atomic_store_n(&g_id_load,
	                 rte_tracer_register_own("rte.module", RTE_TYPE_CUSTOM),
	                 __ATOMIC_RELEASE);
}

/* 1 if dl_iterate_phdr cannot wait for a lock held by a thread that is
 * gone (see the top of this file). Async-signal-safe. */
static int loader_ok(void)
{
	/* Relaxed: a pid, written before any thread of this process runs
	 * our hooks, or by the single thread of a fork child. */
	return getpid() == __atomic_load_n(&g_loader_pid, __ATOMIC_RELAXED);
}

int rte_modules_loader_ok(void)
{
	return loader_ok();
}

RTE_FORKTEXT void rte_modules_fork_child(int parent_threaded)
{
	/* The fork may have caught another thread of the parent holding
	 * g_lock: that thread does not exist here. Re-made, not unlocked;
	 * whatever it was writing is written again by the next sync. No libc
	 * call (an atfork child handler: see sys.h). */
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	g_lock = fresh;
	g_synced_gen = 0;
	if (!parent_threaded)
		/* Relaxed: this is the only thread of the child. */
		__atomic_store_n(&g_loader_pid, (pid_t)rte_sys_getpid(),
		                 __ATOMIC_RELAXED);
}

/* The GNU build id in the object's PT_NOTE segments (*len bytes), or
 * NULL. */
static const char *build_id(const struct dl_phdr_info *info, unsigned *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name = (nh->n_namesz + 3) & ~3u;
			size_t desc = (nh->n_descsz + 3) & ~3u;
			const char *d = p + sizeof(*nh) + name;

			if (d + desc > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= BUILD_ID_MAX) {
				*len = nh->n_descsz;
				return d;
			}
			p = d + desc;
		}
	}
	*len = 0;
	return NULL;
}

static void extent(const struct dl_phdr_info *info, uint64_t *lo,
                   uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (a < *lo)
			*lo = a;
		if (a + ph->p_memsz > *hi)
			*hi = a + ph->p_memsz;
	}
	if (*lo > *hi)
		*lo = *hi = info->dlpi_addr;
}

static int write_load(const struct dl_phdr_info *info, uint64_t lo,
                      uint64_t hi, int force)
{
	struct rte_module_rec *r = &g_buf.r;
	const char *path = info->dlpi_name && *info->dlpi_name
	                           ? info->dlpi_name
	                           : g_exe;
	char *p = g_buf.bytes + sizeof(*r);
	size_t n = strnlen(path, PATH_MAX - 1);
	unsigned bl;
	const char *bid = build_id(info, &bl);

	memset(r, 0, sizeof(*r));
	r->version = RTE_MODULE_VERSION;
	r->build_id_len = (uint16_t)bl;
	if (bl)
		memcpy(p, bid, bl);
	r->bias = info->dlpi_addr;
	r->start = lo;
	r->end = hi;
	memcpy(p + r->build_id_len, path, n);
	return rte_crash_emit(g_id_load, g_buf.bytes,
	                      sizeof(*r) + r->build_id_len + n, force);
}

/* rte.module for an object of the table, from what the table recorded
 * (no walk): its path and build id are read with rte_bt_peek. */
static int write_recorded(const struct mod *m, int force)
{
	struct rte_module_rec *r = &g_buf.r;
	char *p = g_buf.bytes + sizeof(*r);
	size_t bl = 0, n;

	memset(r, 0, sizeof(*r));
	r->version = RTE_MODULE_VERSION;
	r->bias = m->bias;
	r->start = m->start;
	r->end = m->end;
	if (m->bid && m->bid_len &&
	    rte_bt_peek(p, m->bid, m->bid_len) == m->bid_len)
		bl = m->bid_len;
	r->build_id_len = (uint16_t)bl;
	if (m->name) {
		n = rte_bt_peek(p + bl, m->name, PATH_MAX - 1);
		n = strnlen(p + bl, n);
	} else {
		n = strnlen(g_exe, PATH_MAX - 1);
		memcpy(p + bl, g_exe, n);
	}
	return rte_crash_emit(g_id_load, g_buf.bytes, sizeof(*r) + bl + n,
	                      force);
}

static struct mod *find(uint64_t bias, uint64_t start)
{
	struct mod *spare = NULL;

	for (unsigned i = 0; i < g_nmods; i++) {
		struct mod *m = &g_mods[i];

		if (m->used && m->bias == bias && m->start == start)
			return m;
		if (!m->used && !spare)
			spare = m;
	}
	if (!spare && g_nmods < MODS_MAX)
		spare = &g_mods[g_nmods++];
	if (spare) {
		memset(spare, 0, sizeof(*spare));
		spare->used = 1;
		spare->bias = bias;
		spare->start = start;
	}
	return spare;
}

struct walk {
	uint32_t gen;
	int changed; /* 0: nothing new since the last sync, stop at once */
	int failed;  /* an event could not be written (paused, no ring) */
	int all;     /* write every object again (a fatal crash), forced */
};

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk *w = data;
	uint64_t lo, hi;
	struct mod *m;

	if (w->changed < 0) {
		/* First object: the counters say whether anything changed. */
		if (!w->all &&
		    size >= offsetof(struct dl_phdr_info, dlpi_subs) +
		                    sizeof(info->dlpi_subs) &&
		    info->dlpi_adds == g_adds && info->dlpi_subs == g_subs &&
		    w->gen == g_synced_gen) {
			w->changed = 0;
			return 1;
		}
		w->changed = 1;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
		                    sizeof(info->dlpi_subs)) {
			g_adds = info->dlpi_adds;
			g_subs = info->dlpi_subs;
		}
	}
	extent(info, &lo, &hi);
	m = find(info->dlpi_addr, lo);
	if (!m) {
		/* Table full: record it each time, never track it. */
		write_load(info, lo, hi, w->all);
		return 0;
	}
	m->seen = 1;
	m->end = hi;
	m->name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL;
	{
		unsigned bl;

		m->bid = build_id(info, &bl);
		m->bid_len = (uint8_t)bl;
	}
	if (w->all || m->gen != w->gen) {
		if (write_load(info, lo, hi, w->all) == 0)
			m->gen = w->gen;
		else
			w->failed = 1;
	}
	return 0;
}

/* Objects recorded in this file that are gone: rte.module.unload. */
static int sweep(uint32_t gen)
{
	int gone = 0;

	for (unsigned i = 0; i < g_nmods; i++) {
		struct mod *m = &g_mods[i];
		struct rte_module_rec r;

		if (!m->used || m->seen)
			continue;
		if (m->gen == gen) {
			memset(&r, 0, sizeof(r));
			r.version = RTE_MODULE_VERSION;
			r.bias = m->bias;
			r.start = m->start;
			rte_crash_emit(g_id_unload, &r, sizeof(r), 0);
		}
		m->used = 0;
		gone = 1;
	}
	return gone;
}

/* No walk (the loader's lock cannot be trusted): bring the file up to
 * date from the table, as the parent's last walk left it. Only tries
 * g_lock. */
static void sync_recorded(int all)
{
	uint32_t gen;

	if (pthread_mutex_trylock(&g_lock))
		return;
	gen = rte_tracer_gen();
	for (unsigned i = 0; i < g_nmods; i++) {
		struct mod *m = &g_mods[i];

		if (m->used && (all || m->gen != gen) &&
		    write_recorded(m, all) == 0)
			m->gen = gen;
	}
	pthread_mutex_unlock(&g_lock);
}

static void sync_modules(int from_signal, int all)
{
	struct walk w = {.changed = -1, .all = all};
	int saved = errno;

	if (!rte_modules_enabled())
		return;
	/* A fork child makes its file first: its generation is the one
	 * the events below belong to. Acquire: pairs with the tracer's release
	 * stores of the state. */
	if (rte_tracer_state() == ST_FORKED)
		rte_tracer_materialize();
	if (!loader_ok()) {
		sync_recorded(all);
		goto out;
	}
	if (from_signal ? pthread_mutex_trylock(&g_lock)
	                : pthread_mutex_lock(&g_lock))
		goto out;
	w.gen = rte_tracer_gen();
	for (unsigned i = 0; i < g_nmods; i++)
		g_mods[i].seen = 0;
	dl_iterate_phdr(visit, &w);
	if (w.changed) {
		if (sweep(w.gen) && !from_signal)
			rte_bt_flush();
		/* Anything not written is tried again by the next sync. */
		g_synced_gen = w.failed ? 0 : w.gen;
	}
	pthread_mutex_unlock(&g_lock);
out:
	errno = saved;
}

void rte_modules_sync(int from_signal)
{
	sync_modules(from_signal, 0);
}

void rte_modules_resend(void)
{
	sync_modules(1, 1);
}
