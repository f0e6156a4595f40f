/*
 * test_merge.c - the k-way merge of reader/merge.h over real ring files
 * written with the project's ring writer and read with the real consumer.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../reader/merge.h"
#include "ring.h"

struct file {
	char path[256];
	void *base;
	struct rte_layout l;
};

static char tmpdir[] = "/tmp/rte-test-merge-XXXXXX";

static void make_file(struct file *f, const char *name, unsigned rings,
                      unsigned log2)
{
	int fd;

	snprintf(f->path, sizeof f->path, "%s/%s", tmpdir, name);
	assert_int_equal(rte_layout_compute(&f->l, rings, log2), 0);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)f->l.total_size), 0);
	f->base = mmap(NULL, f->l.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(f->base != MAP_FAILED);
	close(fd);
	memcpy(f->base, &f->l.version, RTE_METADATA_BYTES);
}

static void drop_file(struct file *f)
{
	munmap(f->base, f->l.total_size);
	unlink(f->path);
}

static void put_int(struct file *f, unsigned ring, uint64_t ts, uint64_t v)
{
	struct rte_ring_writer w;

	rte_ring_writer_attach(&w, f->base, &f->l, ring);
	rte_ring_write1(&w, rte_hdr_make(0, 1, RTE_UMSG_INT, 0), ts, v);
}

static rte_merge *merge_of(struct file *f, unsigned n)
{
	rte_merge *m = rte_merge_new();

	assert_non_null(m);
	for (unsigned i = 0; i < n; i++) {
		rte_cursor *c;

		assert_int_equal(rte_cursor_open(f[i].path, &c, NULL, 0), RTE_OK);
		assert_int_equal(rte_merge_add(m, c), (int)i);
	}
	assert_int_equal(rte_merge_refill(m), RTE_OK);
	return m;
}

static void streams_come_out_in_time_order_ties_by_source_then_ring(void **state)
{
	struct file f[2];
	struct rte_merge_item it;
	rte_merge *m;
	uint64_t last = 0;
	unsigned n = 0, last_src = 0, last_ring = 0;

	(void)state;
	make_file(&f[0], "a.events", 3, 8);
	make_file(&f[1], "b.events", 2, 8);
	for (uint64_t i = 0; i < 50; i++) {
		put_int(&f[0], 0, 100 + 3 * i, i);
		put_int(&f[0], 2, 101 + 5 * i, i);
		put_int(&f[1], 1, 100 + 3 * i, i); /* same times as f0 ring 0 */
	}
	m = merge_of(f, 2);
	while (rte_merge_next(m, &it) == 1) {
		assert_true(it.ts >= last);
		if (it.ts == last && n)
			assert_true(it.src > last_src ||
			            (it.src == last_src && it.ev->ring > last_ring));
		assert_int_equal(it.ts, it.ev->ts);
		last = it.ts;
		last_src = it.src;
		last_ring = it.ev->ring;
		n++;
	}
	assert_int_equal(n, 150);
	rte_merge_free(m);
	drop_file(&f[0]);
	drop_file(&f[1]);
}

static void a_loss_is_placed_before_the_rings_next_event(void **state)
{
	struct file f;
	struct rte_merge_item it;
	rte_merge *m;
	uint64_t lost = 0, first_after = 0;
	int saw_lost = 0;

	(void)state;
	make_file(&f, "wrap.events", 2, 6); /* 64 words: wraps quickly */
	for (uint64_t i = 0; i < 100; i++)
		put_int(&f, 0, 1000 + i, i);
	put_int(&f, 1, 1010, 7);
	m = merge_of(&f, 1);
	while (rte_merge_next(m, &it) == 1) {
		if (it.ev->kind == RTE_EV_LOST) {
			assert_int_equal(it.ev->ring, 0);
			lost += it.ev->u.lost_words;
			saw_lost = 1;
			first_after = it.ts;
		} else if (saw_lost && it.ev->ring == 0 && first_after) {
			assert_int_equal(it.ts, first_after); /* right before it */
			first_after = 0;
		}
	}
	assert_true(saw_lost);
	assert_true(lost > 0);
	assert_int_equal(lost, rte_cursor_ring_lost(rte_merge_cursor(m, 0), 0));
	rte_merge_free(m);
	drop_file(&f);
}

static void a_corrupt_ring_fails_once_and_the_others_go_on(void **state)
{
	struct file f;
	struct rte_merge_item it;
	rte_merge *m;
	uint64_t *hdr, *data;
	int errors = 0, events = 0, r;

	(void)state;
	make_file(&f, "bad.events", 2, 8);
	put_int(&f, 1, 50, 1);
	put_int(&f, 1, 60, 2);
	/* ring 0: tail covers a zero header word */
	hdr = (uint64_t *)((char *)f.base + f.l.headers_offset);
	data = (uint64_t *)((char *)f.base + f.l.data_offset);
	data[0] = 0;
	hdr[1] = 4;
	m = merge_of(&f, 1);
	while ((r = rte_merge_next(m, &it)) != 0) {
		if (r < 0) {
			assert_int_equal(r, RTE_ECORRUPT);
			assert_null(it.ev);
			assert_non_null(strstr(rte_merge_errmsg(m), "ring 0"));
			errors++;
		} else {
			assert_int_equal(it.ev->ring, 1);
			events++;
		}
	}
	assert_int_equal(errors, 1);
	assert_int_equal(events, 2);
	rte_merge_free(m);
	drop_file(&f);
}

static void refill_picks_up_what_was_written_later(void **state)
{
	struct file f;
	struct rte_merge_item it;
	rte_merge *m;

	(void)state;
	make_file(&f, "live.events", 4, 8);
	put_int(&f, 0, 10, 1);
	m = merge_of(&f, 1);
	assert_int_equal(rte_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 1);
	assert_int_equal(rte_merge_next(m, &it), 0);
	put_int(&f, 0, 20, 2);
	put_int(&f, 3, 15, 3); /* a ring that was empty before */
	assert_int_equal(rte_merge_next(m, &it), 0); /* not before a refill */
	assert_int_equal(rte_merge_refill(m), RTE_OK);
	assert_int_equal(rte_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 3);
	assert_int_equal(rte_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 2);
	assert_int_equal(rte_merge_next(m, &it), 0);
	rte_merge_free(m);
	drop_file(&f);
}

static void unordered_mode_reads_ring_after_ring(void **state)
{
	struct file f[2];
	struct rte_merge_item it;
	rte_merge *m;
	rte_cursor *c;
	unsigned n = 0, prev_key = 0;

	(void)state;
	make_file(&f[0], "u0.events", 2, 8);
	make_file(&f[1], "u1.events", 2, 8);
	for (uint64_t i = 0; i < 10; i++) {
		put_int(&f[0], 1, 100 + i, i);
		put_int(&f[0], 0, 200 + i, i);
		put_int(&f[1], 0, 150 + i, i);
	}
	m = rte_merge_new();
	rte_merge_set_unordered(m, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rte_cursor_open(f[i].path, &c, NULL, 0), RTE_OK);
		rte_merge_add(m, c);
	}
	rte_merge_refill(m);
	while (rte_merge_next(m, &it) == 1) {
		unsigned key = it.src * 10 + it.ev->ring;

		assert_true(key >= prev_key); /* source by source, ring by ring */
		prev_key = key;
		n++;
	}
	assert_int_equal(n, 30);
	rte_merge_free(m);
	drop_file(&f[0]);
	drop_file(&f[1]);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streams_come_out_in_time_order_ties_by_source_then_ring),
		cmocka_unit_test(a_loss_is_placed_before_the_rings_next_event),
		cmocka_unit_test(a_corrupt_ring_fails_once_and_the_others_go_on),
		cmocka_unit_test(refill_picks_up_what_was_written_later),
		cmocka_unit_test(unordered_mode_reads_ring_after_ring),
	};

	return cmocka_run_group_tests_name("reader/merge", tests, setup, teardown);
}
