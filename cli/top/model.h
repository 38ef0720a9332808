/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag top's model (model.c): per-socket counters between refreshes and
 * the groups they add up to. Pure: records in, numbers out; no dumps, no
 * output, no clock (the caller says how long an interval was).
 *
 *	tm_new(&m, &keys, ckeys, labels);
 *	every refresh:
 *		tm_begin(m);
 *		for each dumped socket: tm_sock(m, s, ns);
 *		if (tm_owners_pending(m)) tm_owners(m, lookup, ud);   // new sockets only
 *		tm_end(m, seconds);          // groups, rates, rows sorted
 *		rows: tm_rows(m, &n), tm_group(m, row)
 *	at any time: tm_event(m, s, ns) for a socket-destroy event.
 *
 * A socket is known by its cookie. Its bytes in an interval are the change of
 * tcp_info's bytes_received (RX) and bytes_acked (TX) since the previous
 * dump; one that is destroyed adds what its destroy event's final tcp_info
 * holds beyond that, and one born and destroyed between two dumps adds all
 * of it, so a group's bytes add up to what its sockets carried. Memory: the
 * live sockets, those gone from the last two dumps (their destroy event may
 * still come), and the groups of those plus the groups of the last interval.
 */
#ifndef SOCKDIAG_CLI_TOP_MODEL_H
#define SOCKDIAG_CLI_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/count/count.h"
#include "sockdiag.h"

/* The keys of top: the grouping engine's (util/group.h), with the socket's cookie (GK_COOKIE,
 * what `conn` adds; no frontend takes it by name). */
#define TK_COOKIE GK_COOKIE
#define TK_MAX GK_MAX

struct top_keys {
	unsigned k[COUNT_MAX_KEYS];	/* enum gkey, or TK_COOKIE */
	size_t n;
	bool conn;			/* given as `conn`: one row per socket */
};

/* Why top_keys_parse() refused a list; list --count-by's rule: KEY[,KEY...],
 * none empty, none twice (conn's keys count: conn,rport has rport twice). */
enum top_keys_err {
	TKE_NONE = 1,	/* "": no key given */
	TKE_EMPTY,	/* "pid,", ",pid", "pid,,comm" */
	TKE_UNKNOWN,	/* at: the name */
	TKE_TWICE,	/* at: the second one */
	TKE_MANY,	/* more than COUNT_MAX_KEYS keys; at: the first too many */
};

struct top_keys_error {
	enum top_keys_err kind;
	const char *at;		/* a pointer into arg */
	size_t len;
	unsigned key;		/* TKE_TWICE: the key given twice */
	bool in_conn;		/* TKE_TWICE: one of them came with conn */
};

/* "pid,unit", "conn": 0, or -EINVAL with *err saying why. */
int top_keys_parse(struct top_keys *ret, const char *arg, struct top_keys_error *err);
/* Names of the keys for messages: "conn, pid, comm, ..." */
extern const char top_keys_help[];
const char *top_key_name(unsigned k);
bool top_key_number(unsigned k);
bool top_keys_need_owner(const struct top_keys *k);

/* The columns a view sorts by. */
enum top_col {
	TC_KEY,
	TC_RX,
	TC_TX,
	TC_CONNS,
	TC_CLOSED,
	TC_RTT,
	TC_RETRANS,
	TC_RQUEUE,
	TC_WQUEUE,
	TC_MAX
};

/* "rx", "tx", "conns", ...: the column's name for --sort; -1 unknown. */
int top_col_lookup(const char *name);
const char *top_col_name(enum top_col c);

/* One group in the last interval. */
struct top_group {
	char *key;		/* the keys' values as text, one after the other (top_key_field) */
	uint32_t koff[COUNT_MAX_KEYS + 1];	/* where each value's text starts in key */
	uint32_t none;		/* bit j: key j has no value ("-"; JSON null) */
	uint8_t nkeys;
	uint8_t *tuple;		/* the keys' values (util/group.h): the group's identity */
	uint32_t tlen;
	uint64_t hash;
	uint64_t rx, tx;	/* bytes in the interval */
	double rx_bps, tx_bps;	/* bytes per second */
	uint64_t retrans;	/* segments retransmitted in the interval */
	uint64_t rqueue, wqueue;	/* the live sockets' queues, summed */
	uint64_t rtt_us;	/* mean smoothed RTT of the live TCP sockets; 0 none */
	uint32_t conns;		/* live sockets */
	uint32_t closed;	/* destroyed in the interval */
	int32_t pid;		/* the owner when all live sockets have one; 0 none */
	char comm[16];
	/* internal */
	uint64_t ev_rx, ev_tx, ev_retrans, ev_closed;	/* destroyed since tm_end */
	int32_t ev_pid;		/* their owner (-1: several or none) */
	char ev_comm[16];
	uint64_t rtt_sum;
	uint32_t rtt_n;
	uint32_t refs;		/* sockets pointing here */
	uint32_t krank;		/* the key's place in the key order (top_rank_keys) */
	bool mixed;		/* owners differ */
};

struct top_model;

/* labels[ns] names the namespace of index ns (NULL: ours); kept, not copied. */
int tm_new(struct top_model **ret, const struct top_keys *k, struct ckeys *ck,
	   const char *const *labels);
void tm_free(struct top_model *m);
/* Group by other keys from now on (the current rows are regrouped at once). */
int tm_set_keys(struct top_model *m, const struct top_keys *k);
const struct top_keys *tm_keys(const struct top_model *m);
void tm_sort(struct top_model *m, enum top_col col, bool ascending);
/* Whether the end of a socket no dump saw counts when it had no peer (a
 * listener, an unconnected UDP socket): only when such sockets are shown. */
void tm_unconnected(struct top_model *m, bool on);

void tm_begin(struct top_model *m);
/* One dumped socket of namespace ns. Returns 0 or -ENOMEM. */
int tm_sock(struct top_model *m, const struct sdiag_sock *s, unsigned ns);
/* One destroy event (f: the user's filter, for sockets never seen in a dump).
 * Returns 0 or -ENOMEM. */
int tm_event(struct top_model *m, const struct sdiag_sock *s, unsigned ns,
	     const struct sdiag_filter *f);
/* How many sockets wait for their owners. */
size_t tm_owners_pending(const struct top_model *m);
/* Give each a pid and comm: lookup returns false when the inode has no owner (yet:
 * such a socket stays pending for the next two calls, then is given up). */
typedef bool (*tm_lookup_fn)(void *ud, uint64_t inode, int32_t *ret_pid, char ret_comm[16]);
void tm_owners(struct top_model *m, tm_lookup_fn lookup, void *ud);
/* Close the interval of `seconds`: groups, rates, rows. Returns 0 or -ENOMEM. */
int tm_end(struct top_model *m, double seconds);

/* The rows of the last tm_end (groups with sockets or traffic), sorted. */
size_t tm_nrows(const struct top_model *m);
const struct top_group *tm_row(const struct top_model *m, size_t i);
/* Totals of the last interval (key NULL). */
const struct top_group *tm_total(const struct top_model *m);
/* Sockets the model holds (live and recently gone), for tests. */
size_t tm_nsocks(const struct top_model *m);
size_t tm_ngroups(const struct top_model *m);

/* Sorting (keys.c). The groups' krank from the order of their keys (their text,
 * key by key: top_key_cmp):
 * 0 or -ENOMEM. The rows (group indexes) by a column, largest first (RX and
 * TX: then the other one), then the key (krank when ranked, else strcmp);
 * ascending turns it all around. */
int top_rank_keys(struct top_group *g, size_t ng);
void top_sort_rows(uint32_t *rows, size_t n, const struct top_group *g, enum top_col col,
		   bool ascending, bool ranked);

/* The k-th value of a group's key as text: start and length. */
const char *top_key_field(const struct top_group *g, size_t k, size_t *len);
/* Two groups' keys in text order, key by key (a value before its longer extensions). */
int top_key_cmp(const struct top_group *a, const struct top_group *b);

#endif
