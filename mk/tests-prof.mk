# The CPU profiler (RTE_PROFILE, shim/prof/): its tests (tests/prof/) and
# its benchmark program.
#
#   make test-prof    build and run the profiler tests (part of `make test`,
#                     and of check-tsan)
#
# tests/prof/progs/cpu.c is built -O1 with frame pointers, its named
# functions never inlined, so that its call tree is known.

PROF_CPU := $(BUILD)/tests/prof/cpu
PROF_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
	-pthread -Wall -Wextra -Werror -Iinclude

$(PROF_CPU): tests/prof/progs/cpu.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(PROF_CFLAGS) -o $@ $< $(BASE_LDFLAGS)
ALL += $(PROF_CPU)

# tests/prof/progs/cxx.cc: a C++ program (mangled names) for test_cxx.
PROF_CXX := $(BUILD)/tests/prof/cxx
$(PROF_CXX): tests/prof/progs/cxx.cc | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -o $@ $< \
		$(BASE_LDFLAGS)
ALL += $(PROF_CXX)

# bench/backtrace (mk/tests-crash.mk) also times the profiler's two ways
# of capturing in a signal handler: with frame pointers, so that the
# frame-pointer walk sees the whole stack.
$(BUILD)/obj/bench/backtrace.o: BASE_CFLAGS += -fno-omit-frame-pointer

PROF_ASAN_RT := $(if $(findstring address,$(SAN)),$(shell $(CC) -print-file-name=libasan.so))

# The second pass: the same programs sampled by the perf clock
# (RTE_PROFILE_CLOCK=perf), every sample checked to be the perf clock's.
PROF_PERF_TESTS := tree threads churn fork exec vfork writer syscalls ownsig \
	owned_at_start blocked rte_run
.PHONY: test-prof
TEST_RUNS += test-prof
TSAN_RUNS += test-prof
test-prof: $(PROF_CPU) $(PROF_CXX) $(BUILD)/librte.so $(BUILD)/rte-read $$(RUN_SCRIPT) \
		$$(RUN_EXEC)
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(PROF_ASAN_RT)" \
		RTE_TSAN="$(if $(findstring thread,$(SAN)),1)" \
		sh tests/prof/run.sh
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(PROF_ASAN_RT)" \
		RTE_TSAN="$(if $(findstring thread,$(SAN)),1)" \
		RTE_PROFILE_CLOCK=perf sh tests/prof/run.sh $(PROF_PERF_TESTS)
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(PROF_ASAN_RT)" \
		RTE_TSAN="$(if $(findstring thread,$(SAN)),1)" \
		sh tests/prof/views.sh
