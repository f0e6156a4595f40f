# tests/stress/ and tests/faults/: stress with exact accounting (16 threads
# followed live, thread churn, fork storm) and fault injection (full disk,
# unwritable directory, read-only file system, deleted file, reader racing
# the creation, SIGKILL, planted symlink, overflowing header). Real
# programs under the real preloaded librte.so, read back with the real
# consumer library and rte-read.
#
#   make test-stress   the stress tests (part of make test; under
#                      ThreadSanitizer too, via check-tsan's TSAN_RUNS)
#   make test-faults   the fault tests (part of make test); the ones that
#                      mount a tmpfs need root and are skipped otherwise,
#                      with the reason printed
#
# STRESS_EVENTS: events per thread of the default-ring stress run (2M, so
# 32M events in all; sanitizer builds use a tenth).

STRESS_DIR  := $(BUILD)/tests/stress
STRESS_PROGS := writer churn forkstorm
STRESS_PROG_BINS := $(STRESS_PROGS:%=$(STRESS_DIR)/%)
STRESS_FOLLOW := $(STRESS_DIR)/follow
FAULTS_DIR  := $(BUILD)/tests/faults
FAULTS_BINS := $(FAULTS_DIR)/victim

STRESS_EVENTS ?= $(if $(SAN),200000,2000000)
# An ASan-built librte.so needs the ASan runtime first in LD_PRELOAD. A
# TSan-built one needs nothing more: the TSan-built programs load libtsan
# themselves (preloading libtsan as well makes them crash at start-up).
STRESS_SAN_RT := $(if $(findstring address,$(SAN)),$(shell $(CC) -print-file-name=libasan.so))

# The traced programs use the API through weak references (no -lrte): the
# same binary runs with and without the shim.
$(STRESS_PROG_BINS): $(STRESS_DIR)/%: $(BUILD)/obj/tests/stress/%.o
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BASE_LDFLAGS)

$(FAULTS_BINS): $(FAULTS_DIR)/%: $(BUILD)/obj/tests/faults/%.o
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BASE_LDFLAGS)

$(STRESS_FOLLOW): $(BUILD)/obj/tests/stress/follow.o $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BUILD)/librteconsumer.a $(BASE_LDFLAGS)

$(BUILD)/obj/tests/faults/%.o: BASE_CFLAGS += -Itests/stress

.PHONY: test-stress test-faults
TEST_RUNS += test-stress test-faults
TSAN_RUNS += test-stress

test-stress: $(STRESS_PROG_BINS) $(STRESS_FOLLOW) $(BUILD)/librte.so $(BUILD)/rte-read
	@RTE_BUILD=$(abspath $(BUILD)) RTE_SAN_RT="$(STRESS_SAN_RT)" RTE_SAN="$(SAN)" \
		STRESS_EVENTS=$(STRESS_EVENTS) CC="$(CC)" sh tests/stress/run.sh

test-faults: $(FAULTS_BINS) $(BUILD)/librte.so $(BUILD)/rte-read
	@RTE_BUILD=$(abspath $(BUILD)) RTE_SAN_RT="$(STRESS_SAN_RT)" RTE_SAN="$(SAN)" \
		sh tests/faults/run.sh
