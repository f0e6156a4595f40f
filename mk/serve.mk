# rte-read --serve / --push: the Prometheus exporter and Pushgateway client
# (issue 17), linked into rte-read over libmicrohttpd. reader/main.c hands
# over to rd_serve_main(); tests/prom/run.sh checks against Debian's real
# prometheus and prometheus-pushgateway (doc/METRICS.md lists the metrics).
#
#   make test-prom   the exporter and push tests (part of `make test`)

SERVE_SRCS := reader/serve.c reader/serve_opts.c reader/metrics.c reader/metrics_series.c \
	reader/metrics_files.c reader/metrics_out.c reader/push.c common/push/pushgw.c
SERVE_OBJS := $(SERVE_SRCS:%.c=$(BUILD)/obj/%.o)

$(BUILD)/rte-read: $(SERVE_OBJS)
READER_LDLIBS += -lmicrohttpd

.PHONY: test-prom
TEST_RUNS += test-prom
test-prom: $(BUILD)/rte-read $(READER_TRACED) $(READER_GEN) $(BUILD)/librte.so \
		$(RUN_SCRIPT) $(RUN_EXEC) $(BUILD)/tests/crash/segv
	@RTE_BUILD=$(abspath $(BUILD)) RTE_SAN="$(SAN)" CC="$(CC)" sh tests/prom/run.sh

# make bench: the exporter's rows (bench/prom.py; before bench/run.py's).
$(BUILD)/bench/prom_writer: $(BUILD)/obj/bench/prom_writer.o $(BUILD)/librte.so
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(BUILD) -lrte -Wl,-rpath,'$$ORIGIN/..' $(BASE_LDFLAGS)

.PHONY: bench-prom
bench-prom: $(BUILD)/rte-read $(BUILD)/bench/prom_writer
	python3 bench/prom.py $(BUILD) $(BENCH_ARGS)
bench: bench-prom
