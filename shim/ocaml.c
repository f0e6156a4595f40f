/*
 * ocaml.c - does this process already run OCaml 5's own runtime events?
 *
 * An OCaml 5 program opens <pid>.events itself when
 * OCAML_RUNTIME_EVENTS_START is set: a second writer on the same file
 * would corrupt both. Every OCaml 5 runtime (native or bytecode, static or
 * shared) defines caml_runtime_events_init. We look for it
 *   - with dlsym(RTLD_DEFAULT): a shared runtime (libasmrun_shared.so,
 *     libcamlrun_shared.so) or an executable linked with -rdynamic;
 *   - in the .symtab and .dynsym sections of the main executable
 *     (/proc/self/exe), where a normal, statically linked OCaml executable
 *     keeps it unless it was stripped.
 * A stripped static OCaml executable is not recognised: run it without
 * LD_PRELOAD (it traces itself anyway).
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocaml.h"
#include "real.h"

static const char k_symbol[] = "caml_runtime_events_init";

/* Section i's extent, if it lies inside the file. */
static const Elf64_Shdr *section(const unsigned char *m, size_t size,
                                 const Elf64_Ehdr *eh, unsigned i)
{
	const Elf64_Shdr *sh;

	if (i >= eh->e_shnum)
		return NULL;
	sh = (const Elf64_Shdr *)(m + eh->e_shoff + (size_t)i * sizeof(*sh));
	if (sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
		return NULL;
	return sh;
}

static int table_has(const unsigned char *m, size_t size,
                     const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
	const Elf64_Shdr *str = section(m, size, eh, sh->sh_link);
	const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh->sh_offset);
	size_t n = sh->sh_size / sizeof(Elf64_Sym);
	const char *strs;

	if (!str || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    sh->sh_offset % _Alignof(Elf64_Sym))
		return 0;
	strs = (const char *)(m + str->sh_offset);
	for (size_t i = 0; i < n; i++) {
		size_t off = sym[i].st_name;

		if (off < str->sh_size &&
		    str->sh_size - off >= sizeof(k_symbol) &&
		    !memcmp(strs + off, k_symbol, sizeof(k_symbol)))
			return 1;
	}
	return 0;
}

/* The executable is input from outside: every offset is checked against
 * the file size before it is followed. */
static int elf_has_symbol(const unsigned char *m, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    eh->e_shoff % _Alignof(Elf64_Shdr) ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(m, size, eh, i);

		if (sh && (sh->sh_type == SHT_SYMTAB ||
		           sh->sh_type == SHT_DYNSYM) &&
		    table_has(m, size, eh, sh))
			return 1;
	}
	return 0;
}

static int exe_has_symbol(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m;
	int r = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		goto out;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		goto out;
	r = elf_has_symbol(m, (size_t)st.st_size);
	munmap(m, (size_t)st.st_size);
out:
	close(fd);
	return r;
}

int rte_ocaml_in_process(void)
{
	return rte_dlsym(RTLD_DEFAULT, k_symbol) != NULL || exe_has_symbol();
}
