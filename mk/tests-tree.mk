# tests/tree/: the process tree rte records (rte.proc, rte.exit, rte.reap,
# rte.spawn) against strace -f's view of the same run.
#
#   make test-tree    build and run them (part of `make test`)

TREE_TEST_BINS := $(BUILD)/tests/tree/spawns

$(TREE_TEST_BINS): $(BUILD)/tests/tree/%: $(BUILD)/obj/tests/tree/progs/%.o
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BASE_LDFLAGS)

.PHONY: test-tree
TEST_RUNS += test-tree

# Ring files whose process records lie (test_hostile), with our writer.
TREE_HOSTILE := $(BUILD)/tests/tree/hostile
$(TREE_HOSTILE): $(BUILD)/obj/tests/tree/progs/hostile.o $(WRITER_OBJS) $(BUILD)/librteconsumer.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(BASE_LDFLAGS)
.SECONDARY: $(BUILD)/obj/tests/tree/progs/hostile.o

test-tree: $(TREE_TEST_BINS) $(TREE_HOSTILE) $(BUILD)/rte-read $(BUILD)/librte.so \
		$(RUN_SCRIPT) $(RUN_EXEC)
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" sh tests/tree/run.sh
