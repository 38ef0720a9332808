# sockdiag: front end to Meson + Ninja.
#
#   make run      install missing build deps, build, run `sockdiag list` on this host (read-only)
#   make test     install missing build deps, build, run every test suite (meson test)
#   make install  build and install under PREFIX (default /usr/local), honouring DESTDIR
#   make asan     build into build-asan with ASan+UBSan (-fno-sanitize-recover) and run the tests
#   make fuzz     build the libFuzzer targets with clang into build-fuzz, run each FUZZ_SECONDS
#   make clean    remove the build directories
#
# Dependencies are Debian 12 packages (DEPS below); a missing one is installed with apt-get
# (as root, or through sudo). Set NO_DEPS=1 to skip that step on other systems.

PREFIX ?= /usr/local
DESTDIR ?=
BUILDDIR ?= build
ASAN_BUILDDIR ?= build-asan
FUZZ_BUILDDIR ?= build-fuzz
FUZZ_SECONDS ?= 20
RUN_ARGS ?= list
MESON_TEST_ARGS ?=

# Everything the build, the tests and the fuzzers need on Debian 12.
# clang + libclang-rt-14-dev: libFuzzer and the sanitizer runtimes for clang;
# iproute2 (ss, ip), procps (sysctl): namespace and differential tests; python3, jq: test
# helpers; groff-base: man page check.
DEPS := build-essential pkg-config meson ninja-build libmnl-dev libcmocka-dev libcap-ng-dev \
	iproute2 procps clang libclang-rt-14-dev python3 jq groff-base

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
MESON_SETUP := meson setup --prefix=$(PREFIX)

.PHONY: all deps setup build run test install uninstall asan fuzz clean

all: build

deps:
ifeq ($(NO_DEPS),)
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
		echo "make: no dpkg-query: install by hand: $(DEPS)"; exit 0; \
	fi; \
	missing=""; \
	for p in $(DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q ' installed$$' || \
			missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make: installing missing packages:$$missing"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends $$missing; \
	fi
endif

$(BUILDDIR)/build.ninja: | deps
	$(MESON_SETUP) $(BUILDDIR)

setup: deps $(BUILDDIR)/build.ninja

build: setup
	ninja -C $(BUILDDIR)

run: build
	./$(BUILDDIR)/cli/sockdiag $(RUN_ARGS)

test: build
	meson test -C $(BUILDDIR) --print-errorlogs $(MESON_TEST_ARGS)

install: setup
	meson configure $(BUILDDIR) -Dprefix=$(PREFIX)
	ninja -C $(BUILDDIR)
	meson install -C $(BUILDDIR) --no-rebuild $(if $(DESTDIR),--destdir "$(DESTDIR)")
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null 2>&1; then ldconfig; fi

uninstall:
	ninja -C $(BUILDDIR) uninstall

# gcc's ASan+UBSan; every UBSan report is fatal, leaks included. Tests with a
# latency bound may scale it by SOCKDIAG_TEST_SLOWDOWN (instrumented code is slower).
asan: deps
	@[ -f $(ASAN_BUILDDIR)/build.ninja ] || \
		$(MESON_SETUP) $(ASAN_BUILDDIR) -Db_sanitize=address,undefined -Db_lundef=false \
			-Dc_args=-fno-sanitize-recover=all
	ninja -C $(ASAN_BUILDDIR)
	ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SOCKDIAG_TEST_SLOWDOWN=4 \
		meson test -C $(ASAN_BUILDDIR) --print-errorlogs --timeout-multiplier 4 \
			$(MESON_TEST_ARGS)

fuzz: deps
	@[ -f $(FUZZ_BUILDDIR)/build.ninja ] || \
		CC=clang $(MESON_SETUP) $(FUZZ_BUILDDIR) -Dfuzz=true -Dtests=disabled
	ninja -C $(FUZZ_BUILDDIR)
	.ci/fuzz $(FUZZ_BUILDDIR) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR) $(FUZZ_BUILDDIR)
