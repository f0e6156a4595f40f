# fuzz/: the libFuzzer target of the consumer library, its seeds, its
# regression inputs, and the sanitizer run of the concurrency tests.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_ARGS=...]
#                     fuzz the consumer (clang + libFuzzer, ASan + UBSan);
#                     the corpus grows in $(BUILD)/fuzz/corpus, crashes land
#                     in $(BUILD)/fuzz/artifacts/
#   make fuzz-ci      the same for FUZZ_CI_SECONDS (60) from the seeds only;
#                     fails on any crash, hang (> 5 s per input), leak, or
#                     sanitizer report
#   make fuzz-regress replay fuzz/regressions/ and the seeds through the
#                     target: built with gcc + ASan + UBSan always, and with
#                     libFuzzer too when clang is installed (part of make test)
#   make fuzz-cov     line/branch coverage of common/ by the seeds, the grown
#                     corpus and the regressions (needs llvm-14)
#   make check-tsan   build $(TSAN_RUNS) in build-tsan/ with
#                     -fsanitize=thread and run them
#
# TSAN_RUNS lists the phony test-run targets that exercise concurrency
# (writer and reader threads, many writing threads, fork while writing).
# Any fragment may append its own: `TSAN_RUNS += my-test-run`. A target
# listed there must build everything it runs from $(BUILD) and pass $(SAN)
# on (BASE_CFLAGS/BASE_LDFLAGS do), so that it runs under ThreadSanitizer.
#
# A fuzz input that found a bug goes into fuzz/regressions/ (any name; one
# line in its commit saying what it found), so that make test replays it.

FUZZ_CC        ?= clang
FUZZ_SECONDS   ?= 60
FUZZ_CI_SECONDS ?= 60
FUZZ_ARGS      ?=
FUZZ_DIR       := $(BUILD)/fuzz
FUZZ_BIN       := $(FUZZ_DIR)/rte-fuzz-consumer
FUZZ_REPLAY    := $(FUZZ_DIR)/rte-fuzz-replay
FUZZ_MKSEEDS   := $(FUZZ_DIR)/rte-fuzz-mkseeds
FUZZ_SEEDS     := $(FUZZ_DIR)/seeds
# gc/ is left out: 128 rings of 2^17 words exceed what an input may build;
# slot_reuse/ too: its expected JSONL is compressed (fuzz-regress compares
# with a plain one)
FUZZ_FIXTURES  ?= $(filter-out tests/fixtures/ocaml-5.2/gc/% tests/fixtures/ocaml-5.2/slot_reuse/%,$(wildcard tests/fixtures/ocaml-5.2/*/*.events.gz))
FUZZ_HAVE_CLANG := $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo yes)

FUZZ_LIB_SRCS  := $(CONSUMER_SRCS) common/writer/ring.c
FUZZ_HARNESS   := fuzz/fuzz_consumer.c fuzz/json_check.c
FUZZ_SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all \
                  -fno-omit-frame-pointer
FUZZ_CFLAGS    := -std=c11 -D_GNU_SOURCE $(WARN) -g -O1 -pthread \
                  -Iinclude -Icommon/format -Icommon/push -Icommon/writer -Icommon/consumer -Ifuzz -MMD -MP
FUZZ_OPTS       = -timeout=5 -dict=fuzz/rte.dict -print_final_stats=1 \
                  -artifact_prefix=$(FUZZ_DIR)/artifacts/

# --- the libFuzzer build (clang): sanitizers everywhere, coverage feedback
# from the library and the harness
FUZZ_LF_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/lf/%.o) \
                $(FUZZ_HARNESS:%.c=$(FUZZ_DIR)/lf/%.o)

$(FUZZ_DIR)/lf/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# The JSON checker is an oracle, not code under test: no coverage feedback
# from it (it would only slow every run down and steer the fuzzer nowhere).
$(FUZZ_DIR)/lf/fuzz/json_check.o: fuzz/json_check.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SANFLAGS) -c $< -o $@

$(FUZZ_BIN): $(FUZZ_LF_OBJS)
	$(FUZZ_CC) -o $@ $^ $(FUZZ_SANFLAGS) -fsanitize=fuzzer -pthread -lzstd

# --- the replay build (the default compiler, ASan + UBSan, no libFuzzer)
FUZZ_ASAN_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/asan/%.o) \
                  $(FUZZ_HARNESS:%.c=$(FUZZ_DIR)/asan/%.o) \
                  $(FUZZ_DIR)/asan/fuzz/replay.o

$(FUZZ_DIR)/asan/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) $(CFLAGS) $(FUZZ_SANFLAGS) -c $< -o $@

$(FUZZ_REPLAY): $(FUZZ_ASAN_OBJS)
	$(CC) -o $@ $^ $(FUZZ_SANFLAGS) -pthread -lzstd

# --- the seeds: generated scenarios plus every OCaml 5.2 fixture file
$(FUZZ_MKSEEDS): $(BUILD)/obj/fuzz/mkseeds.o
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

$(BUILD)/obj/fuzz/mkseeds.o: BASE_CFLAGS += -Ifuzz

# Rewritten only when the list of fixtures changes, so seeds follow it.
$(FUZZ_DIR)/fixtures.list: fuzz-always
	@mkdir -p $(@D)
	@echo '$(FUZZ_FIXTURES)' | cmp -s - $@ 2>/dev/null || echo '$(FUZZ_FIXTURES)' >$@

$(FUZZ_DIR)/seeds.stamp: $(FUZZ_MKSEEDS) $(FUZZ_FIXTURES) $(FUZZ_DIR)/fixtures.list
	@rm -rf $(FUZZ_SEEDS) $(FUZZ_DIR)/fixtures
	@mkdir -p $(FUZZ_SEEDS) $(FUZZ_DIR)/fixtures
	@set -e; files=; for gz in $(FUZZ_FIXTURES); do \
		d=$(FUZZ_DIR)/fixtures/$$(basename $$(dirname $$gz)); \
		mkdir -p $$d; f=$$d/$$(basename $$gz .gz); \
		gzip -dc $$gz >$$f; files="$$files $$f"; done; \
	$(FUZZ_MKSEEDS) $(FUZZ_SEEDS) $$files
	@rm -rf $(FUZZ_DIR)/fixtures
	@echo "fuzz: $$(ls $(FUZZ_SEEDS) | wc -l) seeds in $(FUZZ_SEEDS)"
	@touch $@

.PHONY: fuzz fuzz-ci fuzz-regress fuzz-seeds check-tsan fuzz-always
TEST_RUNS += fuzz-regress
fuzz-seeds: $(FUZZ_DIR)/seeds.stamp

fuzz: $(FUZZ_BIN) $(FUZZ_DIR)/seeds.stamp
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	$(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_ARGS) \
		$(FUZZ_DIR)/corpus $(FUZZ_SEEDS)

fuzz-ci: $(FUZZ_BIN) $(FUZZ_DIR)/seeds.stamp
	@rm -rf $(FUZZ_DIR)/corpus-ci && mkdir -p $(FUZZ_DIR)/corpus-ci $(FUZZ_DIR)/artifacts
	$(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_CI_SECONDS) \
		$(FUZZ_DIR)/corpus-ci $(FUZZ_SEEDS)
	@echo "fuzz-ci: $(FUZZ_CI_SECONDS) s without a crash, hang, leak or sanitizer report"

# Regressions and seeds: always through the gcc ASan build; through the
# libFuzzer build as well when clang is there.
# A seed made from an OCaml fixture must rebuild that file exactly: the
# target then reads the events OCaml's own consumer read from it.
fuzz-regress: $(FUZZ_REPLAY) $(FUZZ_DIR)/seeds.stamp $(if $(FUZZ_HAVE_CLANG),$(FUZZ_BIN))
	$(FUZZ_REPLAY) fuzz/regressions $(FUZZ_SEEDS)
	@set -e; for gz in $(FUZZ_FIXTURES); do \
		d=$$(basename $$(dirname $$gz)); p=$$(basename $$gz .events.gz); \
		RTE_FUZZ_DUMP=1 $(FUZZ_REPLAY) $(FUZZ_SEEDS)/ring-$$d-$$p 2>/dev/null | \
			cmp -s - $$(dirname $$gz)/$$p.expected.jsonl || \
			{ echo "fuzz-regress: seed ring-$$d-$$p does not rebuild $$gz"; exit 1; }; \
	done; echo "fuzz-regress: $(words $(FUZZ_FIXTURES)) fixture seeds decode as OCaml 5.2 did"
ifeq ($(FUZZ_HAVE_CLANG),yes)
	$(FUZZ_BIN) $$(find fuzz/regressions $(FUZZ_SEEDS) -type f | sort) \
		>$(FUZZ_DIR)/regress.log 2>&1 || { tail -n 40 $(FUZZ_DIR)/regress.log; exit 1; }
	@echo "fuzz-regress: libFuzzer build ran the same inputs clean"
else
	@echo "fuzz-regress: $(FUZZ_CC) not found, libFuzzer replay skipped"
endif

# Line coverage of the consumer by every input kept so far (seeds, the
# grown corpus, regressions), measured with clang's source coverage.
FUZZ_LLVM_COV      ?= llvm-cov-14
FUZZ_LLVM_PROFDATA ?= llvm-profdata-14
FUZZ_COV_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/cov/%.o) \
                 $(FUZZ_HARNESS:%.c=$(FUZZ_DIR)/cov/%.o) $(FUZZ_DIR)/cov/fuzz/replay.o
FUZZ_COV_FLAGS := -fprofile-instr-generate -fcoverage-mapping

$(FUZZ_DIR)/cov/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_COV_FLAGS) -c $< -o $@

$(FUZZ_DIR)/rte-fuzz-cov: $(FUZZ_COV_OBJS)
	$(FUZZ_CC) -o $@ $^ $(FUZZ_COV_FLAGS) -pthread -lzstd

.PHONY: fuzz-cov
fuzz-cov: $(FUZZ_DIR)/rte-fuzz-cov $(FUZZ_DIR)/seeds.stamp
	@mkdir -p $(FUZZ_DIR)/corpus
	LLVM_PROFILE_FILE=$(FUZZ_DIR)/cov.profraw $(FUZZ_DIR)/rte-fuzz-cov \
		$(FUZZ_SEEDS) $(FUZZ_DIR)/corpus fuzz/regressions
	$(FUZZ_LLVM_PROFDATA) merge -o $(FUZZ_DIR)/cov.profdata $(FUZZ_DIR)/cov.profraw
	$(FUZZ_LLVM_COV) report $(FUZZ_DIR)/rte-fuzz-cov \
		-instr-profile=$(FUZZ_DIR)/cov.profdata $(CONSUMER_SRCS)

# ThreadSanitizer: the unit tests of common/ (their test_concurrent has a
# writer and a reader thread on one ring); other fragments append theirs.
# gcc warns that TSan does not model atomic_thread_fence (-Wtsan): the
# ring's data words are relaxed atomics, so TSan still sees no race there,
# and the fence-based torn-read check is covered by the loss accounting of
# the concurrency tests rather than by TSan. halt_on_error makes the first
# report fail the run.
TSAN_RUNS += test-unit

check-tsan:
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $$TSAN_OPTIONS" \
	$(MAKE) BUILD=build-tsan SAN="-fsanitize=thread -Wno-tsan" \
		CFLAGS="-O1 -g" $(TSAN_RUNS)
	@echo "check-tsan: $(TSAN_RUNS) passed under ThreadSanitizer"
