# tests/run/: rte-run as a test harness uses it, and make install into a
# staging DESTDIR followed by a build with pkg-config. Real programs under
# the real shim, read back with the real rte-read and consumer library.
#
# tests/run/drain.sh: rte-run's live drain (captures, losses, faults).
#
#   make test-run    build and run them (part of `make test`, and of
#                    check-tsan)

RUN_TEST_PROGS := flood tree recover spans
RUN_TEST_BINS := $(RUN_TEST_PROGS:%=$(BUILD)/tests/run/%)

$(RUN_TEST_BINS): $(BUILD)/tests/run/%: $(BUILD)/obj/tests/run/progs/%.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS)

.PHONY: test-run
TEST_RUNS += test-run
# Under ThreadSanitizer too (check-tsan): rte-run's helper forwards
# signals while it waits, and the traced commands get the TSan runtime
# preloaded after librte.so (tools/rte-run/rte-run, make_preload).
TSAN_RUNS += test-run

test-run: $(RUN_TEST_BINS) $(RUN_SCRIPT) $(RUN_EXEC) $(BUILD)/rte-read \
		$(BUILD)/librte.so $(BUILD)/librteconsumer.a $(BUILD)/librteconsumer.so
	@RTE_BUILD=$(abspath $(BUILD)) RTE_TOP=$(CURDIR) RTE_CC="$(CC)" \
		RTE_SAN="$(SAN)" RTE_MAKE="$(MAKE)" sh tests/run/run.sh
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/run/drain.sh
