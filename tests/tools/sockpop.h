/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sockpop: shared between sockpop.c (output, unix, main) and sockpop-net.c. */
#ifndef SOCKPOP_H
#define SOCKPOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/un.h>

#define MAX_LISTENERS 64

struct listener {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t len;
};

struct pop {
	FILE *out; /* JSON objects so far */
	unsigned n;
	struct listener listeners[MAX_LISTENERS];
	unsigned n_listeners;
};

void pop_begin_obj(struct pop *p, const char *kind, int fd);
void pop_end_obj(struct pop *p);
/* Splits "VALUE,opt,opt" in place: returns the options part or NULL. */
char *pop_split_opts(char *arg);

int do_netlink(struct pop *p, char *arg);
int do_packet(struct pop *p, char *arg);
int do_tcp(struct pop *p, const char *arg, bool pair);
int do_udp(struct pop *p, char *arg);

#endif
