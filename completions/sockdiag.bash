# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for sockdiag(8): commands, options (read from `sockdiag COMMAND --help`,
# so they never drift), filter keywords, state names, families, socket tables (also the
# last of a comma list), network namespaces (/run/netns), devices, users, cgroup paths,
# unit names (the cgroup tree, systemctl), rtnetlink group names and command names
# (/proc/*/comm).

_sockdiag_cmds="list kill watch life top guard exporter drain help"
_sockdiag_states="established syn-sent syn-recv fin-wait-1 fin-wait-2 time-wait closed
close-wait last-ack listening closing bound-inactive unconnected all connected synchronized
bucket big"
_sockdiag_keywords="state exclude src dst sport dport dev fwmark cgroup unit autobound uid inode
cookie proto path netlink-proto group pid comm user and or not"
_sockdiag_families="inet inet6 link unix netlink vsock tipc xdp smc help"
_sockdiag_tables="all inet tcp udp udplite raw mptcp sctp unix unix_stream unix_dgram
unix_seqpacket u_str u_dgr u_seq packet packet_raw packet_dgram p_raw p_dgr netlink vsock
vsock_stream vsock_dgram vsock_seqpacket v_str v_dgr v_seq xdp tipc smc"
_sockdiag_protos="tcp udp udplite raw mptcp sctp smc tipc xdp netlink inet unix unix_stream
unix_dgram unix_seqpacket packet vsock"
# rtnetlink multicast groups by name (the filter's `group G`; sdiag_rtnl_group_name).
_sockdiag_nlgroups="link notify neigh tc ipv4_ifaddr ipv4_mroute ipv4_route ipv4_rule
ipv6_ifaddr ipv6_mroute ipv6_route ipv6_ifinfo decnet_ifaddr decnet_route decnet_rule
ipv6_prefix ipv6_rule nd_useropt phonet_ifaddr phonet_route dcb ipv4_netconf ipv6_netconf mdb
mpls_route nsid mpls_netconf ipv4_mroute_r ipv6_mroute_r nexthop brvlan mctp_ifaddr tunnel
stats ipv4_mcaddr ipv6_mcaddr ipv6_acaddr"
_sockdiag_nlprotos="route unused usersock firewall sock_diag nflog xfrm selinux iscsi audit
fib_lookup connector netfilter ip6_fw dnrtmsg kobject_uevent generic scsitransport ecryptfs
rdma crypto smc"

declare -gA _sockdiag_optcache

# _sockdiag_opts PROG CMD: the options `PROG CMD --help` lists (cached).
_sockdiag_opts()
{
	local key="$1 $2"

	if [[ -z ${_sockdiag_optcache[$key]-} ]]; then
		_sockdiag_optcache[$key]=$("$1" "$2" --help 2>/dev/null |
			grep -oE '(^|[ |[])--?[a-zA-Z0-9][a-z0-9-]*' | sed 's/^[ |[]//' |
			sort -u | tr '\n' ' ')
	fi
	printf '%s' "${_sockdiag_optcache[$key]}"
}

_sockdiag_netns()
{
	local f

	for f in /run/netns/*; do
		[[ -e $f ]] && printf '%s\n' "${f##*/}"
	done
	printf 'pid:\n'
}

# Directories below the cgroup2 mount, as the filter's cgroup PATH wants them.
_sockdiag_cgroups()
{
	local root cur=$1

	root=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo 2>/dev/null)
	[[ -n $root && -d $root ]] || return
	[[ $cur == /* ]] || cur=/$cur
	compgen -d -- "$root$cur" 2>/dev/null | sed "s|^$root||; s|\$|/|"
}

# Unit names (the filter's `unit NAME`): the cgroup tree's *.service/.scope/.slice/...
# directories, and systemctl's units when there is a systemd to ask.
_sockdiag_units()
{
	local root

	root=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo 2>/dev/null)
	{
		[[ -n $root && -d $root ]] && find "$root" -maxdepth 4 -type d \
			\( -name '*.service' -o -name '*.scope' -o -name '*.slice' -o -name '*.socket' \
			-o -name '*.mount' -o -name '*.swap' \) -printf '%f\n' 2>/dev/null
		command -v systemctl >/dev/null && [[ -d /run/systemd/system ]] &&
			systemctl list-units --all --plain --no-legend --no-pager \
				--type=service,scope,slice,socket 2>/dev/null | awk '{print $1}'
	} | sort -u
}

# Command names of the running processes (the filter's `comm NAME`).
_sockdiag_comms()
{
	cat /proc/[0-9]*/comm 2>/dev/null | sort -u
}

# compgen over a comma list (--count-by state,pro; -A tcp,ud): the last item completed,
# the earlier ones kept.
_sockdiag_list_words()
{
	local words=$1 cur=$2 head=""

	[[ $cur == *,* ]] && head=${cur%,*},
	compgen -W "$words" -P "$head" -- "${cur##*,}"
}

_sockdiag()
{
	local cur prev cmd i words_before
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# The command: the first word after the program that is one (else list).
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		list | kill | watch | life | top | guard | exporter | drain | help) cmd=${COMP_WORDS[i]}; break ;;
		-K) cmd=kill; break ;;
		-E) cmd=watch; break ;;
		-*) ;;
		*) break ;;
		esac
	done
	words_before=$((COMP_CWORD - 1))
	if [[ -z $cmd && $words_before -eq 0 && $cur != -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_cmds $_sockdiag_keywords" -- "$cur")
		return
	fi
	if [[ $cmd == help ]]; then
		mapfile -t COMPREPLY < <(compgen -W "list kill watch life top guard exporter drain" -- "$cur")
		return
	fi
	[[ -n $cmd ]] || cmd=list

	case $prev in
	-N | --netns)
		mapfile -t COMPREPLY < <(compgen -W "$(_sockdiag_netns)" -- "$cur")
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == pid: ]] && compopt -o nospace
		return
		;;
	-f | --family)
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_families" -- "$cur")
		return
		;;
	-A | --query | --socket)
		mapfile -t COMPREPLY < <(_sockdiag_list_words "$_sockdiag_tables" "$cur")
		return
		;;
	--count-by)
		mapfile -t COMPREPLY < <(_sockdiag_list_words "state proto family netns cgroup cgroup_id
			unit process pid user uid lport rport laddr raddr" "$cur")
		return
		;;
	--by)
		mapfile -t COMPREPLY < <(_sockdiag_list_words "conn pid comm cgroup cgroup_id unit user
			uid raddr peer rport laddr lport netns state proto family" "$cur")
		return
		;;
	--sort)
		mapfile -t COMPREPLY < <(compgen -W "rx tx conns closed rtt retrans rqueue wqueue
			key" -- "$cur")
		return
		;;
	--owners)
		mapfile -t COMPREPLY < <(compgen -W "auto bpf proc" -- "$cur")
		return
		;;
	-F | --filter | -c | --config | --dead-backends)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return
		;;
	--batch | --passes | --count | --rcvbuf | --rtnl-rcvbuf | --interval | --listen | --metrics | \
		--timeout | --max-age | --dump-budget)
		return
		;;
	state | exclude | excl)
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_states" -- "$cur")
		return
		;;
	dev)
		mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur")
		return
		;;
	uid | user)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		return
		;;
	proto)
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_protos" -- "$cur")
		return
		;;
	netlink-proto | nlproto)
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_nlprotos" -- "$cur")
		return
		;;
	group)
		mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_nlgroups" -- "$cur")
		return
		;;
	unit)
		mapfile -t COMPREPLY < <(compgen -W "$(_sockdiag_units)" -- "$cur")
		return
		;;
	comm)
		mapfile -t COMPREPLY < <(compgen -W "$(_sockdiag_comms)" -- "$cur")
		return
		;;
	cgroup)
		mapfile -t COMPREPLY < <(_sockdiag_cgroups "$cur")
		compopt -o nospace
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_sockdiag_opts "${COMP_WORDS[0]}" "$cmd")" -- "$cur")
		return
	fi
	[[ $cmd == guard || $cmd == exporter ]] && return
	mapfile -t COMPREPLY < <(compgen -W "$_sockdiag_keywords" -- "$cur")
}

complete -F _sockdiag sockdiag
