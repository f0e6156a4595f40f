/*
 * proc.c - the process records (proc.h): who this process is (argv, parent)
 * and how it ended (status or signal, resource usage).
 *
 * argv: glibc passes (argc, argv, envp) to every ELF constructor; the
 * vector is noted there and its strings copied into each file's rte.proc,
 * at most RTE_PROC_ARGV_MAX bytes of them (the rest counted, not copied):
 * a program that rewrites its argv in place before a later start (or a
 * fork child's file) shows what is there then. The strings are the
 * process's own memory, never freed.
 *
 * The system calls are made raw (sys.h): in a fresh image, a libc
 * function no other part of a small program calls is a page fault of
 * libc's text.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sys.h"

static char **g_argv;
static int g_argc;
static int g_how, g_value; /* rte_proc_note_exit */

void rte_proc_load(int argc, char **argv)
{
	if (argc >= 0 && argv) {
		g_argc = argc;
		g_argv = argv;
	}
}

/* FNV-1a of the argv an rte.proc would carry now (its bytes as cut, its
 * count and whole size); 1 without one. */
static uint64_t argv_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ull, total = 0;
	size_t used = 0;
	int i;

	if (!g_argv)
		return 1;
	for (i = 0; i < g_argc && g_argv[i]; i++) {
		size_t n = strlen(g_argv[i]) + 1;

		total += n;
		for (size_t k = 0; k < n && used < RTE_PROC_ARGV_MAX; k++, used++)
			h = (h ^ (unsigned char)g_argv[i][k]) * 0x100000001b3ull;
	}
	return (h ^ total ^ ((uint64_t)i << 48)) | 2;
}

/* The hash of the argv the last rte.proc of this process (or of the
 * parent whose memory a fork child copied) carried, with PRESERVE; 0:
 * none written. */
static uint64_t g_written;

int rte_proc_argv_as_written(void)
{
	return g_written && argv_hash() == g_written;
}

/* The strings of argv (at most argc of them; argc < 0: up to its NULL)
 * into out, at most RTE_PROC_ARGV_MAX bytes: RTE_PROC_ARGV_CUT in *flags
 * when cut; the whole vector's count and size in *count and *bytes.
 * Returns the bytes written. */
static size_t encode_argv(char *out, int argc, char *const *argv,
                          uint16_t *flags, uint32_t *count, uint32_t *bytes)
{
	size_t used = 0, total = 0;
	uint32_t c = 0;

	if (!argv)
		*flags |= RTE_PROC_NO_ARGV;
	for (int i = 0; argv && (argc < 0 || i < argc) && argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1; /* with its NUL */
		size_t room = RTE_PROC_ARGV_MAX - used;

		total += n;
		if (n > room) {
			*flags |= RTE_PROC_ARGV_CUT;
			n = room;
		}
		memcpy(out + used, argv[i], n);
		used += n;
		c++;
	}
	*count = c;
	*bytes = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	return used;
}

size_t rte_proc_start_payload(void *buf, int fork_child, pid_t ppid,
                              int preserve)
{
	struct rte_proc_rec r = {.version = RTE_PROC_VERSION,
	                         .ppid = (int32_t)ppid};
	size_t used;

	if (fork_child)
		r.flags |= RTE_PROC_FORK_CHILD;
	if (preserve)
		r.flags |= RTE_PROC_PRESERVE;
	used = encode_argv((char *)buf + sizeof(r), g_argc, g_argv, &r.flags,
	                   &r.argc, &r.bytes);
	memcpy(buf, &r, sizeof(r));
	/* only PRESERVE's fork children ask (a second walk of argv) */
	if (preserve)
		g_written = argv_hash();
	return sizeof(r) + used;
}

size_t rte_proc_spawn_fail_payload(void *buf, int err, char *const argv[])
{
	struct rte_spawn_fail_rec r = {.version = RTE_SPAWN_FAIL_VERSION,
	                               .err = err};
	size_t used = encode_argv((char *)buf + sizeof(r), -1, argv, &r.flags,
	                          &r.argc, &r.bytes);

	memcpy(buf, &r, sizeof(r));
	return sizeof(r) + used;
}

void rte_proc_note_exit(int how, int value)
{
	g_how = how;
	g_value = how == RTE_EXIT_STATUS ? (value & 0xff) : value;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u +
	       (uint64_t)tv->tv_usec * 1000u;
}

static void usage(struct rte_exit_rec *r, const struct rusage *ru)
{
	if (!ru) {
		r->flags |= RTE_EXIT_NO_RUSAGE;
		return;
	}
	r->utime_ns = tv_ns(&ru->ru_utime);
	r->stime_ns = tv_ns(&ru->ru_stime);
	r->maxrss_kib = (uint64_t)ru->ru_maxrss;
	r->minflt = (uint64_t)ru->ru_minflt;
	r->majflt = (uint64_t)ru->ru_majflt;
	r->nvcsw = (uint64_t)ru->ru_nvcsw;
	r->nivcsw = (uint64_t)ru->ru_nivcsw;
}

void rte_proc_exit_rec(struct rte_exit_rec *r)
{
	struct rusage ru;

	memset(r, 0, sizeof(*r));
	r->version = RTE_EXIT_VERSION;
	r->how = (uint8_t)g_how;
	r->value = g_value;
	r->pid = (int32_t)rte_sys_getpid();
	usage(r, rte_sys3(SYS_getrusage, RUSAGE_SELF, (long)&ru, 0) == 0 ? &ru
	                                                                 : NULL);
}

void rte_proc_reap_rec(struct rte_exit_rec *r, pid_t pid, int status,
                       const struct rusage *ru)
{
	memset(r, 0, sizeof(*r));
	r->version = RTE_EXIT_VERSION;
	r->pid = (int32_t)pid;
	if (WIFEXITED(status)) {
		r->how = RTE_EXIT_STATUS;
		r->value = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->how = RTE_EXIT_SIGNAL;
		r->value = WTERMSIG(status);
		if (WCOREDUMP(status))
			r->flags |= RTE_EXIT_CORE;
	}
	usage(r, ru);
}
