/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Exact lookups in udev's compiled hardware database (hwdb.bin).
 */
#ifndef _GPUCTL_HWDB_H
#define _GPUCTL_HWDB_H

struct hwdb;

struct hwdb *hwdb_open(void);
struct hwdb *hwdb_open_path(const char *path);
const char *hwdb_value(const struct hwdb *db, const char *pattern,
		       const char *key);
void hwdb_close(struct hwdb *db);

#endif /* _GPUCTL_HWDB_H */
