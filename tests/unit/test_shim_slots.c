/*
 * test_shim_slots.c - shim/slots.c, the ring slots, linked with the leaves
 * below it only (config, file, log, fd). A real ring file of 4 rings in a
 * private directory; rings are claimed, released, reused, exhausted and
 * broken, names written into their slots, in one thread: the concurrent claims are covered by the shim's
 * thread tests under the real library.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "rte_test.h"

#include "../../shim/slots.h"
#include "ring.h"

#define RINGS 4

static struct rte_config g_cfg;
static struct rte_file g_file;

/* A fresh file of RINGS rings and fresh slots (ring 0 taken, as for the
 * thread that makes a file). */
static int setup(void **state)
{
	char err[PATH_MAX + 160];

	(void)state;
	rte_config_read(&g_cfg);
	assert_int_equal(g_cfg.rings, RINGS);
	assert_int_equal(rte_file_create(&g_file, &g_cfg, getpid(), err,
	                                 sizeof(err)), 0);
	assert_int_equal(g_file.l.max_domains, RINGS);
	rte_slots_reset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rte_file_remove(&g_file);
	rte_file_drop(&g_file);
	return 0;
}

/* Ring 0 is the file maker's: claims hand out 1, 2, 3 in order. */
static void test_claim_in_order(void **state)
{
	(void)state;
	assert_int_equal(rte_slots_claim(&g_file), 1);
	assert_int_equal(rte_slots_claim(&g_file), 2);
	assert_int_equal(rte_slots_claim(&g_file), 3);
}

/* With every ring taken a claim fails with -2, and keeps failing. */
static void test_exhaustion(void **state)
{
	(void)state;
	for (int i = 1; i < RINGS; i++)
		assert_int_equal(rte_slots_claim(&g_file), i);
	assert_int_equal(rte_slots_claim(&g_file), -2);
	assert_int_equal(rte_slots_claim(&g_file), -2);
}

/* A released ring is the next one claimed, and the epoch moves on. */
static void test_release_reuse(void **state)
{
	uint32_t epoch;

	(void)state;
	for (int i = 1; i < RINGS; i++)
		assert_int_equal(rte_slots_claim(&g_file), i);
	epoch = rte_slots_epoch();
	rte_slots_release(2);
	assert_int_equal(rte_slots_epoch(), epoch + 1);
	assert_int_equal(rte_slots_claim(&g_file), 2);
	assert_int_equal(rte_slots_claim(&g_file), -2);
	/* Ring 0 too, once its maker gives it back. */
	rte_slots_release(0);
	assert_int_equal(rte_slots_claim(&g_file), 0);
}

/* free gives a ring back without moving the epoch. */
static void test_free_keeps_epoch(void **state)
{
	uint32_t epoch = rte_slots_epoch();

	(void)state;
	rte_slots_free(0);
	assert_int_equal(rte_slots_epoch(), epoch);
	assert_int_equal(rte_slots_claim(&g_file), 0);
}

/* A broken ring is never handed out again, even when others are free. */
static void test_broken(void **state)
{
	(void)state;
	rte_slots_break(1);
	assert_int_equal(rte_slots_claim(&g_file), 2);
	assert_int_equal(rte_slots_claim(&g_file), 3);
	assert_int_equal(rte_slots_claim(&g_file), -2);
	rte_slots_release(2);
	assert_int_equal(rte_slots_claim(&g_file), 2);
}

/* reset after use: everything free again but ring 0. */
static void test_reset(void **state)
{
	(void)state;
	rte_slots_break(1);
	assert_int_equal(rte_slots_claim(&g_file), 2);
	rte_slots_reset();
	assert_int_equal(rte_slots_claim(&g_file), 1);
}

/* owned_by finds a taken ring by its owner, never a free one. */
static void test_owned_by(void **state)
{
	pthread_t me = pthread_self();
	int r;

	(void)state;
	assert_int_equal(rte_slots_owned_by(RINGS, me), -1);
	r = rte_slots_claim(&g_file);
	assert_int_equal(r, 1);
	rte_slots_set_owner((unsigned)r, me);
	assert_int_equal(rte_slots_owned_by(RINGS, me), 1);
	rte_slots_release((unsigned)r);
	assert_int_equal(rte_slots_owned_by(RINGS, me), -1);
}

/* Claimed rings are reserved: a rebuilt file can reserve them again. */
static void test_rereserve(void **state)
{
	(void)state;
	assert_int_equal(rte_slots_claim(&g_file), 1);
	assert_int_equal(rte_slots_reserve(&g_file, 1), 0);
	assert_int_equal(rte_slots_rereserve(&g_file), 0);
}

static const char *name_slot(unsigned id)
{
	return g_file.base + g_file.l.custom_events_offset +
	       (uint64_t)id * RTE_NAME_SLOT_BYTES;
}

/* A name lands in its own slot, truncated to a NUL-terminated slot. */
static void test_write_name(void **state)
{
	char longname[RTE_NAME_SLOT_BYTES + 10];

	(void)state;
	assert_int_equal(rte_slots_write_name(&g_file, 3, "app.first"), 0);
	assert_int_equal(rte_slots_write_name(&g_file, 4, "app.second"), 0);
	assert_string_equal(name_slot(3), "app.first");
	assert_string_equal(name_slot(4), "app.second");
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rte_slots_write_name(&g_file, RTE_MAX_USER_EVENTS - 1,
	                                      longname), 0);
	assert_int_equal(strlen(name_slot(RTE_MAX_USER_EVENTS - 1)),
	                 RTE_NAME_SLOT_BYTES - 1);
	/* Every page written so far can be reserved again. */
	assert_int_equal(rte_slots_rereserve(&g_file), 0);
}

static long long blocks(const struct rte_file *f)
{
	struct stat st;

	assert_int_equal(stat(f->path, &st), 0);
	return (long long)st.st_blocks * 512;
}

/* A bound writer of a 64 KiB ring starts with its first 16 KiB
 * reserved, doubles its reservation as it writes past it (the file's
 * blocks follow), never beyond the ring, and every event it wrote is in
 * the ring; a rebuilt file can reserve the extents again. */
static void test_grow(void **state)
{
	struct rte_config c;
	struct rte_file f;
	struct rte_ring_writer w;
	char err[PATH_MAX + 160];
	uint64_t hdr = rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1);
	long long b0;

	(void)state;
	setenv("OCAMLRUNPARAM", "e=13", 1);
	rte_config_read(&c);
	setenv("OCAMLRUNPARAM", "e=10", 1);
	assert_int_equal(rte_file_create(&f, &c, 1 << 30, err, sizeof(err)), 0);
	rte_slots_reset();
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	rte_slots_bind(&w, &f, 0);
	assert_int_equal(w.extent, RTE_FILE_RING_FIRST / 8);
	b0 = blocks(&f);
	assert_true(b0 <= (long long)(f.l.data_offset + RTE_FILE_RING_FIRST +
	                              4096));
	for (uint64_t i = 0; i < 700; i++) /* 2100 words: past 2048 */
		assert_int_equal(rte_ring_write1(&w, hdr, i, i), 0);
	assert_int_equal(w.extent, 2 * RTE_FILE_RING_FIRST / 8);
	assert_true(blocks(&f) >= b0 + RTE_FILE_RING_FIRST);
	for (uint64_t i = 700; i < 10000; i++) /* wraps the 8192 words */
		assert_int_equal(rte_ring_write1(&w, hdr, i, i), 0);
	assert_int_equal(w.extent, f.l.ring_size_elements);
	assert_true(blocks(&f) >= (long long)(f.l.data_offset +
	                                      f.l.ring_size_bytes));
	/* The newest event is the last message before the tail. */
	assert_int_equal(w.data[(rte_ring_tail(&w) - 1) & w.mask], 9999);
	/* The next owner of ring 0 finds it reserved whole: no grow. */
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	rte_slots_bind(&w, &f, 0);
	assert_int_equal(w.extent, f.l.ring_size_elements);
	assert_int_equal(rte_slots_rereserve(&f), 0);
	rte_file_remove(&f);
	rte_file_drop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_claim_in_order, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_exhaustion, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_release_reuse, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_free_keeps_epoch, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_broken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owned_by, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_rereserve, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_write_name, setup,
		                                teardown),
		cmocka_unit_test(test_grow),
	};

	setenv("OCAML_RUNTIME_EVENTS_DIR", t_tmpdir(), 1);
	setenv("OCAMLRUNPARAM", "e=10", 1);
	setenv("RTE_RINGS", "4", 1);
	setenv("RTE_LOG", "none", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
