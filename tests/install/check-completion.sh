#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-completion.sh ROOT (the installed prefix inside a DESTDIR)
#
# The bash completion as bash-completion finds it: with ROOT/share as XDG_DATA_DIRS (as
# /usr/share and /usr/local/share are by default), bash-completion's own loader
# (__load_completion) must find ROOT/share/bash-completion/completions/sockdiag,
# then a few command lines complete to what they should. Namespace names come from a
# private mount namespace's own /run/netns (a tmpfs with a few names). The fish completion
# is run the same way (fish's complete -C), the zsh one is syntax-checked.
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
expect 'sockdiag ' list kill watch top guard exporter help state dport
expect 'sockdiag exporter --on' = --once
expect 'sockdiag li' = list
expect 'sockdiag list --tc' = --tcp
expect 'sockdiag kill --dr' = --dry-run
expect 'sockdiag watch --co' = --count
expect 'sockdiag top --by pid,co' = comm conn
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
	echo "ok: fish completion"
else
	fail "no fish (Debian package fish, in the Makefile's TEST_DEPS)"
fi
zc=$root/share/zsh/site-functions/_sockdiag
[ -f "$zc" ] || fail "not installed: share/zsh/site-functions/_sockdiag"
if command -v zsh >/dev/null; then
	zsh -n "$zc" || fail "zsh: _sockdiag does not parse"
	echo "ok: zsh completion parses"
else
	fail "no zsh (Debian package zsh, in the Makefile's TEST_DEPS)"
fi
