/*
 * crashrep.c - rte.crash, rte.backtrace and rte.module* in rte-read (crashrep.h).
 *
 * Per file (one process image): a symboliser fed by its module events, and
 * per ring the last RD_CRASH_LAST events (a small copy each: kind, time,
 * name, value) and the stack that made the ring's thread (RTE_BACKTRACE=
 * thread). When an rte.crash arrives, its stack is symbolised at once
 * (the modules of that moment) and the last events of every ring of the
 * process are written into the crash's report.
 *
 * Nothing here writes a format: the formats (fmt/text.c, fmt/summary_sink.c,
 * fmt/chrome.c) read the crashes, their stacks and last events, and each
 * decoded event through the view of crashrep.h; only the JSON members
 * of a crash record and of a stack, which summary-json and chrome share,
 * are written here. The last events of the rings at a crash, kept by
 * remember() here, are snapshot and reported by crashrep_last.c.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashrep.h"
#include "crashrep_int.h"

enum own { OWN_NONE, OWN_CRASH, OWN_BT, OWN_MOD, OWN_UNMOD };

static enum own own_kind(const struct rte_event *ev)
{
	const char *n = ev->name;

	if (ev->kind != RTE_EV_USER_CUSTOM || !n || strncmp(n, "rte.", 4))
		return OWN_NONE;
	if (!strcmp(n + 4, "crash"))
		return OWN_CRASH;
	if (!strcmp(n + 4, "backtrace"))
		return OWN_BT;
	if (!strcmp(n + 4, "module"))
		return OWN_MOD;
	if (!strcmp(n + 4, "module.unload"))
		return OWN_UNMOD;
	return OWN_NONE;
}

int rd_crash_is_own(const struct rte_event *ev)
{
	return own_kind(ev) != OWN_NONE;
}

struct rd_crash *rd_crash_new(void)
{
	return calloc(1, sizeof(struct rd_crash));
}

static void free_strs(char **v, unsigned n)
{
	for (unsigned i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void rd_crash_free(struct rd_crash *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nfiles; i++) {
		struct pfile *f = &c->files[i];

		rd_sym_free(f->sym);
		for (unsigned r = 0; f->rings && r < f->nrings; r++)
			free_strs(f->rings[r].made_by, f->rings[r].nmade);
		free(f->rings);
	}
	for (unsigned i = 0; i < c->ncrashes; i++) {
		free_strs(c->crashes[i].frames, c->crashes[i].nframes);
		free_strs(c->crashes[i].made_by, c->crashes[i].nmade);
		free(c->crashes[i].snap);
	}
	free(c->files);
	free(c->crashes);
	free(c);
}

static struct pfile *file_of(struct rd_crash *c, const struct rd_item *it)
{
	struct pfile *f;

	if (c->last < c->nfiles && c->files[c->last].path == it->src->path)
		return &c->files[c->last];
	for (unsigned i = 0; i < c->nfiles; i++)
		if (c->files[i].path == it->src->path) {
			c->last = i;
			return &c->files[i];
		}
	f = realloc(c->files, (c->nfiles + 1) * sizeof(*f));
	if (!f)
		return NULL;
	c->files = f;
	f = &c->files[c->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = it->src->path;
	f->pid = it->src->pid;
	f->nrings = it->src->rings;
	f->sym = rd_sym_new();
	if (!f->sym)
		return NULL;
	c->nfiles++;
	return f;
}

/* ---- decoding ------------------------------------------------------------ */

struct stack {
	const uint64_t *pcs; /* unaligned in the payload: read with memcpy */
	unsigned n;
};

static uint64_t pc_at(const struct stack *s, unsigned i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)s->pcs + (size_t)i * 8, 8);
	return v;
}

static int decode_crash(const struct rte_event *ev, struct rte_crash_rec *r,
                        struct stack *s)
{
	size_t n = ev->u.custom.len;

	if (n < sizeof(*r))
		return -1;
	memcpy(r, ev->u.custom.bytes, sizeof(*r));
	if (r->version != RTE_CRASH_VERSION ||
	    (size_t)r->nframes * 8 > n - sizeof(*r))
		return -1;
	s->pcs = (const uint64_t *)(ev->u.custom.bytes + sizeof(*r));
	s->n = r->nframes;
	return 0;
}

static int decode_bt(const struct rte_event *ev, struct rte_backtrace_rec *r,
                     struct stack *s)
{
	size_t n = ev->u.custom.len;

	if (n < sizeof(*r))
		return -1;
	memcpy(r, ev->u.custom.bytes, sizeof(*r));
	if (r->version != RTE_BACKTRACE_VERSION ||
	    (size_t)r->nframes * 8 > n - sizeof(*r))
		return -1;
	s->pcs = (const uint64_t *)(ev->u.custom.bytes + sizeof(*r));
	s->n = r->nframes;
	return 0;
}

/* Returns 0 and fills m (path malloc'd, or NULL for an unload), or -1. */
static int decode_mod(const struct rte_event *ev, struct rd_module *m,
                      int with_path)
{
	struct rte_module_rec r;
	size_t n = ev->u.custom.len, plen;

	if (n < sizeof(r))
		return -1;
	memcpy(&r, ev->u.custom.bytes, sizeof(r));
	if (r.version != RTE_MODULE_VERSION ||
	    r.build_id_len > sizeof(m->build_id) ||
	    r.build_id_len > n - sizeof(r) || r.end < r.start)
		return -1;
	memset(m, 0, sizeof(*m));
	m->bias = r.bias;
	m->start = r.start;
	m->end = r.end;
	m->build_id_len = r.build_id_len;
	memcpy(m->build_id, ev->u.custom.bytes + sizeof(r), r.build_id_len);
	if (!with_path)
		return 0;
	plen = n - sizeof(r) - r.build_id_len;
	m->path = malloc(plen + 1);
	if (!m->path)
		return -1;
	memcpy(m->path, ev->u.custom.bytes + sizeof(r) + r.build_id_len, plen);
	m->path[plen] = '\0';
	if (strlen(m->path) != plen) { /* an embedded NUL: not a path */
		free(m->path);
		return -1;
	}
	return 0;
}

/* ---- names ----------------------------------------------------------------- */

const char *rd_crash_sig_name(int sig, char *buf, size_t len)
{
	const char *a = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

	if (a)
		snprintf(buf, len, "SIG%s", a);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

const char *rd_crash_code_name(int sig, int code)
{
	static const struct {
		int sig, code;
		const char *name;
	} k[] = {
		{SIGSEGV, SEGV_MAPERR, "SEGV_MAPERR: address not mapped"},
		{SIGSEGV, SEGV_ACCERR, "SEGV_ACCERR: access not permitted"},
		{SIGBUS, BUS_ADRALN, "BUS_ADRALN: misaligned address"},
		{SIGBUS, BUS_ADRERR, "BUS_ADRERR: no such physical address"},
		{SIGBUS, BUS_OBJERR, "BUS_OBJERR: object error"},
		{SIGILL, ILL_ILLOPC, "ILL_ILLOPC: illegal opcode"},
		{SIGILL, ILL_ILLOPN, "ILL_ILLOPN: illegal operand"},
		{SIGILL, ILL_PRVOPC, "ILL_PRVOPC: privileged opcode"},
		{SIGFPE, FPE_INTDIV, "FPE_INTDIV: integer divide by zero"},
		{SIGFPE, FPE_INTOVF, "FPE_INTOVF: integer overflow"},
		{SIGFPE, FPE_FLTDIV, "FPE_FLTDIV: floating-point divide by zero"},
		{SIGFPE, FPE_FLTINV, "FPE_FLTINV: invalid floating-point operation"},
		{0, SI_USER, "SI_USER: sent by kill"},
		{0, SI_TKILL, "SI_TKILL: sent by tkill/raise/abort"},
		{0, SI_QUEUE, "SI_QUEUE: sent by sigqueue"},
		{0, SI_KERNEL, "SI_KERNEL: sent by the kernel"},
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if ((k[i].sig == sig || (k[i].sig == 0 && (code <= 0 ||
		                                           code == SI_KERNEL))) &&
		    k[i].code == code)
			return k[i].name;
	return NULL;
}

char *rd_crash_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Symbolised frames, one malloc'd string each. */
static char **symbolise(struct rd_sym *sym, const struct stack *s,
                        int first_is_pc, unsigned *n)
{
	char **v = calloc(s->n ? s->n : 1, sizeof(*v)), buf[1024];
	struct rd_frame f;

	*n = 0;
	if (!v)
		return NULL;
	for (unsigned i = 0; i < s->n && i < FRAMES_MAX; i++) {
		uint64_t pc = pc_at(s, i);

		rd_sym_lookup(sym, pc, !(first_is_pc && i == 0), &f);
		rd_frame_format(&f, pc, buf, sizeof(buf));
		v[i] = rd_crash_xasprintf("#%-2u 0x%016" PRIx64 " %s", i, pc, buf);
		if (!v[i])
			break;
		*n = i + 1;
	}
	return v;
}

/* ---- the last events of each ring ------------------------------------------ */

/* Per event: a few stores and a short bounded copy, no formatting. */
static void remember(struct rring *rr, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct last *l = &rr->ev[rr->pos];
	const char *name = ev->name;
	char nbuf[48];
	unsigned i;

	l->ts = it->ts;
	l->kind = ev->kind;
	l->id = ev->id;
	l->v = 0;
	if (ev->kind == RTE_EV_COUNTER || ev->kind == RTE_EV_LIFECYCLE ||
	    ev->kind == RTE_EV_USER_INT || ev->kind == RTE_EV_LOST)
		l->v = ev->u.value; /* the same 64 bits in each of them */
	l->clen = 0;
	if (ev->kind == RTE_EV_USER_CUSTOM) {
		l->clen = (uint8_t)(ev->u.custom.len < CUSTOM_KEEP
		                            ? ev->u.custom.len
		                            : CUSTOM_KEEP);
		memcpy(l->custom, ev->u.custom.bytes, l->clen);
		l->v = (int64_t)ev->u.custom.len;
	} else if (ev->kind == RTE_EV_LOST) {
		name = "-";
	} else if (ev->kind == RTE_EV_ALLOC) {
		name = "alloc";
	}
	if (!name) /* an id this version has no name for */
		name = rte_event_name(ev, nbuf, sizeof(nbuf));
	for (i = 0; i < NAME_KEEP - 1 && name && name[i]; i++)
		l->name[i] = name[i];
	l->name[i] = '\0';
	rr->pos = (rr->pos + 1) % RD_CRASH_LAST;
	if (rr->n < RD_CRASH_LAST)
		rr->n++;
}

/* ---- update ---------------------------------------------------------------- */

static void on_crash(struct rd_crash *c, struct pfile *f,
                     const struct rd_item *it)
{
	struct rte_crash_rec r;
	struct stack s;
	struct crash *cr;
	struct rring *rr = &f->rings[it->ev->ring];

	if (decode_crash(it->ev, &r, &s) < 0)
		return;
	cr = realloc(c->crashes, (c->ncrashes + 1) * sizeof(*cr));
	if (!cr) {
		c->oom = 1;
		return;
	}
	c->crashes = cr;
	cr = &c->crashes[c->ncrashes++];
	memset(cr, 0, sizeof(*cr));
	cr->file = (unsigned)(f - c->files);
	cr->pid = f->pid;
	cr->path = f->path;
	cr->ring = it->ev->ring;
	snprintf(cr->thread, sizeof(cr->thread), "%s", it->th->name);
	cr->tid = r.tid;
	cr->ts = it->ts;
	cr->r = r;
	cr->frames = symbolise(f->sym, &s, 1, &cr->nframes);
	if (rr->nmade) {
		cr->made_by = calloc(rr->nmade, sizeof(char *));
		for (unsigned i = 0; cr->made_by && i < rr->nmade; i++)
			cr->made_by[cr->nmade++] = strdup(rr->made_by[i]);
		cr->made_ring = rr->made_ring;
		cr->made_tid = rr->made_tid;
	}
	rd_crash_snapshot(cr, f, it->src);
}

static void on_bt(struct pfile *f, const struct rd_item *it)
{
	struct rte_backtrace_rec r;
	struct stack s;
	struct rring *rr = &f->rings[it->ev->ring];

	if (decode_bt(it->ev, &r, &s) < 0 || r.kind != RTE_BT_THREAD)
		return;
	free_strs(rr->made_by, rr->nmade);
	rr->made_by = symbolise(f->sym, &s, 0, &rr->nmade);
	rr->made_ring = (int)r.data;
	rr->made_tid = r.tid;
}

void rd_crash_update(struct rd_crash *c, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct pfile *f;
	struct rring *rr;
	struct rd_module m;

	if (!c || !(f = file_of(c, it))) {
		if (c)
			c->oom = 1;
		return;
	}
	if (ev->ring >= f->nrings)
		return;
	switch (ev->kind == RTE_EV_USER_CUSTOM ? own_kind(ev) : OWN_NONE) {
	case OWN_MOD:
		if (decode_mod(ev, &m, 1) == 0) {
			if (rd_sym_add(f->sym, &m) < 0)
				c->oom = 1;
			free(m.path);
		}
		return; /* modules are not what the program did */
	case OWN_UNMOD:
		if (decode_mod(ev, &m, 0) == 0)
			rd_sym_remove(f->sym, m.bias, m.start);
		return;
	default:
		break;
	}
	if (!f->rings && !(f->rings = calloc(f->nrings, sizeof(*f->rings)))) {
		c->oom = 1;
		return;
	}
	rr = &f->rings[ev->ring];
	if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_DOMAIN_SPAWN) {
		/* a new thread on this ring */
		free_strs(rr->made_by, rr->nmade);
		rr->made_by = NULL;
		rr->nmade = 0;
	}
	switch (ev->kind == RTE_EV_USER_CUSTOM ? own_kind(ev) : OWN_NONE) {
	case OWN_CRASH:
		on_crash(c, f, it);
		break;
	case OWN_BT:
		on_bt(f, it);
		break;
	default:
		break;
	}
	remember(rr, it);
}

unsigned rd_crash_count(const struct rd_crash *c, int fatal_only)
{
	unsigned n = 0;

	for (unsigned i = 0; c && i < c->ncrashes; i++)
		if (!fatal_only || (c->crashes[i].r.flags & RTE_CRASH_FATAL))
			n++;
	return n;
}

/* ---- what the formats read -------------------------------------------------- */

void rd_crash_view(const struct rd_crash *c, unsigned n,
                   struct rd_crash_view *v)
{
	const struct crash *cr = &c->crashes[n];

	v->pid = cr->pid;
	v->path = cr->path;
	v->ring = cr->ring;
	v->thread = cr->thread;
	v->ts = cr->ts;
	v->r = &cr->r;
	v->frames = cr->frames;
	v->nframes = cr->nframes;
	v->made_by = cr->made_by;
	v->nmade = cr->nmade;
	v->made_ring = cr->made_ring;
	v->made_tid = cr->made_tid;
}

void rd_crash_decode(struct rd_crash *c, const struct rd_item *it, int stack,
                     struct rd_crash_event *e)
{
	const struct rte_event *ev = it->ev;
	struct pfile *f = c ? file_of(c, it) : NULL;
	struct stack s;

	memset(e, 0, sizeof(*e));
	switch (own_kind(ev)) {
	case OWN_CRASH:
		e->kind = RD_CRASH_CRASH;
		e->malformed = decode_crash(ev, &e->crash, &s) < 0;
		break;
	case OWN_BT:
		e->kind = RD_CRASH_BT;
		e->malformed = decode_bt(ev, &e->bt, &s) < 0;
		break;
	case OWN_MOD:
		e->kind = RD_CRASH_MOD;
		e->malformed = decode_mod(ev, &e->mod, 1) < 0;
		return;
	case OWN_UNMOD:
		e->kind = RD_CRASH_UNMOD;
		e->malformed = decode_mod(ev, &e->mod, 0) < 0;
		return;
	default:
		return;
	}
	if (f && stack && !e->malformed)
		e->frames = symbolise(f->sym, &s, e->kind == RD_CRASH_CRASH,
		                      &e->nframes);
}

void rd_crash_event_fini(struct rd_crash_event *e)
{
	free_strs(e->frames, e->nframes);
	e->frames = NULL;
	e->nframes = 0;
	if (e->kind == RD_CRASH_MOD && !e->malformed)
		free(e->mod.path);
	e->mod.path = NULL;
}

void rd_crash_json_fields(struct rd_out *o, const struct rte_crash_rec *r)
{
	char sb[32];
	const char *code = rd_crash_code_name(r->signo, r->code);

	rd_out_str(o, "\"signal\":");
	rd_out_json_str(o, rd_crash_sig_name(r->signo, sb, sizeof(sb)));
	rd_outf(o, ",\"signo\":%d,\"si_code\":%d", r->signo, r->code);
	if (code) {
		rd_out_str(o, ",\"si_code_name\":");
		rd_out_json_str(o, code);
	}
	rd_outf(o, ",\"addr\":\"0x%" PRIx64 "\",\"tid\":%d,\"fatal\":%s,"
	     "\"handled\":%s", r->addr, r->tid,
	     r->flags & RTE_CRASH_FATAL ? "true" : "false",
	     r->flags & RTE_CRASH_HANDLED ? "true" : "false");
}

void rd_crash_json_frames(struct rd_out *o, char *const *v, unsigned n)
{
	rd_out_ch(o, '[');
	for (unsigned i = 0; i < n; i++) {
		if (i)
			rd_out_ch(o, ',');
		rd_out_json_str(o, v[i]);
	}
	rd_out_ch(o, ']');
}
