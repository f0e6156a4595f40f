# Crash flight recorder: its tests (tests/crash/), its benchmark program
# (bench/backtrace.c) and the libraries rte-read's symboliser needs.
#
#   make test-crash   build and run the crash tests (part of `make test`)
#
# The crash programs are built with -g -O0 -fno-inline (and -rdynamic) so
# that the functions they crash in have frames, names and lines to find.

# rte-read symbolises stacks with elfutils (reader/symbolize.c): its header
# at build time, libdw loaded with dlopen when first needed, so nothing is
# linked (empty on purpose; mk/reader.mk says the same).
READER_DW_LIBS :=
$(BUILD)/rte-read: BASE_LDFLAGS += $(READER_DW_LIBS)
$(READER_TEST_BIN)/test_%: BASE_LDFLAGS += $(READER_DW_LIBS)

CRASH_PROGS := segv abrt overflow thread recover fpe forker busy wrapped libcsegv \
	sigfork dlfork handlers truncring termsig
CRASH_BINS := $(CRASH_PROGS:%=$(BUILD)/tests/crash/%)
CRASH_PROG_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O0 -fno-inline \
	-fno-omit-frame-pointer -rdynamic -pthread -Wall -Wextra -Werror
# Under the sanitizers: ASan yes, but not UBSan, which would stop the
# deliberate NULL stores and divisions by zero before they fault (last on
# the command line: BASE_LDFLAGS holds $(SAN) too).
CRASH_SAN := $(SAN) $(if $(SAN),-fno-sanitize=undefined)

$(CRASH_BINS): $(BUILD)/tests/crash/%: tests/crash/progs/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CRASH_PROG_CFLAGS) -o $@ $< $(BASE_LDFLAGS) $(CRASH_SAN)

# A plugin loaded with dlopen, and its loader with a RUNPATH of $ORIGIN.
CRASH_PLUGIN := $(BUILD)/tests/crash/libcrashplug.so
CRASH_DL := $(BUILD)/tests/crash/dlcrash
$(CRASH_PLUGIN): tests/crash/progs/plugin.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CRASH_PROG_CFLAGS) -fPIC -shared -o $@ $< $(BASE_LDFLAGS) \
		$(CRASH_SAN)
$(CRASH_DL): tests/crash/progs/dlcrash.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CRASH_PROG_CFLAGS) -o $@ $< \
		-Wl,--enable-new-dtags,-rpath,'$$ORIGIN' $(BASE_LDFLAGS) -ldl \
		$(CRASH_SAN)

# Benchmark: cost of one captured stack, libunwind cache on and off.
# Prints JSON lines like bench/producer.c.
$(BUILD)/bench/backtrace: $(BUILD)/obj/bench/backtrace.o \
		$(BUILD)/obj/shim/backtrace.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS) -ldl
ALL += $(BUILD)/bench/backtrace

CRASH_ASAN_RT := $(if $(findstring address,$(SAN)),$(shell $(CC) -print-file-name=libasan.so))

.PHONY: test-crash
TEST_RUNS += test-crash
test-crash: $(CRASH_BINS) $(CRASH_PLUGIN) $(CRASH_DL) $(BUILD)/librte.so \
		$(BUILD)/rte-read
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(CRASH_ASAN_RT)" \
		sh tests/crash/run.sh

# A ring file of malformed crash-recorder payloads, for rte-read.
CRASH_BAD := $(BUILD)/tests/crash/badcrash
$(CRASH_BAD): $(BUILD)/obj/tests/crash/progs/badcrash.o $(WRITER_OBJS) \
		$(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)
test-crash: $(CRASH_BAD)
