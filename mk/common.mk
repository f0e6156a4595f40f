# lib/: the two libraries, in three folders that show them.
#
#   lib/writer/    the ring writer and the clock (ring.c, clock.c): linked
#                  into librte.so only (mk/shim.mk), and into the test and
#                  fuzz programs that build ring files.
#   lib/consumer/  the consumer library (consumer.c, jsonl.c, ocaml.c,
#                  ocamlexe.c): librteconsumer.{a,so}, which rte-read
#                  links.
#   lib/common/    what both link: the format (format.c), error strings
#                  (error.c) and the default directory of ring files
#                  (rundir.c, rundir.h). A file here may include nothing from
#                  lib/writer/ or lib/consumer/, so that either library is
#                  built without the other. Also the Pushgateway URL and
#                  label rules (pushgw.c, pushgw.h), in neither library:
#                  linked into rte-read (mk/serve.mk) and rte-run-exec
#                  (mk/install.mk), which both take --push and --label.
#
# The public headers are in include/rte/; each lib/ folder is on the
# include path (-I, in the Makefile) for its internal headers.

COMMON_SRCS   := lib/common/error.c lib/common/format.c lib/common/rundir.c
CONSUMER_SRCS := $(COMMON_SRCS) lib/consumer/consumer.c lib/consumer/jsonl.c \
	lib/consumer/ocaml.c lib/consumer/ocamlexe.c
WRITER_SRCS   := lib/writer/ring.c lib/writer/clock.c lib/common/rundir.c
CONSUMER_OBJS := $(CONSUMER_SRCS:%.c=$(BUILD)/obj/%.o)
WRITER_OBJS   := $(WRITER_SRCS:%.c=$(BUILD)/obj/%.o)

ALL += $(BUILD)/librteconsumer.a $(BUILD)/librteconsumer.so

$(BUILD)/librteconsumer.a: $(CONSUMER_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/librteconsumer.so: $(CONSUMER_OBJS)
	$(CC) -shared -Wl,-soname,librteconsumer.so -o $@ $^ $(BASE_LDFLAGS)
