/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * What the inventory should hold, computed from sysfs alone with the rules
 * the spec states, so the tests never carry expected results.
 */
#ifndef _GPUCTL_SYSFS_MODEL_H
#define _GPUCTL_SYSFS_MODEL_H

#include "nlclient.h"

#define MODEL_MAX_DEVS		256
#define MODEL_MAX_GROUPS	64

struct model {
	int ndevs;
	struct nlc_dev devs[MODEL_MAX_DEVS];	/* sorted by address */
	int ngroups;
	struct nlc_group groups[MODEL_MAX_GROUPS];	/* sorted by id */
	/* Every offender of a non-viable group, as "ADDR is bound to DRV". */
	char offenders[MODEL_MAX_GROUPS][NLC_MAX_MEMBERS][NLC_ADDR_LEN + 80];
	int noffenders[MODEL_MAX_GROUPS];
};

/* Fills @m from /sys; 0 or -errno. */
int model_load(struct model *m);
/* Reads one PCI function as the module should report it, tracked or not. */
int model_read_dev(const char *address, struct nlc_dev *d);
const struct nlc_dev *model_find_dev(const struct model *m, const char *addr);
int model_find_group(const struct model *m, __u32 id);

bool model_is_gpu_class(__u32 class);
bool model_driver_is_vfio_ok(const char *driver);

/*
 * Compare one reported object with the model; every mismatch is described
 * in @why (for TH_LOG). Returns the number of mismatches.
 */
int model_cmp_dev(const struct nlc_dev *want, const struct nlc_dev *got,
		  char *why, size_t len);
int model_cmp_group(const struct model *m, int gi, const struct nlc_group *got,
		    char *why, size_t len);

#endif /* _GPUCTL_SYSFS_MODEL_H */
