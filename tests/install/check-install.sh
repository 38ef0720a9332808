#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-install.sh BUILDDIR CC SANITIZE SRCDIR [PYTHON]
#
# Install the build into a temporary DESTDIR and check the result the way a
# packager or a library user would see it: the binary in bin, the versioned
# shared library exporting only sdiag_* symbols, the header, the pkg-config
# file, the man pages; then compile and run a small program against the
# installed library through pkg-config; the version that --version, the .pc file and
# NEWS state is one; the default guard.conf and docs/*.md are installed. The program only reads (it dumps the
# netlink sockets of a private network namespace). The C examples of README.md
# and man/libsockdiag.3 are built and run the same way, so they stay true.
set -euo pipefail

builddir=$1
cc=$2
san=$3
src=$4
py=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

fail() { echo "FAIL: $*" >&2; exit 1; }
nok=0
ok() { echo "ok: $*"; nok=$((nok + 1)); }

meson install -C "$builddir" --no-rebuild --quiet --destdir "$dest" >/dev/null

prefix=$(meson introspect "$builddir" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
libdir=$(meson introspect "$builddir" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"))')
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$dest$prefix
lib=$dest$libdir

for f in "$root/bin/sockdiag" "$root/include/sockdiag.h" "$lib/libsockdiag.so" \
	"$lib/libsockdiag.so.1" "$lib/pkgconfig/libsockdiag.pc" \
	"$root/share/man/man8/sockdiag.8" "$root/share/man/man3/libsockdiag.3" \
	"$root/share/man/man5/sockdiag-guard.conf.5"; do
	[ -e "$f" ] || fail "not installed: ${f#$dest}"
done
[ -x "$root/bin/sockdiag" ] || fail "bin/sockdiag is not executable"
[ ! -e "$root/sbin/sockdiag" ] || fail "sockdiag installed in sbin too"
[ -L "$lib/libsockdiag.so" ] || fail "libsockdiag.so is not the development symlink"
ok "files under $prefix (libdir $libdir)"

# Only the public API is exported, every symbol under the version node.
syms=$(nm -D --defined-only "$lib/libsockdiag.so.1" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
[ -n "$syms" ] || fail "no exported symbols"
bad=$(echo "$syms" | grep -v -E '^(sdiag_[a-z0-9_]+@@LIBSOCKDIAG_[0-9.]+|LIBSOCKDIAG_[0-9.]+)$' || true)
[ -z "$bad" ] || fail "unexpected exports: $(echo $bad)"
header_fns=$(grep -oE '\bsdiag_[a-z0-9_]+\(' "$root/include/sockdiag.h" | tr -d '(' | sort -u)
for fn in $header_fns; do
	grep -q "^$fn@@" <<<"$syms" || fail "declared in sockdiag.h but not exported: $fn"
done
ok "$(echo "$syms" | grep -c '^sdiag_') exported symbols, all sdiag_*, all versioned"

# pkg-config as a user of the DESTDIR tree sees it.
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
pkg-config --exists libsockdiag || fail "pkg-config does not find libsockdiag"
flags=$(pkg-config --cflags --libs libsockdiag)
grep -q -- "-I$root/include" <<<"$flags" || fail "pkg-config --cflags: $flags"
grep -q -- "-lsockdiag" <<<"$flags" || fail "pkg-config --libs: $flags"
ok "pkg-config --cflags --libs libsockdiag: $flags"

# One version: Meson's project version, as --version, the .pc file and NEWS's first heading say.
sd() { LD_LIBRARY_PATH=$lib "$root/bin/sockdiag" "$@"; }
project=$(meson introspect "$builddir" --projectinfo |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
said=$(sd --version)
[ "$said" = "sockdiag $project" ] || fail "--version says '$said', meson's project version is $project"
pcv=$(pkg-config --modversion libsockdiag)
[ "$pcv" = "$project" ] || fail "libsockdiag.pc says $pcv, meson's project version is $project"
news=$(grep -m1 -E '^[0-9]+\.[0-9]+(\.[0-9]+)?$' "$src/NEWS" || true)
[ "$news" = "$project" ] || fail "NEWS's newest version is '$news', meson's project version is $project"
ok "version $project (--version, libsockdiag.pc, NEWS)"

# Every docs/*.md is installed next to the example configuration; the unit runs bin/sockdiag.
for md in "$src"/docs/*.md; do
	[ -f "$root/share/doc/sockdiag/${md##*/}" ] || fail "docs/${md##*/} is not installed"
done
unit=$dest$prefix/lib/systemd/system/sockdiag-guard.service
grep -qx "ExecStart=$prefix/bin/sockdiag guard" "$unit" || fail "unit: $(grep ExecStart "$unit")"
ok "docs/*.md in share/doc/sockdiag, the unit runs $prefix/bin/sockdiag"

# The installed default configuration: at SYSCONFDIR/sockdiag/guard.conf, where the program
# looks, and valid. Without it, --check-config says the defaults apply (the path once).
sysconfdir=$(meson introspect "$builddir" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="sysconfdir"))')
case $sysconfdir in /*) ;; *) sysconfdir=$prefix/$sysconfdir ;; esac
conf=$dest$sysconfdir/sockdiag/guard.conf
[ -f "$conf" ] || fail "not installed: $sysconfdir/sockdiag/guard.conf"
sd guard --help | grep -qF -- "-c|--config FILE (default $sysconfdir/sockdiag/guard.conf;" ||
	fail "guard --help does not name $sysconfdir/sockdiag/guard.conf"
# The exporter's default follows the same sysconfdir.
sd exporter --help | grep -qF -- "(default $sysconfdir/sockdiag/exporter.conf," ||
	fail "exporter --help does not name $sysconfdir/sockdiag/exporter.conf"
out=$(sd guard -c "$conf" --check-config) || fail "the installed guard.conf is invalid: $out"
[ "$out" = "$conf: ok" ] || fail "--check-config on the installed file: '$out'"
if [ ! -e "$sysconfdir/sockdiag/guard.conf" ]; then
	out=$(sd guard --check-config) || fail "--check-config without a file failed: $out"
	[ "$out" = "$sysconfdir/sockdiag/guard.conf: no file; using the defaults" ] ||
		fail "--check-config without a file: '$out'"
fi
# The exporter alike (it said "ok" for its default path with no file there).
if [ ! -e "$sysconfdir/sockdiag/exporter.conf" ]; then
	out=$(sd exporter --check-config) || fail "exporter --check-config without a file failed: $out"
	[ "$out" = "$sysconfdir/sockdiag/exporter.conf: no file; using the defaults" ] ||
		fail "exporter --check-config without a file: '$out'"
fi
out=$(sd guard -c "$tmp/none.conf" --check-config 2>&1) && fail "-c of a missing file accepted"
[ "$out" = "sockdiag guard: $tmp/none.conf: cannot open: No such file or directory" ] ||
	fail "-c of a missing file: '$out'"
# The exporter's default file too (the built-in defaults: test_exporter checks it key for key).
econf=$dest$sysconfdir/sockdiag/exporter.conf
[ -f "$econf" ] || fail "not installed: $sysconfdir/sockdiag/exporter.conf"
out=$(sd exporter -c "$econf" --check-config) || fail "the installed exporter.conf is invalid: $out"
case $out in *": ok") ;; *) fail "exporter --check-config on the installed file: '$out'" ;; esac
# The guard's metrics drop-in, generated like the units: the prefix's bin path.
dropin=$root/share/doc/sockdiag/sockdiag-guard.service.d/metrics.conf
grep -qx "ExecStart=$prefix/bin/sockdiag guard --metrics 127.0.0.1:10114" "$dropin" ||
	fail "metrics drop-in: $(grep ExecStart "$dropin" 2>&1)"
ok "$sysconfdir/sockdiag/guard.conf and exporter.conf installed and valid; guard and exporter --check-config without a file: the defaults; the metrics drop-in runs $prefix/bin/sockdiag"

cat >"$tmp/user.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <sockdiag.h>

int main(void)
{
	SDIAG_OPTS(sdiag_query, q, .tables = SDIAG_TABLE_BIT(SDIAG_T_NETLINK));
	struct sdiag_sock_list l;
	struct sdiag_handle *h;
	size_t n_diag = 0;
	int r;

	if (strcmp(sdiag_table_netid(SDIAG_T_TCP), "tcp") != 0)
		return 10;
	r = sdiag_open(&h);
	if (r < 0)
		return 11;
	r = sdiag_collect(h, &q, &l);
	if (r < 0)
		return 12;
	/* The handle's own NETLINK_SOCK_DIAG socket is in the dump. */
	for (size_t i = 0; i < l.n; i++)
		if (l.socks[i]->protocol == 4)
			n_diag++;
	printf("%zu netlink sockets, %zu sock_diag\n", l.n, n_diag);
	sdiag_sock_list_free(&l);
	sdiag_close(h);
	return n_diag >= 1 ? 0 : 13;
}
C
sanflags=()
[ "$san" = none ] || sanflags=(-fsanitize="$san")
# shellcheck disable=SC2086
"$cc" -std=gnu11 -Wall -Werror "${sanflags[@]}" "$tmp/user.c" -o "$tmp/user" $flags ||
	fail "a program using the installed library does not compile"
readelf -d "$tmp/user" | grep 'NEEDED.*libsockdiag.so.1' >/dev/null || fail "user not linked to libsockdiag.so.1"
# The programs dump sockets: only ever in a private network namespace, never
# this machine's (no fallback: a machine where unshare fails fails the test).
unshare -n true 2>/dev/null ||
	fail "cannot create a private network namespace (unshare -n; root needed)"
ns=(unshare -n)
out=$(LD_LIBRARY_PATH=$lib "${ns[@]}" "$tmp/user") || fail "user program failed (exit $?)"
ok "user program built with pkg-config runs: $out"

# The installed header alone: self-contained, ISO C11 and C++ (its extern "C"), and the
# one the compiler takes is the installed copy (not the source tree's, not another install's).
# -pedantic-errors: no GNU extension (the SDIAG_HAS_* bits past 31 are macros, not enum constants).
cflags=$(pkg-config --cflags libsockdiag)
echo '#include <sockdiag.h>' >"$tmp/hdr.c"
# shellcheck disable=SC2086
"$cc" -std=c11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only $cflags "$tmp/hdr.c" ||
	fail "sockdiag.h alone does not compile as ISO C11 (-pedantic-errors)"
# shellcheck disable=SC2086
"$cc" -M $cflags "$tmp/hdr.c" | grep -q "$root/include/sockdiag.h" ||
	fail "the compiler does not take the installed sockdiag.h"
if command -v c++ >/dev/null; then
	# shellcheck disable=SC2086
	c++ -std=c++11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only $cflags -x c++ "$tmp/hdr.c" ||
		fail "sockdiag.h does not compile as C++"
fi
ok "the installed sockdiag.h compiles alone as C11$(command -v c++ >/dev/null && echo ' and C++11')"

# The filter builder from the installed header and library only: the parser's filter of the
# same text (the same verdicts on hand-made records), errors latched. No socket is made.
cat >"$tmp/build.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sockdiag.h>

int main(void)
{
	static const unsigned char lo4[4] = { 127, 0, 0, 1 }, lo6[16] = { [15] = 1 };
	struct sdiag_filter *b = NULL, *p = NULL, *e = NULL;
	struct sdiag_filter_error err;
	struct sdiag_sock s;
	int agree = 0;

	if (sdiag_filter_new(&b) < 0)
		return 10;
	sdiag_filter_begin(b, SDIAG_FILTER_OR);
	sdiag_filter_add_host(b, SDIAG_FILTER_DST, AF_INET, lo4, -1, 5000);
	sdiag_filter_add_host(b, SDIAG_FILTER_DST, AF_INET6, lo6, -1, 5002);
	sdiag_filter_end(b);
	if (sdiag_filter_finish(b, &err) < 0)
		return 11;
	if (sdiag_filter_parse(&p, "dst 127.0.0.1:5000 or dst [::1]:5002", &err) < 0)
		return 12;
	for (int i = 0; i < 4; i++) {
		memset(&s, 0, sizeof(s));
		s.table = SDIAG_T_TCP;
		s.state = SDIAG_SS_ESTABLISHED;
		s.family = i < 2 ? AF_INET : AF_INET6;
		memcpy(s.inet.dst, i < 2 ? lo4 : lo6, i < 2 ? 4 : 16);
		s.inet.dport = (i % 2) ? 5001 : (i < 2 ? 5000 : 5002);
		if (sdiag_filter_match(b, &s) != sdiag_filter_match(p, &s) ||
		    sdiag_filter_match(b, &s) != !(i % 2))
			return 13;
		agree++;
	}
	/* The first error latches: the port, at call 0. */
	sdiag_filter_new(&e);
	sdiag_filter_add_port(e, SDIAG_FILTER_SRC, SDIAG_FILTER_EQ, 65536);
	sdiag_filter_add_states(e, SDIAG_STATES_ALL);
	if (sdiag_filter_finish(e, &err) != -EINVAL || err.offset != 0)
		return 14;
	printf("built == parsed on %d records; latched: %s\n", agree, err.msg);
	sdiag_filter_free(b);
	sdiag_filter_free(p);
	sdiag_filter_free(e);
	return 0;
}
C
# shellcheck disable=SC2086
"$cc" -std=gnu11 -Wall -Wextra -Werror "${sanflags[@]}" "$tmp/build.c" -o "$tmp/build" $flags ||
	fail "the filter builder program does not compile against the installed header"
out=$(LD_LIBRARY_PATH=$lib "$tmp/build") || fail "the filter builder program failed (exit $?)"
ok "filter builder program (installed header + pkg-config only) runs: $out"

# The documentation's examples, extracted as a reader would copy them.
awk '/^```c$/ {g = 1; next} g && /^```/ {exit} g' "$src/README.md" >"$tmp/readme.c"
# libsockdiag(3): the first EXAMPLES block is a program; the third and fourth fragments.
man_block() {
	awk -v want="$1" '/^\.SH EXAMPLES/ {f = 1} f && /^\.EX/ {n++; if (n == want) {g = 1; next}}
		g && /^\.EE/ {exit} g' "$src/man/libsockdiag.3" | sed 's/\\-/-/g; s/\\e/\\/g'
}
man_block 1 >"$tmp/man.c"
{
	printf '#include <stdio.h>\n#include <sockdiag.h>\n'
	printf 'int main(void)\n{\n\tstruct sdiag_handle *h;\n\n\tif (sdiag_open(&h) < 0)\n\t\treturn 1;\n'
	man_block 3
	printf '\tsdiag_close(h);\n\treturn 0;\n}\n'
} >"$tmp/man_frag.c"
# The fourth: the filter builder (no socket needed).
{
	printf '#include <stdint.h>\n#include <stdio.h>\n#include <sys/socket.h>\n#include <sockdiag.h>\n'
	printf 'int main(void)\n{\n'
	man_block 4
	printf '\treturn 0;\n}\n'
} >"$tmp/man_build.c"
for ex in readme man man_frag man_build; do
	[ -s "$tmp/$ex.c" ] || fail "no C example found for $ex"
	# shellcheck disable=SC2086
	"$cc" -std=gnu11 -Wall -Wextra -Werror "${sanflags[@]}" "$tmp/$ex.c" -o "$tmp/$ex" $flags ||
		fail "the $ex example does not compile"
	LD_LIBRARY_PATH=$lib "${ns[@]}" "$tmp/$ex" >"$tmp/$ex.out" ||
		fail "the $ex example failed (exit $?)"
	ok "$ex example compiles with -Wall -Wextra -Werror and runs ($(wc -l <"$tmp/$ex.out") lines)"
done

# The Python module, when this build has it: where the interpreter it was built for looks
# under the prefix (Debian's site.py: /usr/local/lib/python3.X/dist-packages for /usr/local,
# not /usr/local/lib/python3/dist-packages), importable as a user would import it after
# `make install`: no PYTHONPATH, no LD_LIBRARY_PATH. The DESTDIR tree is laid over the prefix
# (a read-only overlay, in a mount namespace of this test's own) and the loader's cache made
# from it (ldconfig -C, bind-mounted over /etc/ld.so.cache there): nothing of the machine's
# own /usr/local or cache changes.
pyext=$(meson introspect "$builddir" --targets |
	python3 -c 'import json,sys; print(next((t["install_filename"][0] for t in json.load(sys.stdin) if t["name"].startswith("_sockdiag") and t["installed"]), ""))')
if [ -n "$pyext" ]; then
	[ -n "$py" ] || fail "the Python module is built but no interpreter was given"
	pkg=$(dirname "$pyext")
	pkgdir=$dest$pkg
	for f in __init__.py __init__.pyi py.typed; do
		[ -f "$pkgdir/$f" ] || fail "not installed: $pkg/$f"
	done
	# The directories the interpreter searches (its sys.path as site.py made it, and
	# site.getsitepackages(): the ones it would add were they there).
	site=$("$py" -c 'import site, sys; print("\n".join(sys.path + site.getsitepackages()))')
	grep -qxF "$(dirname "$pkg")" <<<"$site" ||
		fail "installed into $(dirname "$pkg"), where $py does not look: $(echo $site)"
	[ -d "$prefix" ] || fail "prefix $prefix does not exist: nothing to lay the install over"
	if [ "$san" = none ]; then
		out=$(cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH unshare -m -n sh -c '
			mount -t overlay sockdiag-install -o "lowerdir=$1$2:$2" "$2" || exit 90
			ldconfig -X -C "$3/ld.so.cache" || exit 91
			mount --bind "$3/ld.so.cache" /etc/ld.so.cache || exit 92
			exec "$4" -c "if 1:
				import sockdiag
				n = len(sockdiag.connections(\"netlink\"))
				lib = {l.split()[-1] for l in open(\"/proc/self/maps\") if \"libsockdiag\" in l}
				print(sockdiag.__file__, *lib, n)"
		' sh "$dest" "$prefix" "$tmp" "$py") || fail "the installed Python module does not import and dump (exit $?): $out"
		read -r file loaded n <<<"$out"
		[ "$file" = "$pkg/__init__.py" ] || fail "imported another sockdiag: $out"
		[ "$(readlink -f "$dest$loaded")" = "$(readlink -f "$lib/libsockdiag.so.1")" ] ||
			fail "the module loaded $loaded, not the installed $libdir/libsockdiag.so.1: $out"
		[ "$n" -ge 1 ] || fail "the installed module dumped no netlink socket (its own is one): $out"
		ok "Python module in $pkg, where $py looks: imports (no PYTHONPATH) and dumps: $out"
	else
		ok "Python module in $pkg, where $py looks (not imported: $san build)"
	fi
fi

# Shell completions, where each shell looks, loaded and run.
"$src/tests/install/check-completion.sh" "$root" || fail "shell completions"
ok "shell completions (bash, fish, zsh)"
echo "# checks: $nok passed, 0 failed, 0 skipped"
