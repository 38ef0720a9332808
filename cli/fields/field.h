/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output fields, described once (rows), rendered anywhere.
 *
 * A row says where a value lives, its JSON key, its text label, its format
 * (kind), the families it belongs to, the options that show it, and when it
 * is left out. The renderers (JSON/NDJSON objects, ss's detail text after the
 * table's columns, the table's endpoint columns) walk the rows: a new field is
 * a new row, a new family a few rows. The row tables are fields_*.c; the walk
 * is field.c. See ARCHITECTURE.md, "One field, from record to every output".
 *
 * JSON follows the order of the rows; the text follows each row's .t (its
 * place in ss's line, ascending), so the two orders are independent. A group
 * (FK_GROUP) is a JSON object of its members; in the text it is its label,
 * the members and its tail — or, without a label, just its members, each at
 * its own .t.
 */
#ifndef SOCKDIAG_CLI_FIELD_H
#define SOCKDIAG_CLI_FIELD_H

#include <stddef.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "cli/fields/names.h"
#include "cli/fields/out_types.h"
#include "cli/fmt/fmt.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif

/* Families (struct field.fams); 0 = every family. */
enum {
	F_INET4 = 1 << 0,
	F_INET6 = 1 << 1,
	F_UNIX = 1 << 2,
	F_NETLINK = 1 << 3,
	F_PACKET = 1 << 4,
	F_VSOCK = 1 << 5,
	F_XDP = 1 << 6,
	F_TIPC = 1 << 7,
	F_SMC = 1 << 8,
	F_OTHER = 1 << 9,
	F_NCLASS = 10,
	F_INET = F_INET4 | F_INET6,
};

/* Options (struct field.jopt/.topt): shown when one of them is on; 0 = always. */
enum {
	O_TIMERS = 1 << 0,	/* -o */
	O_EXT = 1 << 1,		/* -e */
	O_MEM = 1 << 2,		/* -m */
	O_INFO = 1 << 3,	/* -i */
	O_TOS = 1 << 4,		/* --tos */
	O_SOCKOPT = 1 << 5,	/* --inet-sockopt */
	O_PROC = 1 << 6,	/* -p */
	O_BPF = 1 << 7,		/* -b */
	O_CGROUP = 1 << 8,	/* --cgroup */
};

/* The table's columns (struct field.col; out_table.c has their headers and
 * alignment). */
enum col {
	C_TIME,
	C_NETNS,
	C_RESULT,
	C_NETID,
	C_STATE,
	C_RECVQ,
	C_SENDQ,
	C_LADDR,
	C_LPORT,
	C_PADDR,
	C_PPORT,
	C_PROCESS,
	C_EXT,		/* the detail text (fplan_text) */
	C_MAX
};

/* How a value is written. Text / JSON. */
enum fkind {
	FK_UINT,	/* decimal / number */
	FK_BOOL,	/* 0 or 1 / true or false */
	FK_HEX,		/* lowercase hex (the label carries any "0x") / number */
	FK_ALTHEX,	/* printf's %#x / number */
	FK_HEXSTR,	/* lowercase hex / "hex" string */
	FK_USEC,	/* microseconds as milliseconds, like %g / microseconds */
	FK_US_MS,	/* microseconds as whole milliseconds + "ms" / microseconds */
	FK_MSEC,	/* ss's timer ("1min23sec") / milliseconds */
	FK_RATE,	/* bytes/s as bits/s with k/M/G/T (-n: digits) + "bps" / bytes/s */
	FK_GAIN,	/* value/256, like %g / number */
	FK_STR,		/* char array at off (size bytes): text bytes, escaped / string */
	FK_WORD,	/* text: the label alone when the value is non-zero / number */
	FK_LIT,		/* text: the label alone / nothing */
	FK_SEP,		/* text: the detail separator ("\n\t", -O: " "), taken back when
			 * nothing follows it before the next one / nothing */
	FK_GROUP,	/* the members .sub / an object of them */
	FK_FN,		/* .text() / .json() (which writes its own key, see fld_key()) */
};

/* Row flags. */
enum {
	FL_TNZ = 1 << 0,	/* text: left out when the value is 0 */
	FL_JNZ = 1 << 1,	/* JSON: left out when the value is 0 (strings: empty) */
	FL_TSKIP = 1 << 2,	/* text: left out when the value is .skip */
	FL_TSEP = 1 << 3,	/* text: the detail separator comes first */
	FL_RAW = 1 << 4,	/* FK_STR text: the bytes as they are (ss's %s) */
	FL_CELL = 1 << 5,	/* table: .text() writes column .col when .twhen holds (the
				 * endpoint row: the four columns from C_LADDR on) */
	FL_TKEEP = 1 << 6,	/* FK_SEP: not taken back when .get() says so (ss prints it) */
};

/* The record's kernel structs (its views, enum sdiag_blob), each copied out
 * by fld_blob() when a row first reads it for the socket being rendered. */
struct fblobs {
	uint32_t filled;	/* 1 << enum sdiag_blob: copied for this socket */
	struct sdiag_tcp_info tcp_info;
	struct sdiag_mptcp_info mptcp_info;
	struct sdiag_meminfo meminfo;
	uint32_t skmem[SDIAG_SKMEM_VARS];
	struct sdiag_vegas_info vegas;
	struct sdiag_dctcp_info dctcp;
	struct sdiag_bbr_info bbr;
};

/* What a row's formatter sees: one socket being rendered. */
struct fctx {
	struct obuf *b;
	const struct out_opts *o;
	struct names *names;
	const struct sdiag_sock *s;
	const struct out_extra *x;
	const uint8_t *base;	/* where .off counts from: the socket, or a group's struct */
	struct fblobs *w;	/* the socket's kernel structs, copied on first use */
	uint32_t *cols;		/* FL_CELL: column boundaries from .col on (table) */
	uint16_t fam;		/* the socket's F_* bit */
	uint16_t opt;		/* O_* options on */
	bool first;		/* JSON: no member yet in the current object */
};

struct field {
	const char *key;	/* JSON member name; NULL: not in JSON */
	const char *klit;	/* ",\"key\":" (K()) */
	const char *label;	/* text before the value; NULL: not in the text */
	const char *tail;	/* text after the value (a group: after its members) */
	uint8_t klen, llen;
	uint8_t kind;		/* enum fkind */
	uint8_t size;		/* bytes of the value at .off: 1, 2, 4, 8 (FK_STR: the array) */
	uint16_t off;		/* from fctx.base; a group's .off moves the base for its members */
	uint8_t blob;		/* a group: 1 + the enum sdiag_blob its members are in (BLOB()) */
	uint16_t fams;		/* F_*; 0: every family */
	uint16_t jopt, topt;	/* O_*; 0: always */
	uint8_t flags;		/* FL_* */
	uint8_t col;		/* FL_CELL: enum col */
	uint16_t t;		/* place in the text; 0: not in the text */
	uint64_t has;		/* SDIAG_HAS_* bits the value needs (JSON and text) */
	uint64_t skip;		/* FL_TSKIP */
	/* The value when it is not a plain integer at .off. */
	uint64_t (*get)(const struct fctx *c);
	bool (*jwhen)(const struct fctx *c);	/* JSON: extra condition */
	bool (*twhen)(const struct fctx *c);	/* text: extra condition */
	void (*text)(struct fctx *c, const struct field *f, uint64_t v);	/* FK_FN */
	void (*json)(struct fctx *c, const struct field *f, uint64_t v);	/* FK_FN */
	const struct field *sub;	/* FK_GROUP */
	uint8_t nsub;
};

/*
 * ss's order of the detail text (struct field.t): a row's place among the
 * rows of its family. Rows of different families may share a place.
 */
enum {
	T_UNIX_SKMEM = 5,	/* unix: -m before -e */
	T_TIMER = 10,
	T_UID = 20, T_INO, T_SK,
	T_FWMARK = 30, T_CGROUP, T_V6ONLY, T_SHUTDOWN,
	T_VFS = 40, T_PEERS,
	T_NL_GROUPS = 50, T_NL_FLAGS,
	T_PKT_INFO = 60, T_PKT_RX = 70, T_PKT_TX = 80, T_PKT_FANOUT = 90,
	T_XDP_RINGS = 100, T_XDP_UMEM = 110, T_XDP_STATS = 120,
	T_TOS = 130, T_TCLASS, T_CLASS_ID,
	T_SOCKOPT = 140,
	T_SEP = 150,		/* inet: the line of -m and -i */
	T_BPF = 155,		/* packet: -b (before -m, as ss) */
	T_SKMEM = 160,
	T_TCP = 200,		/* tcp_info, + 0..99 */
	T_MPTCP = 300,		/* mptcp_info, + 0..49 */
	T_ULP = 350,
};

/* Designated-initializer helpers for the row tables. */
#define K(k) .key = (k), .klit = ",\"" k "\":", .klen = sizeof(",\"" k "\":") - 1
#define L(l) .label = (l), .llen = sizeof(l) - 1
#define AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define SK(member) AT(struct sdiag_sock, member)
#define BLOB(k) .blob = 1 + (k)
#define SUB(rows) .sub = (rows), .nsub = sizeof(rows) / sizeof((rows)[0])

/* The row tables, in JSON order: fields_sock.c (head, common, tail),
 * fields_ep.c, fields_inet.c, fields_fam.c. */
extern const struct field fields_head[];	/* extras, family, netid, proto, state */
extern const size_t fields_head_n;
extern const struct field fields_ep[];		/* "local", "peer"; the table's endpoints */
extern const size_t fields_ep_n;
extern const struct field fields_common[];	/* queues, inode, cookie, uid, shutdown */
extern const size_t fields_common_n;
extern const struct field fields_inet[];
extern const size_t fields_inet_n;
extern const struct field fields_fam[];		/* unix, netlink, packet, xdp */
extern const size_t fields_fam_n;
extern const struct field fields_tail[];	/* smc, memory, processes */
extern const size_t fields_tail_n;

/* ---- helpers for .text/.json formatters ------------------------------------ */

/* Start JSON member f->key (its comma, quotes and colon). */
void fld_key(struct fctx *c, const struct field *f);
/* The same for a key that is not a row's. */
void fld_key_str(struct fctx *c, const char *k);
/* A JSON string that needs no escaping (our own ASCII names). */
void fld_raw_str(struct obuf *b, const char *v);
/* Bits of v named by names[0..n): a JSON array of the names that are set. */
void fld_json_bits(struct fctx *c, const struct field *f, uint64_t v,
		   const char *const *names, unsigned n);
/* The separator between detail lines: "\n\t", or " " with -O. */
void fld_sep(struct fctx *c);
/* A .text that writes nothing (the label says it all). */
void fld_none(struct fctx *c, const struct field *f, uint64_t v);
/* Where each kernel struct is in struct fblobs, by enum sdiag_blob. */
extern const uint16_t fld_blob_off[SDIAG_BLOB_MAX];
/* Copy kernel struct k of the current socket into c->w (fld_blob's slow path). */
const void *fld_blob_fill(const struct fctx *c, unsigned k);
/* Kernel struct k (enum sdiag_blob) of the current socket, zero past what
 * the kernel sent, all zero when it sent none. Inline: -i's rows ask often. */
static inline const void *fld_blob(const struct fctx *c, unsigned k)
{
	if (c->w->filled & 1u << k)
		return (const uint8_t *)c->w + fld_blob_off[k];
	return fld_blob_fill(c, k);
}
/* The value of a row for the current socket. */
uint64_t fld_value(const struct fctx *c, const struct field *f);

/* ---- the walk (field.c) ------------------------------------------------------ */

struct fplan;

/* Rows that apply under opts, per family class. Returns 0 or -ENOMEM. */
int fplan_new(struct fplan **ret, const struct out_opts *opts);
void fplan_free(struct fplan *p);
/* The JSON object of s, appended to b. */
void fplan_json(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s, const struct out_extra *x);
/* ss's detail text of s (after the columns), appended to b. */
void fplan_text(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s);
/* Table column col of s (FL_CELL rows), into b; cols[0] is the column's
 * start: a row writing several columns marks the ends of all but its last in
 * cols[1..]. Returns false when no row of the family is that column. */
bool fplan_cell(const struct fplan *p, struct names *names, struct obuf *b,
		const struct sdiag_sock *s, const struct out_extra *x, enum col col,
		uint32_t *cols);

#endif
