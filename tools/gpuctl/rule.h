/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_RULE_H
#define _GPUCTL_RULE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/gpuctl.h>

#include "utils.h"

/* The driver a rule binds to when it names none, as the kernel decides */
#define RULE_DRIVER_DEFAULT "vfio-pci"
/* The module's own VFIO driver, which enforces the ledger on opens */
#define GPUCTL_VFIO_DRIVER "gpuctl-vfio-pci"
#define RULE_ERR_BUFSZ 256

/*
 * A reservation rule as a user writes it, on the command line or in the
 * config file, before the kernel has seen it.
 */
struct rule_spec {
	u32 id;					/* 0: the kernel picks one */
	char match[GPUCTL_MATCH_LEN + 1];	/* canonical, lower case */
	char driver[GPUCTL_DRIVER_LEN + 1];	/* "" when not given */
	bool force;
	bool take;
	unsigned int line;			/* in its config file */
	/* a module reload's: the old module's orphans of the rule */
	size_t norphans;
	char (*orphans)[ADDR_BUFSZ];
};

struct rule_set {
	struct rule_spec *v;
	size_t n;
};

int rule_match_parse(const char *arg, char *out, size_t size);
int rule_ids_parse(const char *arg, char *out, size_t size);
int rule_args_parse(struct args *a, struct rule_spec *r, char *err,
		    size_t errsz);
void rule_set_free(struct rule_set *set);
const char *rule_driver(const struct rule_spec *r);
int rule_param_format(const struct rule_spec *r, char *buf, size_t size);
void rule_modprobe_print(FILE *fp, const struct rule_set *set);

#endif /* _GPUCTL_RULE_H */
