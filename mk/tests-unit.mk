# tests/unit/: cmocka unit tests of common/ (format, ring writer, consumer,
# JSONL, clock, Pushgateway rules) and of the shim's modules that link
# alone (config, the event registry, the ring slots, the tracer's state
# machine), run against real files in a temporary directory; and
# tests/unit/layers.sh (shim/ symbols and includes point down the layers
# of shim/init.c's table).
#
#   make test-unit    build and run every unit test (part of `make test`)
#   make check-loop   rerun the reader/writer concurrency test 50 times
#
# The OCaml 5.2 fixtures the conformance test decodes are kept in the repo
# (tests/fixtures/ocaml-5.2/) so that a clean clone can run them; the path
# is compiled in and can be overridden with RTE_FIXTURES_DIR at run time.

UNIT_TESTS := format ring consumer hostile jsonl concurrent clock ocaml strbuf utf8 \
	pushgw unpack \
	shim_config shim_registry shim_slots shim_tracer
UNIT_BINS := $(UNIT_TESTS:%=$(BUILD)/tests/unit/test_%)
UNIT_HELPER_OBJ := $(BUILD)/obj/tests/unit/rte_test.o
UNIT_OBJS := $(UNIT_TESTS:%=$(BUILD)/obj/tests/unit/test_%.o) $(UNIT_HELPER_OBJ)
UNIT_FIXTURES := $(CURDIR)/tests/fixtures/ocaml-5.2
CHECK_LOOP_RUNS ?= 50

$(UNIT_OBJS): BASE_CFLAGS += -Itests/unit -DRTE_FIXTURES='"$(UNIT_FIXTURES)"'

$(BUILD)/tests/unit/test_%: $(BUILD)/obj/tests/unit/test_%.o $(UNIT_HELPER_OBJ) \
		$(BUILD)/librteconsumer.a $(WRITER_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(UNIT_HELPER_OBJ) \
		$(filter $(BUILD)/obj/shim/% $(BUILD)/obj/tools/% $(PUSHGW_OBJ),$^) \
		$(WRITER_OBJS) $(BUILD)/librteconsumer.a $(BASE_LDFLAGS) \
		-lcmocka -lz -ldl

# common/push/pushgw.c is in neither library (mk/common.mk).
PUSHGW_OBJ := $(BUILD)/obj/common/push/pushgw.o
$(BUILD)/tests/unit/test_pushgw: $(PUSHGW_OBJ)

# rte-run's packer and spool (tools/rte-run/pack.c, capture.c): what they
# write, the consumer reads.
$(BUILD)/tests/unit/test_unpack: $(BUILD)/obj/tools/rte-run/pack.o \
	$(BUILD)/obj/tools/rte-run/capture.o
$(BUILD)/obj/tests/unit/test_unpack.o: BASE_CFLAGS += -Itools/rte-run

# The shim's modules that link alone (shim/init.c draws the layers): each
# test links the module and the layers below it, nothing above.
SHIM_UNIT_LEAVES := $(BUILD)/obj/shim/fd.o $(BUILD)/obj/shim/log.o
$(BUILD)/tests/unit/test_shim_config: $(SHIM_UNIT_LEAVES) \
	$(BUILD)/obj/shim/config.o
$(BUILD)/tests/unit/test_shim_registry: $(BUILD)/obj/shim/registry.o
$(BUILD)/tests/unit/test_shim_slots: $(SHIM_UNIT_LEAVES) \
	$(BUILD)/obj/shim/config.o $(BUILD)/obj/shim/file.o \
	$(BUILD)/obj/shim/filedir.o \
	$(BUILD)/obj/shim/sweep.o $(BUILD)/obj/common/format/stale.o \
	$(BUILD)/obj/shim/slots.o
$(BUILD)/tests/unit/test_shim_tracer: $(SHIM_UNIT_LEAVES) \
	$(BUILD)/obj/shim/config.o $(BUILD)/obj/shim/file.o \
	$(BUILD)/obj/shim/filedir.o \
	$(BUILD)/obj/shim/sweep.o $(BUILD)/obj/common/format/stale.o \
	$(BUILD)/obj/shim/ocaml.o $(BUILD)/obj/shim/real.o \
	$(BUILD)/obj/shim/registry.o $(BUILD)/obj/shim/slots.o \
	$(BUILD)/obj/shim/proc.o \
	$(BUILD)/obj/shim/pool.o $(SHIM_TRACER_OBJS)

.PHONY: test-unit check-loop
TEST_RUNS += test-unit

test-unit: $(UNIT_BINS) $(SHIM_LIB)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done; \
		echo "== tests/unit/layers.sh"; sh tests/unit/layers.sh shim $(BUILD)/obj/shim

check-loop: $(BUILD)/tests/unit/test_concurrent
	@set -e; i=0; while [ $$i -lt $(CHECK_LOOP_RUNS) ]; do \
		i=$$((i + 1)); echo "== check-loop run $$i/$(CHECK_LOOP_RUNS)"; \
		$< >$(BUILD)/check-loop.log 2>&1 || \
			{ cat $(BUILD)/check-loop.log; exit 1; }; done; \
	echo "check-loop: $(CHECK_LOOP_RUNS) runs passed"
