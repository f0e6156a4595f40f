# tests/docs/: the documentation's relative links.
#
#   make test-docs   every relative link of README.md and doc/*.md names an
#                    existing file, and every #anchor a heading of it (part
#                    of `make test`); the checker first checks itself on
#                    broken links it writes into a temporary directory

.PHONY: test-docs
TEST_RUNS += test-docs

test-docs:
	@python3 tests/docs/links.py --self-test
	@python3 tests/docs/links.py .
