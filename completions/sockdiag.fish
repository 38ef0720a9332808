# SPDX-License-Identifier: GPL-2.0-or-later
# fish completion for sockdiag(8): commands, options (read from `sockdiag COMMAND --help`),
# filter keywords, state names, families, socket tables and --count-by keys (also the last
# of a comma list), --owners, network namespaces (/run/netns), devices, users, cgroup paths,
# unit names (the cgroup tree, systemctl), rtnetlink group names, command names (/proc).

set -l sockdiag_cmds list kill watch life top guard exporter drain help
set -l sockdiag_keywords state exclude src dst sport dport dev fwmark cgroup unit autobound uid \
	inode cookie proto path netlink-proto group pid comm user and or not
set -l sockdiag_states established syn-sent syn-recv fin-wait-1 fin-wait-2 time-wait closed \
	close-wait last-ack listening closing bound-inactive unconnected all connected \
	synchronized bucket big
set -l sockdiag_tables all inet tcp udp udplite raw mptcp sctp unix unix_stream unix_dgram \
	unix_seqpacket u_str u_dgr u_seq packet packet_raw packet_dgram p_raw p_dgr netlink vsock \
	vsock_stream vsock_dgram vsock_seqpacket v_str v_dgr v_seq xdp tipc smc
set -l sockdiag_keys state proto family netns cgroup cgroup_id unit process pid user uid lport rport laddr raddr
set -l sockdiag_protos tcp udp udplite raw mptcp sctp smc tipc xdp netlink inet unix \
	unix_stream unix_dgram unix_seqpacket packet vsock
# rtnetlink multicast groups by name (the filter's `group G`; sdiag_rtnl_group_name).
set -l sockdiag_nlgroups link notify neigh tc ipv4_ifaddr ipv4_mroute ipv4_route ipv4_rule \
	ipv6_ifaddr ipv6_mroute ipv6_route ipv6_ifinfo decnet_ifaddr decnet_route decnet_rule \
	ipv6_prefix ipv6_rule nd_useropt phonet_ifaddr phonet_route dcb ipv4_netconf \
	ipv6_netconf mdb mpls_route nsid mpls_netconf ipv4_mroute_r ipv6_mroute_r nexthop brvlan \
	mctp_ifaddr tunnel stats ipv4_mcaddr ipv6_mcaddr ipv6_acaddr

function __sockdiag_cmd
	set -l words (commandline -opc)
	for w in $words[2..-1]
		switch $w
			case list kill watch life top guard exporter drain help
				echo $w
				return
			case -K
				echo kill
				return
			case -E
				echo watch
				return
			case '-*'
			case '*'
				break
		end
	end
	echo list
end

function __sockdiag_first_word
	test (count (commandline -opc)) -eq 1
end

function __sockdiag_prev_is
	set -l words (commandline -opc)
	contains -- $words[-1] $argv
end

function __sockdiag_opts
	set -l prog (commandline -opc)[1]
	$prog (__sockdiag_cmd) --help 2>/dev/null |
		string match -ar '(?:^|[ |\[])(--?[a-zA-Z0-9][a-z0-9-]*)' | string match -r '^--?.*' |
		sort -u
end

function __sockdiag_netns
	for f in /run/netns/*
		basename $f
	end
	echo pid:
end

function __sockdiag_cgroups
	set -l root (awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo 2>/dev/null)
	test -n "$root"; or return
	find $root -mindepth 1 -maxdepth 3 -type d 2>/dev/null | string replace $root ''
end

# A comma list (--count-by state,pro; -A tcp,ud): the words after what the token holds
# up to its last comma.
function __sockdiag_list
	set -l head (string replace -r '[^,]*$' '' -- (commandline -ct))
	for w in $argv
		echo $head$w
	end
end

function __sockdiag_units
	set -l root (awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo 2>/dev/null)
	begin
		test -n "$root"; and find $root -maxdepth 4 -type d \( -name '*.service' \
			-o -name '*.scope' -o -name '*.slice' -o -name '*.socket' -o -name '*.mount' \
			-o -name '*.swap' \) -printf '%f\n' 2>/dev/null
		if command -q systemctl; and test -d /run/systemd/system
			systemctl list-units --all --plain --no-legend --no-pager \
				--type=service,scope,slice,socket 2>/dev/null | string split -f1 ' '
		end
	end | sort -u
end

# Options whose value has no completion (numbers, durations, addresses, URLs).
set -l sockdiag_valued --batch --passes --count --rcvbuf --rtnl-rcvbuf --interval --listen \
	--metrics --timeout --max-age --dump-budget --netns-dir --otlp --remote-write

complete -c sockdiag -f
complete -c sockdiag -n __sockdiag_first_word -a "$sockdiag_cmds" -d command
complete -c sockdiag -n '__sockdiag_prev_is help' -a "$sockdiag_cmds[1..-2]" -d command
complete -c sockdiag -n '__sockdiag_prev_is state exclude excl' -a "$sockdiag_states"
complete -c sockdiag -n '__sockdiag_prev_is -N --netns' -a '(__sockdiag_netns)'
complete -c sockdiag -n '__sockdiag_prev_is -f --family' \
	-a 'inet inet6 link unix netlink vsock tipc xdp smc help'
complete -c sockdiag -n '__sockdiag_prev_is dev' -a '(ls /sys/class/net)'
complete -c sockdiag -n '__sockdiag_prev_is uid user' -a '(__fish_complete_users)'
complete -c sockdiag -n '__sockdiag_prev_is cgroup' -a '(__sockdiag_cgroups)'
complete -c sockdiag -n '__sockdiag_prev_is -F --filter -c --config --dead-backends' -F
complete -c sockdiag -n '__sockdiag_prev_is -A --query --socket' \
	-a "(__sockdiag_list $sockdiag_tables)"
complete -c sockdiag -n '__sockdiag_prev_is --count-by' -a "(__sockdiag_list $sockdiag_keys)"
complete -c sockdiag -n '__sockdiag_prev_is --owners' -a 'auto bpf proc'
complete -c sockdiag -n '__sockdiag_prev_is proto' -a "$sockdiag_protos"
complete -c sockdiag -n '__sockdiag_prev_is group' -a "$sockdiag_nlgroups"
complete -c sockdiag -n '__sockdiag_prev_is unit' -a '(__sockdiag_units)'
complete -c sockdiag -n '__sockdiag_prev_is comm' -a '(cat /proc/*/comm 2>/dev/null | sort -u)'
complete -c sockdiag -n '__sockdiag_prev_is --by' \
	-a 'conn pid comm cgroup cgroup_id unit user uid raddr peer rport laddr lport netns state proto family'
complete -c sockdiag -n '__sockdiag_prev_is --sort' \
	-a 'rx tx conns closed rtt retrans rqueue wqueue key'
complete -c sockdiag -n 'string match -q -- "-*" (commandline -ct)' -a '(__sockdiag_opts)'
complete -c sockdiag -n "not __sockdiag_prev_is state exclude excl -N --netns -f --family dev uid user cgroup -A --query --socket --count-by --owners proto group unit comm -F --filter -c --config --dead-backends --by --sort $sockdiag_valued; and not contains (__sockdiag_cmd) guard exporter help" \
	-a "$sockdiag_keywords"
