# tests/docs/: the documentation's relative links, and its commands.
#
#   make test-docs           every relative link of README.md and doc/*.md
#                            names an existing file, and every #anchor a
#                            heading of it (part of `make test`); the
#                            checker first checks itself on broken links it
#                            writes into a temporary directory
#   make test-doc-commands   every ```sh block of README.md and doc/*.md
#                            runs as written (tests/docs/commands.py: in a
#                            scratch copy of the clone with rte-read and
#                            rte-run on PATH, ./app, 4242.events); a block
#                            marked <!-- not-run: WHY --> is skipped and
#                            listed (part of `make test`; skipped in a
#                            sanitizer build, whose librte.so an
#                            uninstrumented command cannot preload)

.PHONY: test-docs test-doc-commands
TEST_RUNS += test-docs test-doc-commands

test-docs:
	@python3 tests/docs/links.py --self-test
	@python3 tests/docs/links.py .

test-doc-commands: $(BUILD)/rte-read $(BUILD)/librte.so $(BUILD)/demo/rte-demo \
		$$(RUN_SCRIPT) $$(RUN_EXEC)
	@python3 tests/docs/commands.py --self-test
	@RTE_SAN="$(SAN)" python3 tests/docs/commands.py $(BUILD) .
