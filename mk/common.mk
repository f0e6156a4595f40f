# common/: the format, the ring writer, the clock and the consumer library.

CONSUMER_SRCS := common/error.c common/format.c common/consumer.c common/jsonl.c \
	common/ocaml.c \
	common/rundir.c
WRITER_SRCS   := common/ring.c common/clock.c common/rundir.c
CONSUMER_OBJS := $(CONSUMER_SRCS:%.c=$(BUILD)/obj/%.o)
WRITER_OBJS   := $(WRITER_SRCS:%.c=$(BUILD)/obj/%.o)

ALL += $(BUILD)/librteconsumer.a $(BUILD)/librteconsumer.so

$(BUILD)/librteconsumer.a: $(CONSUMER_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/librteconsumer.so: $(CONSUMER_OBJS)
	$(CC) -shared -Wl,-soname,librteconsumer.so -o $@ $^ $(BASE_LDFLAGS)
