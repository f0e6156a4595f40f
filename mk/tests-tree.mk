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

test-tree: $(TREE_TEST_BINS) $(BUILD)/rte-read $(BUILD)/librte.so
	@RTE_BUILD=$(abspath $(BUILD)) RTE_ASAN_RT="$(SHIM_ASAN_RT)" sh tests/tree/run.sh
