# The allocation profiler (RTE_ALLOC): its tests (tests/alloc/), real
# programs under the real shim, decoded by the real rte-read.
#
#   make test-alloc   build and run them (part of `make test`)
#
# The programs are built with -O0 -fno-inline and without PIE, so that the
# leak's stack has the known function at a known address.

ALLOC_PROGS := sizes leak threads execer manythreads live vforker
ALLOC_BINS := $(ALLOC_PROGS:%=$(BUILD)/tests/alloc/%) $(BUILD)/tests/alloc/cxx \
	$(BUILD)/tests/alloc/libearly.so $(BUILD)/tests/alloc/addr
ALLOC_PROG_CFLAGS := -D_GNU_SOURCE -g -O0 -fno-inline -fno-omit-frame-pointer \
	-pthread -Wall -Wextra -Werror

$(BUILD)/tests/alloc/%: tests/alloc/progs/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(ALLOC_PROG_CFLAGS) -no-pie -o $@ $< $(BASE_LDFLAGS) -ldl

# Without PIC too: malloc's address taken in code makes a canonical PLT
# entry in the executable (as in Debian's python3).
$(BUILD)/tests/alloc/addr: tests/alloc/progs/addr.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(ALLOC_PROG_CFLAGS) -fno-pic -no-pie -o $@ $< $(BASE_LDFLAGS)

$(BUILD)/tests/alloc/cxx: tests/alloc/progs/cxx.cc | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) $(ALLOC_PROG_CFLAGS) -o $@ $< $(BASE_LDFLAGS)

# Never instrumented: its dlsym runs before any sanitizer runtime is up.
$(BUILD)/tests/alloc/libearly.so: tests/alloc/progs/early.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(ALLOC_PROG_CFLAGS) -fPIC -shared -o $@ $< -ldl

ALLOC_ASAN_RT := $(if $(findstring address,$(SAN)),$(shell $(CC) -print-file-name=libasan.so))

.PHONY: test-alloc
TEST_RUNS += test-alloc
TSAN_RUNS += test-alloc
test-alloc: $(ALLOC_BINS) $(BUILD)/librte.so $(BUILD)/rte-read
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(ALLOC_ASAN_RT)" \
		RTE_SAN="$(SAN)" sh tests/alloc/run.sh
