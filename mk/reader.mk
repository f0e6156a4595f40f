# reader/: rte-read, a thin CLI over librteconsumer.a, and its tests.
#
# reader/merge, hist and spans have no CLI in them (library candidates);
# the test programs link them without main.o.

# Sources are listed, not globbed, so a file another part is still writing
# in reader/ cannot break the build; add to READER_SRCS / READER_LDLIBS
# here to link more in. crashrep.c (with crashrep_last.c) and symbolize.c are the crash
# recorder's (issue 5); symbolize.c needs elfutils' header at build time
# only: libdw is loaded with dlopen when the first stack is symbolised, so
# nothing is linked for it (mk/tests-crash.mk, READER_DW_LIBS, empty).
READER_SRCS := reader/main.c reader/commands.c reader/options.c reader/status.c reader/signals.c reader/vec.c \
	reader/discover.c reader/follow.c reader/inputs.c reader/liveness.c reader/merge.c reader/procs.c reader/ptree.c reader/ptree_note.c reader/ptree_name.c \
	reader/spans.c reader/hist.c reader/filter.c reader/out.c \
	reader/fmt/text.c reader/fmt/text_proc.c reader/fmt/jsonl.c \
	reader/fmt/chrome.c reader/fmt/chrome_tracks.c reader/fmt/chrome_flows.c reader/fmt/chrome_recs.c reader/model.c reader/model_life.c \
	reader/fmt/summary_out.c reader/fmt/summary_sink.c reader/fmt/summary_tree.c reader/fmt/summary_run.c reader/crashrep.c reader/crashrep_last.c reader/symbolize.c \
	reader/clean.c reader/ocamlver.c reader/gcstats.c reader/fmt/gcstats.c reader/fmt/gcstats_out.c \
	reader/jsonp.c reader/diff.c reader/diff_load.c reader/selfrun.c reader/top.c reader/profile.c reader/profile_tab.c reader/ptab.c reader/profile_settle.c reader/profile_wall.c reader/profile_span.c reader/profile_inline.c reader/flamediff.c reader/heap.c reader/fmt/profile.c reader/fmt/profile_pprof.c reader/fmt/profile_sum.c reader/fmt/profile_line.c reader/fmt/profile_blocked.c reader/fmt/flame.c
READER_LDLIBS := -lm -lz -liberty
# Under AddressSanitizer, libdw is linked at start instead of dlopened when
# the first stack is symbolised: GCC 12's LeakSanitizer misreads the
# dynamic TLS block a dlopened libdw gets from glibc 2.36 and its tracer
# dies at exit ("Tracer caught signal 11"); linked, libdw's TLS is static.
ifneq ($(findstring address,$(SAN)),)
READER_LDLIBS += -Wl,--no-as-needed -ldw -Wl,--as-needed
endif
# reader/fmt/: one file per output format (its sink, sinks.h), built over
# the reader's headers.
$(BUILD)/obj/reader/fmt/%.o: BASE_CFLAGS += -Ireader
READER_OBJS := $(READER_SRCS:%.c=$(BUILD)/obj/%.o)
# The command line (main, the table, the options) is not the library.
READER_LIB_OBJS := $(filter-out $(BUILD)/obj/reader/main.o \
	$(BUILD)/obj/reader/commands.o $(BUILD)/obj/reader/options.o,$(READER_OBJS))

ALL += $(BUILD)/rte-read

$(BUILD)/rte-read: $(READER_OBJS) $(BUILD)/librteconsumer.a
	$(CC) -o $@ $(filter %.o,$^) $(BUILD)/librteconsumer.a $(BASE_LDFLAGS) $(READER_LDLIBS)

# ---- tests -----------------------------------------------------------------

READER_TEST_BIN := $(BUILD)/tests/reader
READER_GEN := $(READER_TEST_BIN)/gen_ring
READER_UNITS := $(READER_TEST_BIN)/test_hist $(READER_TEST_BIN)/test_spans \
	$(READER_TEST_BIN)/test_merge $(READER_TEST_BIN)/test_jsonl_fast

$(READER_GEN): $(BUILD)/obj/tests/reader/gen_ring.o $(WRITER_OBJS) $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

$(READER_TEST_BIN)/test_%: $(BUILD)/obj/tests/reader/test_%.o $(READER_LIB_OBJS) $(WRITER_OBJS) $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS) -lcmocka $(READER_LDLIBS)

.PHONY: reader-test
TEST_RUNS += reader-test
reader-test: $(BUILD)/rte-read $(READER_GEN) $(READER_UNITS) $(BUILD)/bench/gen
	@for t in $(READER_UNITS); do $$t || exit 1; done
	@sh tests/reader/run.sh $(BUILD)
	@sh tests/reader/gcstats.sh $(BUILD)
	@sh tests/reader/diff.sh $(BUILD)
	@sh tests/reader/inputs.sh $(BUILD)
	@sh tests/reader/many.sh $(BUILD)

# A real program traced by librte.so, for the --follow tests.
READER_TRACED := $(READER_TEST_BIN)/traced
$(READER_TRACED): $(BUILD)/obj/tests/reader/traced.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS)
reader-test: $(READER_TRACED)

# The output formats on real programs under librte.so, run by rte-run, and
# on the OCaml fixtures (tests/reader/out.sh; $$(RUN_SCRIPT): install.mk's,
# read after this file).
READER_OUTPROG := $(READER_TEST_BIN)/outprog
$(READER_OUTPROG): $(BUILD)/obj/tests/reader/outprog.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS)
# Threads in waves and forks from two threads, in C, linked with nothing
# of ours (tests/reader/views.sh).
READER_FORKTHREADS := $(READER_TEST_BIN)/forkthreads
$(READER_FORKTHREADS): $(BUILD)/obj/tests/reader/forkthreads.o
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BASE_LDFLAGS)
.PHONY: reader-out-test
TEST_RUNS += reader-out-test
reader-out-test: $(BUILD)/rte-read $(BUILD)/librte.so $(READER_OUTPROG) \
		$(READER_TRACED) $(READER_FORKTHREADS) $$(DEMO_BIN) $$(RUN_SCRIPT) $$(RUN_EXEC)
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/reader/out.sh
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/reader/nav.sh
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/reader/views.sh

# The cross-output consistency test (tests/reader/consistency.sh).
READER_CONSISTPROG := $(READER_TEST_BIN)/consistprog
$(READER_CONSISTPROG): $(BUILD)/obj/tests/reader/consistprog.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS) -lpthread
.PHONY: reader-consistency-test
TEST_RUNS += reader-consistency-test
reader-consistency-test: $(BUILD)/rte-read $(BUILD)/librte.so $(READER_CONSISTPROG) \
		$$(RUN_SCRIPT) $$(RUN_EXEC)
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/reader/consistency.sh
.SECONDARY: $(BUILD)/obj/tests/reader/consistprog.o
.SECONDARY: $(patsubst %,$(BUILD)/obj/tests/reader/%.o,gen_ring traced outprog forkthreads test_hist test_spans test_merge test_jsonl_fast)

# The profiles (folded, pprof, flamegraph, summary sections) on a real
# program under librte.so that writes the profilers' records itself
# (tests/reader/profile.sh; -rdynamic: dladdr finds its functions, to
# drop a sanitizer's frame above them).
READER_PROFPROG := $(READER_TEST_BIN)/profprog
$(READER_PROFPROG): $(BUILD)/obj/tests/reader/profprog.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -rdynamic -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS) -ldl
.PHONY: reader-profile-test
TEST_RUNS += reader-profile-test
reader-profile-test: $(BUILD)/rte-read $(BUILD)/librte.so $(READER_PROFPROG)
	@RTE_BUILD=$(abspath $(BUILD)) sh tests/reader/profile.sh
.SECONDARY: $(BUILD)/obj/tests/reader/profprog.o

# Stand-ins for running OCaml 5 programs (tests/reader/ocamlprog.c says
# which facts of OCaml's executables each reproduces), for the choice of
# OCaml names from the executable (tests/reader/ocamlexe.sh):
#   native54  Sys.ocaml_version "5.4.0+dev0-2024-08-25" and 5.4's runtime symbols
#   native52  Sys.ocaml_version "5.2.0" and 5.2's runtime symbols
#   native50  Sys.ocaml_version "5.0.0" between 5.0's symbols (Sys__data_begin)
#   byte52    the bytecode runtime's version string, 5.2.0
#   syms53    5.3's runtime symbols only
#   plain     none of these (not an OCaml program)
#   shared    none, but it links lib/libcamlrun_shared.so, a bytecode runtime
#             of version 5.3.0~alpha1
OCAMLPROG_FLAGS_native54 := -DNATIVE -DOCAML_VER='"5.4.0+dev0-2024-08-25"' -DVLEN=21 -DMARKERS=4
OCAMLPROG_FLAGS_native52 := -DNATIVE -DOCAML_VER='"5.2.0"' -DVLEN=5 -DMARKERS=2
OCAMLPROG_FLAGS_native50 := -DNATIVE -DSYS50 -DOCAML_VER='"5.0.0"' -DVLEN=5 -DMARKERS=0
OCAMLPROG_FLAGS_byte52 := -DBYTE -DOCAML_VER='"5.2.0"' -DVLEN=5
OCAMLPROG_FLAGS_syms53 := -DMARKERS=3
OCAMLPROG_FLAGS_plain :=
OCAMLPROGS := $(patsubst %,$(READER_TEST_BIN)/ocamlprog-%,native54 native52 native50 byte52 syms53 plain shared)
$(READER_TEST_BIN)/ocamlprog-%: tests/reader/ocamlprog.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(OCAMLPROG_FLAGS_$*) -o $@ $< $(BASE_LDFLAGS)
$(READER_TEST_BIN)/lib/libcamlrun_shared.so: tests/reader/ocamlprog.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -DLIBRARY -DBYTE -DOCAML_VER='"5.3.0~alpha1"' -DVLEN=12 \
		-shared -o $@ $< $(BASE_LDFLAGS)
$(READER_TEST_BIN)/ocamlprog-shared: tests/reader/ocamlprog.c $(READER_TEST_BIN)/lib/libcamlrun_shared.so
	$(CC) $(BASE_CFLAGS) -o $@ $< -L$(READER_TEST_BIN)/lib -Wl,--no-as-needed \
		-lcamlrun_shared -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/lib' $(BASE_LDFLAGS)
.PHONY: reader-ocamlexe-test
TEST_RUNS += reader-ocamlexe-test
reader-ocamlexe-test: $(BUILD)/rte-read $(OCAMLPROGS)
	@sh tests/reader/ocamlexe.sh $(BUILD)
