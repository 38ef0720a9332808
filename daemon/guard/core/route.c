/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Route changes: an address can stay assigned while its sockets stop working
 * (a VPN takes the default route; the default moves from wlan0 to eth0 and
 * wlan0's sockets now leave through eth0 with a foreign source). After route
 * events the guard asks the kernel, for each live socket, for the route to
 * its peer with the socket's own mark, bound device and uid (RTM_GETROUTE,
 * as `ip route get PEER mark M oif DEV uid U`). A socket is stranded when the
 * kernel would choose another source for that peer and the route leaves
 * through a device that does not carry the socket's address; a socket bound
 * to a secondary address of the route's own device is fine, and so is one
 * whose peer is an address of this host (a local route: nothing leaves).
 *
 * Here the pure part: a socket's key, the kernel's answer parsed, the verdict,
 * which rtnetlink messages are route events. The lookups themselves (the
 * socket, the per-pass cache): daemon/guard/route_nl.c.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/guard/core/core.h"
#include "util/inaddr.h"

static size_t alen(uint8_t family)
{
	return family == AF_INET ? 4 : 16;
}

void guard_route_key_of(const struct sdiag_sock *s, struct guard_route_key *ret)
{
	const uint8_t *peer;

	memset(ret, 0, sizeof(*ret));
	ret->family = in_plain(s->family, s->inet.dst, &peer);
	memcpy(ret->peer, peer, alen(ret->family));
	ret->mark = s->has & SDIAG_HAS_MARK ? s->inet.mark : 0;
	ret->oif = s->inet.ifindex;
	ret->has_uid = s->has & SDIAG_HAS_UID;
	ret->uid = ret->has_uid ? s->uid : 0;
}

static bool zero(const uint8_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

enum guard_verdict guard_decide_route(const struct guard_config *c, const struct guard_table *t,
				      const struct sdiag_sock *s,
				      const struct guard_route_answer *a)
{
	enum guard_verdict v = guard_decide_selected(c, s);
	const uint8_t *src;
	uint8_t fam;

	if (v != GUARD_DESTROY)
		return v;
	fam = in_plain(s->family, s->inet.src, &src);
	/* No route, or a peer on this host: the packets never leave by a device. */
	if (!a || a->err || a->local || !a->has_src || zero(src, alen(fam)))
		return GUARD_KEEP_UNRELATED;
	if (!memcmp(a->src, src, alen(fam)))
		return GUARD_KEEP_UNRELATED;
	/* Another address of the device the route leaves through: still its own. */
	for (size_t i = 0; i < t->n_addrs; i++)
		if (t->addrs[i].ifindex == a->oif && t->addrs[i].family == fam &&
		    !memcmp(t->addrs[i].addr, src, alen(fam)))
			return GUARD_KEEP_UNRELATED;
	return GUARD_DESTROY;
}

/* ---- the kernel's answers and route events, parsed --------------------------------------- */

static int reply_attr(const struct nlattr *attr, void *data)
{
	struct guard_route_answer *a = data;
	uint16_t len = mnl_attr_get_payload_len(attr);

	switch (mnl_attr_get_type(attr)) {
	case RTA_PREFSRC:
		if (len == 4 || len == 16) {
			memcpy(a->src, mnl_attr_get_payload(attr), len);
			a->has_src = true;
		}
		break;
	case RTA_OIF:
		if (len == 4)
			a->oif = (int)mnl_attr_get_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

int guard_route_parse(const struct nlmsghdr *nlh, struct guard_route_answer *a)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return 0;
	a->local = rtm->rtm_type == RTN_LOCAL;
	if (mnl_attr_parse(nlh, sizeof(struct rtmsg), reply_attr, a) < 0)
		a->err = -EBADMSG;
	return 0;
}

bool guard_route_event(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE && nlh->nlmsg_type != RTM_DELROUTE)
		return false;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return false;
	/* Local and broadcast routes follow addresses, which the guard watches itself. */
	return rtm->rtm_table != RT_TABLE_LOCAL;
}
