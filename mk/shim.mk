# shim/: librte.so, the LD_PRELOAD producer and the C producer API, and its
# integration tests (tests/shim/): real programs run under the real shim,
# their files read back with the real consumer library.
#
#   make test-shim        build and run the shim tests (part of `make test`)
#   make check-loop-shim  rerun the thread/fork/signal tests
#                         $(CHECK_LOOP_SHIM_RUNS) times to flush out races
#
# librte.so links the writer, the clock and the format/error helpers of
# common/writer/ and common/format/; shim/librte.map keeps everything but the public API and the
# interposed libc functions local. Link a program with
# -L$(BUILD) -lrte (add -Wl,-rpath) to use the API without LD_PRELOAD.

# Layers: the table in shim/init.c's header (tests/unit/layers.sh checks
# the objects against it).
# The tracer, a folder module (its parts share tracer/internal.h).
SHIM_TRACER_SRCS := shim/tracer/state.c shim/tracer/attach.c \
	shim/tracer/fork.c shim/tracer/life.c
SHIM_TRACER_OBJS := $(SHIM_TRACER_SRCS:%.c=$(BUILD)/obj/%.o)
SHIM_SRCS := shim/fd.c shim/log.c shim/config.c shim/file.c shim/filedir.c \
	shim/ocaml.c \
	shim/real.c shim/registry.c shim/proc.c \
	shim/slots.c shim/pool.c $(SHIM_TRACER_SRCS) \
	shim/hooks/threads.c shim/hooks/process.c shim/hooks/signals.c \
	shim/hooks/dl.c shim/hooks/masks.c shim/hooks/spawn.c shim/hooks/start.c \
	shim/hooks/identity.c shim/hooks/execenv.c shim/hooks/execimage.c shim/sweep.c \
	shim/crash/handler.c shim/crash/actions.c shim/crash/stacks.c \
	shim/crash/altstack.c shim/crash/modules.c \
	shim/backtrace.c shim/btscan.c \
	shim/prof/profiler.c shim/prof/actions.c shim/prof/parse.c \
	shim/prof/perf.c shim/prof/reg.c shim/prof/wall.c \
	shim/alloc/arena.c shim/alloc/sample.c shim/alloc/set.c shim/alloc/heap.c shim/hooks/alloc.c \
	shim/api.c shim/init.c
SHIM_OBJS := $(SHIM_SRCS:%.c=$(BUILD)/obj/%.o)
SHIM_LIB  := $(BUILD)/librte.so

$(SHIM_OBJS): BASE_CFLAGS += -fvisibility=hidden -Ishim
# The malloc wrappers: no SLP vectorisation of the per-thread counters (it
# pairs two adds through a stack slot: a store-forwarding stall per call).
# Not instrumented by a sanitizer either: they run before any runtime is
# initialised (ld.so's first allocations) and inside its own calls.
$(BUILD)/obj/shim/hooks/alloc.o: BASE_CFLAGS += -fno-tree-slp-vectorize \
	$(if $(SAN),-fno-sanitize=all)
$(BUILD)/obj/shim/alloc/arena.o: BASE_CFLAGS += $(if $(SAN),-fno-sanitize=all)

ALL += $(SHIM_LIB)

# -z now: every libc function librte.so calls is bound when it is loaded,
# not at its first call. Lazily bound, the functions only a fork child
# calls (its atfork handlers) were looked up again in every child, the
# lookup's writes and reads of ld.so's and libc's pages each a page fault
# there (40 faults a fork+_exit instead of 48); the load itself takes no
# more (most of them are called at start anyway).
$(SHIM_LIB): $(SHIM_OBJS) $(WRITER_OBJS) $(BUILD)/obj/common/format/format.o \
		$(BUILD)/obj/common/format/error.o shim/librte.map
	$(CC) -shared -Wl,-soname,librte.so -Wl,--version-script=shim/librte.map \
		-Wl,-z,defs -Wl,-z,now -o $@ $(filter %.o,$^) $(BASE_LDFLAGS) -ldl

# ---- tests ------------------------------------------------------------------

SHIM_PROGS := threads forker execer exits probe sigwriter fakeocaml forkways \
	isolate hostfd events oldkernel
SHIM_PROG_BINS := $(SHIM_PROGS:%=$(BUILD)/tests/shim/%)
SHIM_API_BIN := $(BUILD)/tests/shim/api
SHIM_DUMP_BIN := $(BUILD)/tests/shim/dump
SHIM_TEST_BINS := $(SHIM_PROG_BINS) $(SHIM_API_BIN) $(SHIM_DUMP_BIN)

$(SHIM_PROG_BINS): $(BUILD)/tests/shim/%: $(BUILD)/obj/tests/shim/progs/%.o
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BASE_LDFLAGS)

# hostfd's spin loops must have no unwind information: the profiler's
# unwinder then validates the addresses it reads (test_host_daemon).
$(BUILD)/obj/tests/shim/progs/hostfd.o: BASE_CFLAGS += \
	-fno-asynchronous-unwind-tables -fno-unwind-tables

# fakeocaml's variants (test_ocaml): the symbol in the dynamic symbol
# table of a stripped executable (-rdynamic), or of a shared library only.
SHIM_OCAML_BINS := $(BUILD)/tests/shim/fakeocaml-dyn \
	$(BUILD)/tests/shim/fakeocaml-lib $(BUILD)/tests/shim/libfakecamlrt.so
$(BUILD)/tests/shim/fakeocaml-dyn: $(BUILD)/obj/tests/shim/progs/fakeocaml.o
	@mkdir -p $(@D)
	$(CC) -rdynamic -s -o $@ $< $(BASE_LDFLAGS)
$(BUILD)/tests/shim/libfakecamlrt.so: $(BUILD)/obj/tests/shim/progs/fakecamlrt.o
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $< $(BASE_LDFLAGS)
$(BUILD)/tests/shim/fakeocaml-lib: $(BUILD)/obj/tests/shim/progs/fakeocamllib.o \
		$(BUILD)/tests/shim/libfakecamlrt.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD)/tests/shim -lfakecamlrt \
		-Wl,-rpath,$(abspath $(BUILD))/tests/shim $(BASE_LDFLAGS)
SHIM_TEST_BINS += $(SHIM_OCAML_BINS)

$(SHIM_API_BIN): $(BUILD)/obj/tests/shim/api.o $(SHIM_LIB) \
		$(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BUILD)/librteconsumer.a -L$(BUILD) -lrte \
		-Wl,-rpath,$(abspath $(BUILD)) $(BASE_LDFLAGS)

$(SHIM_DUMP_BIN): $(BUILD)/obj/tests/shim/dump.o $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BUILD)/librteconsumer.a $(BASE_LDFLAGS)

# Under AddressSanitizer the runtime must come first in LD_PRELOAD.
SHIM_ASAN_RT := $(if $(findstring address,$(SAN)),$(shell $(CC) -print-file-name=libasan.so))

CHECK_LOOP_SHIM_RUNS ?= 20

.PHONY: test-shim check-loop-shim
TEST_RUNS += test-shim

# rte-read: host.sh's test_killed asks it what --clean would remove.
test-shim: $(SHIM_LIB) $(SHIM_TEST_BINS) $(BUILD)/rte-read
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" \
		sh tests/shim/run.sh
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" \
		sh tests/shim/isolation.sh
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" \
		sh tests/shim/host.sh
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" \
		sh tests/shim/footprint.sh

check-loop-shim: $(SHIM_LIB) $(SHIM_TEST_BINS)
	@set -e; i=0; while [ $$i -lt $(CHECK_LOOP_SHIM_RUNS) ]; do \
		i=$$((i + 1)); echo "== check-loop-shim run $$i/$(CHECK_LOOP_SHIM_RUNS)"; \
		RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" \
			sh tests/shim/run.sh test_threads test_rings_full \
			test_fork_threaded test_fork_nested test_signals \
			test_fork_raw test_fork_child_threads test_fork_in_handler; \
	done
