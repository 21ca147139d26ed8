/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_UTILS_H
#define _GPUCTL_UTILS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>

/* The kernel's names, as in the rest of the project */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "DDDD:BB:DD.F" plus the NUL, with room for a longer kernel string */
#define ADDR_BUFSZ 16
/* Longest vendor or device name we keep; pci.ids names are shorter */
#define NAME_BUFSZ 128

/* A cursor over the words left on the command line */
struct args {
	int argc;
	char **argv;
};

static inline bool args_end(const struct args *a)
{
	return a->argc <= 0;
}

static inline const char *args_peek(const struct args *a)
{
	return a->argc > 0 ? a->argv[0] : NULL;
}

static inline const char *args_next(struct args *a)
{
	if (a->argc <= 0)
		return NULL;
	a->argc--;
	return *a->argv++;
}

static inline bool args_is(const struct args *a, const char *word)
{
	const char *cur = args_peek(a);

	return cur && !strcmp(cur, word);
}

int parse_pci_address(const char *arg, char *out, size_t size);
void read_first_line(const char *path, char *buf, size_t size);
int parse_u32(const char *arg, u32 *val);

const char *role_name(u32 role);
const char *state_name(u32 state);
const char *action_name(u32 action);
const char *source_name(u32 source);
const char *alloc_state_name(u32 state);
const char *alloc_end_name(u32 end);
const char *numa_policy_name(u32 policy);
/*
 * open_match's value for a holder the tool found (holders.c) that is
 * neither the allocation's VM nor of its uid; the module's are below it.
 */
#define HOLDER_MATCH_MISMATCH 0x100
const char *open_match_name(u32 match);
const char *limit_scope_name(u32 scope);
const char *ntf_name(u8 cmd);
const char *ntf_label(u8 cmd);

/* The longest message about one line of a file */
#define LINE_ERR_BUFSZ 256

int file_lines_read(FILE *fp, const char *name, size_t max_len,
		    int (*take)(void *ctx, char *line, unsigned int lineno,
				char *err, size_t errsz),
		    void *ctx);

#endif /* _GPUCTL_UTILS_H */
