// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guard process's set-up, apart from its event loop (guard.c): the
 * namespace it enters, the capabilities it keeps, its signals, and why it
 * could not destroy.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#ifdef HAVE_LIBCAP_NG
#include <cap-ng.h>
#endif

#include "daemon/guard/guard.h"
#include "util/argerr.h"
#include "util/sigfd.h"
#include "util/textfile.h"

/* Why this guard could never destroy a socket (r from sdiag_destroy_check). */
const char *guard_destroy_problem(int r)
{
	if (r == -EPERM)
		return "no CAP_NET_ADMIN over the network namespace: no socket could be destroyed "
		       "(run it as root, or grant it CAP_NET_ADMIN)";
	if (r == -EOPNOTSUPP)
		return "this kernel cannot destroy sockets: it was built without "
		       "CONFIG_INET_DIAG_DESTROY";
	return strerror(-r);
}

int guard_drop_capabilities(void)
{
#ifdef HAVE_LIBCAP_NG
	/* Everything but CAP_NET_ADMIN (SOCK_DESTROY) goes: the namespace is
	 * entered and every socket opened before this. Started without it,
	 * the guard keeps nothing, and can_destroy() says so. */
	bool net_admin;

	capng_get_caps_process();
	net_admin = capng_have_capability(CAPNG_EFFECTIVE, CAP_NET_ADMIN);
	capng_clear(CAPNG_SELECT_BOTH);
	if ((net_admin &&
	     capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_NET_ADMIN) < 0) ||
	    capng_apply(CAPNG_SELECT_BOTH) < 0)
		return -EPERM;
#endif
	return 0;
}

int guard_open_signals(void)
{
	return sigfd_open((const int[]){ SIGHUP, SIGINT, SIGTERM, 0 }, SFD_NONBLOCK);
}

/* setns() into -N's namespace; a one-line error on stderr. */
int guard_enter_netns(const char *spec)
{
	char q[256];
	int fd, r;

	r = sdiag_netns_open(spec, &fd);
	if (r < 0) {
		argerr_netns("guard", spec, r);
		return r;
	}
	r = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		fprintf(stderr, "sockdiag guard: netns %s: cannot enter: %s\n",
			text_excerpt(q, sizeof(q), spec, strlen(spec), 48), strerror(-r));
	return r;
}
