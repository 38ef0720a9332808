/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockpop: populate a (private!) network namespace with known sockets, print
 * what was made as JSON, then hold the sockets open until stdin reaches EOF or
 * SIGINT/SIGTERM/SIGHUP arrives. Used to capture fixtures and by live tests.
 *
 * It refuses to run in the init process's network namespace unless --unshare
 * is given, which moves it into a fresh one first (with lo up).
 *
 * Options (each may be repeated; sockets are made in order):
 *   --unix-listen PATH[,seqpacket]     listening stream (or seqpacket) socket
 *   --unix-connect PATH[,pending][,send=N][,shut_wr]
 *                                      client connected to PATH; unless "pending",
 *                                      a listener of ours accepts it (pair); send=N
 *                                      writes N (<= 4096) unread bytes, shut_wr
 *                                      shuts the client's sending side
 *   --unix-dgram PATH                  bound datagram socket
 *   --unix-pair                        socketpair(AF_UNIX, SOCK_STREAM)
 *      PATH: '@' first = abstract name; \xHH and \\ escapes allowed, so
 *      names with quotes, control bytes and invalid UTF-8 can be written.
 *   --netlink PROTO[,groups=G+G+..][,unbound][,connect=PORTID][,pktinfo][,no_enobufs]
 *      PROTO: route, sock_diag, generic, uevent or a number. Groups up to 32
 *      go into bind(); higher ones (and all, when unbound) are joined with
 *      NETLINK_ADD_MEMBERSHIP.
 *   --packet raw|dgram[,proto=all|NUM][,dev=IFNAME][,fanout=ID][,bpf][,ring][,promisc]
 *      bpf: a 4-instruction classic filter (accept IPv4, drop the rest);
 *      ring: a TPACKET_V3 rx ring (2 blocks of 64 KiB, 2 KiB frames);
 *      promisc: PACKET_MR_PROMISC membership (shows in the mclist).
 *   --tcp-listen ADDR:PORT             ([v6]:port for IPv6; port 0 = any)
 *   --tcp-pair ADDR:PORT               listener + connected client + accepted child
 *   --udp ADDR:PORT[,connect=ADDR:PORT]
 *   --unshare                          enter a new network namespace first
 *
 * Output: a JSON array, one object per line, of
 *   {"kind", "fd", "inode", "cookie", ...kind-specific fields}
 * printed once everything exists (so reading up to the closing "]" line
 * tells a script it may go on). Exit status: 0, 1 usage, 2 system error.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#include "tests/tools/sockpop.h"

/* ---- output ------------------------------------------------------------------ */

static uint64_t sock_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof(c);

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &l) < 0)
		return 0;
	return c;
}

static uint64_t sock_inode(int fd)
{
	struct stat st;

	return fstat(fd, &st) < 0 ? 0 : (uint64_t)st.st_ino;
}

/* Start one object: the common fields; the caller appends ",..." and calls end_obj. */
void pop_begin_obj(struct pop *p, const char *kind, int fd)
{
	fprintf(p->out, "%s{\"kind\":\"%s\",\"fd\":%d,\"inode\":%" PRIu64 ",\"cookie\":%" PRIu64,
		p->n++ ? ",\n" : "", kind, fd, sock_inode(fd), sock_cookie(fd));
}

void pop_end_obj(struct pop *p)
{
	fputc('}', p->out);
}

/* Bytes as a JSON string: controls and non-ASCII as \u00XX (each byte one char). */
static void put_json_bytes(FILE *f, const char *key, const uint8_t *b, size_t n)
{
	fprintf(f, ",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '"' || b[i] == '\\')
			fprintf(f, "\\%c", b[i]);
		else if (b[i] < 0x20 || b[i] >= 0x7f)
			fprintf(f, "\\u%04x", b[i]);
		else
			fputc(b[i], f);
	}
	fputc('"', f);
}

static void put_hex(FILE *f, const char *key, const uint8_t *b, size_t n)
{
	fprintf(f, ",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
	fputc('"', f);
}

/* ---- unix ------------------------------------------------------------------------- */

/* "@name" → "\0name"; \xHH and \\ escapes. Returns the address length or -EINVAL. */
static int parse_unix_path(const char *arg, struct sockaddr_un *sun, size_t *ret_len)
{
	size_t n = 0;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (*arg == '@') {
		sun->sun_path[n++] = '\0';
		arg++;
	}
	while (*arg) {
		unsigned v;

		if (n >= sizeof(sun->sun_path))
			return -ENAMETOOLONG;
		if (arg[0] == '\\' && arg[1] == 'x' && isxdigit((unsigned char)arg[2]) &&
		    isxdigit((unsigned char)arg[3]) && sscanf(arg + 2, "%2x", &v) == 1) {
			sun->sun_path[n++] = (char)v;
			arg += 4;
		} else if (arg[0] == '\\' && arg[1] == '\\') {
			sun->sun_path[n++] = '\\';
			arg += 2;
		} else {
			sun->sun_path[n++] = *arg++;
		}
	}
	if (n == 0)
		return -EINVAL;
	*ret_len = n;
	return 0;
}

static socklen_t sun_len(size_t path_len)
{
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_len);
}

static void put_unix_name(struct pop *p, const struct sockaddr_un *sun, size_t len)
{
	bool abstract = sun->sun_path[0] == '\0';

	put_json_bytes(p->out, "name", (const uint8_t *)sun->sun_path, len);
	put_hex(p->out, "name_hex", (const uint8_t *)sun->sun_path, len);
	fprintf(p->out, ",\"abstract\":%s", abstract ? "true" : "false");
}

/* Splits "VALUE,opt,opt" in place: returns the options part or NULL. */
char *pop_split_opts(char *arg)
{
	char *c = strchr(arg, ',');

	if (!c)
		return NULL;
	*c = '\0';
	return c + 1;
}

static int bind_unix(int fd, const struct sockaddr_un *sun, size_t len)
{
	if (sun->sun_path[0] != '\0') {
		char path[sizeof(sun->sun_path) + 1];

		memcpy(path, sun->sun_path, len);
		path[len] = '\0';
		(void)unlink(path);
	}
	return bind(fd, (const struct sockaddr *)sun, sun_len(len)) < 0 ? -errno : 0;
}

static int do_unix_listen(struct pop *p, char *arg)
{
	char *opts = pop_split_opts(arg);
	bool seq = opts && !strcmp(opts, "seqpacket");
	struct sockaddr_un sun;
	size_t len;
	int fd, r;

	if (opts && !seq)
		return -EINVAL;
	if (p->n_listeners == MAX_LISTENERS)
		return -ENOSPC;
	r = parse_unix_path(arg, &sun, &len);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, seq ? SOCK_SEQPACKET : SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	r = bind_unix(fd, &sun, len);
	if (r == 0 && listen(fd, 16) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	p->listeners[p->n_listeners].fd = fd;
	memcpy(p->listeners[p->n_listeners].path, sun.sun_path, len);
	p->listeners[p->n_listeners++].len = len;
	pop_begin_obj(p, seq ? "unix_seqpacket_listen" : "unix_stream_listen", fd);
	put_unix_name(p, &sun, len);
	pop_end_obj(p);
	return 0;
}

static const struct listener *find_listener(const struct pop *p, const struct sockaddr_un *sun,
					    size_t len)
{
	for (unsigned i = 0; i < p->n_listeners; i++)
		if (p->listeners[i].len == len && !memcmp(p->listeners[i].path, sun->sun_path, len))
			return &p->listeners[i];
	return NULL;
}

struct conn_opts {
	bool pending, shut_wr;
	size_t send; /* bytes the client writes and nobody reads */
};

static int parse_conn_opts(char *opts, struct conn_opts *o)
{
	char *tok, *save = NULL;

	memset(o, 0, sizeof(*o));
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "pending"))
			o->pending = true;
		else if (!strcmp(tok, "shut_wr"))
			o->shut_wr = true;
		else if (!strncmp(tok, "send=", 5))
			o->send = strtoul(tok + 5, NULL, 0);
		else
			return -EINVAL;
	}
	return o->send > 4096 ? -EINVAL : 0;
}

static int client_io(int fd, const struct conn_opts *o)
{
	static const char bytes[4096];

	if (o->send && write(fd, bytes, o->send) != (ssize_t)o->send)
		return -EIO;
	if (o->shut_wr && shutdown(fd, SHUT_WR) < 0)
		return -errno;
	return 0;
}

static int do_unix_connect(struct pop *p, char *arg)
{
	const struct listener *l;
	struct conn_opts o;
	struct sockaddr_un sun;
	int fd, child = -1, type = SOCK_STREAM, r;
	socklen_t tl = sizeof(type);
	size_t len;

	r = parse_conn_opts(pop_split_opts(arg), &o);
	if (r < 0)
		return r;
	r = parse_unix_path(arg, &sun, &len);
	if (r < 0)
		return r;
	l = find_listener(p, &sun, len);
	if (l && getsockopt(l->fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
		return -errno;
	fd = socket(AF_UNIX, type, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sun_len(len)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (l && !o.pending) {
		child = accept(l->fd, NULL, NULL);
		if (child < 0)
			return -errno;
	}
	r = client_io(fd, &o);
	if (r < 0)
		return r;
	pop_begin_obj(p, o.pending ? "unix_client_pending" : "unix_client", fd);
	put_unix_name(p, &sun, len);
	fprintf(p->out, ",\"sent\":%zu,\"shut_wr\":%s", o.send, o.shut_wr ? "true" : "false");
	if (child >= 0)
		fprintf(p->out,
			",\"peer_fd\":%d,\"peer_inode\":%" PRIu64 ",\"peer_cookie\":%" PRIu64,
			child, sock_inode(child), sock_cookie(child));
	pop_end_obj(p);
	return 0;
}

static int do_unix_dgram(struct pop *p, char *arg)
{
	struct sockaddr_un sun;
	size_t len;
	int fd, r;

	r = parse_unix_path(arg, &sun, &len);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	r = bind_unix(fd, &sun, len);
	if (r < 0) {
		close(fd);
		return r;
	}
	pop_begin_obj(p, "unix_dgram", fd);
	put_unix_name(p, &sun, len);
	pop_end_obj(p);
	return 0;
}

static int do_unix_pair(struct pop *p)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -errno;
	pop_begin_obj(p, "unix_pair", sv[0]);
	fprintf(p->out, ",\"peer_fd\":%d,\"peer_inode\":%" PRIu64 ",\"peer_cookie\":%" PRIu64,
		sv[1], sock_inode(sv[1]), sock_cookie(sv[1]));
	pop_end_obj(p);
	return 0;
}

/* ---- namespace, waiting, main --------------------------------------------------- */

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* True in the init network namespace (its nsfs inode is fixed, PROC_NET_INIT_INO)
 * or in pid 1's, when we may look at it: the host's, as far as we can tell. */
static bool in_host_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) < 0)
		return true; /* cannot tell: assume the worst */
	if (self.st_ino == 0xEFFFFFF9U)
		return true;
	if (stat("/proc/1/ns/net", &init) < 0)
		return false;
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

static int wait_for_end(void)
{
	sigset_t set;
	struct pollfd pfd[2];
	int sfd, r = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		return -errno;
	pfd[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		char buf[256];

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[0].revents) {
			ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

			if (n <= 0 && !(n < 0 && errno == EINTR))
				break;
		}
	}
	close(sfd);
	return r;
}

enum {
	OPT_UNIX_LISTEN = 1,
	OPT_UNIX_CONNECT,
	OPT_UNIX_DGRAM,
	OPT_UNIX_PAIR,
	OPT_NETLINK,
	OPT_PACKET,
	OPT_TCP_LISTEN,
	OPT_TCP_PAIR,
	OPT_UDP,
	OPT_UNSHARE
};

static int option_id(const char *s, bool *ret_has_arg)
{
	static const struct {
		const char *name;
		int id;
		bool arg;
	} opts[] = {
		{ "--unix-listen", OPT_UNIX_LISTEN, true },
		{ "--unix-connect", OPT_UNIX_CONNECT, true },
		{ "--unix-dgram", OPT_UNIX_DGRAM, true },
		{ "--unix-pair", OPT_UNIX_PAIR, false },
		{ "--netlink", OPT_NETLINK, true },
		{ "--packet", OPT_PACKET, true },
		{ "--tcp-listen", OPT_TCP_LISTEN, true },
		{ "--tcp-pair", OPT_TCP_PAIR, true },
		{ "--udp", OPT_UDP, true },
		{ "--unshare", OPT_UNSHARE, false },
	};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(s, opts[i].name)) {
			*ret_has_arg = opts[i].arg;
			return opts[i].id;
		}
	return -EINVAL;
}

static int run_option(struct pop *p, int id, char *arg)
{
	switch (id) {
	case OPT_UNIX_LISTEN:
		return do_unix_listen(p, arg);
	case OPT_UNIX_CONNECT:
		return do_unix_connect(p, arg);
	case OPT_UNIX_DGRAM:
		return do_unix_dgram(p, arg);
	case OPT_UNIX_PAIR:
		return do_unix_pair(p);
	case OPT_NETLINK:
		return do_netlink(p, arg);
	case OPT_PACKET:
		return do_packet(p, arg);
	case OPT_TCP_LISTEN:
		return do_tcp(p, arg, false);
	case OPT_TCP_PAIR:
		return do_tcp(p, arg, true);
	case OPT_UDP:
		return do_udp(p, arg);
	default:
		return 0;
	}
}

int main(int argc, char **argv)
{
	struct pop p = { 0 };
	char *buf = NULL;
	size_t len = 0;
	bool has_arg = false, unshared = false;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (option_id(argv[i], &has_arg) < 0 || (has_arg && i + 1 >= argc)) {
			fprintf(stderr,
				"sockpop: bad option '%s' (see the comment at the top of "
				"tests/tools/sockpop.c)\n",
				argv[i]);
			return 1;
		}
		if (!strcmp(argv[i], "--unshare"))
			unshared = true;
		i += has_arg;
	}
	if (unshared && (unshare(CLONE_NEWNET) < 0 || lo_up() < 0)) {
		fprintf(stderr, "sockpop: unshare: %s\n", strerror(errno));
		return 2;
	}
	if (in_host_netns()) {
		fprintf(stderr, "sockpop: refusing to create sockets in the host's network "
				"namespace; run under unshare -n or pass --unshare\n");
		return 2;
	}
	p.out = open_memstream(&buf, &len);
	if (!p.out)
		return 2;
	for (i = 1; i < argc; i++) {
		int id = option_id(argv[i], &has_arg);

		r = run_option(&p, id, has_arg ? argv[i + 1] : NULL);
		if (r < 0) {
			fprintf(stderr, "sockpop: %s %s: %s\n", argv[i], has_arg ? argv[i + 1] : "",
				strerror(-r));
			return r == -EINVAL ? 1 : 2;
		}
		i += has_arg;
	}
	fclose(p.out);
	printf("[\n%s\n]\n", buf);
	fflush(stdout);
	free(buf);
	return wait_for_end() < 0 ? 2 : 0;
}
