# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced (bash): Debian packages of another suite, fetched without touching the system's apt
# sources or package lists. Used by tests/kernels/run.sh (bullseye's and sid's kernels) and
# tests/exporter/otlp_proto.sh (trixie's opentelemetry-proto).
#
#   SAPT_CACHE=DIR   where each suite's own sources list and lists go (DIR/apt-SUITE/)
#   SAPT_WHO=NAME    the prefix of the messages on stderr
#
#   archive                      the Debian archive this machine's apt already uses
#   sapt SUITE apt-get|apt-cache ARGS...   apt on SUITE alone
#   sapt_fetch SUITE PKG DIR     PKG's newest version in SUITE downloaded and `dpkg -x`ed
#                                into DIR/PKG_VERSION/root (echoed); cached: a rerun
#                                downloads nothing

# archive: the Debian archive this machine's apt already uses (the first .../debian URI of
# its sources lists); the suites it does not list are fetched from there.
archive() {
	local u
	u=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^deb /{for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break }}
		     /^URIs:/{for (i = 2; i <= NF; i++) print $i}' |
		grep -E '^[a-z]+://[^ ]+/debian/?$' | head -n 1)
	[ -n "$u" ] || { echo "${SAPT_WHO:-sapt}: no Debian archive (a .../debian URI) in /etc/apt/sources.list(.d)" >&2; return 1; }
	echo "${u%/}"
}

# sapt SUITE apt-get|apt-cache ARGS...: apt on SUITE alone, with a sources list and package
# lists of its own under SAPT_CACHE/apt-SUITE (the system's apt sources and lists untouched);
# the lists are fetched once (delete that directory to refresh them).
sapt() {
	local suite=$1 cmd=$2 d=$SAPT_CACHE/apt-$1 a
	shift 2
	local o=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o APT::Get::List-Cleanup=0)
	if [ ! -e "$d/lists/.done" ]; then
		mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
		a=$(archive) || return 1
		echo "deb $a $suite main" >"$d/sources.list"
		echo "${SAPT_WHO:-sapt}: apt-get update ($suite: $(cat "$d/sources.list"))" >&2
		# apt-get update exits 0 when it only warns (no network): no Packages list,
		# no .done, so that the next run asks again.
		if ! apt-get "${o[@]}" update >&2 ||
			! ls "$d/lists/"*_Packages* >/dev/null 2>&1; then
			echo "${SAPT_WHO:-sapt}: apt-get update of $suite failed" >&2
			return 1
		fi
		touch "$d/lists/.done"
	fi
	"$cmd" "${o[@]}" "$@"
}

# sapt_fetch SUITE PKG DIR: echo the extracted tree of PKG's newest version in SUITE.
sapt_fetch() {
	local suite=$1 pkg=$2 ver dir deb
	ver=$(sapt "$suite" apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$ver" ] || { echo "${SAPT_WHO:-sapt}: no package $pkg in $suite" >&2; return 1; }
	dir=$3/${pkg}_$ver
	if [ ! -e "$dir/.done" ]; then
		rm -rf "$dir" && mkdir -p "$dir/deb"
		# apt-get downloads as _apt where it may (else it warns, and downloads as root).
		if id _apt >/dev/null 2>&1; then chown _apt "$dir/deb"; fi
		echo "${SAPT_WHO:-sapt}: apt-get download $pkg ($suite)" >&2
		(cd "$dir/deb" && sapt "$suite" apt-get download "$pkg" >&2) ||
			{ echo "${SAPT_WHO:-sapt}: apt-get download $pkg failed" >&2; return 1; }
		chmod 0755 "$dir"
		for deb in "$dir"/deb/*.deb; do
			dpkg -x "$deb" "$dir/root"
			rm -f "$deb"
		done
		touch "$dir/.done"
	fi
	echo "$dir/root"
}
