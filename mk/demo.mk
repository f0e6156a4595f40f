# demo/: the demo program, and `make demo`, the first command of README.md.
#
#   make demo    install the missing Debian packages (the only target that
#                runs apt-get: scripts/install-deps.sh), build everything,
#                run $(BUILD)/demo/rte-demo under rte-run, print
#                its summary, and write the Chrome trace $(DEMO_TRACE)
#                (open it in https://ui.perfetto.dev: "Open trace file")
#
# The demo links -lrte (rpath to its own build folder) and runs under
# rte-run, which preloads the same librte.so: one copy is loaded.

DEMO_BIN   := $(BUILD)/demo/rte-demo
DEMO_TRACE := $(BUILD)/demo-trace.json

ALL += $(DEMO_BIN)

$(DEMO_BIN): $(BUILD)/obj/demo/demo.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/..' $(BASE_LDFLAGS)

.PHONY: demo demo-run
# Install first, in its own step, so that nothing is compiled (and the
# package check of $(DEPS_STAMP) never runs) before the packages are in.
demo:
	@sh scripts/install-deps.sh
	@$(MAKE) --no-print-directory demo-run

# $$(RUN_SCRIPT), $$(RUN_EXEC): defined by install.mk, read after this file
# (see .SECONDEXPANSION in the Makefile).
demo-run: $(DEMO_BIN) $$(RUN_SCRIPT) $$(RUN_EXEC) $(BUILD)/rte-read $(BUILD)/librte.so
	@echo "== running $(DEMO_BIN) under rte-run"
	@$(RUN_SCRIPT) --summary --format=chrome --output=$(DEMO_TRACE) -- $(DEMO_BIN)
	@echo
	@echo "== Chrome trace written to $(DEMO_TRACE)"
	@echo "   open https://ui.perfetto.dev, click 'Open trace file', pick that file"
