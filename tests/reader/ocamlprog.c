/*
 * ocamlprog.c - a stand-in for a running OCaml 5 program, for the tests of
 * rte-read's choice of OCaml names from the executable
 * (tests/reader/ocamlexe.sh). OCaml 5 cannot be installed here, so this C
 * program carries in its ELF file what an OCaml program of version
 * OCAML_VER carries (facts from ocaml/ocaml, tags 5.0.0 to 5.3.0-alpha1 and
 * trunk fd41e1ab55; common/consumer/ocamlexe.c lists them), and, while it
 * runs, maps a ring file written by a real OCaml runtime the way the
 * runtime maps its own: shared and writable, named PID.events, with its
 * pid in the ring_start event.
 *
 * Built (mk/reader.mk) with -DOCAML_VER='"5.2.0"' -DVLEN=5 and some of:
 *   NATIVE   Sys.ocaml_version as ocamlopt lays out a string constant
 *            (asmcomp/cmm_helpers.ml, emit_block, emit_string_constant):
 *            an 8-aligned header word, black (3 << 8), String_tag (252),
 *            wosize (len + 8) / 8, then the bytes, zeros, and a last byte
 *            that is the number of zeros; between the global symbols
 *            camlStdlib__Sys.data_begin and camlStdlib__Sys.data_end
 *            (asmcomp/amd64/emit.mlp, emit_global_label "data_begin";
 *            the separator of middle_end/compilenv.ml is '.' from 5.1),
 *            or, with SYS50 (OCaml 5.0), camlStdlib__Sys__data_begin and
 *            camlStdlib__Sys__data_end.
 *   BYTE     the bytecode runtime's "-version" string
 *            (runtime/startup_byt.c: "The OCaml runtime, version "
 *            OCAML_VERSION_STRING, one literal in .rodata).
 *   MARKERS=N  the runtime functions that appeared in a release, up to
 *            release 5.N (runtime/runtime_events.c, runtime/domain.c):
 *            caml_runtime_events_init (5.0),
 *            caml_runtime_events_user_register (5.1),
 *            caml_ml_runtime_events_are_active (5.2), caml_ml_domain_index
 *            (5.3), caml_ml_runtime_events_path (5.4, trunk).
 *
 *   LIBRARY  only the above: a shared OCaml runtime (libcamlrun_shared.so)
 *            for a program built without them to link.
 *
 * Usage: ocamlprog RING DIR: copies RING to DIR/PID.events, maps it, writes
 * its pid into ring 0's ring_start event, says "ready PID" on stdout, and
 * runs until its stdin ends.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte/format.h"

#if defined(NATIVE) || defined(BYTE)
#if !defined(OCAML_VER) || !defined(VLEN)
#error "OCAML_VER and VLEN (its length) are needed"
#endif
#endif

#ifdef NATIVE
#define WOSIZE ((VLEN + 8) / 8)
#define PAD (7 - VLEN % 8)
#define STR(x) #x
#define XSTR(x) STR(x)

/* The header word, the string's bytes, PAD zeros and the pad byte. */
struct ocaml_string {
	uint64_t header;
	char bytes[VLEN];
	char zeros[PAD];
	unsigned char pad;
};
_Static_assert(sizeof(struct ocaml_string) == 8 + WOSIZE * 8, "string block layout");

__attribute__((used, aligned(8))) struct ocaml_string sys_ocaml_version = {
	.header = (uint64_t)WOSIZE << 10 | 3u << 8 | 252u,
	.bytes = OCAML_VER,
	.pad = PAD,
};
/* The module's data symbols, around it. */
#ifdef SYS50
#define SYS_SYM(x) "camlStdlib__Sys__" x
#else
#define SYS_SYM(x) "camlStdlib__Sys." x
#endif
__asm__(".globl " SYS_SYM("data_begin") "\n"
        ".set " SYS_SYM("data_begin") ", sys_ocaml_version\n"
        ".globl " SYS_SYM("data_end") "\n"
        ".set " SYS_SYM("data_end") ", sys_ocaml_version + 8 + 8 * " XSTR(WOSIZE) "\n");
#endif

#ifdef BYTE
__attribute__((used)) const char runtime_version[] =
	"The OCaml runtime, version " OCAML_VER;
#endif

#ifdef MARKERS
/* Defined, never called: only their symbols matter. */
void caml_runtime_events_init(void);
__attribute__((used, noinline)) void caml_runtime_events_init(void) { __asm__(""); }
#if MARKERS >= 1
void caml_runtime_events_user_register(void);
__attribute__((used, noinline)) void caml_runtime_events_user_register(void) { __asm__(""); }
#endif
#if MARKERS >= 2
void caml_ml_runtime_events_are_active(void);
__attribute__((used, noinline)) void caml_ml_runtime_events_are_active(void) { __asm__(""); }
#endif
#if MARKERS >= 3
void caml_ml_domain_index(void);
__attribute__((used, noinline)) void caml_ml_domain_index(void) { __asm__(""); }
#endif
#if MARKERS >= 4
void caml_ml_runtime_events_path(void);
__attribute__((used, noinline)) void caml_ml_runtime_events_path(void) { __asm__(""); }
#endif
#endif

#ifndef LIBRARY
/* Write our pid into the ring_start event at the start of ring 0, as a
 * runtime writes its own (the file is a copy of another process's). The
 * words are those of rte/format.h: the metadata header's headers_offset
 * and data_offset (bytes), ring 0's head, and a lifecycle message of 3
 * words (header, timestamp, pid). Returns 0, or -1 if it is not there. */
static int own_ring_start(uint64_t *w, size_t size)
{
	uint64_t hdr_off, data_off, elems, head, h;
	size_t at;

	if (size < 64)
		return -1;
	elems = w[4], hdr_off = w[5], data_off = w[6];
	if (hdr_off % 8 || data_off % 8 || hdr_off + 8 > size || elems == 0 ||
	    data_off + elems * 8 > size)
		return -1;
	head = w[hdr_off / 8]; /* the oldest message */
	at = (size_t)(data_off / 8 + head % elems);
	h = w[at];
	if (at + 3 > data_off / 8 + elems || h >> 54 != 3 || (h >> 53 & 1) ||
	    (h >> 49 & 0xf) != RTE_MSG_LIFECYCLE || (h >> 36 & 0x1fff) != RTE_LC_RING_START)
		return -1;
	w[at + 2] = (uint64_t)getpid();
	return 0;
}

/* Copy the file at from to a new file at to. Returns its fd, or -1. */
static int copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			close(out);
			out = -1;
		}
	close(in);
	return out;
}

int main(int argc, char **argv)
{
	char path[4096], c;
	struct stat st;
	void *m;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: ocamlprog RING DIR\n");
		return 2;
	}
	snprintf(path, sizeof path, "%s/%ld.events", argv[2], (long)getpid());
	if ((fd = copy(argv[1], path)) < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	if (own_ring_start(m, (size_t)st.st_size) < 0) {
		fprintf(stderr, "%s: no ring_start at the start of ring 0\n", argv[1]);
		return 1;
	}
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	munmap(m, (size_t)st.st_size);
	return 0;
}
#endif /* LIBRARY */
