/*
 * api.c - the C producer API from a program linked with -lrte (no
 * LD_PRELOAD, no OCAML_RUNTIME_EVENTS_START): registration errors, start
 * from the API, every write function, pause/resume, rte_path; then the
 * program reads its own file back with the consumer library and checks
 * every event it wrote. Prints "FAIL ..." lines and exits 1 on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rte/consumer.h"
#include "rte/rte.h"

static int g_fail;

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);   \
			g_fail = 1;                                           \
		}                                                             \
	} while (0)

static void check_register(void)
{
	char name[200];

	CHECK(rte_register("", RTE_TYPE_INT) == RTE_EBADNAME);
	CHECK(rte_register(NULL, RTE_TYPE_INT) == RTE_EBADNAME);
	memset(name, 'a', 128);
	name[128] = '\0';
	CHECK(rte_register(name, RTE_TYPE_INT) == RTE_EBADNAME);
	name[127] = '\0';
	CHECK(rte_register(name, RTE_TYPE_INT) == 0); /* 127 bytes is ok */
	CHECK(rte_register("tab\there", RTE_TYPE_INT) == RTE_EBADNAME);
	CHECK(rte_register("caf\xc3\xa9", RTE_TYPE_INT) == RTE_EBADNAME);
	CHECK(rte_register("rte.mine", RTE_TYPE_INT) == RTE_EBADNAME);
	CHECK(rte_register("ok", (enum rte_type)9) == RTE_EINVAL);
	CHECK(rte_register("a.int", RTE_TYPE_INT) == 1);
	CHECK(rte_register("a.int", RTE_TYPE_INT) == 1); /* same id again */
	CHECK(rte_register("a.int", RTE_TYPE_UNIT) == RTE_ETYPE);
	CHECK(strcmp(rte_strerror(RTE_ETYPE), "unknown error") != 0);
}

/* Fill the id space: 8192 ids exist in all, shared with the 11 rte.*
 * events (doc/USAGE.md) once tracing runs, and the crash recorder's 4
 * (rte.signal, rte.crash, rte.module, rte.module.unload; doc/USAGE.md
 * "Crash events"); the next name fails. */
static void check_too_many(int expect_last, int expect_first)
{
	char name[32];
	int last = 0, r = -1;

	for (int i = 0; last >= 0; i++) {
		snprintf(name, sizeof(name), "many.%d", i);
		last = rte_register(name, RTE_TYPE_UNIT);
		if (last >= 0)
			r = last;
	}
	CHECK(last == RTE_ETOOMANY);
	CHECK(r == expect_last);
	CHECK(rte_register("many.0", RTE_TYPE_UNIT) == expect_first);
}

struct expect {
	enum rte_event_kind kind;
	unsigned id;
	int64_t v;
	const char *name;
};

static const struct expect k_expect[] = {
	{RTE_EV_LIFECYCLE, RTE_LC_RING_START, -1, "ring_start"},
	{RTE_EV_USER_INT, 1, 42, "a.int"},
	{RTE_EV_USER_UNIT, 2, 0, "a.unit"},
	{RTE_EV_USER_SPAN_BEGIN, 3, 0, "a.span"},
	{RTE_EV_USER_SPAN_END, 3, 0, "a.span"},
	{RTE_EV_USER_CUSTOM, 4, 5, "a.custom"},
	{RTE_EV_BEGIN, RTE_P_MINOR, 0, "minor"},
	{RTE_EV_END, RTE_P_MINOR, 0, "minor"},
	{RTE_EV_COUNTER, RTE_C_MINOR_PROMOTED, 77, "minor_promoted"},
	{RTE_EV_ALLOC, 0, 3, NULL},
	{RTE_EV_LIFECYCLE, RTE_LC_DOMAIN_SPAWN, 9, "domain_spawn"},
	{RTE_EV_LIFECYCLE, RTE_LC_RING_PAUSE, 0, "ring_pause"},
	{RTE_EV_LIFECYCLE, RTE_LC_RING_RESUME, 0, "ring_resume"},
	{RTE_EV_USER_INT, 1, -7, "a.int"},
};

static void check_file(const char *path, int ids[4])
{
	struct rte_event ev;
	rte_cursor *c;
	char err[256];
	size_t n = 0;
	int r;

	(void)ids;
	CHECK(rte_cursor_open(path, &c, err, sizeof(err)) == RTE_OK);
	if (g_fail)
		return;
	while ((r = rte_cursor_next(c, 0, &ev)) == 1) {
		const struct expect *e = &k_expect[n];

		if (ev.kind == RTE_EV_USER_INT && !strncmp(ev.name, "rte.", 4))
			continue; /* the ring labels */
		if (ev.kind == RTE_EV_USER_CUSTOM && !strncmp(ev.name, "rte.", 4))
			continue;
		if (n >= sizeof(k_expect) / sizeof(k_expect[0])) {
			printf("FAIL extra event %s\n", ev.name);
			g_fail = 1;
			break;
		}
		CHECK(ev.kind == e->kind);
		CHECK(ev.id == e->id);
		if (e->name)
			CHECK(ev.name && !strcmp(ev.name, e->name));
		if (e->kind == RTE_EV_USER_INT)
			CHECK(ev.u.value == e->v);
		if (e->kind == RTE_EV_COUNTER)
			CHECK(ev.u.counter == (uint64_t)e->v);
		if (e->kind == RTE_EV_USER_CUSTOM)
			CHECK(ev.u.custom.len == 5 &&
			      !memcmp(ev.u.custom.bytes, "hello", 5));
		if (e->kind == RTE_EV_ALLOC)
			CHECK(ev.u.buckets[3] == 3 && ev.u.buckets[19] == 19);
		n++;
	}
	CHECK(r == 0);
	CHECK(n == sizeof(k_expect) / sizeof(k_expect[0]));
	rte_cursor_close(c);
}

int main(int argc, char **argv)
{
	uint64_t buckets[RTE_ALLOC_BUCKETS];
	char path[4096];
	int ids[4];

	if (argc > 1 && !strcmp(argv[1], "many")) {
		/* Never started: all 8192 ids are the program's. */
		check_too_many(RTE_MAX_USER_EVENTS - 1, 0);
		CHECK(rte_path(path, sizeof(path)) == RTE_ESTATE);
		printf("%s\n", g_fail ? "FAILED" : "ok");
		return g_fail;
	}

	CHECK(rte_path(path, sizeof(path)) == RTE_ESTATE);
	CHECK(!rte_is_active());
	check_register();
	ids[0] = rte_register("a.unit", RTE_TYPE_UNIT);
	ids[1] = rte_register("a.span", RTE_TYPE_SPAN);
	ids[2] = rte_register("a.custom", RTE_TYPE_CUSTOM);
	CHECK(ids[0] == 2 && ids[1] == 3 && ids[2] == 4);
	rte_int(1, 1); /* not started: nothing written */
	errno = EXDEV;
	CHECK(rte_start() == RTE_OK);
	CHECK(errno == EXDEV);
	CHECK(rte_start() == RTE_OK); /* again: nothing to do */
	CHECK(rte_is_active());
	CHECK(rte_path(path, 4) == RTE_EINVAL);
	CHECK(rte_path(path, sizeof(path)) > 0);
	rte_int(1, 42);
	rte_int(ids[0], 1);  /* wrong type: ignored */
	rte_int(9999, 1);    /* out of range: ignored */
	rte_int(-1, 1);
	rte_unit(ids[0]);
	rte_span_begin(ids[1]);
	rte_span_end(ids[1]);
	rte_custom(ids[2], "hello", 5);
	rte_runtime_begin(RTE_P_MINOR);
	rte_runtime_end(RTE_P_MINOR);
	rte_runtime_counter(RTE_C_MINOR_PROMOTED, 77);
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		buckets[i] = i;
	rte_runtime_alloc(buckets);
	rte_runtime_lifecycle(RTE_LC_DOMAIN_SPAWN, 9);
	rte_pause();
	CHECK(!rte_is_active());
	rte_int(1, 1000); /* paused: not written */
	rte_resume();
	CHECK(rte_is_active());
	rte_int(1, -7);
	check_too_many(RTE_MAX_USER_EVENTS - 1 - 11 - 4, 5);
	check_file(path, ids);
	printf("%s %s\n", g_fail ? "FAILED" : "ok", path);
	return g_fail;
}
