/*
 * symbolize.h - turn code addresses of a traced process into function,
 * offset, source file and line, from the modules its rte.module events
 * recorded (path, load bias, build id), with elfutils' libdwfl.
 *
 * The object files are opened by path when the first address is looked
 * up: they must still be there (and the same: a build id that differs is
 * reported rather than trusted). Paths come from an untrusted ring file:
 * only regular files are opened (a FIFO or device is never opened for
 * reading), read-only and non-blocking.
 *
 * Not thread-safe.
 */
#ifndef RD_SYMBOLIZE_H
#define RD_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct rd_sym;

/* A module of the process (as recorded by rte.module). */
struct rd_module {
	uint64_t bias, start, end;
	uint8_t build_id[64];
	unsigned build_id_len;
	char *path;
};

struct rd_frame {
	const char *module;   /* path, or NULL if no module holds the address */
	uint64_t mod_off;     /* address - module bias */
	const char *func;     /* NULL if unknown */
	uint64_t func_off;
	const char *file;     /* NULL if no line information */
	int line;
	int mismatch;         /* the file's build id is not the recorded one */
};

/* A new, empty symboliser; NULL if out of memory. */
struct rd_sym *rd_sym_new(void);
void rd_sym_free(struct rd_sym *s);

/* Add a module (copies it) / forget the one at (bias, start). Returns 0 or
 * -1 (out of memory). */
int rd_sym_add(struct rd_sym *s, const struct rd_module *m);
void rd_sym_remove(struct rd_sym *s, uint64_t bias, uint64_t start);

/* Describe `pc`; `ret` != 0 if it is a return address (looked up at pc -
 * 1, the call). The strings stay valid until the module set changes or s
 * is freed. */
void rd_sym_lookup(struct rd_sym *s, uint64_t pc, int ret,
                   struct rd_frame *f);

/* The functions inlined at `pc` (ret as above), from the DWARF inline
 * records (DW_TAG_inlined_subroutine): the innermost first, up to max,
 * not the function they are inlined into (rd_sym_lookup's); lines[i] the
 * line of names[i]'s call site in its caller (0: unknown), files[i] its
 * source file (NULL: unknown). Names and files are demangled / stay
 * valid as rd_sym_lookup's strings. Returns how many (0 without DWARF or
 * libdw). */
unsigned rd_sym_inlines(struct rd_sym *s, uint64_t pc, int ret,
                        const char **names, int *lines, const char **files,
                        unsigned max);

/* Format f as "func+0xOFF (file:line) [module]" into buf (always
 * NUL-terminated). Returns the length. */
size_t rd_frame_format(const struct rd_frame *f, uint64_t pc, char *buf,
                       size_t len);

#endif
