/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_RULE_H
#define _GPUCTL_RULE_H

#include <linux/pci.h>
#include <linux/types.h>

#include "pci-func.h"

/* "vvvv:dddd:ssss:ssss" plus the NUL, the longest canonical match. */
#define GPUCTL_MATCH_STR_LEN 20

/**
 * struct gpuctl_match - what a rule selects
 * @by_address: match @key, otherwise match the ids
 * @any_device: ids: any device id of @vendor ("VVVV:*")
 * @subsystem: ids: @subvendor and @subdevice must match too
 * @key: address: gpuctl_inventory_key() of the function
 * @vendor: ids: vendor id
 * @device: ids: device id, unless @any_device
 * @subvendor: ids: subsystem vendor id, if @subsystem
 * @subdevice: ids: subsystem device id, if @subsystem
 */
struct gpuctl_match {
	bool by_address;
	bool any_device;
	bool subsystem;
	unsigned long key;
	u16 vendor;
	u16 device;
	u16 subvendor;
	u16 subdevice;
};

/**
 * struct gpuctl_rule - a reservation rule
 * @id: the rule's id; allocated on insertion, never 0
 * @match: what it selects (gpuctl_rule_selects())
 * @driver: the VFIO driver they are bound to
 * @force: also take foreign members of their IOMMU groups
 * @take: take them from host drivers that hold them
 * @source: enum gpuctl_rule_source
 *
 * Rules live in a table under gpuctl_lock and are freed on deletion, after
 * reserve.c dropped every device's pointer to them.
 */
struct gpuctl_rule {
	u32 id;
	struct gpuctl_match match;
	char driver[GPUCTL_DRIVER_NAME_LEN];
	bool force;
	bool take;
	u32 source;
};

int gpuctl_parse_address(const char *s, unsigned long *key);
int gpuctl_match_parse(const char *s, struct gpuctl_match *m,
		       const char **why);
void gpuctl_match_format(const struct gpuctl_match *m, char *buf, size_t len);
bool gpuctl_match_equal(const struct gpuctl_match *a,
			const struct gpuctl_match *b);
bool gpuctl_match_pdev(const struct gpuctl_match *m,
		       const struct pci_dev *pdev);
bool gpuctl_rule_driver_vf_only(const char *name);
int gpuctl_rule_check_driver(const char *name, const char **why);
int gpuctl_rule_parse_param(char *s, struct gpuctl_rule *rule,
			    const char **why);

struct gpuctl_rule *gpuctl_rule_insert(const struct gpuctl_rule *tmpl);
void gpuctl_rule_unlink(struct gpuctl_rule *rule);
struct gpuctl_rule *gpuctl_rule_find(u32 id);
struct gpuctl_rule *gpuctl_rule_find_match(const struct gpuctl_match *m);
struct gpuctl_rule *gpuctl_rule_next(unsigned long *id);
bool gpuctl_rule_never(const struct pci_dev *pdev, const char **what);
/* "0000:00:1f.5 is a base system peripheral (class 0x088000)", NUL. */
#define GPUCTL_NEVER_LEN 64
bool gpuctl_match_names_never(const struct gpuctl_match *m, char *buf,
			      size_t len);
bool gpuctl_rule_selects(const struct gpuctl_rule *rule,
			 const struct pci_dev *pdev);
struct gpuctl_rule *gpuctl_rule_for_pdev(const struct pci_dev *pdev);
void gpuctl_rule_flush(void);

#endif /* _GPUCTL_RULE_H */
