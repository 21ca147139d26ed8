// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Reservation rules as text: the tool's grammar, shared by "reserve add"
 * and the lines of /etc/gpuctl/gpuctl.conf, and the module parameter's
 * grammar, "MATCH[@DRIVER][+force][+take]", that "apply ... modprobe"
 * writes for the initramfs. Nothing here talks to the kernel, so all of
 * it is tested by test-cmdline.
 */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static int rule_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * Exactly four hex digits: "10de:233" is far more likely a typo of
 * "10de:2331" than a rule for device 0x0233, so short ids are refused.
 */
static int parse_id(const char *s, size_t len, unsigned int *id)
{
	size_t i;

	if (len != 4)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
	*id = strtoul(s, NULL, 16);
	return 0;
}

/**
 * rule_ids_parse() - check a match by ids and give it its canonical form
 * @arg: "VVVV:DDDD", "VVVV:*" or "VVVV:DDDD:SSSS:SSSS", either case
 * @out: lower case, as the kernel replies with it
 * @size: size of @out, at least GPUCTL_MATCH_LEN + 1
 *
 * Rules and "alloc add ... match" share it.
 *
 * Return: 0, or -EINVAL when @arg is none of these.
 */
int rule_ids_parse(const char *arg, char *out, size_t size)
{
	unsigned int id[4];
	bool any = false;
	const char *p = arg;
	size_t len;
	int n, ret;

	for (n = 0; n < 4; n++) {
		len = strcspn(p, ":");
		if (n == 1 && len == 1 && *p == '*')
			any = true;
		else if (parse_id(p, len, &id[n]))
			return -EINVAL;
		p += len;
		if (!*p)
			break;
		p++;
	}
	if ((n != 1 && n != 3) || (any && n != 1))
		return -EINVAL;

	ret = snprintf(out, size, "%04x:", id[0]);
	if (any)
		ret += snprintf(out + ret, size - ret, "*");
	else
		ret += snprintf(out + ret, size - ret, "%04x", id[1]);
	if (n == 3)
		ret += snprintf(out + ret, size - ret, ":%04x:%04x", id[2],
				id[3]);
	return (size_t)ret < size ? 0 : -EINVAL;
}

/**
 * rule_match_parse() - check a rule's match and give it its canonical form
 * @arg: "DDDD:BB:DD.F" or "BB:DD.F" (a PCI address), "VVVV:DDDD",
 *	"VVVV:*" (any device of the vendor) or "VVVV:DDDD:SSSS:SSSS" (with
 *	the subsystem ids), either case
 * @out: the form the kernel replies with: lower case, domain included
 * @size: size of @out, at least GPUCTL_MATCH_LEN + 1
 *
 * Return: 0, or -EINVAL when @arg is none of these.
 */
int rule_match_parse(const char *arg, char *out, size_t size)
{
	/* only an address has a dot, so the two forms never collide */
	if (strchr(arg, '.'))
		return parse_pci_address(arg, out, size);
	return rule_ids_parse(arg, out, size);
}

/*
 * The kernel accepts names that contain "vfio" (vfio-pci and its variant
 * drivers), pci-stub, and nvidia for NVIDIA's vendor VFs alone. The tool
 * also keeps to the characters of module names, so that a name can never
 * break the module parameter's grammar.
 */
static int rule_driver_check(const char *name, char *err, size_t errsz)
{
	const char *c;

	if (!*name || strlen(name) > GPUCTL_DRIVER_LEN)
		return rule_err(err, errsz, "invalid driver name \"%s\"", name);
	for (c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return rule_err(err, errsz,
					"invalid driver name \"%s\"", name);
	if (!strstr(name, "vfio") && strcmp(name, "pci-stub") &&
	    strcmp(name, "nvidia"))
		return rule_err(err, errsz, "driver %s is not a VFIO driver",
				name);
	return 0;
}

/**
 * rule_args_parse() - read "MATCH [ driver NAME ] [ force ] [ take ]"
 * @a: the words; all of them are used
 * @r: the rule, zeroed first
 * @err: the reason, when @a is not a rule
 * @errsz: size of @err
 *
 * The keywords may come in any order after MATCH, each once.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int rule_args_parse(struct args *a, struct rule_spec *r, char *err,
		    size_t errsz)
{
	const char *arg;
	bool driver = false;

	memset(r, 0, sizeof(*r));
	arg = args_next(a);
	if (!arg)
		return rule_err(err, errsz, "missing MATCH");
	if (rule_match_parse(arg, r->match, sizeof(r->match)))
		return rule_err(err, errsz,
				"invalid match \"%s\", expected DDDD:BB:DD.F, VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS",
				arg);

	while ((arg = args_next(a))) {
		bool *flag = NULL;

		if (!strcmp(arg, "force"))
			flag = &r->force;
		else if (!strcmp(arg, "take"))
			flag = &r->take;
		if (flag) {
			if (*flag)
				return rule_err(err, errsz,
						"\"%s\" given twice", arg);
			*flag = true;
			continue;
		}
		if (strcmp(arg, "driver"))
			return rule_err(err, errsz,
					"unexpected argument \"%s\"", arg);
		if (driver)
			return rule_err(err, errsz,
					"\"driver\" given twice");
		driver = true;
		arg = args_next(a);
		if (!arg)
			return rule_err(err, errsz,
					"\"driver\" needs a driver name");
		if (rule_driver_check(arg, err, errsz))
			return -EINVAL;
		snprintf(r->driver, sizeof(r->driver), "%s", arg);
	}
	return 0;
}

void rule_set_free(struct rule_set *set)
{
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

/* The driver the kernel will use for @r */
const char *rule_driver(const struct rule_spec *r)
{
	return r->driver[0] ? r->driver : RULE_DRIVER_DEFAULT;
}

/**
 * rule_param_format() - write a rule in the module parameter's grammar
 * @r: the rule
 * @buf: "MATCH[@DRIVER][+force][+take]"; the default driver is left out
 * @size: size of @buf
 *
 * Return: 0, or -ENOSPC when @buf is too small.
 */
int rule_param_format(const struct rule_spec *r, char *buf, size_t size)
{
	bool other = strcmp(rule_driver(r), RULE_DRIVER_DEFAULT);
	int n;

	n = snprintf(buf, size, "%s%s%s%s%s", r->match, other ? "@" : "",
		     other ? r->driver : "", r->force ? "+force" : "",
		     r->take ? "+take" : "");
	return n >= 0 && (size_t)n < size ? 0 : -ENOSPC;
}

/**
 * rule_modprobe_print() - the modprobe.d line that loads @set at boot
 * @fp: where to print it
 * @set: the rules
 *
 * Prints "options gpuctl reserve=RULE,RULE..." and a newline, or nothing
 * for an empty set.
 */
void rule_modprobe_print(FILE *fp, const struct rule_set *set)
{
	char buf[GPUCTL_MATCH_LEN + GPUCTL_DRIVER_LEN + 16];
	size_t i;

	if (!set->n)
		return;
	fputs("options gpuctl reserve=", fp);
	for (i = 0; i < set->n; i++) {
		/* the buffer holds the longest rule the fields allow */
		rule_param_format(&set->v[i], buf, sizeof(buf));
		fprintf(fp, "%s%s", i ? "," : "", buf);
	}
	fputc('\n', fp);
}
