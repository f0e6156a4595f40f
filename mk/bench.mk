# bench/: make bench builds the benchmark programs and runs bench/run.py,
# which prints one table of medians and ratios and writes $(BUILD)/bench.json.
#   make bench                 full run (about 2-4 minutes on 2 cores)
#   make bench BENCH_ARGS=--quick   a smoke run
#   make bench-workloads       configure and make -j2 of this project,
#                              untraced, under the shim, rte-run and
#                              strace -f (10 minutes or more)

BENCH_ARGS ?=
BENCH_BINS := $(BUILD)/bench/producer $(BUILD)/bench/spawn $(BUILD)/bench/gen \
	$(BUILD)/tests/run/spans $(BUILD)/rte-run $(BUILD)/rte-run-exec $(BUILD)/rte-read \
	$(BUILD)/bench/mallocs $(BUILD)/bench/heapshapes

# The LTTng-UST comparison is built only where liblttng-ust-dev is installed
# (bench/run.py skips it with a printed reason otherwise).
HAVE_LTTNG := $(shell pkg-config --exists lttng-ust 2>/dev/null && echo 1)
ifeq ($(HAVE_LTTNG),1)
BENCH_BINS += $(BUILD)/bench/lttng
$(BUILD)/obj/bench/lttng.o: BASE_CFLAGS += -Ibench -Wno-missing-prototypes -Wno-strict-prototypes -Wno-shadow
$(BUILD)/bench/lttng: $(BUILD)/obj/bench/lttng.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS) $$(pkg-config --libs lttng-ust) -ldl
endif

.PHONY: bench bench-bins bench-workloads
bench-bins: $(BENCH_BINS)

$(BUILD)/bench/producer: $(BUILD)/obj/bench/producer.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/..' $(BASE_LDFLAGS)

# The allocation profiler's program: without PIE, so that bench/alloc.py
# names the sites of the samples with nm.
$(BUILD)/bench/mallocs: bench/mallocs.c bench/xorshift.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -no-pie \
		-Wall -Wextra -Werror -o $@ $< $(BASE_LDFLAGS)

# More malloc-heavy shapes (LIFO pairs, realloc growth, many threads).
$(BUILD)/bench/heapshapes: bench/heapshapes.c bench/xorshift.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -pthread \
		-Wall -Wextra -Werror -o $@ $< $(BASE_LDFLAGS)

$(BUILD)/bench/spawn: $(BUILD)/obj/bench/spawn.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

$(BUILD)/bench/gen: $(BUILD)/obj/bench/gen.o $(WRITER_OBJS) $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

# $$(ALL): complete only once every fragment is read (.SECONDEXPANSION).
bench: $$(ALL) $(BENCH_BINS)
	python3 bench/run.py $(BUILD) $(BENCH_ARGS)

bench-workloads: $$(ALL) $(BENCH_BINS)
	python3 bench/run.py $(BUILD) --only workloads $(BENCH_ARGS)
