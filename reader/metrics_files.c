/*
 * metrics_files.c - the Prometheus exporter's files and processes, and
 * their polling (see metrics.h; metrics.c accounts for what is read).
 *
 * Each followed file has its own cursor, read ring after ring through
 * rte_cursor_peek_words() (a file is never read twice, and kept mapped;
 * the one walk over each block of messages is metrics.c's), and its own
 * rd_procs, so begin/end matching is procs.c's, identical to the summary
 * formats', and a file is dropped by freeing what is its own.
 * Values are kept per process (pid) in series (metrics_series.c).
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
#include "vec.h"

/* ---- files and processes ------------------------------------------------- */

/* pid="N",exe="NAME", NAME the base name of path. */
static char *labels_of(long pid, const char *exe)
{
	struct rd_buf b = { 0 };

	rd_buf_str(&b, "pid=\"");
	rd_buf_i64(&b, pid);
	rd_buf_str(&b, "\",exe=\"");
	rd_buf_label(&b, strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	rd_buf_str(&b, "\"");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* The labels of a process first seen: its exe is /proc/PID/exe's while
 * serving ("" if it cannot be read; with --push the pid may be another
 * process's by now), until the file's rte.module record says (see
 * rd_prom_exe_from_module). */
static char *proc_labels(struct rd_prom *p, long pid)
{
	char link[64], exe[4096] = "";
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	if (p->o.exporter && pid > 0 && (n = readlink(link, exe, sizeof exe - 1)) > 0)
		exe[n] = 0;
	return labels_of(pid, exe);
}

/* The first rte.module record of a process is its executable's (the shim
 * writes the executable first, with its /proc/self/exe path): its path
 * names the process in the exe label. */
void rd_prom_exe_from_module(struct proc *P, const struct rte_event *ev)
{
	const uint8_t *b = ev->u.custom.bytes;
	size_t len = ev->u.custom.len, skip;
	struct rte_module_rec r;
	char path[4096], *l;

	P->exe_known = 1;
	if (len < sizeof r)
		return;
	memcpy(&r, b, sizeof r);
	skip = sizeof r + r.build_id_len;
	if (r.version != RTE_MODULE_VERSION || skip >= len || len - skip >= sizeof path)
		return;
	memcpy(path, b + skip, len - skip);
	path[len - skip] = 0;
	if (memchr(path, 0, len - skip) || !(l = labels_of(P->pid, path)))
		return;
	free(P->labels);
	P->labels = l;
	P->nlabels = strlen(l);
}

static struct proc *proc_of(struct rd_prom *p, long pid)
{
	struct proc *P;

	/* A final process not scraped yet takes its new file (it exec'd): one
	 * label set must never be rendered twice. */
	for (size_t i = 0; i < p->np; i++)
		if (p->p[i]->pid == pid && !p->p[i]->delivered) {
			p->p[i]->final = 0;
			return p->p[i];
		}
	if (RD_VEC_ROOM(p->p, p->pcap, p->np, 16) < 0)
		return NULL;
	P = calloc(1, sizeof *P);
	if (!P || !(P->labels = proc_labels(p, pid))) {
		free(P);
		return NULL;
	}
	P->nlabels = strlen(P->labels);
	P->pid = pid;
	p->p[p->np++] = P;
	return P;
}

static void proc_free(struct proc *P)
{
	for (size_t i = 0; i < P->tabcap; i++)
		rd_prom_series_free(P->tab[i]);
	for (int k = 0; k < PF_N; k++)
		free(P->fam[k].v);
	free(P->tab);
	free(P->labels);
	free(P);
}

static void file_free(struct file *f)
{
	rte_cursor_close(f->c);
	free(f->rings);
	rd_procs_fini(&f->procs);
	free(f->fu);
	free(f->path);
	free(f);
}

rd_prom *rd_prom_new(const struct rd_prom_opts *o)
{
	rd_prom *p = calloc(1, sizeof *p);

	if (p) {
		p->o = *o;
		rd_prom_bucket_table(p->first_ge);
	}
	return p;
}

void rd_prom_free(rd_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nf; i++)
		file_free(p->f[i]);
	for (size_t i = 0; i < p->np; i++)
		proc_free(p->p[i]);
	free(p->f);
	free(p->p);
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
	if (rd_procs_add_src(&f->procs, 0, f->path, pid, rte_cursor_rings(c)) < 0 ||
	    !(f->proc = proc_of(p, pid)))
		goto fail;
	if (RD_VEC_ROOM(p->f, p->fcap, p->nf, 16) < 0)
		goto fail;
	p->f[p->nf++] = f;
	f->proc->nfiles++;
	p->files_total++;
	return 0;
fail:
	if (f)
		file_free(f);
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
		f->failed = f->done = 1;
		p->errors++;
		f->proc->ndone++;
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
		int alive = 1, r;

		if (f->done)
			continue;
		if (i && p->between)
			p->between(p->between_ud);
		if (what & RD_PROM_ALIVE)
			alive = rd_src_alive(&f->procs.src[0], f->c);
		/* every ring when asked to, and at the end */
		r = read_guarded(p, f, budget,
		                 (what & RD_PROM_RINGS) || all_done || !alive);
		if (r)
			more |= r > 0;
		else if (!alive || all_done) {
			f->done = 1;
			f->proc->ndone++;
		}
	}
	for (size_t i = 0; i < p->np; i++) {
		struct proc *P = p->p[i];

		if (!P->final && P->ndone == P->nfiles &&
		    (all_done || ((what & RD_PROM_ALIVE) && !rd_pid_alive(P->pid))))
			P->final = 1;
	}
	return more;
}

void rd_prom_collect(rd_prom *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nf; i++) {
		if (p->f[i]->proc->final && p->f[i]->proc->delivered)
			file_free(p->f[i]);
		else
			p->f[k++] = p->f[i];
	}
	p->nf = k;
	k = 0;
	for (size_t i = 0; i < p->np; i++) {
		if (p->p[i]->final && p->p[i]->delivered)
			proc_free(p->p[i]);
		else
			p->p[k++] = p->p[i];
	}
	p->np = k;
}

void rd_prom_scrape_took(rd_prom *p, uint64_t ns)
{
	p->scrape_ns = ns;
}
