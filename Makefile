# SPDX-License-Identifier: GPL-2.0-or-later
# sockdiag: front end to Meson + Ninja.
#
#   make run      install missing build deps, build, run `sockdiag list` on this host (read-only)
#   make test     install missing build+test deps, build, run every test suite (meson test)
#   make install  build and install under PREFIX (default /usr/local), honouring DESTDIR
#   make asan     build into build-asan with ASan+UBSan (-fno-sanitize-recover) and run the tests
#   make fuzz     build the libFuzzer targets with clang into build-fuzz, run each FUZZ_SECONDS
#   make test-kernels  boot Debian's 5.10, 6.1, 6.12 and 7.2 kernels in QEMU (no KVM needed) on
#                 this machine's userspace and run the live, netns and families suites there
#                 (KERNELS="5.10 6.1 6.12 7.2", also 5.10-cloud; KERNELS=7.2 runs one;
#                 KERNEL_IMAGE=vmlinuz KERNEL_MODULES=DIR for any other
#                 kernel, KERNEL_SUITES, KERNEL_TESTS; see tests/kernels/run.sh)
#   make image    the OCI image of deploy/kubernetes (no Docker, no registry but Debian's
#                 archive: mmdebstrap + podman import; deploy/image/mkimage.py), as IMAGE
#                 (default localhost/sockdiag:VERSION) in podman's storage; prints its size
#   make test-image    build it under a private podman configuration and test it (tests/image/)
#   make abi-check     the built library's ABI against the baseline abi/libsockdiag.abi
#                 (abidiff; also part of make test, as meson test `abi`)
#   make abi-baseline  rewrite abi/libsockdiag.abi from the built library, after an intended
#                 ABI change (review the diff, commit it with the change)
#   make clean    remove the build directories
#
# Dependencies are Debian 12 packages (BUILD_DEPS, TEST_DEPS, FUZZ_DEPS below); a missing one is
# installed with apt-get (as root, or through sudo). `make run`/`make install` pull only
# BUILD_DEPS; `make test` and `make asan` add TEST_DEPS; `make fuzz` adds FUZZ_DEPS.
# Set NO_DEPS=1 to skip that step on other systems.

PREFIX ?= /usr/local
DESTDIR ?=
BUILDDIR ?= build
ASAN_BUILDDIR ?= build-asan
FUZZ_BUILDDIR ?= build-fuzz
FUZZ_SECONDS ?= 20
RUN_ARGS ?= list
MESON_TEST_ARGS ?=

# What building and running sockdiag needs (make run, make install): compiler, Meson,
# libmnl; libcap-ng (optional) lets the daemons drop capabilities; libmicrohttpd: the HTTP
# server of `sockdiag exporter` (loaded with dlopen when a server starts, so other commands
# do not pay for it); clang (its BPF target) + bpftool + libbpf-dev (headers only):
# the BPF owners iterator of -p (meson -Dbpf=auto builds without it when one is missing);
# python3-dev: the Python module, import sockdiag (meson -Dpython=auto skips it without);
# libncurses-dev: the full-screen view of `sockdiag top` (without it, top has batch mode only).
# libcurl4-gnutls-dev, libjson-c-dev: sockdiag-kube-backends, the Kubernetes sidecar (HTTPS
# to the API server, its JSON; meson -Dkube=auto skips it without them; the gnutls flavour
# because libmicrohttpd already brings gnutls into the image). libcurl's headers,
# libsnappy-dev (headers: both loaded with dlopen when a push target is configured) and
# zlib1g-dev (gzip): the exporter's push (remote write, OTLP).
BUILD_DEPS := build-essential pkg-config meson ninja-build libmnl-dev libcap-ng-dev \
	libmicrohttpd-dev clang libbpf-dev bpftool libncurses-dev python3-dev \
	libcurl4-gnutls-dev libjson-c-dev libsnappy-dev zlib1g-dev

# What the test suites add (make test, make asan): cmocka (unit and live tests);
# iproute2 (ss, ip), procps (sysctl): namespace and differential tests; python3, jq: test
# helpers; groff-base: man page check; bash-completion, zsh, fish: the completion tests;
# prometheus (server + promtool): the exporter's end-to-end test against a real Prometheus and
# the scrape configuration check; python3-yaml: deploy/ manifests parsed (their schemas:
# deps-schemas below, with the machine's Node.js);
# netbase (/etc/services): service names in the CLI tests; strace: counting kill's dumps;
# python3-prometheus-client: its strict OpenMetrics parser checks exporter --openmetrics;
# nftables, conntrack: dead backends and conntrack deletes (a rule makes conntrack track in
# the test's namespace; conntrack -L is the oracle); tmux: top's full-screen view driven by
# keys and read back (tests/cli/top_ui.sh); python3-pytest, python3-psutil, python3-pyroute2:
# the Python module's tests and oracles; abigail-tools (abidw, abidiff): the ABI check;
# openssl: the certificate of the stand-in API server (tests/deploy/kube_sidecar.py);
# protobuf-compiler (protoc --decode, --decode_raw): the push's payloads decoded by an
# independent decoder (OTLP against trixie's opentelemetry-proto, fetched into the build
# directory by tests/exporter/push_encode.py, the system's apt sources untouched).
TEST_DEPS := libcmocka-dev iproute2 procps python3 jq groff-base bash-completion zsh fish \
	prometheus python3-yaml netbase strace python3-prometheus-client nftables conntrack \
	tmux python3-pytest python3-psutil python3-pyroute2 abigail-tools \
	nginx haproxy openssl protobuf-compiler

# What make test-kernels adds: QEMU (TCG: no /dev/kvm needed), busybox-static and cpio for
# the guest's initramfs, kmod (depmod/modprobe on the kernel package's modules), xz-utils
# (6.12's and 7.2's modules are .ko.xz). The kernels themselves are Debian packages fetched
# with apt-get download into BUILDDIR/kernels/: bookworm's linux-image-6.1.0-N-amd64-unsigned
# and linux-image-6.12.N+deb12-amd64-unsigned, bullseye's linux-image-5.10.0-N-amd64-unsigned
# and sid's linux-binary-unsigned-7.2.N+deb14-amd64 + linux-modules-7.2.N+deb14-amd64 (those
# two suites from the system's own archive host, with lists of their own: tests/kernels/run.sh).
KERNEL_DEPS := qemu-system-x86 busybox-static cpio kmod xz-utils
KERNELS ?= 5.10 6.1 6.12 7.2
KERNEL_IMAGE ?=
KERNEL_MODULES ?=
KERNEL_SUITES ?= live netns families
KERNEL_TESTS ?=

# What make image adds: mmdebstrap (the base file system from Debian's archive), podman (the
# import; runc: crun refuses this machine's hybrid cgroups), binutils (readelf: the libraries'
# closure). IMAGE_PACKAGES: the Debian 12 packages of the libraries the binaries link or
# dlopen() (mkimage.py fails naming a library none of them has).
IMAGE_DEPS := mmdebstrap podman runc binutils
IMAGE_PACKAGES := libc6 libmnl0 libcap-ng0 libncursesw6 libtinfo6 libmicrohttpd12 \
	libcurl3-gnutls libjson-c5 zlib1g libsnappy1v5
IMAGE_BUILDDIR ?= build-image
VERSION := $(shell sed -n "s/^ *version : '\([^']*\)'.*/\1/p" meson.build | head -n 1)
IMAGE ?= localhost/sockdiag:$(VERSION)

# What the fuzzers add (make fuzz): clang + libclang-rt-14-dev (libFuzzer, sanitizer runtimes).
FUZZ_DEPS := clang libclang-rt-14-dev

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
MESON_SETUP := meson setup --prefix=$(PREFIX)

.PHONY: all deps deps-test deps-schemas deps-fuzz deps-kernels deps-image setup build run test test-kernels \
	install uninstall asan fuzz clean abi-check abi-baseline image test-image

all: build

# Another apt-get may hold the locks (right after boot: unattended-upgrades): apt waits up
# to 10 minutes for the dpkg lock itself; `apt-get update`, which does not wait for the
# package lists' lock, is tried again every 5 s for as long (tests/install/make_deps.sh).
APT_WAIT := -o DPkg::Lock::Timeout=600

# install-missing PACKAGES...: apt-get install those of PACKAGES dpkg does not know as installed.
define install-missing
	@if [ -n "$(NO_DEPS)" ]; then exit 0; fi; \
	if ! command -v dpkg-query >/dev/null 2>&1; then \
		echo "make: no dpkg-query: install by hand: $(1)"; exit 0; \
	fi; \
	missing=""; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q ' installed$$' || \
			missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make: installing missing packages:$$missing"; \
		n=0; \
		until out=$$($(SUDO) apt-get $(APT_WAIT) update 2>&1); do \
			if ! printf '%s\n' "$$out" | grep -q 'Could not get lock' || [ $$n -ge 120 ]; then \
				printf '%s\n' "$$out" >&2; exit 1; \
			fi; \
			[ $$n -gt 0 ] || echo "make: another apt-get holds the package lists' lock: waiting (at most 10 minutes)"; \
			n=$$((n + 1)); sleep 5; \
		done; \
		printf '%s\n' "$$out"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get $(APT_WAIT) install -y \
			--no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install-missing,$(BUILD_DEPS))

deps-test: deps
	$(call install-missing,$(TEST_DEPS))
	@$(MAKE) --no-print-directory deps-schemas

# Kubernetes' API schemas and prometheus-operator's CRD schemas for tests/deploy/k8s_schema.py:
# the npm packages pinned by tests/deploy/schemas/package-lock.json (kubernetes-models,
# @kubernetes-models/prometheus-operator, typescript), installed once into
# BUILDDIR/k8s-schemas with `npm ci` (Node.js is the machine's); no network after that.
SCHEMAS_DIR := $(BUILDDIR)/k8s-schemas
deps-schemas:
	@if [ -n "$(NO_DEPS)" ]; then exit 0; fi; \
	if ! command -v npm >/dev/null 2>&1; then \
		echo "make: no npm: the manifests' schema check (deploy_schema) will skip"; exit 0; \
	fi; \
	if cmp -s tests/deploy/schemas/package-lock.json $(SCHEMAS_DIR)/package-lock.json && \
	   [ -d $(SCHEMAS_DIR)/node_modules/kubernetes-models ]; then exit 0; fi; \
	mkdir -p $(SCHEMAS_DIR) && \
	cp tests/deploy/schemas/package.json tests/deploy/schemas/package-lock.json $(SCHEMAS_DIR)/ && \
	cd $(SCHEMAS_DIR) && npm ci --no-audit --no-fund --loglevel=error

deps-fuzz: deps
	$(call install-missing,$(FUZZ_DEPS))

deps-kernels: deps-test
	$(call install-missing,$(KERNEL_DEPS))

deps-image: deps
	$(call install-missing,$(IMAGE_DEPS))

$(BUILDDIR)/build.ninja: | deps
	$(MESON_SETUP) $(BUILDDIR)

setup: deps $(BUILDDIR)/build.ninja

build: setup
	ninja -C $(BUILDDIR)

run: build
	./$(BUILDDIR)/cli/sockdiag $(RUN_ARGS)

# After the tests, tests/summary.py prints how many checks ran, passed, failed and
# were skipped (and why). With CI set (.ci/run), a skip for a feature this machine
# has (probed on the kernel) fails the step.
SUMMARY = python3 tests/summary.py $(1) $(if $(CI),--strict)

# A build directory set up by `make run` (no cmocka then) is switched to tests=enabled,
# and to werror: a warning in the project's own sources (what `make run` would print) fails
# the build, so the README's quick start stays silent. (Debian 12's gcc, as on CI; a newer
# compiler's new warnings show up here first.)
test: deps-test setup
	meson configure $(BUILDDIR) -Dtests=enabled -Dwerror=true
	ninja -C $(BUILDDIR)
	@rc=0; meson test -C $(BUILDDIR) --print-errorlogs $(MESON_TEST_ARGS) || rc=$$?; \
	$(call SUMMARY,$(BUILDDIR)) || rc=1; exit $$rc

# One summary line per kernel (version, tests passed/failed/skipped, the diag tables it
# dumps); the guests' logs stay in BUILDDIR/kernels/REL/. Exit 1 when a test failed.
test-kernels: deps-kernels setup
	meson configure $(BUILDDIR) -Dtests=enabled
	ninja -C $(BUILDDIR)
	KERNELS="$(KERNELS)" KERNEL_IMAGE="$(KERNEL_IMAGE)" KERNEL_MODULES="$(KERNEL_MODULES)" \
	KERNEL_SUITES="$(KERNEL_SUITES)" KERNEL_TESTS="$(KERNEL_TESTS)" \
		tests/kernels/run.sh $(BUILDDIR)

# The ABI (tests/abi/abi.sh): abidw reads the library's DWARF, so debug info is switched on.
abi-check: deps-test setup
	meson configure $(BUILDDIR) -Dtests=enabled -Ddebug=true
	ninja -C $(BUILDDIR)
	meson test -C $(BUILDDIR) --print-errorlogs abi

abi-baseline: deps-test setup
	meson configure $(BUILDDIR) -Ddebug=true
	ninja -C $(BUILDDIR)
	tests/abi/abi.sh baseline $(BUILDDIR)/lib/libsockdiag.so .

install: setup
	meson configure $(BUILDDIR) -Dprefix=$(PREFIX)
	ninja -C $(BUILDDIR)
	meson install -C $(BUILDDIR) --no-rebuild $(if $(DESTDIR),--destdir "$(DESTDIR)")
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null 2>&1; then ldconfig; fi

uninstall:
	ninja -C $(BUILDDIR) uninstall

# gcc's ASan+UBSan; every UBSan report is fatal, leaks included. Instrumented code is
# slower: guard_e2e (the one test with a latency bound, 100 ms) scales its bound and its
# waits by SOCKDIAG_TEST_SLOWDOWN.
asan: deps-test
	@$(MAKE) --no-print-directory deps-schemas BUILDDIR=$(ASAN_BUILDDIR)
	@[ -f $(ASAN_BUILDDIR)/build.ninja ] || \
		$(MESON_SETUP) $(ASAN_BUILDDIR) -Dtests=enabled \
			-Db_sanitize=address,undefined -Db_lundef=false \
			-Dc_args=-fno-sanitize-recover=all
	ninja -C $(ASAN_BUILDDIR)
	@rc=0; ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SOCKDIAG_TEST_SLOWDOWN=4 \
		meson test -C $(ASAN_BUILDDIR) --print-errorlogs --timeout-multiplier 4 \
			$(MESON_TEST_ARGS) || rc=$$?; \
	$(call SUMMARY,$(ASAN_BUILDDIR)) || rc=1; exit $$rc

fuzz: deps-fuzz
	@[ -f $(FUZZ_BUILDDIR)/build.ninja ] || \
		CC=clang $(MESON_SETUP) $(FUZZ_BUILDDIR) -Dfuzz=true -Dtests=disabled
	ninja -C $(FUZZ_BUILDDIR)
	.ci/fuzz $(FUZZ_BUILDDIR) $(FUZZ_SECONDS)

# The image's tree: a build of its own (prefix /usr, release, no tests, the sidecar required).
image: deps-image
	@[ -f $(IMAGE_BUILDDIR)/build.ninja ] || \
		meson setup $(IMAGE_BUILDDIR) --prefix=/usr --buildtype=release -Dtests=disabled \
			-Dpython=disabled -Dkube=enabled
	ninja -C $(IMAGE_BUILDDIR)
	python3 deploy/image/mkimage.py $(IMAGE_BUILDDIR) $(IMAGE) $(IMAGE_PACKAGES)

# make image under a private podman configuration (vfs storage, cgroupfs, runc; the system's
# is left alone), then the image run: tests/image/image.py (not part of make test; .ci/run
# runs it as a step of its own).
test-image: deps-image deps-test setup
	python3 tests/image/image.py

clean:
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR) $(FUZZ_BUILDDIR) $(IMAGE_BUILDDIR)
