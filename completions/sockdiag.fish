# SPDX-License-Identifier: GPL-2.0-or-later
# fish completion for sockdiag(8): commands, options (read from `sockdiag COMMAND --help`),
# filter keywords, state names, families, socket tables, network namespaces (/run/netns),
# devices, users and cgroup paths.

set -l sockdiag_cmds list kill watch top guard exporter help
set -l sockdiag_keywords state exclude src dst sport dport dev fwmark cgroup unit autobound uid \
	inode cookie proto path netlink-proto group pid comm user and or not
set -l sockdiag_states established syn-sent syn-recv fin-wait-1 fin-wait-2 time-wait closed \
	close-wait last-ack listening closing bound-inactive unconnected all connected \
	synchronized bucket big

function __sockdiag_cmd
	set -l words (commandline -opc)
	for w in $words[2..-1]
		switch $w
			case list kill watch top guard exporter help
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

complete -c sockdiag -f
complete -c sockdiag -n __sockdiag_first_word -a "$sockdiag_cmds" -d command
complete -c sockdiag -n '__sockdiag_prev_is state exclude excl' -a "$sockdiag_states"
complete -c sockdiag -n '__sockdiag_prev_is -N --netns' -a '(__sockdiag_netns)'
complete -c sockdiag -n '__sockdiag_prev_is -f --family' \
	-a 'inet inet6 link unix netlink vsock tipc xdp smc help'
complete -c sockdiag -n '__sockdiag_prev_is dev' -a '(ls /sys/class/net)'
complete -c sockdiag -n '__sockdiag_prev_is uid user' -a '(__fish_complete_users)'
complete -c sockdiag -n '__sockdiag_prev_is cgroup' -a '(__sockdiag_cgroups)'
complete -c sockdiag -n '__sockdiag_prev_is -F --filter -c --config' -F
complete -c sockdiag -n '__sockdiag_prev_is --by' \
	-a 'conn pid comm cgroup unit user raddr rport laddr lport netns state proto family'
complete -c sockdiag -n '__sockdiag_prev_is --sort' \
	-a 'rx tx conns closed rtt retrans rqueue wqueue key'
complete -c sockdiag -n 'string match -q -- "-*" (commandline -ct)' -a '(__sockdiag_opts)'
complete -c sockdiag -n 'not __sockdiag_prev_is state exclude excl -N --netns -f --family dev uid user cgroup --by --sort' \
	-a "$sockdiag_keywords"
