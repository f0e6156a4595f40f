/*
 * ocaml.c - does this process already run OCaml 5's own runtime events?
 *
 * An OCaml 5 program opens <pid>.events itself when
 * OCAML_RUNTIME_EVENTS_START is set: a second writer on the same file
 * would corrupt both. Every OCaml 5 runtime (native or bytecode, static or
 * shared) defines caml_runtime_events_init. We look for it
 *   - in the dynamic symbol table of every loaded object (a shared runtime,
 *     libasmrun_shared.so or libcamlrun_shared.so, or an executable linked
 *     with -rdynamic), through each one's GNU or SysV hash table in memory:
 *     what dlsym(RTLD_DEFAULT) would find, without its cost when the
 *     symbol is missing (the loader then formats an error message, which
 *     sets up malloc's heap and gettext in every traced process);
 *   - in the string table of the main executable's .symtab, where a
 *     normal, statically linked OCaml executable keeps it unless it was
 *     stripped: read with pread (the section headers, then that table),
 *     never mapped, so that an executable without one (Debian's are
 *     stripped) costs four system calls and no page fault.
 * A stripped static OCaml executable is not recognised: run it without
 * LD_PRELOAD (it traces itself anyway).
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocaml.h"

static const char k_symbol[] = "caml_runtime_events_init";

/* ---- loaded objects: their dynamic symbol tables, in memory ---------- */

/* A d_ptr of the dynamic section: glibc's loader relocates most of them in
 * place, other loaders (and the vDSO) do not. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return (const void *)(v < info->dlpi_addr ? v + info->dlpi_addr : v);
}

static int defined_as(const ElfW(Sym) *sym, const char *strtab)
{
	return sym->st_shndx != SHN_UNDEF &&
	       !strcmp(strtab + sym->st_name, k_symbol);
}

static int gnu_hash_has(const uint32_t *gh, const ElfW(Sym) *syms,
                        const char *strtab)
{
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gh + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = 5381;

	for (const char *c = k_symbol; *c; c++)
		h = h * 33 + (unsigned char)*c;
	if (!nbuckets)
		return 0;
	for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i; i++) {
		uint32_t ch = chain[i - symoffset];

		if ((ch | 1) == (h | 1) && defined_as(&syms[i], strtab))
			return 1;
		if (ch & 1)
			break;
	}
	return 0;
}

static int sysv_hash_has(const uint32_t *hh, const ElfW(Sym) *syms,
                         const char *strtab)
{
	uint32_t nbucket = hh[0], h = 0, g;
	const uint32_t *bucket = hh + 2, *chain = bucket + nbucket;

	for (const char *c = k_symbol; *c; c++) {
		h = (h << 4) + (unsigned char)*c;
		g = h & 0xf0000000u;
		h ^= g >> 24;
		h &= ~g;
	}
	if (!nbucket)
		return 0;
	for (uint32_t i = bucket[h % nbucket]; i; i = chain[i])
		if (defined_as(&syms[i], strtab))
			return 1;
	return 0;
}

/* dl_iterate_phdr callback: 1 stops the walk (found). The tables are the
 * loader's own, already checked by it. */
static int object_has(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Dyn) *dyn = NULL;
	const uint32_t *gh = NULL, *hh = NULL;
	const ElfW(Sym) *syms = NULL;
	const char *strtab = NULL;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
			                          info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_GNU_HASH)
			gh = dyn_ptr(info, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hh = dyn_ptr(info, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			syms = dyn_ptr(info, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			strtab = dyn_ptr(info, dyn->d_un.d_ptr);
	}
	if (!syms || !strtab)
		return 0;
	if (gh)
		return gnu_hash_has(gh, syms, strtab);
	return hh ? sysv_hash_has(hh, syms, strtab) : 0;
}

/* ---- the main executable's .symtab, read from the file ----------------- */

/* 1 if the NUL-separated string table of `len` bytes at `off` in fd holds
 * k_symbol as a whole string. Read in blocks that overlap by the name's
 * length, so that no occurrence straddles two reads unseen. */
__attribute__((noinline)) static int strtab_has(int fd, off_t off,
                                                size_t len)
{
	char buf[8192];
	const size_t k = sizeof(k_symbol); /* with its NUL */
	size_t done = 0;

	while (done < len) {
		size_t want = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t n = pread(fd, buf, want, off + (off_t)done);

		if (n <= 0)
			return 0;
		for (const char *p = buf;
		     (p = memmem(p, (size_t)n - (size_t)(p - buf), k_symbol,
		                 k)) != NULL;
		     p++)
			/* At a block's start: seen whole in the block before. */
			if (p == buf ? done == 0 : p[-1] == '\0')
				return 1;
		if ((size_t)n < k || (size_t)n == len - done)
			break;
		done += (size_t)n - k;
	}
	return 0;
}

/* The executable is input from outside: every offset is checked against
 * the file size before it is followed. */
static int exe_has_symbol(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr sh[16];
	struct stat st;
	int r = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shoff > (uint64_t)st.st_size ||
	    ((uint64_t)st.st_size - eh.e_shoff) / sizeof(Elf64_Shdr) <
	            eh.e_shnum)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !r;
	     i += sizeof(sh) / sizeof(sh[0])) {
		unsigned n = eh.e_shnum - i;
		ssize_t want;

		if (n > sizeof(sh) / sizeof(sh[0]))
			n = sizeof(sh) / sizeof(sh[0]);
		want = (ssize_t)(n * sizeof(Elf64_Shdr));
		if (pread(fd, sh, (size_t)want,
		          (off_t)(eh.e_shoff + i * sizeof(Elf64_Shdr))) != want)
			break;
		for (unsigned j = 0; j < n && !r; j++) {
			Elf64_Shdr str;
			uint64_t link = sh[j].sh_link;

			if (sh[j].sh_type != SHT_SYMTAB || link >= eh.e_shnum ||
			    pread(fd, &str, sizeof(str),
			          (off_t)(eh.e_shoff + link * sizeof(str))) !=
			            (ssize_t)sizeof(str) ||
			    str.sh_offset > (uint64_t)st.st_size ||
			    str.sh_size > (uint64_t)st.st_size - str.sh_offset)
				continue;
			r = strtab_has(fd, (off_t)str.sh_offset,
			               (size_t)str.sh_size);
		}
	}
out:
	close(fd);
	return r;
}

int rte_ocaml_in_process(void)
{
	return dl_iterate_phdr(object_has, NULL) != 0 || exe_has_symbol();
}
