// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Allocations and tenant limits as text: the words of "alloc add" and
 * "limit set", and the saved ledger that "alloc save" writes and "alloc
 * restore" reads, which is the same words, one command per line. Nothing
 * here talks to the kernel, so all of it is tested by test-cmdline.
 */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_args.h"
#include "rule.h"

/* "alloc add", "owner U", 64 "dev A" and every other keyword with room */
#define LEDGER_WORDS_MAX 192

static const char *const label_words[ALLOC_NR_LABELS] = {
	[GPUCTL_LIMIT_SCOPE_ACCOUNT - 1] = "account",
	[GPUCTL_LIMIT_SCOPE_PROJECT - 1] = "project",
	[GPUCTL_LIMIT_SCOPE_DOMAIN - 1] = "domain",
};

static int args_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/**
 * uuid_parse() - check a VM's UUID and give it the kernel's form
 * @arg: "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", hex digits in either case
 * @out: the same in lower case
 * @size: size of @out, at least GPUCTL_UUID_LEN + 1
 *
 * Libvirt, CloudStack and Nova all print UUIDs this way, so no other form
 * (braces, no dashes) is taken.
 *
 * Return: 0, or -EINVAL when @arg is not such a UUID.
 */
int uuid_parse(const char *arg, char *out, size_t size)
{
	size_t i;

	if (strlen(arg) != GPUCTL_UUID_LEN || size < GPUCTL_UUID_LEN + 1)
		return -EINVAL;
	for (i = 0; i < GPUCTL_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? arg[i] != '-' : !isxdigit((unsigned char)arg[i]))
			return -EINVAL;
		out[i] = tolower((unsigned char)arg[i]);
	}
	out[i] = '\0';
	return 0;
}

/*
 * Names and labels are for people and for limits: any text the kernel
 * takes, except control characters, which a saved ledger could not hold
 * on one line.
 */
static int label_parse(const char *key, const char *arg, char *out,
		       char *err, size_t errsz)
{
	const unsigned char *c;

	if (!*arg)
		return args_err(err, errsz, "%s must not be empty", key);
	if (strlen(arg) > GPUCTL_LABEL_LEN)
		return args_err(err, errsz,
				"%s is longer than %d characters", key,
				GPUCTL_LABEL_LEN);
	for (c = (const unsigned char *)arg; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return args_err(err, errsz,
					"%s has a control character", key);
	snprintf(out, GPUCTL_LABEL_LEN + 1, "%s", arg);
	return 0;
}

static int label_index(const char *word)
{
	int i;

	for (i = 0; i < ALLOC_NR_LABELS; i++)
		if (!strcmp(word, label_words[i]))
			return i;
	return -1;
}

static int numa_policy_parse(const char *arg, u32 *policy)
{
	u32 p;

	for (p = 1; p <= GPUCTL_NUMA_POLICY_MAX; p++) {
		if (!strcmp(arg, numa_policy_name(p))) {
			*policy = p;
			return 0;
		}
	}
	return -EINVAL;
}

/* A keyword's value: the next word, which must be there */
static const char *args_value(struct args *a, const char *key, char *err,
			      size_t errsz)
{
	const char *arg = args_next(a);

	if (!arg)
		args_err(err, errsz, "\"%s\" needs a value", key);
	return arg;
}

static int u32_value(struct args *a, const char *key, u32 *val, char *err,
		     size_t errsz)
{
	const char *arg = args_value(a, key, err, errsz);

	if (!arg)
		return -EINVAL;
	if (parse_u32(arg, val))
		return args_err(err, errsz,
				"invalid %s \"%s\", expected a number", key,
				arg);
	return 0;
}

static int alloc_dev_add(struct alloc_spec *s, const char *arg, char *err,
			 size_t errsz)
{
	char addr[ADDR_BUFSZ];
	size_t i;

	if (!arg)
		return args_err(err, errsz, "\"dev\" needs a PCI address");
	if (parse_pci_address(arg, addr, sizeof(addr)))
		return args_err(err, errsz,
				"invalid PCI address \"%s\", expected DDDD:BB:DD.F or BB:DD.F",
				arg);
	for (i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i], addr))
			return args_err(err, errsz, "dev %s given twice", addr);
	if (s->ndevs == ALLOC_DEVS_MAX)
		return args_err(err, errsz, "more than %d devices",
				ALLOC_DEVS_MAX);
	snprintf(s->devs[s->ndevs++], ADDR_BUFSZ, "%s", addr);
	return 0;
}

/*
 * "vgpu UUID [ made ]" names an instance; "vgpu TYPE [ count N ]" asks for
 * N new instances of a type, once per request. "made" marks an instance
 * made for the allocation, as a saved ledger keeps it.
 */
static int alloc_vgpu_add(struct args *a, struct alloc_spec *s, char *err,
			  size_t errsz)
{
	char uuid[GPUCTL_UUID_LEN + 1];
	const char *arg = args_next(a);
	const char *c;
	size_t i;

	if (!arg)
		return args_err(err, errsz,
				"\"vgpu\" needs a UUID or a type");
	if (!uuid_parse(arg, uuid, sizeof(uuid))) {
		for (i = 0; i < s->nvgpus; i++)
			if (!strcmp(s->vgpus[i].uuid, uuid))
				return args_err(err, errsz,
						"vgpu %s given twice", uuid);
		if (s->nvgpus == ALLOC_DEVS_MAX)
			return args_err(err, errsz, "more than %d vGPUs",
					ALLOC_DEVS_MAX);
		snprintf(s->vgpus[s->nvgpus].uuid, sizeof(uuid), "%s", uuid);
		if (args_is(a, "made")) {
			args_next(a);
			s->vgpus[s->nvgpus].made = true;
		}
		s->nvgpus++;
		return 0;
	}

	if (s->vgpu_type[0])
		return args_err(err, errsz,
				"one vgpu TYPE per allocation, %s is given already",
				s->vgpu_type);
	/* a type is a directory name: not ".", "..", nor a path or address */
	if (!strcmp(arg, ".") || !strcmp(arg, "..") ||
	    strlen(arg) >= sizeof(s->vgpu_type))
		return args_err(err, errsz, "invalid vgpu type \"%s\"", arg);
	for (c = arg; *c; c++)
		if (*c == '/' || *c == ':' || *c <= ' ' || *c == 0x7f)
			return args_err(err, errsz,
					"invalid vgpu \"%s\", expected a UUID or a type",
					arg);
	snprintf(s->vgpu_type, sizeof(s->vgpu_type), "%s", arg);
	s->vgpu_count = 1;
	if (args_is(a, "count")) {
		args_next(a);
		if (u32_value(a, "count", &s->vgpu_count, err, errsz))
			return -EINVAL;
		if (!s->vgpu_count || s->vgpu_count > ALLOC_DEVS_MAX)
			return args_err(err, errsz,
					"vgpu count must be 1 to %d",
					ALLOC_DEVS_MAX);
	}
	return 0;
}

/* One keyword of "alloc add" and its value */
static int alloc_word(struct args *a, const char *key, struct alloc_spec *s,
		      char *err, size_t errsz)
{
	const char *arg;
	int label;

	if (!strcmp(key, "dev")) {
		if (alloc_dev_add(s, args_next(a), err, errsz))
			return -EINVAL;
		/* a vendor VF typed for the allocation, as a ledger keeps it */
		if (args_is(a, "typed")) {
			args_next(a);
			s->dev_typed[s->ndevs - 1] = true;
		}
		return 0;
	}
	if (!strcmp(key, "vgpu"))
		return alloc_vgpu_add(a, s, err, errsz);
	if (!strcmp(key, "detach-on-stop")) {
		s->detach_on_stop = true;
		return 0;
	}
	if (!strcmp(key, "count")) {
		if (u32_value(a, key, &s->count, err, errsz))
			return -EINVAL;
		if (!s->count)
			return args_err(err, errsz,
					"count must be at least 1");
		return 0;
	}
	if (!strcmp(key, "numa")) {
		s->has_numa = true;
		return u32_value(a, key, &s->numa_node, err, errsz);
	}
	if (!strcmp(key, "uid")) {
		s->has_uid = true;
		return u32_value(a, key, &s->uid, err, errsz);
	}
	if (!strcmp(key, "gid")) {
		s->has_gid = true;
		return u32_value(a, key, &s->gid, err, errsz);
	}
	if (!strcmp(key, "id")) {
		s->has_id = true;
		if (u32_value(a, key, &s->id, err, errsz))
			return -EINVAL;
		/* 0 asks the kernel for any id, which "id" is not for */
		if (!s->id)
			return args_err(err, errsz, "id must be at least 1");
		return 0;
	}

	arg = args_value(a, key, err, errsz);
	if (!arg)
		return -EINVAL;
	if (!strcmp(key, "owner")) {
		if (uuid_parse(arg, s->owner, sizeof(s->owner)))
			return args_err(err, errsz,
					"invalid owner \"%s\", expected a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
					arg);
		return 0;
	}
	if (!strcmp(key, "name"))
		return label_parse(key, arg, s->name, err, errsz);
	if (!strcmp(key, "match")) {
		if (rule_ids_parse(arg, s->match, sizeof(s->match)))
			return args_err(err, errsz,
					"invalid match \"%s\", expected VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS",
					arg);
		return 0;
	}
	if (!strcmp(key, "policy")) {
		if (numa_policy_parse(arg, &s->numa_policy))
			return args_err(err, errsz,
					"invalid policy \"%s\", expected required, preferred or legacy",
					arg);
		return 0;
	}
	label = label_index(key);
	return label_parse(key, arg, s->labels[label], err, errsz);
}

static const char *const alloc_keys[] = {
	"owner", "name", "account", "project", "domain", "dev", "count",
	"match", "numa", "policy", "detach-on-stop", "uid", "gid", "id",
	"vgpu",
};

/* The rules between keywords, once all of them are read */
static int alloc_check(const struct alloc_spec *s, char *err, size_t errsz)
{
	if (!s->owner[0])
		return args_err(err, errsz, "missing owner UUID");
	if (s->ndevs && s->count)
		return args_err(err, errsz, "give dev or count, not both");
	if (!s->ndevs && !s->count && !s->nvgpus && !s->vgpu_type[0])
		return args_err(err, errsz,
				"missing dev ADDR, count N or vgpu");
	if (!s->count && s->match[0])
		return args_err(err, errsz, "\"match\" needs count");
	/* numa places the GPUs a count asks for, and the vGPUs of a type */
	if (!s->count && !s->vgpu_type[0] && s->has_numa)
		return args_err(err, errsz,
				"\"numa\" needs count or vgpu TYPE");
	if (s->numa_policy && !s->has_numa)
		return args_err(err, errsz, "\"policy\" needs numa");
	/* the module's limit, which also keeps the request in one message */
	if (s->ndevs + s->count + s->nvgpus + s->vgpu_count > ALLOC_DEVS_MAX)
		return args_err(err, errsz,
				"more than %d GPUs and vGPUs in one allocation",
				ALLOC_DEVS_MAX);
	return 0;
}

/**
 * alloc_args_parse() - read the words of "alloc add"
 * @a: the words; all of them are used
 * @s: the allocation, zeroed first
 * @err: the reason, when @a is not an allocation
 * @errsz: size of @err
 *
 * Keywords come in any order, each once but "dev" and "vgpu", which
 * name one GPU or vGPU each time ("vgpu TYPE" once).
 *
 * Return: 0, or -EINVAL with @err set.
 */
int alloc_args_parse(struct args *a, struct alloc_spec *s, char *err,
		     size_t errsz)
{
	unsigned int seen = 0;
	const char *key;
	size_t i;

	memset(s, 0, sizeof(*s));
	while ((key = args_next(a))) {
		for (i = 0; i < ARRAY_SIZE(alloc_keys); i++)
			if (!strcmp(key, alloc_keys[i]))
				break;
		if (i == ARRAY_SIZE(alloc_keys))
			return args_err(err, errsz,
					"unexpected argument \"%s\"", key);
		if (strcmp(key, "dev") && strcmp(key, "vgpu") &&
		    (seen & 1u << i))
			return args_err(err, errsz, "\"%s\" given twice", key);
		seen |= 1u << i;
		if (alloc_word(a, key, s, err, errsz))
			return -EINVAL;
	}
	return alloc_check(s, err, errsz);
}

/**
 * limit_args_parse() - read "{ account | project | domain } NAME max MAX"
 * @a: the words; all of them are used
 * @l: the limit, zeroed first
 * @err: the reason, when @a is not a limit
 * @errsz: size of @err
 *
 * MAX is a number or "none", which removes the limit.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int limit_args_parse(struct args *a, struct limit_spec *l, char *err,
		     size_t errsz)
{
	const char *arg;
	int label;

	memset(l, 0, sizeof(*l));
	arg = args_next(a);
	label = arg ? label_index(arg) : -1;
	if (label < 0)
		return args_err(err, errsz,
				"expected account, project or domain%s%s%s",
				arg ? ", not \"" : "", arg ? arg : "",
				arg ? "\"" : "");
	l->scope = label + 1;
	arg = args_value(a, label_words[label], err, errsz);
	if (!arg || label_parse(label_words[label], arg, l->name, err, errsz))
		return -EINVAL;
	arg = args_next(a);
	if (!arg || strcmp(arg, "max"))
		return args_err(err, errsz, "expected \"max\" after the %s",
				label_words[label]);
	arg = args_value(a, "max", err, errsz);
	if (!arg)
		return -EINVAL;
	if (strcmp(arg, "none")) {
		if (parse_u32(arg, &l->max))
			return args_err(err, errsz,
					"invalid max \"%s\", expected a number or none",
					arg);
		l->has_max = true;
	}
	if (!args_end(a))
		return args_err(err, errsz, "unexpected argument \"%s\"",
				args_peek(a));
	return 0;
}

/*
 * Cut @line into words in place. Words are separated by blanks; a word
 * in double quotes may hold blanks, "#", and \" or \\ for a quote or a
 * backslash. "#" outside quotes starts a comment.
 */
static int ledger_split(char *line, struct args *a, char **words, char *err,
			size_t errsz)
{
	char *p = line, *out;
	bool comment = false;

	a->argc = 0;
	a->argv = words;
	while (!comment) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (a->argc == LEDGER_WORDS_MAX)
			return args_err(err, errsz, "too many words");
		words[a->argc++] = p;
		if (*p != '"') {
			p += strcspn(p, " \t\r\n\v\f#\"");
			if (*p == '"')
				return args_err(err, errsz,
						"a quote inside a word");
			comment = *p == '#';
			if (*p)
				*p++ = '\0';
			continue;
		}
		out = p++;
		for (; *p != '"'; *out++ = *p++) {
			if (!*p)
				return args_err(err, errsz,
						"missing closing quote");
			if (*p != '\\')
				continue;
			p++;
			if (*p != '"' && *p != '\\')
				return args_err(err, errsz,
						"invalid escape in quotes");
		}
		p++;
		if (*p && *p != '#' && !isspace((unsigned char)*p))
			return args_err(err, errsz,
					"text after a closing quote");
		comment = *p == '#';
		if (*p)
			p++;
		*out = '\0';
	}
	return 0;
}

/**
 * ledger_line_parse() - read one line of a saved ledger
 * @line: the line, cut into words in place
 * @s: the allocation, when the line is "alloc add ..."
 * @l: the limit, when the line is "limit set ..."
 * @err: the reason, when the line is wrong
 * @errsz: size of @err
 *
 * Return: enum ledger_kind, or -EINVAL with @err set.
 */
int ledger_line_parse(char *line, struct alloc_spec *s, struct limit_spec *l,
		      char *err, size_t errsz)
{
	char *words[LEDGER_WORDS_MAX];
	const char *obj, *cmd;
	struct args a;

	if (ledger_split(line, &a, words, err, errsz))
		return -EINVAL;
	if (args_end(&a))
		return LEDGER_NONE;
	obj = args_next(&a);
	cmd = args_next(&a);
	if (!strcmp(obj, "alloc") && cmd && !strcmp(cmd, "add"))
		return alloc_args_parse(&a, s, err, errsz) ?: LEDGER_ALLOC;
	if (!strcmp(obj, "limit") && cmd && !strcmp(cmd, "set"))
		return limit_args_parse(&a, l, err, errsz) ?: LEDGER_LIMIT;
	return args_err(err, errsz,
			"expected \"alloc add\" or \"limit set\", not \"%s%s%s\"",
			obj, cmd ? " " : "", cmd ? cmd : "");
}

/* Why @s cannot be in the same ledger as one already read, or NULL */
static const char *alloc_clash(const struct ledger *ledger,
			       const struct alloc_spec *s, char *buf,
			       size_t size)
{
	const struct alloc_spec *o;
	size_t i, j, k;

	for (i = 0; i < ledger->nallocs; i++) {
		o = &ledger->allocs[i];
		if (s->has_id && o->has_id && s->id == o->id) {
			snprintf(buf, size, "allocation %u is already on line %u",
				 s->id, o->line);
			return buf;
		}
		for (j = 0; j < s->ndevs; j++) {
			for (k = 0; k < o->ndevs; k++) {
				if (strcmp(s->devs[j], o->devs[k]))
					continue;
				snprintf(buf, size,
					 "dev %s is already allocated on line %u",
					 s->devs[j], o->line);
				return buf;
			}
		}
	}
	return NULL;
}

static const char *limit_clash(const struct ledger *ledger,
			       const struct limit_spec *l, char *buf,
			       size_t size)
{
	const struct limit_spec *o;
	size_t i;

	for (i = 0; i < ledger->nlimits; i++) {
		o = &ledger->limits[i];
		if (o->scope != l->scope || strcmp(o->name, l->name))
			continue;
		snprintf(buf, size, "a limit for %s %s is already on line %u",
			 label_words[l->scope - 1], l->name, o->line);
		return buf;
	}
	return NULL;
}

static int ledger_add(struct ledger *ledger, int kind,
		      const struct alloc_spec *s, const struct limit_spec *l)
{
	void *v;

	if (kind == LEDGER_ALLOC) {
		v = realloc(ledger->allocs,
			    (ledger->nallocs + 1) * sizeof(*s));
		if (!v)
			return -ENOMEM;
		ledger->allocs = v;
		ledger->allocs[ledger->nallocs++] = *s;
	} else {
		v = realloc(ledger->limits,
			    (ledger->nlimits + 1) * sizeof(*l));
		if (!v)
			return -ENOMEM;
		ledger->limits = v;
		ledger->limits[ledger->nlimits++] = *l;
	}
	return 0;
}

/* One line into the ledger @ctx; the message in @err when it is wrong */
static int ledger_take(void *ctx, char *line, unsigned int lineno, char *err,
		       size_t errsz)
{
	struct ledger *ledger = ctx;
	struct alloc_spec s;
	struct limit_spec l;
	const char *clash;
	int kind;

	kind = ledger_line_parse(line, &s, &l, err, errsz);
	if (kind <= LEDGER_NONE)
		return kind;
	s.line = lineno;
	l.line = lineno;
	clash = kind == LEDGER_ALLOC ? alloc_clash(ledger, &s, err, errsz) :
				       limit_clash(ledger, &l, err, errsz);
	if (clash)
		return -EINVAL;
	return ledger_add(ledger, kind, &s, &l);
}

/**
 * ledger_file_parse() - read a whole saved ledger
 * @fp: the file
 * @name: its name, for the messages
 * @ledger: filled with its allocations and limits; empty on error
 *
 * Every error is printed as "FILE:LINE: message", and the whole file is
 * read, so that one run shows every mistake. Two allocations with one id
 * or one device, or two limits for one label, are errors: the kernel
 * would refuse the second, after the first had changed the ledger.
 *
 * Return: 0, -EINVAL when the file has errors, or another negative errno
 * (printed) when it could not be read.
 */
int ledger_file_parse(FILE *fp, const char *name, struct ledger *ledger)
{
	int ret;

	memset(ledger, 0, sizeof(*ledger));
	ret = file_lines_read(fp, name, LEDGER_LINE_MAX, ledger_take, ledger);
	if (ret)
		ledger_free(ledger);
	return ret;
}

void ledger_free(struct ledger *ledger)
{
	free(ledger->allocs);
	free(ledger->limits);
	memset(ledger, 0, sizeof(*ledger));
}

/* Appends to a line being written; remembers that it ran out of room */
struct line_buf {
	char *buf;
	size_t size;
	size_t len;
	int err;
};

static void lb_printf(struct line_buf *lb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (lb->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(lb->buf + lb->len, lb->size - lb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= lb->size - lb->len)
		lb->err = -ENOSPC;
	else
		lb->len += n;
}

/* " KEY VALUE", the value quoted when ledger_split() needs it to be */
static void lb_word(struct line_buf *lb, const char *key, const char *value)
{
	const unsigned char *c;

	for (c = (const unsigned char *)value; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			lb->err = lb->err ?: -EINVAL;
	if (*value && !value[strcspn(value, " \t\r\n\v\f#\"\\")]) {
		lb_printf(lb, " %s %s", key, value);
		return;
	}
	lb_printf(lb, " %s \"", key);
	for (; *value; value++)
		lb_printf(lb, "%s%c", *value == '"' || *value == '\\' ?
			  "\\" : "", *value);
	lb_printf(lb, "\"");
}

/**
 * alloc_spec_format() - write an allocation as a ledger line
 * @s: the allocation
 * @buf: "alloc add owner UUID ...", without a newline
 * @size: size of @buf
 *
 * ledger_line_parse() reads the line back into the same allocation.
 *
 * Return: 0, -ENOSPC when @buf is too small, or -EINVAL when a label
 * holds a control character, which no line can.
 */
int alloc_spec_format(const struct alloc_spec *s, char *buf, size_t size)
{
	struct line_buf lb = { .buf = buf, .size = size };
	size_t i;

	lb_printf(&lb, "alloc add");
	lb_word(&lb, "owner", s->owner);
	if (s->name[0])
		lb_word(&lb, "name", s->name);
	for (i = 0; i < ALLOC_NR_LABELS; i++)
		if (s->labels[i][0])
			lb_word(&lb, label_words[i], s->labels[i]);
	for (i = 0; i < s->ndevs; i++)
		lb_printf(&lb, " dev %s%s", s->devs[i],
			  s->dev_typed[i] ? " typed" : "");
	if (s->count)
		lb_printf(&lb, " count %u", s->count);
	if (s->match[0])
		lb_printf(&lb, " match %s", s->match);
	if (s->has_numa)
		lb_printf(&lb, " numa %u", s->numa_node);
	if (s->numa_policy)
		lb_printf(&lb, " policy %s", numa_policy_name(s->numa_policy));
	if (s->detach_on_stop)
		lb_printf(&lb, " detach-on-stop");
	if (s->has_uid)
		lb_printf(&lb, " uid %u", s->uid);
	if (s->has_gid)
		lb_printf(&lb, " gid %u", s->gid);
	for (i = 0; i < s->nvgpus; i++)
		lb_printf(&lb, " vgpu %s%s", s->vgpus[i].uuid,
			  s->vgpus[i].made ? " made" : "");
	if (s->vgpu_type[0])
		lb_printf(&lb, " vgpu %s count %u", s->vgpu_type,
			  s->vgpu_count);
	if (s->has_id)
		lb_printf(&lb, " id %u", s->id);
	return lb.err;
}

/**
 * limit_spec_format() - write a limit as a ledger line
 * @l: the limit
 * @buf: "limit set SCOPE NAME max MAX", without a newline
 * @size: size of @buf
 *
 * Return: 0, -ENOSPC when @buf is too small, or -EINVAL as for
 * alloc_spec_format().
 */
int limit_spec_format(const struct limit_spec *l, char *buf, size_t size)
{
	struct line_buf lb = { .buf = buf, .size = size };

	if (!l->scope || l->scope > ALLOC_NR_LABELS)
		return -EINVAL;
	lb_printf(&lb, "limit set");
	lb_word(&lb, label_words[l->scope - 1], l->name);
	if (l->has_max)
		lb_printf(&lb, " max %u", l->max);
	else
		lb_printf(&lb, " max none");
	return lb.err;
}
