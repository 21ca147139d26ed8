/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_TEST_CMDLINE_H
#define _GPUCTL_TEST_CMDLINE_H

#include <stdbool.h>
#include <stdio.h>

/* What the tests share: TAP lines and the tool's output, captured */
struct capture {
	int out;
	int err;
	FILE *fout;
	FILE *ferr;
};

void report(bool ok, const char *fmt, const char *arg);
void check_str(const char *what, const char *got, const char *want);
void capture_start(struct capture *c);
void capture_end(struct capture *c, char **out, char **err);
int run_args(const char *args, bool dry_run, char **out, char **err);

void test_rules(void);
void test_allocs(void);
void test_vgpus(void);
void test_holders(void);

#endif /* _GPUCTL_TEST_CMDLINE_H */
