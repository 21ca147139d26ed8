/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * What nlclient.c and nlclient_alloc.c share and the tests do not call.
 */
#ifndef _GPUCTL_NLCLIENT_PRIV_H
#define _GPUCTL_NLCLIENT_PRIV_H

#include "nlclient.h"

/* @table[@v] when it has a name there, else "unknown". */
const char *nlc_name_of(const char * const *table, size_t n, long v);

/*
 * A dump of @cmd into a growing array of @size-byte objects, each filled
 * by @parse. On success *@v (to free) holds *@n of them.
 */
int nlc_dump(struct nlc *c, __u8 cmd, size_t size,
	     int (*parse)(const struct nlmsghdr *nlh, void *slot), void **v,
	     int *n, struct nlc_dump_info *info);

/* An allocation notification or reply, as the monitor tells them apart. */
bool nlc_is_alloc_cmd(__u8 cmd);

/*
 * The name of attribute @type of an alloc or limit request @cmd, for
 * extack offsets; NULL when @cmd is none of those.
 */
const char *nlc_alloc_attr_name(__u8 cmd, int type);

#endif /* _GPUCTL_NLCLIENT_PRIV_H */
