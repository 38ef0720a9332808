/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NLM_F_DUMP_INTR on a real kernel, in a private network namespace: lo gets
 * 2,000 IPv4 addresses (a dump of them spans several datagrams), then one
 * more, STABLE, which is never touched. A child process churns the first
 * addresses (delete, add back: each move shifts the position the kernel
 * resumes a dump from) while the test dumps the addresses in a loop through
 * the transport (the guard's resync dump, sd_nl_dump_retry):
 *  - the kernel does mark dumps interrupted (sd_nl_dump without retry
 *    returns -EINTR at least once): the fault is real, not assumed;
 *  - no dump the transport returns as complete (0) misses STABLE: no false
 *    "address removed", which would make the guard destroy its sockets;
 *  - the retry policy ends: every call returns 0 or -EINTR (SD_NL_DUMP_TRIES
 *    interrupted tries in a row), never anything else.
 * The oracle is what the test itself configured: STABLE is always assigned.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "lib/core/nl.h"
#include "tests/live/netns_util.h"

#define N_ADDRS 2000
#define CHURN 200 /* the first CHURN addresses move */
#define STABLE 0x0a4e0001u /* 10.78.0.1 */
#define SECONDS 4

static uint32_t addr_of(unsigned i)
{
	return 0x0a4d0000u + i + 1; /* 10.77.x.y */
}

/* Append an RTM_NEWADDR/RTM_DELADDR of a.b.c.d/32 on lo. */
static size_t put_addr(uint8_t *buf, uint16_t type, uint32_t host)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	uint32_t a = htonl(host);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | (type == RTM_NEWADDR ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = 32;
	ifa->ifa_index = 1;
	mnl_attr_put(nlh, IFA_LOCAL, 4, &a);
	mnl_attr_put(nlh, IFA_ADDRESS, 4, &a);
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

/* Send up to 100 address changes in one batch; every one must succeed. */
static void change(struct sd_nl *nl, const uint16_t *types, const uint32_t *hosts, size_t n)
{
	static uint8_t buf[100 * 64] __attribute__((aligned(8)));
	int errs[100];
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += put_addr(buf + len, types[i], hosts[i]);
	assert_int_equal(sd_nl_batch(nl, buf, len, errs, n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(errs[i], 0);
}

static void churn(void)
{
	struct sd_nl_opts o = { .proto = NETLINK_ROUTE };
	struct sd_nl *nl;
	uint16_t types[100];
	uint32_t hosts[100];

	if (sd_nl_open_with(&nl, &o) < 0)
		_exit(2);
	for (unsigned round = 0;; round++) {
		/* Delete 50 early addresses, add them back (now at the end). */
		for (unsigned i = 0; i < 50; i++) {
			types[i] = RTM_DELADDR;
			types[50 + i] = RTM_NEWADDR;
			hosts[i] = hosts[50 + i] = addr_of((round * 50 + i) % CHURN);
		}
		change(nl, types, hosts, 100);
	}
}

struct count {
	size_t n;
	bool stable;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct count *c = data;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return 0;
	c->n++;
	mnl_attr_for_each(attr, nlh, sizeof(struct ifaddrmsg)) {
		uint32_t a;

		if (mnl_attr_get_type(attr) != IFA_LOCAL || mnl_attr_get_payload_len(attr) != 4)
			continue;
		memcpy(&a, mnl_attr_get_payload(attr), 4);
		if (ntohl(a) == STABLE)
			c->stable = true;
	}
	return 0;
}

static int addr_restart(void *data)
{
	*(struct count *)data = (struct count){ 0 };
	return 0;
}

static void request(struct sd_nl *nl)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(sd_nl_reqbuf(nl, NULL));
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_GETADDR;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
}

static void test_interrupted_dumps(void **state)
{
	struct sd_nl_opts o = { .proto = NETLINK_ROUTE, .strict = true };
	size_t intr_raw = 0, intr_raw_missing = 0, complete = 0, exhausted = 0, dumps = 0;
	uint16_t types[100];
	uint32_t hosts[100];
	struct sd_nl *nl;
	time_t end;
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(sd_nl_open_with(&nl, &o), 0);
	for (unsigned i = 0; i < N_ADDRS; i += 100) {
		for (unsigned j = 0; j < 100; j++) {
			types[j] = RTM_NEWADDR;
			hosts[j] = addr_of(i + j);
		}
		change(nl, types, hosts, 100);
	}
	types[0] = RTM_NEWADDR;
	hosts[0] = STABLE;
	change(nl, types, hosts, 1);

	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		churn();
	end = time(NULL) + SECONDS;
	while (time(NULL) < end) {
		struct count c = { 0 };
		int r;

		/* Without retry: how often the kernel marks a dump. */
		request(nl);
		r = sd_nl_dump(nl, NULL, addr_cb, &c);
		assert_true(r == 0 || r == -EINTR);
		if (r == -EINTR) {
			intr_raw++;
			intr_raw_missing += !c.stable;
		} else {
			assert_true(c.stable);
		}
		/* The guard's way. */
		c = (struct count){ 0 };
		request(nl);
		r = sd_nl_dump_retry(nl, addr_cb, addr_restart, &c);
		assert_true(r == 0 || r == -EINTR);
		if (r == 0) {
			complete++;
			assert_true(c.stable);
			assert_true(c.n >= N_ADDRS + 1 - 50 && c.n <= N_ADDRS + 2);
		} else {
			exhausted++;
		}
		dumps++;
	}
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	/* The churn ran until killed: it never failed an address change. */
	assert_true(WIFSIGNALED(status));
	sd_nl_close(nl);
	printf("# %zu rounds: %zu dumps marked interrupted (%zu of them missing STABLE); "
	       "with retry %zu complete, %zu given up after %d tries\n",
	       dumps, intr_raw, intr_raw_missing, complete, exhausted, SD_NL_DUMP_TRIES);
	assert_true(intr_raw > 0);
	assert_true(complete > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupted_dumps),
	};

	netns_enter_private_or_skip();
	return sdiag_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
