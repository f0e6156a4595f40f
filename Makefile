# rte - runtime tracing events for any process.
#
#   make            build everything into $(BUILD)/ (stops first with the
#                   list of missing Debian packages, if any, and the command
#                   that installs them: scripts/install-deps.sh)
#   make demo       installs the missing packages itself, builds, runs the demo
#   make test       build and run every test
#   make check-asan the whole suite under AddressSanitizer + UBSan
#   make check-peers CPython's own regression tests plain and under rte,
#                   compared test by test (minutes; not in `make test`)
#
# The build is split into fragments, one per part of the tree: mk/*.mk.
# Each fragment adds its artefacts to ALL and its test runs to TEST_RUNS.

CC      ?= cc
CFLAGS  ?= -O2 -g
BUILD   ?= build
SAN     ?=
PREFIX  ?= /usr/local
DESTDIR ?=

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN) -fPIC -pthread \
	-Iinclude -Icommon/format -Icommon/push -Icommon/writer -Icommon/consumer -MMD -MP
# libzstd: the consumer library's packed captures (common/consumer/unpack.c)
# and rte-run's drain that writes them; --as-needed, so that librte.so
# and every program that reads no capture do not depend on it.
BASE_LDFLAGS := $(SAN) -pthread $(LDFLAGS) -Wl,--push-state,--as-needed -lzstd -Wl,--pop-state

ALL :=
TEST_RUNS :=
DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all test deps clean check-asan
all: build-all

# common.mk first: the others use its variables in their prerequisites.
# The other fragments are read in name order, and make expands a rule's
# prerequisites as it reads the rule: a prerequisite naming a variable
# that a fragment read later defines (e.g. install.mk's RUN_SCRIPT in
# demo.mk) would expand to nothing. Such a prerequisite is written
# $$(VAR): with .SECONDEXPANSION it is expanded again once every fragment
# is read. (.ci/run runs `make demo` first on a clean clone to catch a
# miss; tests/run checks `make -n` of the top-level targets.)
.SECONDEXPANSION:
include mk/common.mk
include $(filter-out mk/common.mk,$(sort $(wildcard mk/*.mk)))

build-all: $(ALL)

# Check (never install) the Debian packages once per build folder.
$(DEPS_STAMP): scripts/install-deps.sh
	@mkdir -p $(@D)
	@sh scripts/install-deps.sh --check
	@touch $@

deps: $(DEPS_STAMP)

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -c $< -o $@

test: $(ALL) $(TEST_RUNS)
	@echo "all tests passed"

# Leaks of programs that are not ours (CPython) are suppressed once, here
# (tests/lsan.supp), rather than test by test.
check-asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz -name '*.d' 2>/dev/null)
