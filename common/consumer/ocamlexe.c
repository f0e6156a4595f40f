/*
 * ocamlexe.c - which OCaml runtime an executable (or a shared runtime
 * library) embeds, read from its ELF file (see rte/ocaml.h).
 *
 * What an OCaml 5 program file holds that names its version, from the
 * source of ocaml/ocaml (tags 5.0.0 to 5.3.0-alpha1, trunk fd41e1ab55):
 *
 *   bytecode runtime   runtime/startup_byt.c prints "The OCaml runtime,
 *                      version " OCAML_VERSION_STRING for `ocamlrun
 *                      -version`: one C string literal in .rodata of
 *                      ocamlrun, of -custom and -output-complete-exe
 *                      programs, and of libcamlrun_shared.so.
 *   native programs    the native runtime holds no version string.
 *                      Sys.ocaml_version (stdlib/sys.ml.in: "@VERSION@",
 *                      e.g. "5.2.0", "5.4.0+dev0-2024-08-25") is a string
 *                      constant of module Stdlib__Sys, which ocamlopt lays
 *                      out in .data (asmcomp/cmm_helpers.ml, emit_block and
 *                      emit_string_constant): a header word, black, tag
 *                      String_tag (252), wosize (len + 8) / 8,
 *
 *                        | hdr: wosize<<10 | 3<<8 | 252 | bytes | 0.. | pad |
 *                                                        pad = 7 - len % 8
 *
 *                      between the global symbols of the unit's data_begin
 *                      and data_end (asmcomp/amd64/emit.mlp) when the
 *                      module is linked at all: camlStdlib__Sys__data_begin
 *                      in 5.0, camlStdlib__Sys.data_begin from 5.1 (the
 *                      separator of middle_end/compilenv.ml became '.';
 *                      '$' only for MSVC, no ELF).
 *   runtime symbols    functions of runtime files every program links
 *                      (runtime_events.c, domain.c) that appeared in one
 *                      release: caml_runtime_events_init (5.0),
 *                      caml_runtime_events_user_register (5.1),
 *                      caml_ml_runtime_events_are_active (5.2),
 *                      caml_ml_domain_index (5.3), and
 *                      caml_ml_runtime_events_path (trunk after the 5.3
 *                      branch: 5.4). Defined symbols only (an executable
 *                      that links libasmrun_shared.so merely imports them).
 *
 * The file is hostile input like a ring file: 64-bit little-endian ELF
 * only, every offset and size checked against the file's size before it is
 * read, bounded reads (MAX_READ bytes of a section, MAX_SCAN in all), no
 * mapping (a file truncated under us cannot fault the reader).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte/ocaml.h"

#define MAX_SECTIONS 4096
#define MAX_READ (64u << 20)  /* bytes of one section read */
#define MAX_SCAN (256u << 20) /* bytes read in all */
#define SYS_RANGE (1u << 20)  /* Stdlib__Sys's data is a few KiB */
#define STRING_TAG 252u
#define BLACK 3u

static const char RUNTIME_PREFIX[] = "The OCaml runtime, version ";
static const char SYS_UNIT[] = "camlStdlib__Sys"; /* Stdlib.Sys's symbols */

struct elf {
	int fd;
	uint64_t size;
	size_t budget; /* bytes that may still be read */
	Elf64_Shdr *sh;
	unsigned nsh;
	char *shstr;
	size_t shstr_len;
};

/* Read len bytes at off: 0, or -1 (outside the file, a short read, or
 * over the budget). */
static int read_at(struct elf *e, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > e->size || len > e->size - off || len > e->budget)
		return -1;
	e->budget -= len;
	while (done < len) {
		ssize_t n = pread(e->fd, (char *)buf + done, len - done,
		                  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* A malloc'd copy of len bytes at off (one more, zero, at the end), or
 * NULL. */
static char *load(struct elf *e, uint64_t off, uint64_t len)
{
	char *p;

	if (len > MAX_READ || !(p = malloc((size_t)len + 1)))
		return NULL;
	if (read_at(e, off, p, (size_t)len) < 0) {
		free(p);
		return NULL;
	}
	p[len] = 0;
	return p;
}

static char *load_section(struct elf *e, const Elf64_Shdr *s)
{
	return s->sh_type == SHT_NOBITS ? NULL : load(e, s->sh_offset, s->sh_size);
}

/* The header and section table of e->fd: 0, or -1 if it is not a 64-bit
 * little-endian ELF file with a sane section table. */
static int elf_open(struct elf *e)
{
	Elf64_Ehdr h;
	const Elf64_Shdr *ss;

	if (read_at(e, 0, &h, sizeof h) < 0 || memcmp(h.e_ident, ELFMAG, SELFMAG) ||
	    h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB ||
	    h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0 ||
	    h.e_shnum > MAX_SECTIONS || h.e_shstrndx >= h.e_shnum)
		return -1;
	e->nsh = h.e_shnum;
	e->sh = (Elf64_Shdr *)load(e, h.e_shoff, (uint64_t)e->nsh * sizeof *e->sh);
	if (!e->sh)
		return -1;
	ss = &e->sh[h.e_shstrndx];
	if (ss->sh_type != SHT_STRTAB || !(e->shstr = load_section(e, ss)))
		return -1;
	e->shstr_len = ss->sh_size;
	return 0;
}

/* 1 if s[0..len) is a release string: "5.2.0", "5.3.0~alpha1",
 * "5.4.0+dev0-2024-08-25" (digits.digits.digits, then + or ~ and a tail of
 * letters, digits and ._-+~). */
static int version_like(const char *s, size_t len)
{
	size_t i = 0;

	for (int part = 0; part < 3; part++) {
		size_t d = i;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d || i - d > 3)
			return 0;
		if (part < 2 && (i >= len || s[i++] != '.'))
			return 0;
	}
	if (i == len)
		return 1;
	if (s[i] != '+' && s[i] != '~')
		return 0;
	for (; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || strchr("._-+~", s[i])))
			return 0;
	return 1;
}

static void set_version(struct rte_ocaml_exe *out, const char *s, size_t len,
                        enum rte_ocaml_exe_how how)
{
	if (len >= sizeof out->version)
		len = sizeof out->version - 1;
	memcpy(out->version, s, len);
	out->version[len] = 0;
	out->how = how;
}

/* The bytecode runtime's "-version" string in a read-only data section. */
static int find_runtime_string(struct elf *e, struct rte_ocaml_exe *out)
{
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const char *p, *v;
		char *d;
		size_t left;

		if (s->sh_type != SHT_PROGBITS || !(s->sh_flags & SHF_ALLOC) ||
		    (s->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) || !(d = load_section(e, s)))
			continue;
		for (p = d; (left = (size_t)(d + s->sh_size - p)) > sizeof RUNTIME_PREFIX &&
		     (p = memmem(p, left, RUNTIME_PREFIX, sizeof RUNTIME_PREFIX - 1));
		     p++) {
			v = p + sizeof RUNTIME_PREFIX - 1;
			/* d ends with a zero: strlen stays inside */
			if (version_like(v, strlen(v)) && strlen(v) < sizeof out->version) {
				set_version(out, v, strlen(v), RTE_OCAML_EXE_RUNTIME_STRING);
				free(d);
				return 1;
			}
		}
		free(d);
	}
	return 0;
}

/* The length of the OCaml string block whose header is at b (avail bytes
 * from it), if it is a black String_tag block holding a version string;
 * else 0. Its bytes start at b + 8. */
static size_t version_block(const unsigned char *b, size_t avail)
{
	uint64_t h = 0;
	size_t wosize, bytes, len;

	for (int i = 7; i >= 0; i--)
		h = h << 8 | b[i];
	if ((h & 0xff) != STRING_TAG || ((h >> 8) & 3) != BLACK)
		return 0;
	wosize = (size_t)(h >> 10);
	if (wosize < 1 || wosize > 4 || 8 + wosize * 8 > avail)
		return 0;
	bytes = wosize * 8;
	if (b[8 + bytes - 1] > 7)
		return 0;
	len = bytes - 1 - b[8 + bytes - 1];
	for (size_t i = len; i < bytes - 1; i++)
		if (b[8 + i])
			return 0;
	if (len < 5 || memchr(b + 8, 0, len) || !version_like((const char *)b + 8, len))
		return 0;
	return len;
}

/* Version string blocks in len bytes at file offset off, whose address is
 * addr (the headers are 8-aligned in memory). The first found goes to
 * out; returns how many distinct ones were found (at most 2 counted). */
static int scan_blocks(struct elf *e, uint64_t off, uint64_t addr, uint64_t len,
                       struct rte_ocaml_exe *out, enum rte_ocaml_exe_how how)
{
	unsigned char *d = (unsigned char *)load(e, off, len);
	int found = 0;

	if (!d)
		return 0;
	for (uint64_t i = (8 - addr % 8) % 8; i + 16 <= len && found < 2; i += 8) {
		size_t n = version_block(d + i, (size_t)(len - i));

		if (!n)
			continue;
		if (!found) {
			set_version(out, (const char *)d + i + 8, n, how);
			found = 1;
		} else if (strlen(out->version) != n || memcmp(out->version, d + i + 8, n)) {
			found = 2; /* two versions: which is Sys's? */
		}
	}
	free(d);
	return found;
}

/* The allocated section holding [addr, addr + len), or NULL. */
static const Elf64_Shdr *section_of(const struct elf *e, uint64_t addr, uint64_t len)
{
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i];

		if (s->sh_type == SHT_PROGBITS && (s->sh_flags & SHF_ALLOC) &&
		    addr >= s->sh_addr && addr - s->sh_addr <= s->sh_size &&
		    len <= s->sh_size - (addr - s->sh_addr))
			return s;
	}
	return NULL;
}

/* The runtime symbols that name a release, oldest first. */
static const struct marker {
	const char *name;
	const char *version;
} markers[] = {
	{ "caml_runtime_events_init", "5.0" },
	{ "caml_runtime_events_user_register", "5.1" },
	{ "caml_ml_runtime_events_are_active", "5.2" },
	{ "caml_ml_domain_index", "5.3" },
	{ "caml_ml_runtime_events_path", "5.4" },
};
#define NMARKERS (sizeof markers / sizeof markers[0])

struct syms {
	unsigned have;            /* bit i: markers[i] is defined */
	uint64_t sys_begin, sys_end; /* camlStdlib__Sys.data_{begin,end} */
};

static void symbol(struct syms *y, const char *name, const Elf64_Sym *s)
{
	if (s->st_shndx == SHN_UNDEF)
		return;
	if (!strncmp(name, "caml", 4)) {
		for (unsigned k = 0; k < NMARKERS; k++)
			if (!strcmp(name, markers[k].name))
				y->have |= 1u << k;
		/* "camlStdlib__Sys" then "__" (5.0) or "." (5.1 and later) */
		if (!strncmp(name, SYS_UNIT, sizeof SYS_UNIT - 1)) {
			const char *t = name + sizeof SYS_UNIT - 1;

			if (*t == '.')
				t += 1;
			else if (!strncmp(t, "__", 2))
				t += 2;
			else
				return;
			if (!strcmp(t, "data_begin"))
				y->sys_begin = s->st_value;
			else if (!strcmp(t, "data_end"))
				y->sys_end = s->st_value;
		}
	}
}

/* Read the symbol tables (.symtab and .dynsym) into y. */
static void read_symbols(struct elf *e, struct syms *y)
{
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i], *st;
		Elf64_Sym *sym;
		char *str;
		size_t n;

		if ((s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM) ||
		    s->sh_entsize != sizeof *sym || s->sh_link >= e->nsh)
			continue;
		st = &e->sh[s->sh_link];
		if (st->sh_type != SHT_STRTAB || !(str = load_section(e, st)))
			continue;
		if (!(sym = (Elf64_Sym *)load_section(e, s))) {
			free(str);
			continue;
		}
		n = (size_t)(s->sh_size / sizeof *sym);
		for (size_t k = 0; k < n; k++)
			if (sym[k].st_name < st->sh_size) /* str ends with a zero */
				symbol(y, str + sym[k].st_name, &sym[k]);
		free(sym);
		free(str);
	}
}

/* The release the markers name: the newest one defined, if the 5.0 one
 * (every OCaml 5 runtime) is. NULL if none. */
static const char *marked_release(const struct syms *y)
{
	const char *v = NULL;

	if (!(y->have & 1))
		return NULL;
	for (unsigned k = 0; k < NMARKERS; k++)
		if (y->have & (1u << k))
			v = markers[k].version;
	return v;
}

/* 1 if the version string v is of release r ("5.3") or, when later is
 * set, a later one. */
static int of_release(const char *v, const char *r, int later)
{
	unsigned vmaj, vmin, rmaj, rmin;
	char dot;

	if (sscanf(v, "%u.%u%c", &vmaj, &vmin, &dot) != 3 || dot != '.' ||
	    sscanf(r, "%u.%u", &rmaj, &rmin) != 2)
		return 0;
	if (vmaj != rmaj)
		return later && vmaj > rmaj;
	return vmin == rmin || (later && vmin > rmin);
}

static int examine(struct elf *e, struct rte_ocaml_exe *out)
{
	struct syms y = { 0, 0, 0 };
	const Elf64_Shdr *s;
	const char *rel;
	int n;

	if (elf_open(e) < 0)
		return 0;
	if (find_runtime_string(e, out))
		return 1;
	read_symbols(e, &y);
	rel = marked_release(&y);
	if (y.sys_begin && y.sys_end > y.sys_begin &&
	    y.sys_end - y.sys_begin <= SYS_RANGE &&
	    (s = section_of(e, y.sys_begin, y.sys_end - y.sys_begin)) &&
	    scan_blocks(e, s->sh_offset + (y.sys_begin - s->sh_addr), y.sys_begin,
	                y.sys_end - y.sys_begin, out, RTE_OCAML_EXE_SYS_VERSION) == 1)
		return 1;
	/* No symbols for Stdlib__Sys (stripped, or not linked): a version
	 * string block anywhere in writable data, if it is the only one and
	 * does not contradict the runtime's symbols (a program's own "5.1.0"
	 * could be a constant of the same shape). */
	n = 0;
	for (unsigned i = 0; i < e->nsh && n < 2; i++) {
		struct rte_ocaml_exe one;
		int k;

		s = &e->sh[i];
		if (s->sh_type != SHT_PROGBITS || (s->sh_flags & (SHF_ALLOC | SHF_WRITE)) !=
		                                      (SHF_ALLOC | SHF_WRITE))
			continue;
		memset(&one, 0, sizeof one);
		k = scan_blocks(e, s->sh_offset, s->sh_addr, s->sh_size, &one,
		                RTE_OCAML_EXE_DATA_STRING);
		if (k && (!n || strcmp(one.version, out->version))) {
			n += k;
			if (n == 1)
				*out = one;
		}
	}
	if (n == 1 && (!rel || of_release(out->version, rel, rel == markers[NMARKERS - 1].version)))
		return 1;
	if (rel) {
		set_version(out, rel, strlen(rel), RTE_OCAML_EXE_SYMBOLS);
		return 1;
	}
	out->version[0] = 0;
	out->how = RTE_OCAML_EXE_NONE;
	return 0;
}

int rte_ocaml_exe_version(const char *path, struct rte_ocaml_exe *out)
{
	struct elf e;
	struct stat st;
	int found;

	memset(out, 0, sizeof *out);
	memset(&e, 0, sizeof e);
	if (!path)
		return RTE_EINVAL;
	e.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (e.fd < 0)
		return errno == ENOENT ? RTE_ENOENT : RTE_EIO;
	if (fstat(e.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(e.fd);
		return RTE_EIO;
	}
	e.size = (uint64_t)st.st_size;
	e.budget = MAX_SCAN;
	found = examine(&e, out);
	if (found) {
		out->table = rte_ocaml_table(out->version);
		if (!strncmp(out->version, "5.4", 3) && out->how == RTE_OCAML_EXE_SYMBOLS)
			snprintf(out->version, sizeof out->version, "5.4 or later");
	}
	free(e.sh);
	free(e.shstr);
	close(e.fd);
	return found;
}

const char *rte_ocaml_exe_how_name(enum rte_ocaml_exe_how h)
{
	static const char *const names[] = {
		"none", "runtime version string", "Sys.ocaml_version",
		"string constant shaped like Sys.ocaml_version", "runtime symbols",
	};

	return (unsigned)h < sizeof names / sizeof names[0] ? names[h] : "?";
}
