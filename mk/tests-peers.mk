# tests/peers/: CPython's own regression suite (Debian's
# libpython3.11-testsuite) run plain and under rte, compared test by test.
#
#   make check-peers        run the modules of tests/peers/modules.txt plain
#                           (twice) and in the four traced modes; report every
#                           test whose result differs and what a mode left
#                           behind (build/peers/report.txt); exit 1 if any.
#                           Not part of `make test` (minutes, not seconds).
#                           PEERS_JOBS=N runs N at a time (default 2);
#                           PEERS_MODULES="test_x test_y" runs those instead;
#                           PEERS_ARGS passes options to tests/peers/run.py.
#   make test-peers-compare part of `make test`: the comparison script
#                           checked on fake result files with planted
#                           differences (tests/peers/compare.py --self-test)

PEERS_JOBS ?= 2
PEERS_MODULES ?=
PEERS_ARGS ?=

.PHONY: check-peers test-peers-compare
TEST_RUNS += test-peers-compare

check-peers: $(BUILD)/librte.so $$(RUN_SCRIPT) $$(RUN_EXEC) $(BUILD)/rte-read
	@/usr/bin/python3 tests/peers/run.py --build $(BUILD) --jobs $(PEERS_JOBS) \
		$(PEERS_ARGS) $(PEERS_MODULES)

test-peers-compare:
	@python3 tests/peers/compare.py --self-test
