/*
 * metrics_files.c - the Prometheus exporter's files and processes, and
 * their polling (see metrics.h; metrics.c accounts for what is read).
 *
 * Each followed file has its own cursor, read ring after ring through
 * rte_cursor_peek_words() (a file is never read twice, and kept mapped;
 * the one walk over each block of messages is metrics.c's), and its own
 * rd_procs, so begin/end matching is procs.c's, identical to the summary
 * formats', and a file is dropped by freeing what is its own once it is
 * finished. Values are kept per label set (struct proc: exe, the --label
 * pairs, pid with --per-process) in series (metrics_series.c), which
 * outlive the files.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics_int.h"
#include "ocamlver.h"
#include "rte/crash.h"
#include "rte/proc.h"
#include "vec.h"

/* ---- files and label sets ------------------------------------------------ */

static const char *base_name(const char *path)
{
	return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

/* exe="NAME"[,pid="N"], then the --label pairs: a label set's labels. */
static char *labels_of(const struct rd_prom *p, const char *exe, long pid)
{
	struct rd_buf b = { 0 };

	rd_buf_str(&b, "exe=\"");
	rd_buf_label(&b, exe);
	rd_buf_str(&b, "\"");
	if (pid >= 0) {
		rd_buf_str(&b, ",pid=\"");
		rd_buf_i64(&b, pid);
		rd_buf_str(&b, "\"");
	}
	if (p->ulabels)
		rd_buf_str(&b, p->ulabels);
	rd_buf_mem(&b, "", 0);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* The executable of a process first seen: /proc/PID/exe's while serving
 * (NULL if it cannot be read; with --push the pid may be another
 * process's by now), until the file's rte.module record says (see
 * rd_prom_exe_from_module). */
static char *proc_exe(const struct rd_prom *p, long pid)
{
	char link[64], exe[4096] = "";
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	if (!p->o.exporter || pid <= 0 || (n = readlink(link, exe, sizeof exe - 1)) <= 0)
		return NULL;
	exe[n] = 0;
	return strdup(base_name(exe));
}

/* The first rte.module record of a process is its executable's (the shim
 * writes the executable first, with its /proc/self/exe path): its base
 * name is the file's exe label. A fork child's rte.proc names the parent
 * whose image it runs (parent_exe). */
void rd_prom_exe_from(struct file *f, const struct rte_event *ev)
{
	const uint8_t *b = ev->u.custom.bytes;
	size_t len = ev->u.custom.len, skip;
	struct rte_module_rec r;
	struct rte_proc_rec pr;
	char path[4096], *e;
	const char *argv;

	if (!strcmp(ev->name, "rte.proc")) {
		if (rte_proc_decode(b, len, &pr, &argv, &skip) == 0 &&
		    (pr.flags & RTE_PROC_FORK_CHILD) && pr.ppid > 0)
			f->fork_ppid = pr.ppid;
		return;
	}
	if (strcmp(ev->name, "rte.module"))
		return;
	f->exe_known = 1;
	if (len < sizeof r)
		return;
	memcpy(&r, b, sizeof r);
	skip = sizeof r + r.build_id_len;
	if (r.version != RTE_MODULE_VERSION || skip >= len || len - skip >= sizeof path)
		return;
	memcpy(path, b + skip, len - skip);
	path[len - skip] = 0;
	if (memchr(path, 0, len - skip) || !(e = strdup(base_name(path))))
		return;
	free(f->exe);
	f->exe = e;
}

static void proc_free(struct proc *P)
{
	if (!P)
		return;
	for (size_t i = 0; i < P->tabcap; i++)
		rd_prom_series_free(P->tab[i]);
	for (int k = 0; k < PF_N; k++)
		free(P->fam[k].v);
	free(P->tab);
	free(P->labels);
	free(P->exe);
	free(P);
}

/* The label set of (exe, pid), made if new; past max_sets, exe="other"
 * (said once). NULL if out of memory. */
static struct proc *set_of(struct rd_prom *p, const char *exe, long pid)
{
	struct proc *P;

	if (!p->o.per_process)
		pid = -1;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->np; i++)
			if (p->p[i]->pid == pid && !strcmp(p->p[i]->exe, exe))
				return p->p[i];
		if (p->np < p->o.max_sets || pass)
			break;
		if (!p->sets_warned)
			fprintf(stderr, "rte-read: more than %u label sets (executables%s): "
			        "the others are counted under exe=\"other\"\n",
			        p->o.max_sets, p->o.per_process ? " and pids" : "");
		p->sets_warned = 1;
		exe = "other";
		pid = -1;
	}
	if (RD_VEC_ROOM(p->p, p->pcap, p->np, 16) < 0 || !(P = calloc(1, sizeof *P)))
		return NULL;
	if (!(P->exe = strdup(exe)) || !(P->labels = labels_of(p, exe, pid))) {
		proc_free(P);
		return NULL;
	}
	P->nlabels = strlen(P->labels);
	P->pid = pid;
	P->created_ms = rd_prom_now_ms();
	p->p[p->np++] = P;
	return P;
}

/* The file's series pointers (its caches) forgotten: they were its
 * pending label set's. */
static void forget_series(struct file *f)
{
	memset(f->cache, 0, sizeof f->cache);
	memset(f->by_kind, 0, sizeof f->by_kind);
	memset(f->phase, 0, sizeof f->phase);
	memset(f->ctr, 0, sizeof f->ctr);
	memset(f->ctr_acc, 0, sizeof f->ctr_acc);
	f->pause = f->phase_time = NULL;
	for (size_t i = 0; i < f->nfu; i++)
		f->fu[i].span = f->fu[i].ival = f->fu[i].count = NULL;
}

/* A fork child runs its parent's image: the parent's exe, from its file
 * (followed, or freed lately). 1 if found, 0 if not, -1 if the parent's
 * file is followed but not read yet (its exe comes with its first read:
 * the child waits for that poll, no longer). */
static int parent_exe(struct rd_prom *p, struct file *f)
{
	const char *e = NULL;
	int wait = 0;

	for (size_t i = 0; i < p->nf && !e; i++) {
		if (p->f[i] == f || p->f[i]->pid != f->fork_ppid)
			continue;
		if (p->f[i]->exe_known && p->f[i]->exe)
			e = p->f[i]->exe;
		else if (!p->f[i]->read_any && !p->f[i]->done)
			wait = 1; /* not read yet: its rte.module comes first */
	}
	for (unsigned i = 0; i < RECENT && !e && !wait; i++)
		if (p->recent[i].pid == f->fork_ppid && p->recent[i].exe[0])
			e = p->recent[i].exe;
	if (!e)
		return wait ? -1 : 0;
	if (!(e = strdup(e)))
		return 0;
	free(f->exe);
	f->exe = (char *)e;
	f->exe_known = 1;
	return 1;
}

/* The file's pending label set merged into its own, now that its exe is
 * known (or will not be: `force`). */
static void resolve(struct rd_prom *p, struct file *f, int force)
{
	struct proc *P;

	if (f->resolved)
		return;
	if (!f->exe_known && f->fork_ppid && parent_exe(p, f) < 0 && !force)
		return; /* its parent's exe comes on a later poll */
	P = set_of(p, f->exe ? f->exe : "", f->pid);
	if (!P) {
		f->proc->oom = 1;
		return; /* tried again on the next poll */
	}
	rd_prom_merge(p, P, f->proc);
	proc_free(f->proc);
	forget_series(f);
	f->proc = P;
	f->resolved = 1;
	P->nlive++;
	P->started++;
}

/* f is finished: read to its end after its writer was gone. */
static void finish(struct rd_prom *p, struct file *f)
{
	f->done = 1;
	resolve(p, f, 1);
	if (f->resolved) {
		f->proc->nlive--;
		f->proc->ended++;
	}
}

static void file_free(struct rd_prom *p, struct file *f)
{
	if (p && f->exe_known && f->exe && f->pid > 0) {
		unsigned i = p->nrecent++ % RECENT;

		p->recent[i].pid = f->pid;
		snprintf(p->recent[i].exe, sizeof p->recent[i].exe, "%s", f->exe);
	}
	rte_cursor_close(f->c);
	free(f->rings);
	rd_procs_fini(&f->procs);
	free(f->fu);
	free(f->path);
	free(f->exe);
	if (!f->resolved)
		proc_free(f->proc);
	free(f);
}

rd_prom *rd_prom_new(const struct rd_prom_opts *o)
{
	rd_prom *p = calloc(1, sizeof *p);

	struct rd_buf b = { 0 };

	if (!p)
		return NULL;
	p->o = *o;
	p->o.labels = NULL; /* not kept: rendered into ulabels */
	if (!p->o.max_sets)
		p->o.max_sets = RD_PROM_MAX_SETS_DEFAULT;
	rd_prom_bucket_table(p->first_ge);
	for (int i = 0; i < o->nlabels; i++) {
		const char *eq = strchr(o->labels[i], '=');

		if (!eq)
			continue;
		rd_buf_str(&b, ",");
		rd_buf_mem(&b, o->labels[i], (size_t)(eq - o->labels[i]));
		rd_buf_str(&b, "=\"");
		rd_buf_label(&b, eq + 1);
		rd_buf_str(&b, "\"");
	}
	if (b.oom) {
		free(b.p);
		free(p);
		return NULL;
	}
	p->ulabels = b.p;
	return p;
}

void rd_prom_free(rd_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nf; i++)
		file_free(p, p->f[i]);
	for (size_t i = 0; i < p->np; i++)
		proc_free(p->p[i]);
	free(p->f);
	free(p->p);
	free(p->ulabels);
	free(p);
}

void rd_prom_error(rd_prom *p)
{
	p->errors++;
}

int rd_prom_follows(const rd_prom *p, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < p->nf; i++) {
		const struct stat *st = rte_cursor_stat(p->f[i]->c);

		if (st->st_dev == dev && st->st_ino == ino)
			return 1;
	}
	return 0;
}

int rd_prom_add_file(rd_prom *p, const char *path, rte_cursor *c)
{
	struct file *f = calloc(1, sizeof *f);
	long pid;

	if (f) {
		rd_procs_init(&f->procs);
		f->c = c;
	}
	if (!f || !(f->path = strdup(path)) ||
	    !(f->rings = calloc(rte_cursor_rings(c), sizeof *f->rings))) {
		if (!f)
			rte_cursor_close(c);
		goto fail;
	}
	pid = rd_pid_from_ring_start(path);
	if (pid < 0)
		pid = rd_pid_from_name(path);
	/* the names of its ids: the same choice as every other output's */
	rd_ocaml_name(c, f->path, pid);
	f->pid = pid;
	f->exe = proc_exe(p, pid);
	if (rd_procs_add_src(&f->procs, 0, f->path, pid, rte_cursor_rings(c)) < 0 ||
	    !(f->proc = calloc(1, sizeof *f->proc)))
		goto fail;
	f->proc->pending = 1;
	f->proc->pid = -1;
	if (RD_VEC_ROOM(p->f, p->fcap, p->nf, 16) < 0)
		goto fail;
	p->f[p->nf++] = f;
	p->files_total++;
	return 0;
fail:
	if (f)
		file_free(NULL, f);
	return -1;
}

/* ---- reading ----------------------------------------------------------- */

/* Per thread: only the thread reading a file may jump back to it. */
static _Thread_local sigjmp_buf bus_jmp;
static _Thread_local volatile sig_atomic_t bus_armed;
static _Thread_local sigset_t bus_mask;  /* the thread's, saved once */
static _Thread_local int bus_mask_saved;

static void on_sigbus(int sig)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jmp, 1);
	}
	signal(sig, SIG_DFL); /* not ours: the fault repeats and kills */
}

void rd_prom_catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	/* SIGBUS is not blocked in the handler, so the jump out of it leaves
	 * the signal mask as it was: read_guarded() need not save the mask
	 * (a system call per file read) to restore it. (A sanitizer's wrapper
	 * of the handler may block signals all the same: read_guarded()
	 * restores the mask it saved once after a jump.) */
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/* rd_prom_read_file() under the SIGBUS guard: -1 if the file was truncated under
 * us (it is then finished and counted as an error). */
static int read_guarded(struct rd_prom *p, struct file *f, size_t budget,
                        int all_rings)
{
	int r;

	if (!bus_mask_saved) /* once per thread: the mask does not change */
		bus_mask_saved = pthread_sigmask(SIG_SETMASK, NULL, &bus_mask) == 0;
	if (sigsetjmp(bus_jmp, 0)) { /* the mask is not saved with it */
		if (bus_mask_saved)
			pthread_sigmask(SIG_SETMASK, &bus_mask, NULL);
		f->failed = 1;
		p->errors++;
		finish(p, f);
		return -1;
	}
	bus_armed = 1;
	r = rd_prom_read_file(p, f, budget, all_rings);
	bus_armed = 0;
	return r;
}

void rd_prom_between(rd_prom *p, void (*between)(void *), void *ud)
{
	p->between = between;
	p->between_ud = ud;
}

int rd_prom_poll(rd_prom *p, size_t budget, int what, int all_done)
{
	int more = 0;

	for (size_t i = 0; i < p->nf; i++) {
		struct file *f = p->f[i];
		int alive, r;

		if (f->done)
			continue;
		if (i && p->between)
			p->between(p->between_ud);
		/* A writer found gone stays gone (rd_writer_alive): the polls
		 * that do not ask again read the file as finished too, so
		 * that a file with more than a budget to read has its other
		 * rings read and is finished as soon as it is read to its end
		 * (a capture, a finished run's file), not at the next ring
		 * probe and liveness check. */
		if ((what & RD_PROM_ALIVE) && !f->gone)
			f->gone = !rd_src_alive(&f->procs.src[0], f->c);
		alive = !f->gone;
		/* every ring when asked to, and at the end */
		r = read_guarded(p, f, budget,
		                 (what & RD_PROM_RINGS) || all_done || !alive);
		if (r < 0)
			continue;
		if (f->exe_known || f->read_any)
			resolve(p, f, 0);
		if (r)
			more = 1;
		else if (!alive || all_done)
			finish(p, f);
	}
	return more;
}

void rd_prom_collect(rd_prom *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nf; i++) {
		if (p->f[i]->done && p->f[i]->resolved)
			file_free(p, p->f[i]);
		else
			p->f[k++] = p->f[i];
	}
	p->nf = k;
}

void rd_prom_scrape_took(rd_prom *p, uint64_t ns)
{
	p->scrape_ns = ns;
}
