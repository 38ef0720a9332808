// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag top's full-screen view (ncurses). One poll loop: the keyboard,
 * the signalfd (SIGINT, SIGTERM, SIGHUP, SIGQUIT stop; SIGWINCH resizes) and
 * the destroy-event subscriptions; a refresh when the interval is up (after
 * --count refreshes, one interval more and the end).
 * Each frame is erase() + draw + refresh(): ncurses sends only what changed,
 * so nothing flickers. Text from the system (cgroup paths, comm) is shown
 * as printable characters of the locale's charset, '?' for anything else,
 * so a terminal that is not UTF-8 gets plain ASCII. Every way out (q, a
 * signal, an error) goes through one endwin().
 */
#include "cli/top/top.h"

#ifndef HAVE_NCURSES

bool ui_available(void)
{
	return false;
}

int ui_run(struct top_run *r, int sigfd)
{
	(void)r;
	(void)sigfd;
	return EXIT_RUNTIME;
}

#else

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>

#include "cli/fmt/fmt.h"

bool ui_available(void)
{
	return true;
}

/* What --by cycles through with g (the command line's keys first). */
static const char *const presets[] = {
	"pid", "comm", "conn", "cgroup", "unit", "user", "raddr", "rport", "lport", "netns",
	"state",
};
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

struct ui {
	struct top_run *r;
	bool utf8;
	bool paused;
	bool help;
	size_t preset;		/* NPRESETS: the command line's keys */
	struct top_keys cmdline;
	size_t scroll;
	uint64_t refreshes;	/* since the baseline (--count) */
	char status[256];
	struct obuf cell;	/* a cell's text (top_cell) */
};

/* Up to width cells of s (len bytes) at the cursor, each byte sequence that
 * is not a printable character of the locale shown as '?'. Returns the cells. */
static int put_text(const struct ui *u, const char *s, size_t len, int width)
{
	mbstate_t st;
	int cells = 0;

	memset(&st, 0, sizeof(st));
	while (len && cells < width) {
		wchar_t wc;
		size_t n = 1;
		int w = 1;

		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f) {
			addch((unsigned char)*s);
		} else if (u->utf8 && (n = mbrtowc(&wc, s, len, &st)) != (size_t)-1 &&
			   n != (size_t)-2 && n && iswprint((wint_t)wc) &&
			   (w = wcwidth(wc)) >= 1 && cells + w <= width) {
			addnstr(s, (int)n);
		} else {
			memset(&st, 0, sizeof(st));
			n = 1;
			w = 1;
			addch('?');
		}
		s += n;
		len -= n;
		cells += w;
	}
	return cells;
}

static void put_right(const char *s, int width)
{
	int n = (int)strlen(s);

	if (n > width)
		n = width;
	printw("%*s", width - n, "");
	addnstr(s, n);
}

/* Which columns fit, and how wide each key column is. */
static void layout(const struct top_model *m, int width, bool show[TOP_NCOLS], int kw[])
{
	const struct top_keys *k = tm_keys(m);
	int used = 0, nk = 0;

	for (size_t j = 0; j < k->n; j++) {
		kw[j] = k->k[j] == TK_COOKIE ? 0 : (int)strlen(top_key_name(k->k[j]));
		nk += k->k[j] != TK_COOKIE;
	}
	for (size_t i = 0; i < tm_nrows(m) && i < 512; i++)
		for (size_t j = 0; j < k->n; j++) {
			size_t len;

			top_key_field(tm_row(m, i), j, &len);
			if (k->k[j] != TK_COOKIE && (int)len > kw[j])
				kw[j] = (int)len;
		}
	for (size_t j = 0; j < k->n; j++) {
		if (kw[j] > 40)
			kw[j] = 40;
		used += kw[j] ? kw[j] + 1 : 0;
	}
	for (size_t c = 0; c < TOP_NCOLS; c++) {
		show[c] = true;
		used += top_col(c)->width + 1;
	}
	/* Too wide: drop the least useful columns, then narrow the keys. */
	for (int prio = 9; used > width && prio > 0; prio--)
		for (size_t c = 0; c < TOP_NCOLS; c++)
			if (show[c] && top_col(c)->prio == prio && used > width) {
				show[c] = false;
				used -= top_col(c)->width + 1;
			}
	for (size_t j = 0; used > width && j < k->n; j++)
		if (kw[j] > 8) {
			int cut = used - width < kw[j] - 8 ? used - width : kw[j] - 8;

			kw[j] -= cut;
			used -= cut;
		}
	(void)nk;
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"sockdiag top: keys",
		"",
		"  q            quit",
		"  space, p     pause / resume the refreshes",
		"  g            group by the next keys: pid, comm, conn, cgroup, unit, user,",
		"               raddr, rport, lport, netns, state (then --by's again)",
		"  1 .. 9       sort by key, CONNS, CLOSED, RX/s, TX/s, RTT, RETR/s, RECV-Q, SEND-Q",
		"  < >          sort by the column to the left / right",
		"  r            reverse the order",
		"  + -          refresh interval twice as long / half as long",
		"  up, down, page up, page down, home: scroll",
		"  h, ?         this help (any key returns)",
		"",
		"RX/s, TX/s: bytes per second from tcp_info (bytes_received, bytes_acked),",
		"with the final counters of the connections closed since the last refresh.",
		"UDP has no byte counters in sock_diag: its rows show queues only.",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && (int)i < LINES; i++)
		mvaddnstr((int)i, 0, lines[i], COLS);
}

static void draw(struct ui *u)
{
	const struct top_model *m = u->r->m;
	const struct top_keys *k = tm_keys(m);
	const struct top_group *tot = tm_total(m);
	int kw[COUNT_MAX_KEYS], x, y = 0, hdr = 4;
	bool show[TOP_NCOLS];
	char t[32], line[256];
	const char *v;
	size_t vlen;
	struct tm tm;
	size_t n = tm_nrows(m), page;

	erase();
	if (u->help) {
		draw_help();
		refresh();
		return;
	}
	localtime_r(&u->r->when.tv_sec, &tm);
	strftime(t, sizeof(t), "%H:%M:%S", &tm);
	snprintf(line, sizeof(line), "sockdiag top  %s  every %.3gs%s  sort %s%s  (h: help)", t,
		 (double)run_interval_ns(&u->r->t->sched) / 1e9,
		 u->paused ? "  PAUSED" : "", top_col_name(u->r->t->sort),
		 u->r->t->ascending ? " (ascending)" : "");
	mvaddnstr(y++, 0, line, COLS);
	u->cell.len = 0;
	obuf_puts(&u->cell, "sockets ");
	obuf_u64(&u->cell, tot->conns);
	obuf_puts(&u->cell, "  closed ");
	obuf_u64(&u->cell, tot->closed);
	obuf_puts(&u->cell, "  RX ");
	top_put_rate(&u->cell, tot->rx_bps);
	obuf_puts(&u->cell, "B/s  TX ");
	top_put_rate(&u->cell, tot->tx_bps);
	obuf_puts(&u->cell, "B/s  rows ");
	obuf_u64(&u->cell, n);
	mvaddnstr(y++, 0, u->cell.err ? "" : u->cell.p,
		  (int)u->cell.len < COLS && !u->cell.err ? (int)u->cell.len : u->cell.err ? 0 : COLS);
	move(y++, 0);
	put_text(u, u->status[0] ? u->status : src_error(u->r->src),
		 strlen(u->status[0] ? u->status : src_error(u->r->src)), COLS);
	layout(m, COLS, show, kw);
	attron(A_REVERSE);
	move(y, 0);
	for (size_t j = 0; j < k->n; j++) {
		if (!kw[j])
			continue;
		x = 0;
		for (const char *p = top_key_name(k->k[j]); *p && x < kw[j]; p++, x++)
			addch((chtype)(*p - 'a' + 'A'));
		printw("%*s", kw[j] - x + 1, "");
	}
	for (size_t c = 0; c < TOP_NCOLS; c++) {
		if (!show[c])
			continue;
		if (top_col(c)->left)
			printw("%-*s", top_col(c)->width, top_col(c)->head);
		else
			put_right(top_col(c)->head, top_col(c)->width);
		addch(top_col(c)->sort == u->r->t->sort ? '*' : ' ');
	}
	getyx(stdscr, y, x);
	printw("%*s", COLS > x ? COLS - x : 0, "");
	attroff(A_REVERSE);
	y++;
	page = LINES > hdr ? (size_t)(LINES - hdr) : 0;
	if (u->scroll + page > n)
		u->scroll = n > page ? n - page : 0;
	for (size_t i = u->scroll; i < n && y < LINES; i++, y++) {
		const struct top_group *g = tm_row(m, i);

		move(y, 0);
		for (size_t j = 0; j < k->n; j++) {
			size_t len;
			const char *f = top_key_field(g, j, &len);

			if (!kw[j])
				continue;
			x = put_text(u, f, len, kw[j]);
			printw("%*s", kw[j] - x + 1, "");
		}
		for (size_t c = 0; c < TOP_NCOLS; c++) {
			if (!show[c])
				continue;
			v = top_cell(&u->cell, g, u->r->seconds, c, &vlen);
			if (c + 1 == TOP_NCOLS) {
				getyx(stdscr, y, x);
				put_text(u, v, vlen, COLS - x);
			} else {
				put_right(v, top_col(c)->width);
				addch(' ');
			}
		}
	}
	refresh();
}

static void set_keys(struct ui *u)
{
	struct top_keys k = u->cmdline;
	struct top_keys_error e;

	if (u->preset < NPRESETS)
		top_keys_parse(&k, presets[u->preset], &e);
	u->r->t->keys = k;
	if (tm_set_keys(u->r->m, &k) < 0)
		snprintf(u->status, sizeof(u->status), "out of memory");
	u->scroll = 0;
}

/* g: the next preset that groups differently from now. */
static void next_keys(struct ui *u)
{
	const struct top_keys *now = tm_keys(u->r->m);

	for (size_t tries = 0; tries <= NPRESETS; tries++) {
		struct top_keys k = u->cmdline;
		struct top_keys_error e;

		u->preset = u->preset >= NPRESETS ? 0 : u->preset + 1;
		if (u->preset < NPRESETS)
			top_keys_parse(&k, presets[u->preset], &e);
		if (k.n != now->n || memcmp(k.k, now->k, k.n * sizeof(k.k[0])))
			break;
	}
	set_keys(u);
}

/* The interval twice as long (longer) or half as long, within 0.1 s to 1 h. */
static void set_interval(struct ui *u, bool longer)
{
	uint64_t ns = run_interval_ns(&u->r->t->sched);

	ns = longer ? ns * 2 : ns / 2;
	if (ns < CLOCK_NS_PER_SEC / 10)
		ns = CLOCK_NS_PER_SEC / 10;
	if (ns > 3600 * CLOCK_NS_PER_SEC)
		ns = 3600 * CLOCK_NS_PER_SEC;
	u->r->t->sched.interval = ts_from_ns(ns);
}

static void set_sort(struct ui *u, int col, bool toggle)
{
	struct top_opts *t = u->r->t;

	if (col < 0)
		col = TC_MAX - 1;
	if (col >= TC_MAX)
		col = 0;
	if (toggle)
		t->ascending = !t->ascending;
	else
		t->sort = (enum top_col)col;
	tm_sort(u->r->m, t->sort, t->ascending);
}

/* One key. Returns true for quit. */
static bool key(struct ui *u, int ch)
{
	static const enum top_col digits[] = { TC_KEY,	   TC_CONNS,   TC_CLOSED,
					       TC_RX,	   TC_TX,      TC_RTT,
					       TC_RETRANS, TC_RQUEUE,  TC_WQUEUE };
	size_t page = LINES > 5 ? (size_t)(LINES - 5) : 1;

	if (u->help && ch != KEY_RESIZE) {
		u->help = false;
		return ch == 'q';
	}
	u->status[0] = '\0';
	switch (ch) {
	case 'q': case 'Q': return true;
	case ' ': case 'p': u->paused = !u->paused; break;
	case 'h': case '?': u->help = true; break;
	case 'g':
		next_keys(u);
		break;
	case 'r': set_sort(u, u->r->t->sort, true); break;
	case '<': set_sort(u, (int)u->r->t->sort - 1, false); break;
	case '>': set_sort(u, (int)u->r->t->sort + 1, false); break;
	case '+': set_interval(u, true); break;
	case '-': set_interval(u, false); break;
	case KEY_UP: u->scroll -= u->scroll > 0; break;
	case KEY_DOWN: u->scroll++; break;
	case KEY_PPAGE: u->scroll = u->scroll > page ? u->scroll - page : 0; break;
	case KEY_NPAGE: u->scroll += page; break;
	case KEY_HOME: u->scroll = 0; break;
	default:
		if (ch >= '1' && ch <= '9')
			set_sort(u, (int)digits[ch - '1'], false);
		break;
	}
	return false;
}

static void resize(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* The loop. Returns 0 (q or a stop signal) or a negative errno. */
static int loop(struct ui *u, int sigfd)
{
	struct pollfd p[66];
	size_t n;
	const struct run_sched *s = &u->r->t->sched;
	struct deadline next = deadline_at(mono_ns() + run_interval_ns(s));

	p[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	n = 2 + src_pollfds(u->r->src, p + 2, 64);
	for (;;) {
		uint64_t now = mono_ns();
		int e, ch;

		if (!u->paused && now >= next.ns) {
			/* --count N: the Nth refresh was shown for an interval. */
			if (s->count && u->refreshes == s->count)
				return 0;
			u->refreshes++;
			e = top_refresh(u->r);
			if (e < 0)
				return e;
			next = deadline_at(now + run_interval_ns(s));
		}
		draw(u);
		e = poll(p, n, u->paused ? 3600 * 1000 : deadline_poll_ms(next));
		if (e < 0 && errno != EINTR)
			return -errno;
		if (e <= 0)
			continue;
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGWINCH)
					return 0;
				resize();
			}
		}
		if (p[0].revents & (POLLHUP | POLLERR))
			return 0;
		while ((ch = getch()) != ERR)
			if (key(u, ch))
				return 0;
		for (size_t i = 2; i < n; i++)
			if (p[i].revents & POLLIN) {
				e = top_events(u->r);
				if (e < 0)
					return e;
				break;
			}
	}
}

int ui_run(struct top_run *r, int sigfd)
{
	struct ui u = { .r = r, .preset = NPRESETS, .cmdline = r->t->keys };
	SCREEN *scr;
	int e;

	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C"); /* 1.5, not 1,5 */
	u.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (obuf_init(&u.cell, 256, -1) < 0) {
		fprintf(stderr, "sockdiag top: %s\n", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	scr = newterm(NULL, stdout, stdin); /* initscr() would exit on a bad TERM */
	if (!scr) {
		obuf_fini(&u.cell);
		fprintf(stderr, "sockdiag top: cannot set up the terminal (TERM=%s)\n",
			getenv("TERM") ? getenv("TERM") : "");
		return EXIT_RUNTIME;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	e = loop(&u, sigfd);
	endwin();
	delscreen(scr);
	obuf_fini(&u.cell);
	if (e < 0)
		fprintf(stderr, "sockdiag top: %s\n", strerror(-e));
	if (src_failed(r->src) && src_error(r->src)[0])
		fprintf(stderr, "sockdiag top: %s\n", src_error(r->src));
	return e < 0 ? EXIT_RUNTIME : EXIT_OK;
}

#endif
