/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Options structs that grow at their end (libbpf's OPTS, the kernel's
 * copy_struct_from_user()): an old caller's shorter struct and a new caller's
 * longer one both load into the library's own. */
#include <errno.h>
#include <string.h>

#include "lib/core/internal.h"

/* A member appended without moving SD_*_KNOWN would be ignored silently. */
_Static_assert(sizeof(struct sdiag_query) - SD_QUERY_KNOWN < _Alignof(struct sdiag_query),
	       "SD_QUERY_KNOWN must end at struct sdiag_query's last member");
_Static_assert(sizeof(struct sdiag_kill_opts) - SD_KILL_OPTS_KNOWN <
		       _Alignof(struct sdiag_kill_opts),
	       "SD_KILL_OPTS_KNOWN must end at struct sdiag_kill_opts's last member");

int sd_opts_load(void *dst, size_t size, size_t known, const void *src)
{
	size_t sz;

	memcpy(&sz, src, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	/* No options struct is a page: a size that large is not one (the bpf
	 * syscall's limit), and its tail is not read. */
	if (sz > 4096)
		return -E2BIG;
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)src)[i])
			return -E2BIG;
	memcpy(dst, src, sz < size ? sz : size);
	if (sz < size)
		memset((unsigned char *)dst + sz, 0, size - sz);
	memcpy(dst, &size, sizeof(size));
	return 0;
}
