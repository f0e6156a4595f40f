# The heap of the allocation profiler (RTE_ALLOC): peak, heap series,
# temporaries (tests/heap/), real programs under the real shim, checked
# against heaptrack where it is installed.
#
#   make test-heap   build and run them (part of `make test`)

HEAP_BINS := $(BUILD)/tests/heap/shape $(BUILD)/tests/heap/bad $(BUILD)/tests/heap/mt \
	$(BUILD)/tests/heap/sites $(BUILD)/tests/heap/grow

$(BUILD)/tests/heap/%: tests/heap/progs/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(ALLOC_PROG_CFLAGS) -no-pie -o $@ $< $(BASE_LDFLAGS)

# shape.c linked with jemalloc (Debian's libjemalloc2 has no -dev link
# name: the library's own path), where it is installed.
JEMALLOC := $(firstword $(wildcard /usr/lib/*/libjemalloc.so.2))
ifneq ($(JEMALLOC),)
HEAP_BINS += $(BUILD)/tests/heap/shape_je
$(BUILD)/tests/heap/shape_je: tests/heap/progs/shape.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(ALLOC_PROG_CFLAGS) -no-pie -o $@ $< $(JEMALLOC) $(BASE_LDFLAGS)
endif

# Ring files of odd peak sequences (t_peaks), with our own writer.
HEAP_BINS += $(BUILD)/tests/heap/peaks
$(BUILD)/tests/heap/peaks: $(BUILD)/obj/tests/heap/progs/peaks.o $(WRITER_OBJS) $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)
.SECONDARY: $(BUILD)/obj/tests/heap/progs/peaks.o

.PHONY: test-heap
TEST_RUNS += test-heap
TSAN_RUNS += test-heap
test-heap: $(HEAP_BINS) $(BUILD)/librte.so $(BUILD)/rte-read $(BUILD)/rte-run
	@RTE_BUILD=$(abspath $(BUILD)) RTE_SAN="$(SAN)" sh tests/heap/run.sh
