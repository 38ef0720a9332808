// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compile a filter to INET_DIAG_REQ_BYTECODE for one address family.
 *
 * The kernel program only pre-selects: the userspace matcher runs on every
 * socket that arrives. So the program must accept every socket the matcher
 * would (an over-approximation), and should reject as many others as it can.
 * Each node is compiled either as an over- or an under-approximation:
 *
 *   leaf the kernel can test exactly      -> that test (both ways)
 *   leaf the kernel cannot test           -> over: true, under: false
 *   leaf the kernel tests only on full
 *   sockets (fwmark, cgroup)              -> over: the test, under: false
 *   cgroup set (subtree, unit)            -> over: CGROUP_COND alternatives
 *                                            (true when there are too many)
 *   not X                                 -> not (the other approximation of X)
 *   X and/or Y                            -> X and/or Y, constants folded
 *
 * Unlike ss, one uncompilable predicate (dev, uid, state, ...) costs only its
 * own conjunct, not the whole program. `dev` compiles to DEV_COND.
 *
 * Program shape (as ss builds it): each test falls through on success and
 * jumps to end+4 (reject) on failure; AND concatenates and relocates the first
 * part's rejects; OR is A, JMP over B, B; NOT appends a JMP{4,8}.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/filter/filter.h"

/* Own copies of the uapi constants (linux/inet_diag.h). */
enum {
	BC_NOP,
	BC_JMP,
	BC_S_GE,
	BC_S_LE,
	BC_D_GE,
	BC_D_LE,
	BC_AUTO,
	BC_S_COND,
	BC_D_COND,
	BC_DEV_COND,
	BC_MARK_COND,
	BC_S_EQ,
	BC_D_EQ,
	BC_CGROUP_COND,
};

struct bc_op {
	uint8_t code;
	uint8_t yes;
	uint16_t no;
};

struct bc_hostcond {
	uint8_t family;
	uint8_t prefix_len;
	int port;
	/* followed by 0, 4 or 16 address bytes */
};

#define BC_MAX 8192 /* keeps every jump well inside the u8 yes / u16 no fields */
#define BC_MAX_CGROUPS 256 /* 16 bytes each: a cgroup set stays under half of BC_MAX */

/* A compiled piece: a program, or a constant. */
struct frag {
	uint8_t *b;
	size_t len;
	int k; /* 0: program in b; 1: always true; -1: always false */
};

static int frag_const(struct frag *f, int k)
{
	f->b = NULL;
	f->len = 0;
	f->k = k;
	return 0;
}

/* One test: op + operand, falls through on success, rejects on failure. */
static int frag_op(struct frag *f, uint8_t code, const void *operand, size_t oplen)
{
	struct bc_op op = { code, (uint8_t)(4 + oplen), (uint16_t)(4 + oplen + 4) };

	f->b = malloc(4 + oplen);
	if (!f->b)
		return -ENOMEM;
	memcpy(f->b, &op, 4);
	if (oplen)
		memcpy(f->b + 4, operand, oplen);
	f->len = 4 + oplen;
	f->k = 0;
	return 0;
}

static int frag_port(struct frag *f, uint8_t code, uint16_t port)
{
	struct bc_op arg = { 0, 0, port };

	return frag_op(f, code, &arg, sizeof(arg));
}

static int frag_not(struct frag *f)
{
	struct bc_op jmp = { BC_JMP, 4, 8 };
	uint8_t *b;

	if (f->k) {
		f->k = -f->k;
		return 0;
	}
	if (f->len + 4 > BC_MAX)
		return -E2BIG;
	b = realloc(f->b, f->len + 4);
	if (!b)
		return -ENOMEM;
	memcpy(b + f->len, &jmp, 4);
	f->b = b;
	f->len += 4;
	return 0;
}

/* a := a AND b (and_op) or a OR b. Consumes b. */
static int frag_join(struct frag *a, struct frag *b, bool and_op)
{
	size_t extra = and_op ? 0 : 4;
	uint8_t *buf;

	if (a->k || b->k) {
		/* Fold constants: the dominant one wins, the neutral one vanishes. */
		int dom = and_op ? -1 : 1;

		if (a->k == dom || b->k == dom) {
			free(a->b);
			free(b->b);
			return frag_const(a, dom);
		}
		if (a->k) {
			*a = *b;
			return 0;
		}
		free(b->b);
		return 0;
	}
	if (a->len + b->len + extra > BC_MAX) {
		free(b->b);
		return -E2BIG;
	}
	buf = realloc(a->b, a->len + b->len + extra);
	if (!buf) {
		free(b->b);
		return -ENOMEM;
	}
	if (and_op) {
		/* Relocate a's rejects (jumps to its end + 4) past b. */
		size_t pos = 0;

		while (pos < a->len) {
			struct bc_op op;
			size_t rem = a->len - pos;

			memcpy(&op, buf + pos, 4);
			if (op.no == rem + 4) {
				op.no = (uint16_t)(op.no + b->len);
				memcpy(buf + pos, &op, 4);
			}
			pos += op.yes;
		}
	} else {
		struct bc_op jmp = { BC_JMP, 4, (uint16_t)(b->len + 4) };

		memcpy(buf + a->len, &jmp, 4);
	}
	memcpy(buf + a->len + extra, b->b, b->len);
	free(b->b);
	a->b = buf;
	a->len += b->len + extra;
	return 0;
}

static int compile_host(const struct sd_fnode *n, uint8_t family, struct frag *f)
{
	const struct sd_fhost *h = &n->u.host;
	uint8_t buf[sizeof(struct bc_hostcond) + 16] = { 0 };
	struct bc_hostcond hc;
	size_t alen = h->family == AF_INET6 ? 16 : h->family == AF_INET ? 4 : 0;

	if (h->family == 0 && h->port < 0)
		return frag_const(f, 1);
	if (h->family == AF_INET6 && family == AF_INET)
		return frag_const(f, -1);
	/* The padding after prefix_len goes to the kernel too: zero, not whatever
	 * the stack held (an initialiser leaves it unspecified; under ASan two
	 * compilations of one filter differed there). */
	memset(&hc, 0, sizeof(hc));
	hc.family = h->family;
	hc.prefix_len = h->plen;
	hc.port = h->port;
	memcpy(buf, &hc, sizeof(hc));
	memcpy(buf + sizeof(hc), h->addr, alen);
	return frag_op(f, n->dir == SD_DIR_SRC ? BC_S_COND : BC_D_COND, buf, sizeof(hc) + alen);
}

static int compile_port(const struct sd_fnode *n, struct frag *f)
{
	bool src = n->dir == SD_DIR_SRC;
	uint16_t port = (uint16_t)n->u.num.value;
	int r;

	if (n->u.num.value == UINT64_MAX)
		return frag_const(f, 1);
	switch (n->cmp) {
	case SD_EQ:
	case SD_NE:
		r = frag_port(f, src ? BC_S_EQ : BC_D_EQ, port);
		break;
	case SD_LE:
	case SD_GT:
		r = frag_port(f, src ? BC_S_LE : BC_D_LE, port);
		break;
	default: /* GE, LT */
		r = frag_port(f, src ? BC_S_GE : BC_D_GE, port);
		break;
	}
	if (r == 0 && (n->cmp == SD_NE || n->cmp == SD_GT || n->cmp == SD_LT))
		r = frag_not(f);
	return r;
}

/* One CGROUP_COND per id of the set, joined by OR; `!=` negates the whole. */
static int compile_cgroup(const struct sd_fnode *n, struct frag *f)
{
	struct frag alt;
	int r = 0;

	if (!n->u.cg.n)
		return frag_const(f, n->cmp == SD_EQ ? -1 : 1);
	if (n->u.cg.n > BC_MAX_CGROUPS)
		return frag_const(f, 1); /* user space decides */
	frag_const(f, -1);
	for (size_t i = 0; i < n->u.cg.n && r == 0; i++) {
		r = frag_op(&alt, BC_CGROUP_COND, &n->u.cg.ids[i], sizeof(uint64_t));
		if (r == 0)
			r = frag_join(f, &alt, false);
	}
	if (r == 0 && n->cmp == SD_NE)
		r = frag_not(f);
	if (r < 0)
		free(f->b);
	return r;
}

static int compile_leaf(const struct sd_fnode *n, bool over, uint8_t family, bool net_admin,
			struct frag *f)
{
	struct frag hi;
	uint32_t u32;
	int r;

	switch (n->kind) {
	case SD_F_HOST:
		return compile_host(n, family, f);
	case SD_F_NUM:
		if (n->field == SD_FLD_PORT)
			return compile_port(n, f);
		break;
	case SD_F_DEV:
		u32 = (uint32_t)n->u.num.value;
		r = frag_op(f, BC_DEV_COND, &u32, sizeof(u32));
		return r == 0 && n->cmp == SD_NE ? frag_not(f) : r;
	case SD_F_MARK:
		/* Exact on full sockets only; without CAP_NET_ADMIN the kernel says EPERM. */
		if (!over || !net_admin)
			break;
		r = frag_op(f, BC_MARK_COND, &n->u.mark, sizeof(n->u.mark));
		return r == 0 && n->cmp == SD_NE ? frag_not(f) : r;
	case SD_F_CGROUP:
		if (!over)
			break;
		return compile_cgroup(n, f);
	case SD_F_AUTOBOUND:
		r = frag_port(f, BC_S_GE, n->u.range.lo);
		if (r == 0)
			r = frag_port(&hi, BC_S_LE, n->u.range.hi);
		if (r == 0)
			r = frag_join(f, &hi, true);
		if (r < 0)
			free(f->b);
		return r;
	case SD_F_NLPROTO:
	case SD_F_NLGROUP:
	case SD_F_UNIX_NAME:
	case SD_F_UNIX_PEER:
	case SD_F_NETLINK:
	case SD_F_PACKET:
	case SD_F_VSOCK:
		return frag_const(f, -1); /* never true on an inet socket */
	default:
		break;
	}
	return frag_const(f, over ? 1 : -1);
}

static int compile(const struct sd_fnode *n, bool over, uint8_t family, bool net_admin,
		   struct frag *f)
{
	struct frag b;
	int r;

	switch (n->kind) {
	case SD_F_AND:
	case SD_F_OR:
		r = compile(n->a, over, family, net_admin, f);
		if (r < 0)
			return r;
		r = compile(n->b, over, family, net_admin, &b);
		if (r < 0) {
			free(f->b);
			return r;
		}
		r = frag_join(f, &b, n->kind == SD_F_AND);
		if (r < 0)
			free(f->b);
		return r;
	case SD_F_NOT:
		r = compile(n->a, !over, family, net_admin, f);
		if (r == 0)
			r = frag_not(f);
		if (r < 0)
			free(f->b);
		return r;
	default:
		return compile_leaf(n, over, family, net_admin, f);
	}
}

int sd_filter_bytecode(const struct sdiag_filter *f, uint8_t family, void **ret)
{
	struct frag fr = { 0 };
	int r;

	if (!f || !f->root || (family != AF_INET && family != AF_INET6))
		return 0;
	r = compile(f->root, true, family, f->net_admin, &fr);
	if (r == -E2BIG)
		return 0; /* too large to push down: filter in userspace only */
	if (r < 0)
		return r;
	if (fr.k == 1)
		return 0;
	if (fr.k == -1) {
		/* Nothing of this family can match: [JMP yes=4 no=8] rejects all. */
		r = frag_op(&fr, BC_JMP, NULL, 0);
		if (r < 0)
			return r;
	}
	*ret = fr.b;
	return (int)fr.len;
}

/* ---- the kernel's checker and interpreter, for tests and the fuzzer --------------- */

/* The target cc (bytes before the end) lies on the yes-chain from the start. */
static bool valid_cc(const uint8_t *bc, int len, int cc)
{
	while (len >= 0) {
		struct bc_op op;

		if (cc > len)
			return false;
		if (cc == len)
			return true;
		if (len < 4)
			return false;
		memcpy(&op, bc, 4);
		if (op.yes < 4 || op.yes & 3)
			return false;
		len -= op.yes;
		bc += op.yes;
	}
	return false;
}

static int min_len_of(const uint8_t *bc, int len, int *min_len)
{
	struct bc_hostcond hc;
	int alen;

	*min_len = 4;
	switch (bc[0]) {
	case BC_S_COND:
	case BC_D_COND:
		*min_len += (int)sizeof(hc);
		if (len < *min_len)
			return -EINVAL;
		memcpy(&hc, bc + 4, sizeof(hc));
		alen = hc.family == 0	     ? 0 :
		       hc.family == AF_INET  ? 4 :
		       hc.family == AF_INET6 ? 16 :
					       -1;
		if (alen < 0)
			return -EINVAL;
		*min_len += alen;
		if (len < *min_len || hc.prefix_len > 8 * alen)
			return -EINVAL;
		return 0;
	case BC_DEV_COND:
	case BC_S_EQ:
	case BC_S_GE:
	case BC_S_LE:
	case BC_D_EQ:
	case BC_D_GE:
	case BC_D_LE:
		*min_len += 4;
		return len < *min_len ? -EINVAL : 0;
	case BC_MARK_COND:
	case BC_CGROUP_COND:
		*min_len += 8;
		return len < *min_len ? -EINVAL : 0;
	case BC_AUTO:
	case BC_JMP:
	case BC_NOP:
		return 0;
	default:
		return -EINVAL;
	}
}

int sd_bc_audit(const void *bytecode, size_t size, bool net_admin)
{
	const uint8_t *bc = bytecode;
	int len = (int)size, min_len;

	if (size < 4 || size > 65535)
		return -EINVAL;
	while (len > 0) {
		struct bc_op op;

		if (len < 4)
			return -EINVAL;
		memcpy(&op, bc, 4);
		if (op.code == BC_MARK_COND && !net_admin)
			return -EPERM;
		if (min_len_of(bc, len, &min_len) < 0)
			return -EINVAL;
		if (op.code != BC_NOP) {
			if (op.no < min_len || op.no > len + 4 || op.no & 3)
				return -EINVAL;
			if (op.no < len && !valid_cc(bytecode, (int)size, len - op.no))
				return -EINVAL;
		}
		if (op.yes < min_len || op.yes > len + 4 || op.yes & 3)
			return -EINVAL;
		bc += op.yes;
		len -= op.yes;
	}
	return len == 0 ? 0 : -EINVAL;
}

static bool run_hostcond(const uint8_t *bc, const struct sdiag_sock *s)
{
	struct sd_fnode n = { .kind = SD_F_HOST };
	struct bc_hostcond hc;

	memcpy(&hc, bc + 4, sizeof(hc));
	n.dir = bc[0] == BC_S_COND ? SD_DIR_SRC : SD_DIR_DST;
	n.u.host.family = hc.family;
	n.u.host.plen = hc.prefix_len;
	n.u.host.port = hc.port;
	memcpy(n.u.host.addr, bc + 4 + sizeof(hc),
	       hc.family == AF_INET6 ? 16 :
	       hc.family == AF_INET  ? 4 :
				       0);
	return sd_fnode_match(&n, NULL, s);
}

static bool run_op(const uint8_t *bc, const struct sdiag_sock *s)
{
	uint16_t port = 0;
	uint32_t u32[2];
	uint64_t u64;

	if ((bc[0] >= BC_S_GE && bc[0] <= BC_D_LE) || bc[0] == BC_S_EQ || bc[0] == BC_D_EQ)
		memcpy(&port, bc + 6, 2);
	switch (bc[0]) {
	case BC_S_GE:
		return s->inet.sport >= port;
	case BC_S_LE:
		return s->inet.sport <= port;
	case BC_D_GE:
		return s->inet.dport >= port;
	case BC_D_LE:
		return s->inet.dport <= port;
	case BC_S_EQ:
		return s->inet.sport == port;
	case BC_D_EQ:
		return s->inet.dport == port;
	case BC_S_COND:
	case BC_D_COND:
		return run_hostcond(bc, s);
	case BC_DEV_COND:
		memcpy(u32, bc + 4, 4);
		return s->inet.ifindex == u32[0];
	case BC_MARK_COND:
		memcpy(u32, bc + 4, 8);
		return (((s->has & SDIAG_HAS_MARK) ? s->inet.mark : 0) & u32[1]) == u32[0];
	case BC_CGROUP_COND:
		memcpy(&u64, bc + 4, 8);
		return ((s->has & SDIAG_HAS_CGROUP) ? s->inet.cgroup_id : 0) == u64;
	case BC_JMP:
		return false;
	default: /* NOP, AUTO (userlocks are not in the record) */
		return true;
	}
}

bool sd_bc_run(const void *bytecode, size_t size, const struct sdiag_sock *s)
{
	const uint8_t *bc = bytecode;
	int len = (int)size;

	while (len > 0) {
		struct bc_op op;

		int step;

		if (len < 4)
			return false;
		memcpy(&op, bc, 4);
		step = run_op(bc, s) ? op.yes : op.no;
		if (step < 4)
			return false; /* not an audited program */
		len -= step;
		bc += step;
	}
	return len == 0;
}
