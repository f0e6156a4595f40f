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

static rd_merge *merge_of(struct file *f, unsigned n)
{
	rd_merge *m = rd_merge_new();

	assert_non_null(m);
	for (unsigned i = 0; i < n; i++) {
		rte_cursor *c;

		assert_int_equal(rte_cursor_open(f[i].path, &c, NULL, 0), RTE_OK);
		assert_int_equal(rd_merge_add(m, c), (int)i);
	}
	assert_int_equal(rd_merge_refill(m), RTE_OK);
	return m;
}

static void streams_come_out_in_time_order_ties_by_source_then_ring(void **state)
{
	struct file f[2];
	struct rd_merge_item it;
	rd_merge *m;
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
	while (rd_merge_next(m, &it) == 1) {
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
	rd_merge_free(m);
	drop_file(&f[0]);
	drop_file(&f[1]);
}

static void a_loss_is_placed_before_the_rings_next_event(void **state)
{
	struct file f;
	struct rd_merge_item it;
	rd_merge *m;
	uint64_t lost = 0, first_after = 0;
	int saw_lost = 0;

	(void)state;
	make_file(&f, "wrap.events", 2, 6); /* 64 words: wraps quickly */
	for (uint64_t i = 0; i < 100; i++)
		put_int(&f, 0, 1000 + i, i);
	put_int(&f, 1, 1010, 7);
	m = merge_of(&f, 1);
	while (rd_merge_next(m, &it) == 1) {
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
	assert_int_equal(lost, rte_cursor_ring_lost(rd_merge_cursor(m, 0), 0));
	rd_merge_free(m);
	drop_file(&f);
}

static void a_corrupt_ring_fails_once_and_the_others_go_on(void **state)
{
	struct file f;
	struct rd_merge_item it;
	rd_merge *m;
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
	while ((r = rd_merge_next(m, &it)) != 0) {
		if (r < 0) {
			assert_int_equal(r, RTE_ECORRUPT);
			assert_null(it.ev);
			assert_non_null(strstr(rd_merge_errmsg(m), "ring 0"));
			errors++;
		} else {
			assert_int_equal(it.ev->ring, 1);
			events++;
		}
	}
	assert_int_equal(errors, 1);
	assert_int_equal(events, 2);
	rd_merge_free(m);
	drop_file(&f);
}

static void refill_picks_up_what_was_written_later(void **state)
{
	struct file f;
	struct rd_merge_item it;
	rd_merge *m;

	(void)state;
	make_file(&f, "live.events", 4, 8);
	put_int(&f, 0, 10, 1);
	m = merge_of(&f, 1);
	assert_int_equal(rd_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 1);
	assert_int_equal(rd_merge_next(m, &it), 0);
	put_int(&f, 0, 20, 2);
	put_int(&f, 3, 15, 3); /* a ring that was empty before */
	assert_int_equal(rd_merge_next(m, &it), 0); /* not before a refill */
	assert_int_equal(rd_merge_refill(m), RTE_OK);
	assert_int_equal(rd_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 3);
	assert_int_equal(rd_merge_next(m, &it), 1);
	assert_int_equal(it.ev->u.value, 2);
	assert_int_equal(rd_merge_next(m, &it), 0);
	rd_merge_free(m);
	drop_file(&f);
}

static void unordered_mode_reads_ring_after_ring(void **state)
{
	struct file f[2];
	struct rd_merge_item it;
	rd_merge *m;
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
	m = rd_merge_new();
	rd_merge_set_unordered(m, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rte_cursor_open(f[i].path, &c, NULL, 0), RTE_OK);
		rd_merge_add(m, c);
	}
	rd_merge_refill(m);
	while (rd_merge_next(m, &it) == 1) {
		unsigned key = it.src * 10 + it.ev->ring;

		assert_true(key >= prev_key); /* source by source, ring by ring */
		prev_key = key;
		n++;
	}
	assert_int_equal(n, 30);
	rd_merge_free(m);
	drop_file(&f[0]);
	drop_file(&f[1]);
}

/* One event as read, for comparing two ways of reading; an error is a
 * record of kind -1 with the error in v. */
struct rec {
	int kind;
	unsigned id;
	uint64_t ts, v;
};

#define MAX_RECS 512

static struct rec rec_of(const struct rte_event *ev)
{
	struct rec r = { (int)ev->kind, ev->id, ev->ts, 0 };

	if (ev->kind == RTE_EV_LOST)
		r.v = ev->u.lost_words;
	else if (ev->kind == RTE_EV_USER_INT || ev->kind == RTE_EV_COUNTER)
		r.v = (uint64_t)ev->u.value;
	else if (ev->kind == RTE_EV_USER_CUSTOM)
		r.v = ev->u.custom.len * 1000u + ev->u.custom.bytes[0];
	return r;
}

/* Read `ring` of `path` to its end with batches of `batch` events (0: one
 * rte_cursor_next() at a time) into out; the first error ends it. */
static size_t read_ring(const char *path, unsigned ring, size_t batch,
                        struct rec *out)
{
	struct rte_event ev[64];
	rte_cursor *c;
	size_t n = 0;
	int r;

	assert_int_equal(rte_cursor_open(path, &c, NULL, 0), RTE_OK);
	for (;;) {
		r = batch ? rte_cursor_next_batch(c, ring, ev, batch)
		          : rte_cursor_next(c, ring, ev);
		if (r <= 0)
			break;
		if (r > 1)
			for (int i = 0; i < r; i++)
				assert_int_not_equal(ev[i].kind, RTE_EV_LOST);
		for (int i = 0; i < r; i++) {
			assert_true(n < MAX_RECS);
			out[n++] = rec_of(&ev[i]);
		}
	}
	if (r < 0) {
		assert_non_null(strstr(rte_cursor_errmsg(c), "ring"));
		out[n++] = (struct rec){ -1, 0, 0, (uint64_t)(int64_t)r };
		/* a failed ring keeps failing */
		assert_int_equal(batch ? rte_cursor_next_batch(c, ring, ev, batch)
		                       : rte_cursor_next(c, ring, ev), r);
	}
	rte_cursor_close(c);
	return n;
}

static void batches_read_what_next_reads(void **state)
{
	static const size_t sizes[] = { 1, 2, 7, 64 };
	struct rec want[MAX_RECS], got[MAX_RECS];
	struct rte_ring_writer w;
	uint64_t payload[2], *data;
	struct file f;

	(void)state;
	make_file(&f, "batch.events", 4, 8);
	/* ring 0: every kind; ring 1: wraps (a loss); rings 2 and 3: corrupt
	 * at their sixth message (a length of 0; an int that is too short,
	 * met in the middle of a batch) */
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	strcpy((char *)f.base + f.l.custom_events_offset, "b.x");
	for (uint64_t i = 0; i < 60; i++) {
		uint64_t ts = 100 + i;

		switch (i % 6) {
		case 0: rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), ts); break;
		case 1: rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_EXIT, 1), ts); break;
		case 2: rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 2), ts, i); break;
		case 3: rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_INTERNAL, 0), ts); break;
		case 4:
			rte_custom_encode("abc", 3, payload);
			rte_ring_write(&w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 0), ts, payload, 1);
			break;
		default: rte_ring_write0(&w, rte_hdr_make(0, 1, RTE_UMSG_UNIT, 0), ts); break;
		}
	}
	for (uint64_t i = 0; i < 300; i++)
		put_int(&f, 1, 1000 + i, i);
	for (uint64_t i = 0; i < 10; i++) {
		put_int(&f, 2, 5000 + i, i);
		put_int(&f, 3, 6000 + i, i);
	}
	data = (uint64_t *)((char *)f.base + f.l.data_offset);
	data[2 * f.l.ring_size_elements + 15] = 0;
	data[3 * f.l.ring_size_elements + 15] = rte_hdr_make(2, 1, RTE_UMSG_INT, 0);
	for (unsigned ring = 0; ring < 4; ring++) {
		size_t n = read_ring(f.path, ring, 0, want);

		assert_true(n > 5);
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			assert_int_equal(read_ring(f.path, ring, sizes[k], got), n);
			assert_memory_equal(got, want, n * sizeof *want);
		}
		if (ring == 1)
			assert_int_equal(want[0].kind, RTE_EV_LOST);
		if (ring >= 2)
			assert_int_equal(want[5].kind, -1);
	}
	drop_file(&f);
}

static void runs_deliver_every_event_and_each_error_once(void **state)
{
	struct file f[2];
	struct rd_merge_run run;
	rd_merge *m;
	rte_cursor *c;
	uint64_t *data;
	unsigned events = 0, errors = 0;
	int r;

	(void)state;
	make_file(&f[0], "r0.events", 2, 10);
	make_file(&f[1], "r1.events", 1, 10);
	for (uint64_t i = 0; i < 300; i++) {
		put_int(&f[0], 0, 100 + i, i);
		put_int(&f[0], 1, 100 + i, i);
		put_int(&f[1], 0, 100 + i, i);
	}
	data = (uint64_t *)((char *)f[0].base + f[0].l.data_offset);
	data[f[0].l.ring_size_elements + 3 * 280] = 0; /* ring 1: 280 good */
	m = rd_merge_new();
	rd_merge_set_unordered(m, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rte_cursor_open(f[i].path, &c, NULL, 0), RTE_OK);
		rd_merge_add(m, c);
	}
	rd_merge_refill(m);
	while ((r = rd_merge_next_run(m, &run)) != 0) {
		if (r < 0) {
			assert_int_equal(r, RTE_ECORRUPT);
			assert_int_equal(run.src, 0);
			assert_null(run.ev);
			assert_non_null(strstr(rd_merge_errmsg(m), "ring 1"));
			errors++;
			continue;
		}
		assert_int_equal((size_t)r, run.n);
		for (size_t i = 0; i < run.n; i++) {
			assert_int_equal(run.ev[i].ring, run.ev[0].ring);
			assert_int_equal(run.ev[i].u.value, (int64_t)(run.ev[i].ts - 100));
		}
		events += (unsigned)run.n;
	}
	assert_int_equal(errors, 1);
	assert_int_equal(events, 300 + 280 + 300);
	rd_merge_free(m);
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
		cmocka_unit_test(batches_read_what_next_reads),
		cmocka_unit_test(runs_deliver_every_event_and_each_error_once),
	};

	return cmocka_run_group_tests_name("reader/merge", tests, setup, teardown);
}
