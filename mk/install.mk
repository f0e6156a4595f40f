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
# $(BUILD)/rte-run is tools/rte-run/rte-run copied next to librte.so, rte-read
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
INSTALL_HEADERS := $(sort $(wildcard include/rte/*.h))
INSTALL_MAN := $(sort $(wildcard doc/*.1))

ALL += $(RUN_EXEC) $(RUN_SCRIPT)

$(RUN_EXEC): $(BUILD)/obj/tools/rte-run/rte-run-exec.o $(BUILD)/obj/tools/rte-run/drain.o $(BUILD)/obj/tools/rte-run/drain_files.o $(BUILD)/obj/tools/rte-run/drain_read.o $(BUILD)/obj/tools/rte-run/alive.o \
		$(BUILD)/obj/tools/rte-run/capture.o $(BUILD)/obj/tools/rte-run/pack.o $(BUILD)/obj/common/push/pushgw.o $(BUILD)/librteconsumer.a
	$(CC) -o $@ $^ $(BASE_LDFLAGS)

$(RUN_SCRIPT): tools/rte-run/rte-run
	@mkdir -p $(@D)
	cp $< $@
	chmod 755 $@

# The .pc files, written straight into the install tree (they hold the
# install directories, so they are made by `make install` only).
# $(call write_pc,FILE,NAME,DESCRIPTION,LIB,PRIVATE-LIBS)
define write_pc
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' \
		'includedir=$(INCLUDEDIR)' '' 'Name: $(2)' 'Description: $(3)' \
		'Version: $(RTE_VERSION)' 'Libs: -L$${libdir} -l$(4)' \
		$(if $(5),'Libs.private: $(5)') 'Cflags: -I$${includedir}' >$(1)
endef

INSTALL_BINS := $(BUILD)/rte-read $(BUILD)/librte.so $(BUILD)/librteconsumer.a \
	$(BUILD)/librteconsumer.so $(RUN_EXEC)
# What install builds first. tests/run sets it empty: it installs what
# the test run already built, so that no relink races other tests.
INSTALL_DEPS ?= $(INSTALL_BINS)

.PHONY: install uninstall
install: $(INSTALL_DEPS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(LIBEXECDIR)/rte $(DESTDIR)$(INCLUDEDIR)/rte \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/rte-read $(DESTDIR)$(BINDIR)/rte-read
	sed -e 's|^rte_libdir=$$|rte_libdir=$(LIBDIR)|' \
		-e 's|^rte_libexecdir=$$|rte_libexecdir=$(LIBEXECDIR)|' \
		tools/rte-run/rte-run >$(DESTDIR)$(BINDIR)/rte-run.tmp
	chmod 755 $(DESTDIR)$(BINDIR)/rte-run.tmp
	mv -f $(DESTDIR)$(BINDIR)/rte-run.tmp $(DESTDIR)$(BINDIR)/rte-run
	$(INSTALL) -m 755 $(RUN_EXEC) $(DESTDIR)$(LIBEXECDIR)/rte/rte-run-exec
	$(INSTALL) -m 755 $(BUILD)/librte.so $(BUILD)/librteconsumer.so $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(BUILD)/librteconsumer.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/rte/
	$(if $(INSTALL_MAN),$(INSTALL) -m 644 $(INSTALL_MAN) $(DESTDIR)$(MANDIR)/man1/)
	$(call write_pc,$(DESTDIR)$(PKGCONFIGDIR)/rte.pc,rte,runtime tracing events (OCaml 5.2 format): the C producer API of librte.so,rte,)
	$(call write_pc,$(DESTDIR)$(PKGCONFIGDIR)/rteconsumer.pc,rteconsumer,read runtime-events ring files (OCaml 5.2 format) written by OCaml or librte.so,rteconsumer,-pthread -lzstd)
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
		$(DESTDIR)$(PKGCONFIGDIR)/rte.pc $(DESTDIR)$(PKGCONFIGDIR)/rteconsumer.pc
	rmdir $(DESTDIR)$(LIBEXECDIR)/rte $(DESTDIR)$(INCLUDEDIR)/rte 2>/dev/null || true
