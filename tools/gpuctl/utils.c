// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Address parsing and enum names: everything that turns a
 * number or a word into another form, and nothing that talks to the kernel,
 * so the command line parser can be tested without the module.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "utils.h"

struct name_map {
	unsigned int num;
	const char *str;
	const char *label;
};

static const struct name_map role_names[] = {
	{ .num = GPUCTL_DEV_ROLE_GPU, .str = "gpu" },
	{ .num = GPUCTL_DEV_ROLE_COMPANION, .str = "companion" },
	{ .num = GPUCTL_DEV_ROLE_FOREIGN, .str = "foreign" },
	{ .num = GPUCTL_DEV_ROLE_BRIDGE, .str = "bridge" },
};

static const struct name_map state_names[] = {
	{ .num = GPUCTL_DEV_STATE_FREE, .str = "free" },
	{ .num = GPUCTL_DEV_STATE_RESERVED, .str = "reserved" },
	{ .num = GPUCTL_DEV_STATE_HELD, .str = "held" },
	{ .num = GPUCTL_DEV_STATE_BLOCKED, .str = "blocked" },
};

static const struct name_map action_names[] = {
	{ .num = GPUCTL_DEV_ACTION_CLAIMED, .str = "claimed" },
	{ .num = GPUCTL_DEV_ACTION_BOUND, .str = "bound" },
	{ .num = GPUCTL_DEV_ACTION_RESTORED, .str = "restored" },
	{ .num = GPUCTL_DEV_ACTION_TAKEN, .str = "taken" },
	{ .num = GPUCTL_DEV_ACTION_RELEASED, .str = "released" },
	{ .num = GPUCTL_DEV_ACTION_BLOCKED, .str = "blocked" },
};

static const struct name_map source_names[] = {
	{ .num = GPUCTL_RULE_SOURCE_PARAM, .str = "param" },
	{ .num = GPUCTL_RULE_SOURCE_NETLINK, .str = "netlink" },
};

static const struct name_map alloc_state_names[] = {
	{ .num = GPUCTL_ALLOC_STATE_IDLE, .str = "idle" },
	{ .num = GPUCTL_ALLOC_STATE_RUNNING, .str = "running" },
	{ .num = GPUCTL_ALLOC_STATE_LOST, .str = "lost" },
};

static const struct name_map alloc_end_names[] = {
	{ .num = GPUCTL_ALLOC_END_DELETED, .str = "deleted" },
	{ .num = GPUCTL_ALLOC_END_DETACHED, .str = "detached" },
	{ .num = GPUCTL_ALLOC_END_HANDED_OVER, .str = "handed-over" },
};

static const struct name_map numa_policy_names[] = {
	{ .num = GPUCTL_NUMA_POLICY_REQUIRED, .str = "required" },
	{ .num = GPUCTL_NUMA_POLICY_PREFERRED, .str = "preferred" },
	{ .num = GPUCTL_NUMA_POLICY_LEGACY, .str = "legacy" },
};

static const struct name_map open_match_names[] = {
	{ .num = GPUCTL_OPEN_MATCH_OWNER, .str = "owner" },
	{ .num = GPUCTL_OPEN_MATCH_OTHER, .str = "other" },
	{ .num = GPUCTL_OPEN_MATCH_UNALLOCATED, .str = "unallocated" },
	{ .num = GPUCTL_OPEN_MATCH_UNKNOWN, .str = "unknown" },
	{ .num = HOLDER_MATCH_MISMATCH, .str = "mismatch" },
};

static const struct name_map limit_scope_names[] = {
	{ .num = GPUCTL_LIMIT_SCOPE_ACCOUNT, .str = "account" },
	{ .num = GPUCTL_LIMIT_SCOPE_PROJECT, .str = "project" },
	{ .num = GPUCTL_LIMIT_SCOPE_DOMAIN, .str = "domain" },
};

static const struct name_map ntf_names[] = {
	{ .num = GPUCTL_CMD_DEV_ADD_NTF, .str = "dev-add-ntf", .label = "dev-add" },
	{ .num = GPUCTL_CMD_DEV_DEL_NTF, .str = "dev-del-ntf", .label = "dev-del" },
	{ .num = GPUCTL_CMD_DEV_CHANGE_NTF, .str = "dev-change-ntf",
	  .label = "dev-change" },
	{ .num = GPUCTL_CMD_RULE_NEW_NTF, .str = "rule-new-ntf",
	  .label = "rule-new" },
	{ .num = GPUCTL_CMD_RULE_DEL_NTF, .str = "rule-del-ntf",
	  .label = "rule-del" },
	{ .num = GPUCTL_CMD_ALLOC_NEW_NTF, .str = "alloc-new-ntf",
	  .label = "alloc-new" },
	{ .num = GPUCTL_CMD_ALLOC_DEL_NTF, .str = "alloc-del-ntf",
	  .label = "alloc-del" },
	{ .num = GPUCTL_CMD_ALLOC_CHANGE_NTF, .str = "alloc-change-ntf",
	  .label = "alloc-change" },
	{ .num = GPUCTL_CMD_VFIO_OPEN_NTF, .str = "vfio-open-ntf",
	  .label = "vfio-open" },
	{ .num = GPUCTL_CMD_VFIO_CLOSE_NTF, .str = "vfio-close-ntf",
	  .label = "vfio-close" },
	{ .num = GPUCTL_CMD_MDEV_ADD_NTF, .str = "mdev-add-ntf",
	  .label = "mdev-add" },
	{ .num = GPUCTL_CMD_MDEV_DEL_NTF, .str = "mdev-del-ntf",
	  .label = "mdev-del" },
};

static const struct name_map *name_find(const struct name_map *map,
					size_t n, unsigned int num)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (map[i].num == num)
			return &map[i];
	return NULL;
}

/* A newer module may send a value this tool does not know yet */
static const char *name_or_unknown(const struct name_map *map, size_t n,
				   unsigned int num)
{
	const struct name_map *m = name_find(map, n, num);

	return m ? m->str : "unknown";
}

const char *role_name(u32 role)
{
	return name_or_unknown(role_names, ARRAY_SIZE(role_names), role);
}

const char *state_name(u32 state)
{
	return name_or_unknown(state_names, ARRAY_SIZE(state_names), state);
}

const char *action_name(u32 action)
{
	return name_or_unknown(action_names, ARRAY_SIZE(action_names), action);
}

const char *source_name(u32 source)
{
	return name_or_unknown(source_names, ARRAY_SIZE(source_names), source);
}

const char *alloc_state_name(u32 state)
{
	return name_or_unknown(alloc_state_names, ARRAY_SIZE(alloc_state_names),
			       state);
}

const char *alloc_end_name(u32 end)
{
	return name_or_unknown(alloc_end_names, ARRAY_SIZE(alloc_end_names),
			       end);
}

const char *numa_policy_name(u32 policy)
{
	return name_or_unknown(numa_policy_names,
			       ARRAY_SIZE(numa_policy_names), policy);
}

const char *open_match_name(u32 match)
{
	return name_or_unknown(open_match_names, ARRAY_SIZE(open_match_names),
			       match);
}

const char *limit_scope_name(u32 scope)
{
	return name_or_unknown(limit_scope_names,
			       ARRAY_SIZE(limit_scope_names), scope);
}

/* NULL for a command that is not a notification this tool understands */
const char *ntf_name(u8 cmd)
{
	const struct name_map *m;

	m = name_find(ntf_names, ARRAY_SIZE(ntf_names), cmd);
	return m ? m->str : NULL;
}

const char *ntf_label(u8 cmd)
{
	const struct name_map *m;

	m = name_find(ntf_names, ARRAY_SIZE(ntf_names), cmd);
	return m ? m->label : NULL;
}

/*
 * Read 1 to @max hex digits. Signs, spaces and "0x" are refused, which
 * strtoul() alone would accept.
 */
static int parse_hex(const char **p, unsigned int max, unsigned long *val)
{
	const char *s = *p;
	unsigned long v = 0;
	unsigned int n;

	for (n = 0; isxdigit((unsigned char)s[n]); n++) {
		if (n == max)
			return -EINVAL;
		v = v * 16 + (isdigit((unsigned char)s[n]) ?
			      s[n] - '0' : tolower((unsigned char)s[n]) - 'a' + 10);
	}
	if (!n)
		return -EINVAL;
	*p = s + n;
	*val = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/**
 * parse_pci_address() - parse and normalise a PCI address
 * @arg: "DDDD:BB:DD.F" or "BB:DD.F" (domain 0000), either case
 * @out: the kernel's form, "dddd:bb:dd.f" in lower case
 * @size: size of @out, at least ADDR_BUFSZ
 *
 * Return: 0, or -EINVAL when @arg is not a PCI address.
 */
int parse_pci_address(const char *arg, char *out, size_t size)
{
	unsigned long domain = 0, bus, slot, fn;
	const char *p = arg;
	const char *c;
	int colons = 0;

	for (c = arg; *c; c++)
		colons += *c == ':';
	if (colons < 1 || colons > 2 || size < ADDR_BUFSZ)
		return -EINVAL;

	if (colons == 2 && (parse_hex(&p, 4, &domain) || expect(&p, ':')))
		return -EINVAL;
	if (parse_hex(&p, 2, &bus) || expect(&p, ':'))
		return -EINVAL;
	if (parse_hex(&p, 2, &slot) || slot > 0x1f || expect(&p, '.'))
		return -EINVAL;
	if (parse_hex(&p, 1, &fn) || fn > 7 || *p)
		return -EINVAL;

	snprintf(out, size, "%04lx:%02lx:%02lx.%lx", domain, bus, slot, fn);
	return 0;
}

/**
 * parse_u32() - parse a decimal number such as an IOMMU group id
 * @arg: digits only
 * @val: the number
 *
 * Return: 0, or -EINVAL for anything else, or -ERANGE above UINT32_MAX.
 */
int parse_u32(const char *arg, u32 *val)
{
	unsigned long long v;
	const char *c;
	char *end;

	if (!*arg)
		return -EINVAL;
	for (c = arg; *c; c++)
		if (!isdigit((unsigned char)*c))
			return -EINVAL;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v > UINT32_MAX)
		return -ERANGE;
	*val = v;
	return 0;
}

/**
 * file_lines_read() - hand each line of a text file to @take
 * @fp: the file
 * @name: its name, for the messages
 * @max_len: a longer line is an error, not two lines
 * @take: gets each line (with its newline) and its number, and returns 0,
 *	-ENOMEM to stop, or another negative errno with its message in @err
 * @ctx: for @take
 *
 * Every error is printed as "FILE:LINE: message", and the whole file is
 * read, so that one run shows every mistake.
 *
 * Return: 0, -EINVAL when a line was wrong, or another negative errno
 * (printed) when the file could not be read.
 */
int file_lines_read(FILE *fp, const char *name, size_t max_len,
		    int (*take)(void *ctx, char *line, unsigned int lineno,
				char *err, size_t errsz),
		    void *ctx)
{
	char err[LINE_ERR_BUFSZ];
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0, r;
	ssize_t len;

	while ((len = getline(&line, &cap, fp)) >= 0) {
		lineno++;
		if ((size_t)len > max_len || strlen(line) != (size_t)len) {
			fprintf(stderr, "%s:%u: %s\n", name, lineno,
				(size_t)len > max_len ? "line too long" :
				"NUL byte in line");
			ret = -EINVAL;
			continue;
		}
		err[0] = '\0';
		r = take(ctx, line, lineno, err, sizeof(err));
		if (r == -ENOMEM) {
			ret = r;
			break;
		}
		if (r < 0) {
			fprintf(stderr, "%s:%u: %s\n", name, lineno, err);
			ret = -EINVAL;
		}
	}
	if (!ret && ferror(fp)) {
		ret = -EIO;
		fprintf(stderr, "%s: read error\n", name);
	} else if (ret == -ENOMEM) {
		fprintf(stderr, "%s: %s\n", name, strerror(-ret));
	}
	free(line);
	return ret;
}

/**
 * read_first_line() - the first line of a file, as sysfs attributes have
 * @path: the file
 * @buf: out: the line without its newline; "" when unreadable
 * @size: its size
 */
void read_first_line(const char *path, char *buf, size_t size)
{
	FILE *fp = fopen(path, "re");

	buf[0] = '\0';
	if (!fp)
		return;
	if (!fgets(buf, size, fp))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}
