// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sockdiag-kube-backends' model (daemon/kube/slices.c) fed a watch stream:
 * arbitrary bytes parsed as the sidecar parses a watch (one json-c tokener
 * across reads of the size the first byte gives), each object an event:
 * "type" ADDED or MODIFIED puts its "object", DELETED deletes it, RELIST
 * begins a re-list and END ends it; the clock moves by the second byte's
 * ms per event, the TTL is the third byte's. Checked after every event: the
 * file's text parses with the guard's parser (backends_parse: the sidecar
 * never writes a file the guard refuses), and lists as many lines as it says.
 * Seeds: tests/fuzz/seeds/kube/ (the recorded slices of tests/deploy as a stream).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "daemon/kube/kube.h"

static void event(struct kube_state *st, struct json_object *ev, uint64_t now)
{
	struct json_object *type, *obj = NULL;
	struct backend_set set = { 0 };
	const char *t;
	char *text, err[256];
	uint64_t expiry;
	size_t n, lines = 0;

	if (!json_object_is_type(ev, json_type_object) ||
	    !json_object_object_get_ex(ev, "type", &type) ||
	    !(t = json_object_get_string(type)))
		return;
	json_object_object_get_ex(ev, "object", &obj);
	if (!strcmp(t, "ADDED") || !strcmp(t, "MODIFIED"))
		kube_slice_put(st, obj, now);
	else if (!strcmp(t, "DELETED"))
		kube_slice_del(st, obj, now);
	else if (!strcmp(t, "RELIST"))
		kube_relist_begin(st);
	else if (!strcmp(t, "END"))
		kube_relist_end(st, now);
	if (kube_render(st, now, &text, &n, &expiry) < 0)
		return;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		lines++;
	if (lines != n + 1 ||
	    backends_parse(&set, text, strlen(text), 1 << 20, err, sizeof(err)) != 0)
		abort();
	backends_free(&set);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct kube_state *st;
	size_t chunk, off = 3;
	uint64_t now = 0, step;

	if (size < 3)
		return 0;
	chunk = data[0] ? data[0] : 1;
	step = data[1];
	if (kube_state_new(&st, (uint64_t)data[2] * 10) < 0)
		return 0;
	tok = json_tokener_new();
	while (tok && off < size) {
		size_t len = size - off < chunk ? size - off : chunk, used = 0;

		while (used < len) {
			struct json_object *o = json_tokener_parse_ex(tok, (const char *)data + off + used,
								      (int)(len - used));
			enum json_tokener_error e = json_tokener_get_error(tok);

			if (e == json_tokener_continue) {
				used = len;
				break;
			}
			if (e != json_tokener_success) {
				off = size; /* the sidecar drops the watch here */
				break;
			}
			used += json_tokener_get_parse_end(tok);
			json_tokener_reset(tok);
			event(st, o, now += step);
			json_object_put(o);
		}
		if (off < size)
			off += len;
	}
	json_tokener_free(tok);
	kube_state_free(st);
	return 0;
}
