# rte-run, and make install / uninstall with a pkg-config file.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=] [BINDIR= LIBDIR= ...]
#   make uninstall (the same variables)
#
# Installs: $(BINDIR)/rte-read, $(BINDIR)/rte-run, $(LIBDIR)/librte.so,
# $(LIBDIR)/librteconsumer.{a,so}, $(LIBEXECDIR)/rte/rte-run-exec,
# $(INCLUDEDIR)/rte/*.h, $(MANDIR)/man1/*.1, and rte.pc / rteconsumer.pc
# in $(PKGCONFIGDIR), so that
#     cc app.c $(pkg-config --cflags --libs rte)           (producer API)
#     cc rd.c  $(pkg-config --cflags --libs rteconsumer)   (consumer)
# build against the installed tree. The .pc files hold PREFIX without
# DESTDIR; to build against a staged DESTDIR tree, set
# PKG_CONFIG_SYSROOT_DIR=$DESTDIR and PKG_CONFIG_LIBDIR=$DESTDIR$PKGCONFIGDIR.
#
# $(BUILD)/rte-run is scripts/rte-run copied next to librte.so, rte-read
# and rte-run-exec, so that it finds them as an installed one does. The
# installed rte-run also knows LIBDIR and LIBEXECDIR (written in at install
# time), for layouts where they are not ../lib and ../libexec of BINDIR.

RTE_VERSION  ?= 0.1.0
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
LIBEXECDIR   ?= $(PREFIX)/libexec
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install

RUN_EXEC := $(BUILD)/rte-run-exec
RUN_SCRIPT := $(BUILD)/rte-run
PC_FILES := $(BUILD)/rte.pc $(BUILD)/rteconsumer.pc
INSTALL_HEADERS := $(sort $(wildcard include/rte/*.h))
INSTALL_MAN := $(sort $(wildcard doc/*.1))

ALL += $(RUN_EXEC) $(RUN_SCRIPT) $(PC_FILES)

$(RUN_EXEC): $(BUILD)/obj/scripts/rte-run-exec.o
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

$(RUN_SCRIPT): scripts/rte-run
	@mkdir -p $(@D)
	cp $< $@
	chmod 755 $@

# The .pc files depend on the make variables they hold: rebuilt on every
# make (cheap) so that a changed PREFIX is never stale.
.PHONY: $(PC_FILES)
$(BUILD)/rte.pc:
	@mkdir -p $(@D)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: rte' \
		'Description: runtime tracing events (OCaml 5.2 format): the C producer API of librte.so' \
		'URL: https://ocaml.org/manual/5.2/runtime-tracing.html' \
		'Version: $(RTE_VERSION)' \
		'Libs: -L$${libdir} -lrte' \
		'Cflags: -I$${includedir}' >$@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv -f $@.tmp $@

$(BUILD)/rteconsumer.pc:
	@mkdir -p $(@D)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: rteconsumer' \
		'Description: read runtime-events ring files (OCaml 5.2 format, written by OCaml or librte.so)' \
		'Version: $(RTE_VERSION)' \
		'Libs: -L$${libdir} -lrteconsumer' \
		'Libs.private: -pthread' \
		'Cflags: -I$${includedir}' >$@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv -f $@.tmp $@

INSTALL_BINS := $(BUILD)/rte-read $(BUILD)/librte.so $(BUILD)/librteconsumer.a \
	$(BUILD)/librteconsumer.so $(RUN_EXEC)

.PHONY: install uninstall
install: $(INSTALL_BINS) $(PC_FILES) scripts/rte-run
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(LIBEXECDIR)/rte $(DESTDIR)$(INCLUDEDIR)/rte \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/rte-read $(DESTDIR)$(BINDIR)/rte-read
	sed -e 's|^rte_libdir=$$|rte_libdir=$(LIBDIR)|' \
		-e 's|^rte_libexecdir=$$|rte_libexecdir=$(LIBEXECDIR)|' \
		scripts/rte-run >$(DESTDIR)$(BINDIR)/rte-run.tmp
	chmod 755 $(DESTDIR)$(BINDIR)/rte-run.tmp
	mv -f $(DESTDIR)$(BINDIR)/rte-run.tmp $(DESTDIR)$(BINDIR)/rte-run
	$(INSTALL) -m 755 $(RUN_EXEC) $(DESTDIR)$(LIBEXECDIR)/rte/rte-run-exec
	$(INSTALL) -m 755 $(BUILD)/librte.so $(BUILD)/librteconsumer.so $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(BUILD)/librteconsumer.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/rte/
	$(if $(INSTALL_MAN),$(INSTALL) -m 644 $(INSTALL_MAN) $(DESTDIR)$(MANDIR)/man1/)
	$(INSTALL) -m 644 $(PC_FILES) $(DESTDIR)$(PKGCONFIGDIR)/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
		ldconfig; fi
	@echo "installed rte $(RTE_VERSION) into $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rte-read $(DESTDIR)$(BINDIR)/rte-run \
		$(DESTDIR)$(LIBEXECDIR)/rte/rte-run-exec \
		$(DESTDIR)$(LIBDIR)/librte.so $(DESTDIR)$(LIBDIR)/librteconsumer.so \
		$(DESTDIR)$(LIBDIR)/librteconsumer.a \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/rte/,$(notdir $(INSTALL_HEADERS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(INSTALL_MAN))) \
		$(addprefix $(DESTDIR)$(PKGCONFIGDIR)/,$(notdir $(PC_FILES)))
	-rmdir $(DESTDIR)$(LIBEXECDIR)/rte $(DESTDIR)$(INCLUDEDIR)/rte 2>/dev/null
