/*
 * test_format.c - rte/format.h and common/format/format.c: header words, names of
 * ids, alloc buckets, custom payload coding and the file layout.
 */
#include <stdio.h>
#include <string.h>

#include "rte_test.h"

static void header_word_fields_round_trip(void **state)
{
	(void)state;
	for (unsigned len = 0; len <= RTE_MAX_MSG_WORDS; len += 31)
		for (int user = 0; user <= 1; user++)
			for (unsigned type = 0; type < 16; type += 5)
				for (unsigned id = 0; id < 8192; id += 1023) {
					uint64_t h = rte_hdr_make(len, user, type, id);

					assert_int_equal(rte_hdr_len(h), len);
					assert_int_equal(rte_hdr_is_user(h), user);
					assert_int_equal(rte_hdr_type(h), type);
					assert_int_equal(rte_hdr_id(h), id);
					assert_int_equal(h & RTE_HDR_LOW_MASK, 0);
				}
}

static void header_word_matches_the_documented_bit_layout(void **state)
{
	(void)state;
	/* bits 63..54 length, 53 user, 52..49 type, 48..36 id */
	assert_true(rte_hdr_make(1023, 0, 0, 0) == (uint64_t)1023 << 54);
	assert_true(rte_hdr_make(0, 1, 0, 0) == (uint64_t)1 << 53);
	assert_true(rte_hdr_make(0, 0, 15, 0) == (uint64_t)15 << 49);
	assert_true(rte_hdr_make(0, 0, 0, 8191) == (uint64_t)8191 << 36);
	/* out-of-range fields are masked, never spill into neighbours */
	assert_true(rte_hdr_make(1024, 0, 16, 8192) == 0);
}

static void id_names_are_ocamls_and_unknown_ids_have_none(void **state)
{
	(void)state;
	assert_string_equal(rte_lifecycle_name(RTE_LC_RING_START), "ring_start");
	assert_string_equal(rte_lifecycle_name(RTE_LC_DOMAIN_TERMINATE),
	                    "domain_terminate");
	assert_string_equal(rte_counter_name(0), "force_minor_alloc_small");
	assert_string_equal(rte_counter_name(RTE_C_MAJOR_HEAP_LARGE_BLOCKS),
	                    "major_heap_large_blocks");
	assert_string_equal(rte_phase_name(RTE_P_MINOR), "minor");
	assert_string_equal(rte_phase_name(RTE_P_COMPACTION_RELEASE),
	                    "compaction_release");
	for (unsigned i = 0; i < RTE_LC_COUNT; i++)
		assert_non_null(rte_lifecycle_name(i));
	for (unsigned i = 0; i < RTE_C_COUNT; i++)
		assert_non_null(rte_counter_name(i));
	for (unsigned i = 0; i < RTE_P_COUNT; i++)
		assert_non_null(rte_phase_name(i));
	assert_int_equal(RTE_LC_COUNT, 8);
	assert_int_equal(RTE_C_COUNT, 17);
	assert_int_equal(RTE_P_COUNT, 44);
	assert_null(rte_lifecycle_name(RTE_LC_COUNT));
	assert_null(rte_counter_name(RTE_C_COUNT));
	assert_null(rte_phase_name(RTE_P_COUNT));
	assert_null(rte_phase_name(8191));
}

static void alloc_buckets_follow_the_documented_sizes(void **state)
{
	(void)state;
	for (uint64_t s = 0; s < 10; s++)
		assert_int_equal(rte_alloc_bucket(s), s);
	for (uint64_t s = 10; s < 100; s++)
		assert_int_equal(rte_alloc_bucket(s), 9 + s / 10);
	assert_int_equal(rte_alloc_bucket(100), 19);
	assert_int_equal(rte_alloc_bucket(UINT64_MAX), 19);
}

static void custom_payload_matches_the_documented_examples(void **state)
{
	uint64_t w[2];
	unsigned char *b = (unsigned char *)w;

	(void)state;
	assert_int_equal(rte_custom_encode("abcde", 5, w), 1);
	assert_memory_equal(b, "abcde\0\0\2", 8);
	assert_int_equal(rte_custom_encode("abcdefgh", 8, w), 2);
	assert_memory_equal(b, "abcdefgh\0\0\0\0\0\0\0\7", 16);
	assert_int_equal(rte_custom_encode(NULL, 0, w), 1);
	assert_memory_equal(b, "\0\0\0\0\0\0\0\7", 8);
}

static void custom_payload_of_every_length_round_trips(void **state)
{
	static uint64_t w[RTE_MAX_MSG_WORDS];
	static unsigned char src[RTE_CUSTOM_MAX_BYTES];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len <= RTE_CUSTOM_MAX_BYTES; len++) {
		size_t words = rte_custom_encode(src, len, w);

		assert_int_equal(words, (len + 8) / 8);
		assert_true(words <= RTE_MAX_MSG_WORDS - 2);
		assert_int_equal(rte_custom_decode(w, words, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(w, src, len);
	}
	assert_int_equal(rte_custom_words(RTE_CUSTOM_MAX_BYTES),
	                 RTE_MAX_MSG_WORDS - 2);
	assert_int_equal(rte_custom_words(RTE_CUSTOM_MAX_BYTES + 1),
	                 RTE_MAX_MSG_WORDS - 1);
}

static void custom_decode_rejects_a_count_byte_past_the_payload(void **state)
{
	uint64_t w[2] = { 0, 0 };
	unsigned char *b = (unsigned char *)w;
	size_t n = 12345;

	(void)state;
	assert_int_equal(rte_custom_decode(w, 0, &n), -1);
	b[7] = 7; /* 1 word: count 7 -> 0 bytes, the largest valid */
	assert_int_equal(rte_custom_decode(w, 1, &n), 0);
	assert_int_equal(n, 0);
	b[7] = 8;
	assert_int_equal(rte_custom_decode(w, 1, &n), -1);
	b[7] = 255;
	assert_int_equal(rte_custom_decode(w, 1, &n), -1);
	b[15] = 15;
	assert_int_equal(rte_custom_decode(w, 2, &n), 0);
	assert_int_equal(n, 0);
	b[15] = 16;
	assert_int_equal(rte_custom_decode(w, 2, &n), -1);
}

static void layout_matches_ocaml_defaults(void **state)
{
	struct rte_layout l;

	(void)state;
	assert_int_equal(rte_layout_compute(&l, RTE_MAX_DOMAINS_DEFAULT,
	                                    RTE_RING_LOG2_DEFAULT), 0);
	assert_int_equal(l.version, 1);
	assert_int_equal(l.max_domains, 128);
	assert_int_equal(l.ring_header_size_bytes, 80);
	assert_int_equal(l.ring_size_elements, 65536);
	assert_int_equal(l.ring_size_bytes, 8 * 65536);
	assert_int_equal(l.headers_offset, 64);
	assert_int_equal(l.data_offset, 64 + 128 * 80);
	assert_int_equal(l.custom_events_offset, 64 + 128 * 80 + 128 * 8 * 65536);
	assert_int_equal(l.total_size, l.custom_events_offset + 8192 * 128);
}

static void layout_refuses_out_of_range_arguments(void **state)
{
	struct rte_layout l;

	(void)state;
	assert_int_equal(rte_layout_compute(&l, 0, 16), -1);
	assert_int_equal(rte_layout_compute(&l, 4097, 16), -1);
	assert_int_equal(rte_layout_compute(&l, 1, RTE_RING_LOG2_MIN - 1), -1);
	assert_int_equal(rte_layout_compute(&l, 1, RTE_RING_LOG2_MAX + 1), -1);
	assert_int_equal(rte_layout_compute(&l, 1, RTE_RING_LOG2_MIN), 0);
	assert_int_equal(l.ring_size_elements, 16);
	assert_int_equal(rte_layout_compute(&l, 4096, RTE_RING_LOG2_MAX), 0);
	assert_int_equal(l.total_size,
	                 64 + 4096ull * 80 + 4096ull * 8 * (1ull << 24) +
	                         8192 * 128);
}

static void every_error_code_has_its_own_description(void **state)
{
	(void)state;
	for (int e = RTE_ESTATE; e <= RTE_OK; e++) {
		assert_string_not_equal(rte_strerror(e), "unknown error");
		for (int f = RTE_ESTATE; f < e; f++)
			assert_string_not_equal(rte_strerror(e), rte_strerror(f));
	}
	assert_string_equal(rte_strerror(1), "unknown error");
	assert_string_equal(rte_strerror(-1000), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_word_fields_round_trip),
		cmocka_unit_test(header_word_matches_the_documented_bit_layout),
		cmocka_unit_test(id_names_are_ocamls_and_unknown_ids_have_none),
		cmocka_unit_test(alloc_buckets_follow_the_documented_sizes),
		cmocka_unit_test(custom_payload_matches_the_documented_examples),
		cmocka_unit_test(custom_payload_of_every_length_round_trips),
		cmocka_unit_test(custom_decode_rejects_a_count_byte_past_the_payload),
		cmocka_unit_test(layout_matches_ocaml_defaults),
		cmocka_unit_test(layout_refuses_out_of_range_arguments),
		cmocka_unit_test(every_error_code_has_its_own_description),
	};

	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
