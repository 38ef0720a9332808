#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-completion.sh ROOT (the installed prefix inside a DESTDIR)
#
# The bash completion as bash-completion finds it: with ROOT/share as XDG_DATA_DIRS (as
# /usr/share and /usr/local/share are by default), bash-completion's own loader
# (__load_completion) must find ROOT/share/bash-completion/completions/sockdiag,
# then a few command lines complete to what they should. Namespace names come from a
# private mount namespace's own /run/netns (a tmpfs with a few names). The fish completion
# is run the same way (fish's complete -C); the zsh one is syntax-checked and run with
# compsys's builtins stubbed.
set -euo pipefail

root=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || fail "no $bc (Debian package bash-completion, in the Makefile's TEST_DEPS)"
[ -f "$root/share/bash-completion/completions/sockdiag" ] ||
	fail "not installed: share/bash-completion/completions/sockdiag"

# Run in a private mount namespace whose /run/netns holds two made-up names.
unshare -m bash -s "$root" "$bc" <<'SH'
set -uo pipefail
root=$1
mount --make-rprivate / && mkdir -p /run/netns && mount -t tmpfs none /run/netns || exit 1
: >/run/netns/blue
: >/run/netns/green
export PATH=$root/bin:$PATH XDG_DATA_DIRS=$root/share
source "$2"
__load_completion sockdiag || { echo "FAIL: bash-completion does not find sockdiag's"; exit 1; }
[ "$(complete -p sockdiag)" = "complete -F _sockdiag sockdiag" ] ||
	{ echo "FAIL: complete -p sockdiag: $(complete -p sockdiag)"; exit 1; }
bad=0
# expect LINE WORD...: completing LINE offers every WORD (and, with =, exactly them).
expect() {
	local line=$1 exact=0 w got
	shift
	[ "$1" = "=" ] && { exact=1; shift; }
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_sockdiag
	got=" ${COMPREPLY[*]} "
	for w in "$@"; do
		[[ $got == *" $w "* ]] || { echo "FAIL: '$line<TAB>' offers$got, not $w"; bad=1; }
	done
	if [ $exact = 1 ] && [ ${#COMPREPLY[@]} -ne $# ]; then
		echo "FAIL: '$line<TAB>' offers$got, want exactly $*"
		bad=1
	fi
	[ $bad = 0 ] && echo "ok: '$line<TAB>' offers$got"
	return 0
}
expect 'sockdiag ' list kill watch life top guard exporter drain help state dport
expect 'sockdiag drain --ti' = --timeout
expect 'sockdiag exporter --on' = --once
expect 'sockdiag lis' = list
expect 'sockdiag lif' = life
expect 'sockdiag list --tc' = --tcp
expect 'sockdiag kill --dr' = --dry-run
expect 'sockdiag kill --dead' = --dead-backends
expect 'sockdiag kill --connt' = --conntrack
expect 'sockdiag watch --co' = --count
expect 'sockdiag life --in' = --interval
expect 'sockdiag top --by pid,co' = pid,comm pid,conn
expect 'sockdiag top --so' = --sort
expect 'sockdiag guard --c' = --check-config --config
expect 'sockdiag list -tn state est' = established
expect 'sockdiag -tan exclude time' = time-wait
expect 'sockdiag -N ' = blue green pid:
expect 'sockdiag list --netns g' = green
expect 'sockdiag -f inet' = inet inet6
expect 'sockdiag list -A u_' = u_str u_dgr u_seq
expect 'sockdiag list dev l' lo
expect 'sockdiag help k' = kill
expect 'sockdiag kill -t dp' = dport
# A comma list completes its last item and keeps the others (was: 'proto' alone).
expect 'sockdiag list -tan --count-by state,prot' = state,proto
expect 'sockdiag list -tan --count-by state,pro' = state,process state,proto
expect 'sockdiag list -A tcp,ud' = tcp,udp tcp,udplite
# Values, not filter keywords, after an option or keyword that takes one.
expect 'sockdiag list -p --owners ' = auto bpf proc
expect 'sockdiag list -x group ipv4_' = ipv4_ifaddr ipv4_mroute ipv4_route ipv4_rule \
	ipv4_netconf ipv4_mroute_r ipv4_mcaddr
expect 'sockdiag exporter --' --help --listen --once
expect 'sockdiag guard --he' = --help
# unit NAME: units from the cgroup tree (a cgroup made for the test, removed after).
cg=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ -n "$cg" ] && mkdir "$cg/sdcomp$$.scope" 2>/dev/null; then
	expect "sockdiag list -tan unit sdcomp$$" = "sdcomp$$.scope"
	expect "sockdiag list -tan cgroup /sdcomp$$" = "/sdcomp$$.scope/"
	rmdir "$cg/sdcomp$$.scope"
else
	echo "FAIL: cannot make a test cgroup under the cgroup2 mount '$cg'"; bad=1
fi
# comm NAME: the running processes' command names (one started under a unique name).
cp /bin/sleep "/tmp/sdcomm$$"
"/tmp/sdcomm$$" 30 &
pid=$!
for _ in $(seq 50); do [ "$(cat /proc/$pid/comm 2>/dev/null)" = "sdcomm$$" ] && break; sleep 0.1; done
expect "sockdiag list -tanp comm sdcomm$$" = "sdcomm$$"
kill $pid; wait $pid 2>/dev/null; rm -f "/tmp/sdcomm$$"
exit $bad
SH
echo "ok: bash completion"

if command -v fish >/dev/null; then
	fc=$root/share/fish/vendor_completions.d/sockdiag.fish
	[ -f "$fc" ] || fail "not installed: share/fish/vendor_completions.d/sockdiag.fish"
	got=$(PATH=$root/bin:$PATH fish -c "source $fc; complete -C 'sockdiag list state syn-'" |
		cut -f1 | tr '\n' ' ')
	[ "$got" = "syn-recv syn-sent " ] || fail "fish: 'sockdiag list state syn-' offers '$got'"
	got=$(PATH=$root/bin:$PATH fish -c "source $fc; complete -C 'sockdiag kill --dry'" |
		cut -f1 | tr '\n' ' ')
	[ "$got" = "--dry-run " ] || fail "fish: 'sockdiag kill --dry' offers '$got'"
	# fish_run LINE: what fish's complete -C offers for LINE, space-separated.
	fish_run() {
		PATH=$root/bin:$PATH fish -c "source $fc; complete -C '$1'" | cut -f1 | tr '\n' ' '
	}
	got=$(fish_run 'sockdiag list --count-by state,prot')
	[ "$got" = "state,proto " ] || fail "fish: '--count-by state,prot' offers '$got'"
	got=$(fish_run 'sockdiag list -A tcp,ud')
	[ "$got" = "tcp,udp tcp,udplite " ] || fail "fish: '-A tcp,ud' offers '$got'"
	got=$(fish_run 'sockdiag list --owners ')
	[ "$got" = "auto bpf proc " ] || fail "fish: '--owners ' offers '$got'"
	got=$(fish_run 'sockdiag list -tan group ipv6_r')
	[ "$got" = "ipv6_route ipv6_rule " ] || fail "fish: 'group ipv6_r' offers '$got'"
	got=$(fish_run 'sockdiag list -tan comm fis')
	[[ " $got" == *" fish "* ]] || fail "fish: 'comm fis' (fish runs it) offers '$got'"
	got=$(fish_run 'sockdiag exporter --he')
	[ "$got" = "--help " ] || fail "fish: 'exporter --he' offers '$got'"
	echo "ok: fish completion"
else
	fail "no fish (Debian package fish, in the Makefile's TEST_DEPS)"
fi
zc=$root/share/zsh/site-functions/_sockdiag
[ -f "$zc" ] || fail "not installed: share/zsh/site-functions/_sockdiag"
if command -v zsh >/dev/null; then
	zsh -n "$zc" || fail "zsh: _sockdiag does not parse"
	# The function run with compsys's builtins stubbed (compadd prints what it is given
	# that matches PREFIX, compset -P moves a prefix to IPREFIX as zsh's does): what it
	# offers after each option or keyword, not how zsh displays it.
	zt=$(mktemp)
	cat >"$zt" <<'ZSH'
zc=$1; shift
PREFIX=$1; shift
words=("$@" "$PREFIX")
CURRENT=${#words}
IPREFIX=
compset() {
	[[ $1 == -P && $2 == '*,' && $PREFIX == *,* ]] && { IPREFIX=${PREFIX%,*},; PREFIX=${PREFIX##*,}; }
	[[ $1 == -P && $2 == / && $PREFIX == /* ]] && { IPREFIX=/; PREFIX=${PREFIX#/}; }
	return 0
}
compadd() {
	local -a c
	while [[ $1 == -* ]]; do
		case $1 in
		-a) shift; c+=(${(P)1}); shift ;;
		-S) shift 2 ;;
		*) shift ;;
		esac
	done
	c+=("$@")
	local w
	for w in $c; do [[ $w == $PREFIX* ]] && print -r -- "$IPREFIX$w"; done
}
_describe() { compadd -a $4 }
_files() { :; }
_users() { :; }
_path_files() { :; }
source $zc
exit 0
ZSH
	zsh_run() { PATH=$root/bin:$PATH zsh "$zt" "$zc" "$@" | sort | tr '\n' ' '; }
	for t in 'state,prot|sockdiag list --count-by|state,proto ' \
		'tcp,ud|sockdiag list -A|tcp,udp tcp,udplite ' \
		'|sockdiag list --owners|auto bpf proc ' \
		'ipv6_r|sockdiag list -x group|ipv6_route ipv6_rule ' \
		'--he|sockdiag exporter|--help ' \
		'zs|sockdiag list -tan comm|zsh '; do
		IFS='|' read -r pre line want <<<"$t"
		# shellcheck disable=SC2086
		got=$(zsh_run "$pre" $line)
		[ "$got" = "$want" ] || fail "zsh: '$line $pre<TAB>' offers '$got', want '$want'"
	done
	rm -f "$zt"
	echo "ok: zsh completion parses and offers the values (comma lists, --owners, group, comm)"
else
	fail "no zsh (Debian package zsh, in the Makefile's TEST_DEPS)"
fi
