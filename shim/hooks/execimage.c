/*
 * hooks/execimage.c - will the image an exec starts be traced by us?
 * Asked by process.c's exec_before() for a fork child with PRESERVE that
 * has not written yet: its own file would hold nothing the new image's
 * file does not (its parent's fork_parent names it, the new image's
 * rte.proc its argv and parent), so it makes none when the answer is
 * yes. Any doubt is a no: the child then makes its file, whose rte.exec
 * names the image, as before (a static binary, a set-user-ID one, a
 * 32-bit one, a path searched for in PATH).
 *
 * Yes means: this process's real and effective user and group are the
 * same, and `path` is a regular file this process can read, with no
 * set-user-ID or set-group-ID bit and no file capabilities (else the
 * kernel would start it in ld.so's secure mode, which ignores
 * LD_PRELOAD's paths and OCAML_RUNTIME_EVENTS_*), an ELF file of our class, byte order
 * and machine whose program interpreter is the one this process was
 * started with (glibc's ld.so, which preloads librte.so), or a "#!"
 * script whose interpreter is such a file; and the environment passed
 * (execenv.c) starts tracing into our directory with PRESERVE and
 * preloads librte.so by our path. The exec may still fail (EACCES,
 * E2BIG, ETXTBSY): process.c then makes the file and writes the failed
 * exec into it, as if it had been made before.
 *
 * Raw system calls only (no errno written, no hook of ours entered):
 * called in a fork child before exec, as exec is (not in a vfork child:
 * process.c asks only a process of its own).
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "forkvars.h"
#include "hooks/execenv.h"
#include "sys.h"

#define HEAD 1024 /* bytes read of a file: its ELF and program headers */

#if defined(__x86_64__)
#define OUR_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OUR_MACHINE EM_AARCH64
#else
#define OUR_MACHINE EM_NONE /* not known here: never a yes */
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OUR_DATA ELFDATA2LSB
#else
#define OUR_DATA ELFDATA2MSB
#endif

/* The program interpreter of this process's executable (mapped for the
 * process's lifetime), or NULL if it has none we could find. */
static const char *g_interp;

void rte_execimage_init(void)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	int have_bias = 0;

	if (!ph || getauxval(AT_PHENT) != sizeof(Elf64_Phdr))
		return;
	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR) {
			bias = (uintptr_t)ph - ph[i].p_vaddr;
			have_bias = 1;
		}
	for (unsigned long i = 0; have_bias && i < n; i++) {
		if (ph[i].p_type != PT_INTERP || ph[i].p_filesz < 2)
			continue;
		/* only where a loaded segment holds it (mapped memory) */
		for (unsigned long j = 0; j < n; j++)
			if (ph[j].p_type == PT_LOAD &&
			    ph[i].p_vaddr >= ph[j].p_vaddr &&
			    ph[i].p_vaddr + ph[i].p_filesz <=
			            ph[j].p_vaddr + ph[j].p_filesz) {
				const char *s = (const char *)(bias + ph[i].p_vaddr);

				if (s[ph[i].p_filesz - 1] == '\0')
					g_interp = s;
			}
	}
}

/* The first HEAD bytes of path into b (their number, or -1), if it is a
 * regular file with no set-ID bit and no file capabilities. */
RTE_FORKTEXT static long head_of(const char *path, char *b)
{
	struct stat st, st2;
	long fd, n, caps;

	/* Looked at before it is opened: opening a FIFO or a device has
	 * effects of its own (a FIFO's writer would be let through). */
	if (rte_sys4(SYS_newfstatat, AT_FDCWD, (long)path, (long)&st, 0) != 0 ||
	    !S_ISREG(st.st_mode) || (st.st_mode & (S_ISUID | S_ISGID)))
		return -1;
	fd = rte_sys4(SYS_openat, AT_FDCWD, (long)path,
	              O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	if (fd >= 0 && fd < 3) {
		/* not as a standard stream the program closed (a handler of
		 * its own could read it meanwhile) */
		long high = rte_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);

		rte_sys3(SYS_close, fd, 0, 0);
		fd = high;
	}
	if (fd < 0)
		return -1;
	n = -1;
	/* still that file (not replaced meanwhile by something else) */
	if (rte_sys_fstat((int)fd, &st2) == 0 && S_ISREG(st2.st_mode) &&
	    st2.st_ino == st.st_ino && st2.st_dev == st.st_dev &&
	    !(st2.st_mode & (S_ISUID | S_ISGID))) {
		caps = rte_sys4(SYS_fgetxattr, fd, (long)"security.capability",
		                0, 0);
		if (caps == -ENODATA || caps == -EOPNOTSUPP)
			n = rte_sys4(SYS_pread64, fd, (long)b, HEAD, 0);
	}
	rte_sys3(SYS_close, fd, 0, 0);
	return n;
}

/* 1 if the n bytes b begin an ELF file of ours whose interpreter is
 * g_interp. */
RTE_FORKTEXT static int our_dynamic_elf(const char *b, long n)
{
	Elf64_Ehdr e;
	Elf64_Phdr p;

	if (n < (long)sizeof e)
		return 0;
	memcpy(&e, b, sizeof e);
	if (memcmp(e.e_ident, ELFMAG, SELFMAG) ||
	    e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_ident[EI_DATA] != OUR_DATA ||
	    e.e_machine != OUR_MACHINE ||
	    (e.e_type != ET_EXEC && e.e_type != ET_DYN) ||
	    e.e_phentsize != sizeof p || e.e_phoff > (uint64_t)n ||
	    e.e_phnum > ((uint64_t)n - e.e_phoff) / sizeof p)
		return 0; /* not ours, or headers past what was read */
	for (unsigned i = 0; i < e.e_phnum; i++) {
		memcpy(&p, b + e.e_phoff + (uint64_t)i * sizeof p, sizeof p);
		if (p.p_type != PT_INTERP)
			continue;
		/* its NUL-terminated path, within what was read */
		if (p.p_offset >= (uint64_t)n || p.p_filesz > (uint64_t)n - p.p_offset ||
		    p.p_filesz < 2 || b[p.p_offset + p.p_filesz - 1] != '\0')
			return 0;
		return strcmp(b + p.p_offset, g_interp) == 0;
	}
	return 0; /* static */
}

/* 1 if real and effective ids are the same (else the kernel starts any
 * image in secure mode, AT_SECURE). */
RTE_FORKTEXT static int same_ids(void)
{
	uid_t u[3];
	gid_t g[3];

	if (rte_sys3(SYS_getresuid, (long)&u[0], (long)&u[1], (long)&u[2]) ||
	    rte_sys3(SYS_getresgid, (long)&g[0], (long)&g[1], (long)&g[2]))
		return 0;
	return u[0] == u[1] && g[0] == g[1];
}

RTE_FORKTEXT int rte_exec_image_traced(const char *path)
{
	char b[HEAD + 1], interp[256];
	long n;
	size_t k = 0;
	const char *s;

	if (OUR_MACHINE == EM_NONE || !g_interp || !same_ids() || !path || !*path || (n = head_of(path, b)) < 2)
		return 0;
	if (b[0] != '#' || b[1] != '!')
		return our_dynamic_elf(b, n);
	/* "#!" [blanks] interpreter [blanks argument] newline */
	b[n] = '\0';
	for (s = b + 2; *s == ' ' || *s == '\t'; s++)
		;
	while (s[k] && s[k] != ' ' && s[k] != '\t' && s[k] != '\n' &&
	       k + 1 < sizeof interp) {
		interp[k] = s[k];
		k++;
	}
	if (!k || k + 1 >= sizeof interp || !memchr(s, '\n', (size_t)(b + n - s)))
		return 0;
	interp[k] = '\0';
	n = head_of(interp, b); /* one level: the kernel's own limit is 4 */
	return n >= 2 && our_dynamic_elf(b, n);
}
