/*
 * symbolize.c - addresses to function, offset, file and line with libdwfl
 * (see symbolize.h). One Dwfl per process, rebuilt from the recorded
 * modules when they change; each module's file is reported with
 * dwfl_report_elf at its recorded load bias, and libdwfl finds separate
 * debug information the standard way (.gnu_debuglink, build-id paths under
 * /usr/lib/debug).
 *
 * libdw is loaded (dlopen) when the first stack is symbolised, not at
 * start-up: most runs of rte-read never need it, and loading it with
 * libelf, libz, liblzma and libbz2 cost every run a third of a
 * millisecond. Without it, frames are module+offset.
 *
 * Names are demangled (C++ Itanium ABI, Rust legacy and v0) with
 * libiberty's cplus_demangle, the demangler of binutils (c++filt, nm -C,
 * addr2line -C), linked statically from libiberty-dev: each symbol once,
 * kept in a table of the symboliser until rd_sym_free, so that every
 * format (summary, folded, flame graph, pprof, crash stacks) prints the
 * same name. A name that does not demangle is printed as it is.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "symbolize.h"
#include "vec.h"

struct mod {
	struct rd_module m;
	Dwfl_Module *dw; /* NULL: file missing or not an ELF we can read */
	int mismatch;
};

/* A demangled name: the table is open-addressed on the mangled text. */
struct dname {
	char *mangled, *name; /* name: NULL if it does not demangle */
};

struct rd_sym {
	struct mod *mods;
	size_t n, cap;
	struct dname *dn;   /* demangled names, a power of two of them */
	size_t ndn, capdn;
	Dwfl *dwfl;
	int dirty; /* the module set changed since dwfl was built */
};

static char *g_debuginfo_path;

/* The libdw functions used here, from dlopen; ok once all were found. */
static struct {
	int tried, ok;
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_report_elf) *report_elf;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_module_build_id) *module_build_id;
	__typeof__(dwfl_module_addrinfo) *module_addrinfo;
	__typeof__(dwfl_module_getsrc) *module_getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	/* inline records (rd_sym_inlines); inl: all of them were found */
	int inl;
	__typeof__(dwfl_module_addrdie) *module_addrdie;
	__typeof__(dwarf_getscopes) *getscopes;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_attr_integrate) *attr_integrate;
	__typeof__(dwarf_formstring) *formstring;
	__typeof__(dwarf_formudata) *formudata;
	__typeof__(dwarf_getsrcfiles) *getsrcfiles; /* call files: optional */
	__typeof__(dwarf_filesrc) *filesrc;
	Dwfl_Callbacks cb;
} dw;

/* Store dlsym(h, name) in the function pointer *fp; 0 if not found. */
static int sym(void *h, const char *name, void *fp)
{
	void *p = dlsym(h, name);

	memcpy(fp, &p, sizeof p); /* POSIX: a data pointer holds a function's */
	return p != NULL;
}

/* Load libdw once. Returns 1 if it can be used. */
static int dw_load(void)
{
	void *h;

	if (dw.tried)
		return dw.ok;
	dw.tried = 1;
	h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	dw.ok = sym(h, "dwfl_begin", &dw.begin) && sym(h, "dwfl_end", &dw.end) &&
	        sym(h, "dwfl_report_elf", &dw.report_elf) &&
	        sym(h, "dwfl_report_end", &dw.report_end) &&
	        sym(h, "dwfl_module_build_id", &dw.module_build_id) &&
	        sym(h, "dwfl_module_addrinfo", &dw.module_addrinfo) &&
	        sym(h, "dwfl_module_getsrc", &dw.module_getsrc) &&
	        sym(h, "dwfl_lineinfo", &dw.lineinfo) &&
	        sym(h, "dwfl_build_id_find_elf", &dw.cb.find_elf) &&
	        sym(h, "dwfl_standard_find_debuginfo", &dw.cb.find_debuginfo) &&
	        sym(h, "dwfl_offline_section_address", &dw.cb.section_address);
	dw.inl = sym(h, "dwfl_module_addrdie", &dw.module_addrdie) &&
	         sym(h, "dwarf_getscopes", &dw.getscopes) &&
	         sym(h, "dwarf_tag", &dw.tag) &&
	         sym(h, "dwarf_attr_integrate", &dw.attr_integrate) &&
	         sym(h, "dwarf_formstring", &dw.formstring) &&
	         sym(h, "dwarf_formudata", &dw.formudata);
	if (!sym(h, "dwarf_getsrcfiles", &dw.getsrcfiles) ||
	    !sym(h, "dwarf_filesrc", &dw.filesrc))
		dw.getsrcfiles = NULL;
	dw.cb.debuginfo_path = &g_debuginfo_path;
	return dw.ok; /* h stays loaded: its functions are in use */
}

struct rd_sym *rd_sym_new(void)
{
	return calloc(1, sizeof(struct rd_sym));
}

void rd_sym_free(struct rd_sym *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dw.end(s->dwfl);
	for (size_t i = 0; i < s->n; i++)
		free(s->mods[i].m.path);
	free(s->mods);
	for (size_t i = 0; i < s->capdn; i++) {
		free(s->dn[i].mangled);
		free(s->dn[i].name);
	}
	free(s->dn);
	free(s);
}

static size_t name_hash(const char *p)
{
	size_t h = 14695981039346656037u;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 1099511628211u;
	return h;
}

/* Double the table. Returns 0, or -1 (out of memory: left as it was). */
static int dn_grow(struct rd_sym *s)
{
	size_t cap = s->capdn ? s->capdn * 2 : 256;
	struct dname *n = calloc(cap, sizeof *n);

	if (!n)
		return -1;
	for (size_t i = 0; i < s->capdn; i++) {
		size_t j;

		if (!s->dn[i].mangled)
			continue;
		for (j = name_hash(s->dn[i].mangled) & (cap - 1); n[j].mangled;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = s->dn[i];
	}
	free(s->dn);
	s->dn = n;
	s->capdn = cap;
	return 0;
}

/* The demangled form of a symbol name (owned by s), or name itself. Only
 * names of the mangling schemes are tried: _Z (C++, Rust legacy), _R
 * (Rust v0). */
static const char *demangle(struct rd_sym *s, const char *name)
{
	size_t j;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	if ((s->ndn + 1) * 2 > s->capdn && dn_grow(s) < 0)
		return name;
	for (j = name_hash(name) & (s->capdn - 1); s->dn[j].mangled;
	     j = (j + 1) & (s->capdn - 1))
		if (!strcmp(s->dn[j].mangled, name))
			return s->dn[j].name ? s->dn[j].name : name;
	s->dn[j].mangled = strdup(name);
	if (!s->dn[j].mangled)
		return name;
	s->dn[j].name = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
	                                             DMGL_AUTO);
	s->ndn++;
	return s->dn[j].name ? s->dn[j].name : name;
}

int rd_sym_add(struct rd_sym *s, const struct rd_module *m)
{
	struct mod *d;

	rd_sym_remove(s, m->bias, m->start);
	if (RD_VEC_ROOM(s->mods, s->cap, s->n, 16) < 0)
		return -1;
	d = &s->mods[s->n];
	memset(d, 0, sizeof(*d));
	d->m = *m;
	d->m.path = strdup(m->path ? m->path : "");
	if (!d->m.path)
		return -1;
	s->n++;
	s->dirty = 1;
	return 0;
}

void rd_sym_remove(struct rd_sym *s, uint64_t bias, uint64_t start)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->mods[i].m.bias != bias || s->mods[i].m.start != start)
			continue;
		free(s->mods[i].m.path);
		s->mods[i] = s->mods[--s->n];
		s->dirty = 1;
		return;
	}
}

/* Open a module's file for libdwfl: regular files only, never blocking
 * (a FIFO named by a hostile ring file must not hang the reader). */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (!path[0] || path[0] != '/')
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void report(struct rd_sym *s, struct mod *d)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int fd = open_regular(d->m.path), n;

	d->dw = NULL;
	d->mismatch = 0;
	if (fd < 0)
		return;
	/* The bias is where p_vaddr 0 lands: add_p_vaddr = true. */
	d->dw = dw.report_elf(s->dwfl, d->m.path, d->m.path, fd, d->m.bias,
	                        true);
	if (!d->dw) {
		close(fd);
		return;
	}
	n = dw.module_build_id(d->dw, &bits, &vaddr);
	if (d->m.build_id_len &&
	    (n != (int)d->m.build_id_len ||
	     memcmp(bits, d->m.build_id, d->m.build_id_len)))
		d->mismatch = 1;
}

static void rebuild(struct rd_sym *s)
{
	if (s->dwfl)
		dw.end(s->dwfl);
	s->dirty = 0;
	s->dwfl = dw_load() ? dw.begin(&dw.cb) : NULL;
	for (size_t i = 0; i < s->n; i++) {
		s->mods[i].dw = NULL;
		if (s->dwfl)
			report(s, &s->mods[i]);
	}
	if (s->dwfl)
		dw.report_end(s->dwfl, NULL, NULL);
}

static struct mod *holder(struct rd_sym *s, uint64_t pc)
{
	for (size_t i = 0; i < s->n; i++)
		if (pc >= s->mods[i].m.start && pc < s->mods[i].m.end)
			return &s->mods[i];
	return NULL;
}

void rd_sym_lookup(struct rd_sym *s, uint64_t pc, int ret, struct rd_frame *f)
{
	uint64_t at = ret && pc ? pc - 1 : pc;
	struct mod *d;
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *line;
	const char *name;
	int ln = 0;

	memset(f, 0, sizeof(*f));
	if (s->dirty)
		rebuild(s);
	d = holder(s, at);
	if (!d)
		return;
	f->module = d->m.path;
	f->mod_off = pc - d->m.bias;
	f->mismatch = d->mismatch;
	if (!d->dw || d->mismatch)
		return;
	name = dw.module_addrinfo(d->dw, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		f->func = demangle(s, name);
		f->func_off = off + (pc - at); /* the offset of pc itself */
	}
	line = dw.module_getsrc(d->dw, at);
	if (line) {
		f->file = dw.lineinfo(line, NULL, &ln, NULL, NULL, NULL);
		f->line = ln;
	}
}

/* An inlined subroutine's name: its linkage name demangled, else its
 * name (through DW_AT_abstract_origin); NULL if it has neither. */
static const char *inline_name(struct rd_sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	if (dw.attr_integrate(die, DW_AT_linkage_name, &a) &&
	    (n = dw.formstring(&a)))
		return demangle(s, n);
	if (dw.attr_integrate(die, DW_AT_name, &a) && (n = dw.formstring(&a)))
		return n;
	return NULL;
}

unsigned rd_sym_inlines(struct rd_sym *s, uint64_t pc, int ret,
                        const char **names, int *lines, const char **files,
                        unsigned max)
{
	uint64_t at = ret && pc ? pc - 1 : pc;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Files *srcs = NULL;
	Dwarf_Addr bias;
	size_t nsrcs = 0;
	unsigned k = 0;
	struct mod *d;
	int n;

	if (s->dirty)
		rebuild(s);
	if (!dw.inl || !(d = holder(s, at)) || !d->dw || d->mismatch ||
	    !(cu = dw.module_addrdie(d->dw, at, &bias)))
		return 0;
	/* The scopes that hold the address, innermost first, up to the
	 * function they were inlined into (a DW_TAG_subprogram). */
	n = dw.getscopes(cu, at - bias, &scopes);
	if (dw.getsrcfiles && dw.getsrcfiles(cu, &srcs, &nsrcs) != 0)
		srcs = NULL;
	for (int i = 0; i < n && k < max; i++) {
		int tag = dw.tag(&scopes[i]);
		Dwarf_Attribute a;
		Dwarf_Word w = 0;
		const char *nm;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine ||
		    !(nm = inline_name(s, &scopes[i])))
			continue;
		lines[k] = dw.attr_integrate(&scopes[i], DW_AT_call_line, &a) &&
		                   dw.formudata(&a, &w) == 0
		           ? (int)w : 0;
		w = 0;
		files[k] = srcs && dw.attr_integrate(&scopes[i], DW_AT_call_file, &a) &&
		                   dw.formudata(&a, &w) == 0 && w < nsrcs
		           ? dw.filesrc(srcs, w, NULL, NULL) : NULL;
		names[k++] = nm;
	}
	free(scopes);
	return k;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

size_t rd_frame_format(const struct rd_frame *f, uint64_t pc, char *buf,
                       size_t len)
{
	int n;

	if (!f->module)
		n = snprintf(buf, len, "0x%" PRIx64 " (no module)", pc);
	else if (!f->func)
		n = snprintf(buf, len, "%s+0x%" PRIx64 "%s", base_name(f->module),
		             f->mod_off,
		             f->mismatch ? " (build id differs from the "
		                           "recorded one)" : "");
	else if (f->file)
		n = snprintf(buf, len, "%s+0x%" PRIx64 " (%s:%d) [%s]", f->func,
		             f->func_off, f->file, f->line, base_name(f->module));
	else
		n = snprintf(buf, len, "%s+0x%" PRIx64 " [%s]", f->func,
		             f->func_off, base_name(f->module));
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
}
