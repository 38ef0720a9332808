/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AF_UNIX (net/unix/diag.c): request builder and reply decoder.
 *
 * Reply: struct unix_diag_msg, then UNIX_DIAG_* attributes. The attribute
 * enum starts at 0 (there is no UNIX_DIAG_NONE). The kernel sends
 * UNIX_DIAG_SHUTDOWN whether asked or not.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "lib/family/family.h"

/* Own copies of the uapi (include/uapi/linux/unix_diag.h). */
struct ud_req {
	uint8_t family;
	uint8_t protocol;
	uint16_t pad;
	uint32_t states;
	uint32_t ino;
	uint32_t show;
	uint32_t cookie[2];
};

struct ud_msg {
	uint8_t family;
	uint8_t type;
	uint8_t state;
	uint8_t pad;
	uint32_t ino;
	uint32_t cookie[2];
};

enum {
	UD_SHOW_NAME = 0x01,
	UD_SHOW_VFS = 0x02,
	UD_SHOW_PEER = 0x04,
	UD_SHOW_ICONS = 0x08,
	UD_SHOW_RQLEN = 0x10,
	UD_SHOW_MEMINFO = 0x20,
	UD_SHOW_UID = 0x40,
};

enum {
	UD_ATTR_NAME,
	UD_ATTR_VFS,
	UD_ATTR_PEER,
	UD_ATTR_ICONS,
	UD_ATTR_RQLEN,
	UD_ATTR_MEMINFO,
	UD_ATTR_SHUTDOWN,
	UD_ATTR_UID,
	UD_ATTR_MAX
};

/* sd_attr_table() policy: minimum payload of each attribute decoded
 * (UINT16_MAX: any length; structs that grew are copied min(len, ours)). */
static const uint16_t policy[UD_ATTR_MAX] = {
	[UD_ATTR_NAME] = UINT16_MAX,  [UD_ATTR_VFS] = 8,   [UD_ATTR_PEER] = 4,
	[UD_ATTR_ICONS] = UINT16_MAX, [UD_ATTR_RQLEN] = 8, [UD_ATTR_MEMINFO] = UINT16_MAX,
	[UD_ATTR_SHUTDOWN] = 1,	      [UD_ATTR_UID] = 4,
};

struct nlmsghdr *sd_unix_request(void *buf, const struct sd_req *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ud_req *req;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->family = AF_UNIX;
	req->states = r->states;
	/* UID is asked for always (ss never does): it is one u32 per socket. */
	req->show = UD_SHOW_NAME | UD_SHOW_PEER | UD_SHOW_RQLEN | UD_SHOW_UID;
	if (r->show & SDIAG_SHOW_EXT)
		req->show |= UD_SHOW_VFS | UD_SHOW_ICONS;
	if (r->show & SDIAG_SHOW_MEM)
		req->show |= UD_SHOW_MEMINFO;
	return nlh;
}

static int table_of(uint8_t type, enum sdiag_table *ret)
{
	switch (type) {
	case SOCK_STREAM:
		*ret = SDIAG_T_UNIX_STREAM;
		return 0;
	case SOCK_DGRAM:
		*ret = SDIAG_T_UNIX_DGRAM;
		return 0;
	case SOCK_SEQPACKET:
		*ret = SDIAG_T_UNIX_SEQPACKET;
		return 0;
	default:
		return -ENOENT;
	}
}

static void put_attr(const struct nlattr *a, uint16_t type, struct sdiag_sock *s)
{
	const uint8_t *p = mnl_attr_get_payload(a);
	uint16_t len = mnl_attr_get_payload_len(a);

	switch (type) {
	case UD_ATTR_NAME:
		/* A path name ends at its NUL (the kernel counts the one bind()
		 * appended); an abstract name is all of its bytes, NULs included. */
		s->un.name = p;
		s->un.name_len = len && p[0] ? strnlen((const char *)p, len) : len;
		s->has |= SDIAG_HAS_NAME;
		break;
	case UD_ATTR_VFS:
		memcpy(&s->un.vfs_ino, p, 4);
		memcpy(&s->un.vfs_dev, p + 4, 4);
		s->has |= SDIAG_HAS_VFS;
		break;
	case UD_ATTR_PEER:
		s->un.peer = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_PEER;
		break;
	case UD_ATTR_ICONS:
		s->un.icons = (const uint32_t *)p;
		s->un.n_icons = len / sizeof(uint32_t);
		s->has |= SDIAG_HAS_ICONS;
		break;
	case UD_ATTR_RQLEN:
		memcpy(&s->rqueue, p, 4);
		memcpy(&s->wqueue, p + 4, 4);
		s->has |= SDIAG_HAS_QUEUES;
		break;
	case UD_ATTR_MEMINFO:
		sd_blob_set(s, SDIAG_BLOB_SKMEMINFO, p, len, SDIAG_HAS_SKMEMINFO);
		break;
	case UD_ATTR_SHUTDOWN:
		s->shutdown = mnl_attr_get_u8(a);
		s->has |= SDIAG_HAS_SHUTDOWN;
		break;
	case UD_ATTR_UID:
		s->uid = mnl_attr_get_u32(a);
		s->has |= SDIAG_HAS_UID;
		break;
	}
}

int sd_unix_decode(const struct nlmsghdr *nlh, struct sdiag_sock *s)
{
	const struct ud_msg *m;
	const struct nlattr *tb[UD_ATTR_MAX];
	enum sdiag_table table;
	int r;

	r = sd_diag_header(nlh, sizeof(*m), AF_UNIX, (const void **)&m);
	if (r <= 0)
		return r;
	if (table_of(m->type, &table) < 0)
		return 0;

	s->table = table;
	s->family = AF_UNIX;
	s->protocol = 0; /* no protocol numbers here */
	s->type = m->type;
	s->state = m->state < SDIAG_SS_MAX ? m->state : SDIAG_SS_UNKNOWN;
	s->inode = m->ino;
	s->cookie = (uint64_t)m->cookie[1] << 32 | m->cookie[0];
	s->has |= SDIAG_HAS_INODE | SDIAG_HAS_COOKIE;

	r = sd_attr_table(mnl_nlmsg_get_payload_offset(nlh, sizeof(*m)),
			  nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*m), policy, UD_ATTR_MAX, tb);
	if (r < 0)
		return r;
	for (uint16_t t = 0; t < UD_ATTR_MAX; t++)
		if (tb[t])
			put_attr(tb[t], t, s);
	return 1;
}
