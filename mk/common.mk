# common/: what the shim and the reader share, in four folders that show it.
#
#   common/format/    what both libraries link: the format (format.c), error
#                     strings (error.c), the default directory of ring
#                     files (rundir.c, rundir.h) and the rule that a file's
#                     writer is gone (stale.c, stale.h: --clean and the
#                     shim's sweep; maps.c, maps.h: its /proc/PID/maps loop,
#                     not in librte.so). A file here includes nothing
#                     from common/writer/ or common/consumer/, so that either
#                     library builds without the other.
#   common/writer/    the ring writer and the clock (ring.c, clock.c): linked
#                     into librte.so only (mk/shim.mk), and into the test and
#                     fuzz programs that build ring files.
#   common/consumer/  the consumer library (consumer.c with open.c, bounds.c,
#                     poll.c, unpack.c (packed captures, libzstd) and their
#                     cursor.h; jsonl.c, ocaml.c, ocamlexe.c):
#                     librteconsumer.{a,so}, which rte-read links.
#   common/push/      the Pushgateway URL and label rules (pushgw.c, pushgw.h),
#                     in neither library: linked into rte-read (mk/serve.mk)
#                     and rte-run-exec (mk/install.mk), which both take --push
#                     and --label.
#
# The public headers are in include/rte/; each common/ folder is on the
# include path (-I, in the Makefile) for its internal headers.

COMMON_SRCS   := common/format/error.c common/format/format.c common/format/maps.c common/format/rundir.c \
	common/format/stale.c
CONSUMER_SRCS := $(COMMON_SRCS) common/consumer/consumer.c common/consumer/open.c \
	common/consumer/bounds.c common/consumer/poll.c common/consumer/jsonl.c \
	common/consumer/ocaml.c common/consumer/ocamlexe.c common/consumer/procrec.c \
	common/consumer/unpack.c
WRITER_SRCS   := common/writer/ring.c common/writer/clock.c common/format/rundir.c common/format/stale.c
CONSUMER_OBJS := $(CONSUMER_SRCS:%.c=$(BUILD)/obj/%.o)
WRITER_OBJS   := $(WRITER_SRCS:%.c=$(BUILD)/obj/%.o)

ALL += $(BUILD)/librteconsumer.a $(BUILD)/librteconsumer.so

$(BUILD)/librteconsumer.a: $(CONSUMER_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/librteconsumer.so: $(CONSUMER_OBJS)
	$(CC) -shared -Wl,-soname,librteconsumer.so -o $@ $^ $(BASE_LDFLAGS)
