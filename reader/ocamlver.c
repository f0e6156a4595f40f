/*
 * ocamlver.c - the OCaml version table of each file, and why (see
 * ocamlver.h).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liveness.h"
#include "ocamlver.h"
#include "ptab.h"
#include "vec.h"

#define MAPS_LINES 65536 /* of /proc/PID/maps read, at most */
#define SHARED_RUNTIMES 4 /* libasmrun/libcamlrun files examined, at most */

static const struct rte_ocaml_table *forced;
static char *opt_exe;                /* --exe */
static struct rte_ocaml_exe opt_exever;
/* The choices made, each distinct one once: the files of a run share a
 * few (every file of a program that is not OCaml has the same), so a
 * summary of 100,000 files keeps 16 bytes a file, not 200. */
static struct use {
	struct rd_ocaml_used u;
	char *exe; /* u.exe, owned */
} *uses;
static size_t nuses, capuses;
static struct ptab usekeys; /* a choice's fields as bytes -> index into uses */
static struct entry {
	const char *path;
	size_t use; /* into uses */
} *chosen;
static size_t nchosen, capchosen;

int rd_ocaml_force(const char *version)
{
	forced = rte_ocaml_table(version);
	return forced ? 0 : -1;
}

int rd_ocaml_exe_option(const char *path, char *msg, size_t cap)
{
	int r = rte_ocaml_exe_version(path, &opt_exever);

	if (r < 0) {
		snprintf(msg, cap, "%s: %s", path, rte_strerror(r));
		return -1;
	}
	if (r == 0) {
		snprintf(msg, cap, "%s: not an OCaml 5 program (no OCaml runtime "
		         "version in it)", path);
		return -1;
	}
	free(opt_exe);
	if (!(opt_exe = strdup(path))) {
		snprintf(msg, cap, "out of memory");
		return -1;
	}
	return 0;
}

/* The pid of the live process that maps (writes) the file at path, or 0:
 * the writer is gone, or which process it is cannot be told. Cheap for a
 * file whose pid is gone or was taken by a younger process (old files):
 * only those that may still be written ask the maps. */
static long live_writer(const char *path, long pid)
{
	struct rd_writer w;
	struct stat st;

	if (pid <= 0 || !rd_pid_alive(pid) || stat(path, &st) < 0)
		return 0;
	rd_writer_init(&w, pid, &st);
	if (rd_pid_newer_than(pid, w.changed_ns))
		return 0; /* not the writer: born after the file last changed */
	(void)rd_writer_locate(&w, path);
	return rd_writer_alive(&w) ? w.seen_pid : 0;
}

/* 1 if the file named by a line of /proc/PID/maps is a shared OCaml
 * runtime (libasmrun_shared.so, libcamlrun_shared.so, ...); its path goes
 * to *path (inside line). */
static int shared_runtime(char *line, char **path)
{
	char *p = strchr(line, '/'), *base, *nl;

	if (!p)
		return 0;
	if ((nl = strchr(p, '\n')))
		*nl = 0;
	base = strrchr(p, '/') + 1;
	*path = p;
	return !strncmp(base, "libasmrun", 9) || !strncmp(base, "libcamlrun", 10);
}

/* Look for the OCaml runtime in the shared libraries process pid maps.
 * Returns the path of the one that names a version (malloc'd), or NULL. */
static char *shared_exe(long pid, struct rte_ocaml_exe *ex)
{
	char maps[64], line[PATH_MAX + 256], *p, *seen[SHARED_RUNTIMES];
	unsigned nseen = 0, lines = 0;
	char *found = NULL;
	FILE *f;

	snprintf(maps, sizeof maps, "/proc/%ld/maps", pid);
	if (!(f = fopen(maps, "re")))
		return NULL;
	while (!found && nseen < SHARED_RUNTIMES && lines++ < MAPS_LINES &&
	       fgets(line, sizeof line, f)) {
		unsigned i;

		if (!shared_runtime(line, &p))
			continue;
		for (i = 0; i < nseen && strcmp(seen[i], p); i++)
			;
		if (i < nseen || !(seen[nseen] = strdup(p)))
			continue;
		if (rte_ocaml_exe_version(seen[nseen], ex) == 1)
			found = strdup(seen[nseen]);
		nseen++;
	}
	fclose(f);
	while (nseen > 0)
		free(seen[--nseen]);
	return found;
}

/* Ask the executable of the live process pid (then the shared OCaml
 * runtime it maps) which OCaml it is. Fills e->u.exe, exever, exe_err. */
static void ask_exe(struct use *e, long pid)
{
	char proc[64], link[PATH_MAX];
	ssize_t n;
	int r;

	snprintf(proc, sizeof proc, "/proc/%ld/exe", pid);
	r = rte_ocaml_exe_version(proc, &e->u.exever);
	n = readlink(proc, link, sizeof link - 1);
	if (n > 0) {
		link[n] = 0;
		e->exe = strdup(link);
	} else {
		e->exe = strdup(proc);
	}
	if (r == 0) {
		char *lib = shared_exe(pid, &e->u.exever);

		if (lib) {
			free(e->exe);
			e->exe = lib;
			r = 1;
		}
	}
	e->u.exe = e->exe;
	e->u.exe_err = r < 0 ? r : 0;
	if (r <= 0)
		memset(&e->u.exever, 0, sizeof e->u.exever);
}

/* Choose from the executable's version and the trace's fit of it. */
static void from_exe(struct rd_ocaml_used *u, const struct rte_ocaml_fit *fit)
{
	const struct rte_ocaml_choice *t = &u->trace;

	u->from = RD_OCAML_FROM_EXE;
	u->ch.table = u->exever.table;
	/* a string that names the version, found where OCaml puts it: sure */
	u->ch.sure = u->exever.how == RTE_OCAML_EXE_RUNTIME_STRING ||
	             u->exever.how == RTE_OCAML_EXE_SYS_VERSION ? RTE_OCAML_SURE
	                                                        : RTE_OCAML_LIKELY;
	u->ch.nestings = t->nestings;
	u->ch.explained = fit->explained;
	if (fit->same) {
		u->ch.same_from = t->same_from;
		u->ch.same_to = t->same_to;
		u->ch.best_other = t->best_other;
	} else {
		u->ch.same_from = u->ch.same_to = u->ch.table->version;
		u->ch.best_other = t->explained;
	}
}

/* Say on stderr when the executable and the trace disagree, or the
 * executable's version has no table. */
static void warn_choice(const char *path, const struct rd_ocaml_used *u,
                        const struct rte_ocaml_fit *fit)
{
	if (u->from == RD_OCAML_FROM_EXE && !fit->same && u->trace.sure == RTE_OCAML_SURE)
		fprintf(stderr, "rte-read: warning: %s: the executable %s says OCaml %s, "
		        "but the trace's phase nesting fits OCaml %s's names (%llu of "
		        "%llu explained, %llu by %s's); using %s's "
		        "(--ocaml-version=%s forces the other)\n",
		        path, u->exe, u->exever.version, u->trace.table->version,
		        (unsigned long long)u->trace.explained,
		        (unsigned long long)u->trace.nestings,
		        (unsigned long long)u->ch.explained, u->ch.table->version,
		        u->ch.table->version, u->trace.table->version);
	else if (u->exe && u->exever.how != RTE_OCAML_EXE_NONE && !u->exever.table)
		fprintf(stderr, "rte-read: warning: %s: the executable %s is OCaml %s, "
		        "which no name table covers; names from the trace nesting\n",
		        path, u->exe, u->exever.version);
}

/* The choice for the file at path written by pid, into *e (e->exe, if
 * set, is owned by e). */
static void decide(struct use *e, const char *path, long pid)
{
	struct rte_ocaml_fit fit;
	long live;

	memset(e, 0, sizeof *e);
	if (forced) {
		e->u.from = RD_OCAML_FROM_OPTION;
		e->u.ch.table = forced;
		e->u.ch.sure = RTE_OCAML_FORCED;
		e->u.ch.same_from = e->u.ch.same_to = forced->version;
		e->u.trace = e->u.ch;
		return;
	}
	memset(&fit, 0, sizeof fit);
	(void)rte_ocaml_detect_fit(path, NULL, &e->u.trace, &fit);
	/* Runtime ids to name: ask the executable (the shim's own files
	 * of a non-OCaml program have none: its file is not read). */
	if (opt_exe) {
		e->u.exe = opt_exe;
		e->u.exever = opt_exever;
	} else if (fit.runtime_ids && (live = live_writer(path, pid)) > 0) {
		ask_exe(e, live);
	}
	if (e->u.exever.table)
		(void)rte_ocaml_detect_fit(path, e->u.exever.table, &e->u.trace, &fit);
	if (e->u.exever.table) {
		from_exe(&e->u, &fit);
	} else {
		e->u.ch = e->u.trace; /* unreadable: the default */
		e->u.from = e->u.trace.sure == RTE_OCAML_GUESS ? RD_OCAML_FROM_DEFAULT
		                                               : RD_OCAML_FROM_TRACE;
	}
	warn_choice(path, &e->u, &fit);
}

static char *put(char *k, const void *v, size_t n)
{
	memcpy(k, v, n);
	return k + n;
}

static char *put_choice(char *k, const struct rte_ocaml_choice *c)
{
	k = put(k, &c->table, sizeof c->table);
	k = put(k, &c->sure, sizeof c->sure);
	k = put(k, &c->same_from, sizeof c->same_from);
	k = put(k, &c->same_to, sizeof c->same_to);
	k = put(k, &c->nestings, sizeof c->nestings);
	k = put(k, &c->explained, sizeof c->explained);
	return put(k, &c->best_other, sizeof c->best_other);
}

/* The index in uses of a choice equal to *e (its fields one by one, so
 * that padding and the owned copy's address do not count), added (and
 * e->exe taken) if new; (size_t)-1 if out of memory (e->exe then freed). */
static size_t intern_use(struct use *e)
{
	const struct rd_ocaml_used *u = &e->u;
	size_t vlen = strnlen(u->exever.version, sizeof u->exever.version);
	size_t xlen = u->exe ? strlen(u->exe) + 1 : 0, at = (size_t)-1;
	char *key = malloc(2 * sizeof(struct rte_ocaml_choice) + 64 + vlen + xlen), *k;
	int64_t i;
	int isnew;

	if (!key || vlen + xlen > UINT32_MAX / 2)
		goto out;
	k = put_choice(key, &u->ch);
	k = put_choice(k, &u->trace);
	k = put(k, &u->from, sizeof u->from);
	k = put(k, &u->exe_err, sizeof u->exe_err);
	k = put(k, &u->exever.how, sizeof u->exever.how);
	k = put(k, &u->exever.table, sizeof u->exever.table);
	k = put(k, u->exever.version, vlen);
	k = put(k, "", 1);
	if (u->exe)
		k = put(k, u->exe, xlen);
	if ((i = ptab_get(&usekeys, key, (uint32_t)(k - key), &isnew)) < 0)
		goto out;
	if (!isnew) {
		at = (size_t)i;
		goto out;
	}
	if ((size_t)i != nuses || RD_VEC_ROOM(uses, capuses, nuses, 4) < 0)
		goto out; /* the table and uses out of step: no more choices kept */
	uses[nuses] = *e;
	free(key);
	return nuses++;
out:
	free(key);
	free(e->exe);
	return at;
}

int rd_ocaml_choose(rte_cursor *c, const char *path, long pid)
{
	struct use e;
	size_t at;

	if (RD_VEC_ROOM(chosen, capchosen, nchosen, 8) < 0) {
		rte_cursor_use_ocaml(c, rte_ocaml_default());
		return -1;
	}
	decide(&e, path, pid);
	rte_cursor_use_ocaml(c, e.u.ch.table);
	if ((at = intern_use(&e)) == (size_t)-1)
		return -1;
	chosen[nchosen].path = path;
	chosen[nchosen++].use = at;
	return 0;
}

void rd_ocaml_name(rte_cursor *c, const char *path, long pid)
{
	struct use e;

	decide(&e, path, pid);
	rte_cursor_use_ocaml(c, e.u.ch.table);
	free(e.exe);
}

const struct rd_ocaml_used *rd_ocaml_choice_of(const char *path)
{
	static size_t hint; /* callers go through the files in order */

	for (size_t i = hint; i < nchosen && i < hint + 2; i++)
		if (chosen[i].path == path) {
			hint = i + 1;
			return &uses[chosen[i].use].u;
		}
	for (size_t i = nchosen; i-- > 0;)
		if (chosen[i].path == path || !strcmp(chosen[i].path, path))
			return &uses[chosen[i].use].u;
	return NULL;
}

int rd_ocaml_reuse(rte_cursor *c, const char *path)
{
	const struct rd_ocaml_used *u = rd_ocaml_choice_of(path);

	if (u)
		rte_cursor_use_ocaml(c, u->ch.table);
	return 0;
}

const char *rd_ocaml_from_name(enum rd_ocaml_from f)
{
	static const char *const names[] = { "option", "executable", "trace", "default" };

	return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

/* "; the executable X: why not" for a trace or default choice. */
static void exe_note(const struct rd_ocaml_used *u, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!u->exe)
		return;
	if (u->exe_err)
		snprintf(buf, cap, "; executable %s: %s", u->exe, rte_strerror(u->exe_err));
	else if (u->exever.how == RTE_OCAML_EXE_NONE)
		snprintf(buf, cap, "; executable %s: no OCaml 5 runtime version in it", u->exe);
	else
		snprintf(buf, cap, "; executable %s: OCaml %s, no table", u->exe,
		         u->exever.version);
}

void rd_ocaml_describe(const struct rd_ocaml_used *u, char *buf, size_t cap)
{
	const struct rte_ocaml_choice *ch = &u->ch;
	char same[64] = "", note[PATH_MAX + 96];

	if (strcmp(ch->same_from, ch->same_to))
		snprintf(same, sizeof same, "; %s to %s name these ids alike",
		         ch->same_from, ch->same_to);
	if (u->from == RD_OCAML_FROM_TRACE || u->from == RD_OCAML_FROM_DEFAULT) {
		/* the trace shows the range, not one release of it */
		exe_note(u, note, sizeof note);
		snprintf(buf, cap, "OCaml %s%s%s names (%s, %s: %llu of %llu phase "
		         "nestings explained, %llu by the best other table%s)",
		         ch->same_from, same[0] ? " to " : "", same[0] ? ch->same_to : "",
		         u->from == RD_OCAML_FROM_TRACE ? "from the trace nesting" : "by default",
		         rte_ocaml_sure_name(ch->sure),
		         (unsigned long long)ch->explained,
		         (unsigned long long)ch->nestings,
		         (unsigned long long)ch->best_other, note);
	} else if (u->from == RD_OCAML_FROM_OPTION) {
		snprintf(buf, cap, "OCaml %s names (forced by --ocaml-version)",
		         ch->table->version);
	} else if (u->from == RD_OCAML_FROM_EXE) {
		snprintf(buf, cap, "OCaml %s names (from the executable %s: OCaml %s, "
		         "by its %s; %s: %llu of %llu phase nestings explained, %llu by "
		         "the best other table%s)",
		         ch->table->version, u->exe, u->exever.version,
		         rte_ocaml_exe_how_name(u->exever.how), rte_ocaml_sure_name(ch->sure),
		         (unsigned long long)ch->explained, (unsigned long long)ch->nestings,
		         (unsigned long long)ch->best_other, same);
	}
}

const char *rd_ocaml_release(const struct rd_ocaml_used *u)
{
	if (u->from == RD_OCAML_FROM_TRACE || u->from == RD_OCAML_FROM_DEFAULT)
		return u->ch.same_from;
	return u->ch.table->version;
}

void rd_ocaml_free(void)
{
	for (size_t i = 0; i < nuses; i++)
		free(uses[i].exe);
	free(uses);
	ptab_fini(&usekeys);
	free(chosen);
	uses = NULL;
	chosen = NULL;
	nuses = capuses = nchosen = capchosen = 0;
	free(opt_exe);
	opt_exe = NULL;
}
