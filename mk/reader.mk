# reader/: rte-read, a thin CLI over librteconsumer.a, and its tests.
#
# reader/merge, hist and spans have no CLI in them (library candidates);
# the test programs link them without main.o.

READER_SRCS := $(sort $(wildcard reader/*.c))
READER_OBJS := $(READER_SRCS:%.c=$(BUILD)/obj/%.o)
READER_LIB_OBJS := $(filter-out $(BUILD)/obj/reader/main.o,$(READER_OBJS))

ALL += $(BUILD)/rte-read

$(BUILD)/rte-read: $(READER_OBJS) $(BUILD)/librteconsumer.a
	$(CC) -o $@ $(READER_OBJS) $(BUILD)/librteconsumer.a $(BASE_LDFLAGS) -lm

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
	$(CC) -o $@ $^ $(BASE_LDFLAGS) -lcmocka -lm

.PHONY: reader-test
TEST_RUNS += reader-test
reader-test: $(BUILD)/rte-read $(READER_GEN) $(READER_UNITS)
	@for t in $(READER_UNITS); do $$t || exit 1; done
	@sh tests/reader/run.sh $(BUILD)

# A real program traced by librte.so, for the --follow tests.
READER_TRACED := $(READER_TEST_BIN)/traced
$(READER_TRACED): $(BUILD)/obj/tests/reader/traced.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/../..' $(BASE_LDFLAGS)
reader-test: $(READER_TRACED)
.SECONDARY: $(patsubst %,$(BUILD)/obj/tests/reader/%.o,gen_ring traced test_hist test_spans test_merge test_jsonl_fast)
