// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The config file (/etc/gpuctl/gpuctl.conf) as text: each line is a
 * command of the tool without the tool's verb, "reserve MATCH ..." as
 * "gpuctl reserve add" takes it, "dev DEV numvfs NUM" as "gpuctl dev set"
 * does, "vgpu PARENT type TYPE uuid UUID" as "gpuctl vgpu add", "vf VF
 * type ID" as "gpuctl vgpu set" (an id only: names have spaces). gpuctl
 * apply and its tests read files only through here.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "gpuctl.h"

/* A config line longer than this is an error, not two lines */
#define CONF_LINE_MAX 1024
#define CONF_WORDS_MAX 16

/*
 * Writes the message that the caller prefixes with FILE:LINE; a macro, so
 * that the compiler checks the format as snprintf()'s.
 */
#define conf_err(err, errsz, ...) (snprintf(err, errsz, __VA_ARGS__), -EINVAL)

/**
 * vfs_numvfs_parse() - read "numvfs NUM" after a PF's address
 * @a: the words after the address; all of them are used
 * @v: has the address; gets the number
 * @err: the reason, when @a is wrong
 * @errsz: size of @err
 *
 * Shared by "gpuctl dev set" and the config file's "dev" lines.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int vfs_numvfs_parse(struct args *a, struct vfs_spec *v, char *err,
		     size_t errsz)
{
	const char *arg;
	u32 n;

	arg = args_next(a);
	if (!arg || strcmp(arg, "numvfs"))
		return conf_err(err, errsz,
				"expected \"numvfs NUM\" after %s", v->address);
	arg = args_next(a);
	if (!arg || parse_u32(arg, &n) || n > UINT16_MAX)
		return conf_err(err, errsz,
				"numvfs takes a number from 0 to 65535");
	v->numvfs = n;
	arg = args_next(a);
	if (arg)
		return conf_err(err, errsz, "unexpected argument \"%s\"", arg);
	return 0;
}

/* "DEV numvfs NUM", all of @a */
static int conf_vfs_parse(struct args *a, struct vfs_spec *v, char *err,
			  size_t errsz)
{
	const char *arg;

	memset(v, 0, sizeof(*v));
	arg = args_next(a);
	if (!arg)
		return conf_err(err, errsz, "missing DEV");
	if (parse_pci_address(arg, v->address, sizeof(v->address)))
		return conf_err(err, errsz,
				"invalid PCI address \"%s\", expected DDDD:BB:DD.F or BB:DD.F",
				arg);
	return vfs_numvfs_parse(a, v, err, errsz);
}

/**
 * vgpu_spec_parse() - read "PARENT type TYPE [ uuid UUID ]"
 * @a: the words; all of them are used
 * @v: filled
 * @err: the reason, when @a is wrong
 * @errsz: size of @err
 *
 * Shared by "gpuctl vgpu add" and the config file's "vgpu" lines, which
 * also need the UUID. The keywords come in either order, each once.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int vgpu_spec_parse(struct args *a, struct vgpu_spec *v, char *err,
		    size_t errsz)
{
	const char *arg = args_next(a), *key, *val;

	memset(v, 0, sizeof(*v));
	if (!arg)
		return conf_err(err, errsz,
				"expected \"PARENT type TYPE [ uuid UUID ]\"");
	if (mdev_parent_name(arg, v->parent, sizeof(v->parent)))
		return conf_err(err, errsz, "invalid parent \"%s\"", arg);
	while ((key = args_next(a))) {
		val = args_next(a);
		if (strcmp(key, "type") && strcmp(key, "uuid"))
			return conf_err(err, errsz,
					"unknown keyword \"%s\", expected type or uuid",
					key);
		if (!val)
			return conf_err(err, errsz, "%s needs a value", key);
		if (!strcmp(key, "type") ? v->type[0] != '\0' : v->has_uuid)
			return conf_err(err, errsz, "%s given twice", key);
		if (!strcmp(key, "uuid")) {
			if (uuid_parse(val, v->uuid, sizeof(v->uuid)))
				return conf_err(err, errsz,
						"malformed UUID \"%s\"", val);
			v->has_uuid = true;
		} else if (mdev_parent_name(val, v->type, sizeof(v->type)) ||
			   strchr(val, ':')) {
			/* a type id is a directory name, as a parent's is */
			return conf_err(err, errsz, "invalid type \"%s\"", val);
		}
	}
	if (!v->type[0])
		return conf_err(err, errsz, "type TYPE is required");
	return 0;
}

/* "vgpu PARENT type TYPE uuid UUID": a boot must make the same instance */
static int conf_vgpu_parse(struct args *a, struct vgpu_spec *v, char *err,
			   size_t errsz)
{
	if (vgpu_spec_parse(a, v, err, errsz))
		return -EINVAL;
	if (!v->has_uuid)
		return conf_err(err, errsz,
				"uuid UUID is required, so that every boot makes the same instance");
	return 0;
}

/* "VF type ID": a vendor VF's type, by id, for every boot */
static int conf_vf_type_parse(struct args *a, struct vf_type_spec *v,
			      char *err, size_t errsz)
{
	const char *arg = args_next(a);
	unsigned long id;
	char *end;

	if (!arg)
		return conf_err(err, errsz, "missing VF");
	if (parse_pci_address(arg, v->address, sizeof(v->address)))
		return conf_err(err, errsz,
				"invalid PCI address \"%s\", expected DDDD:BB:DD.F or BB:DD.F",
				arg);
	arg = args_next(a);
	if (!arg || strcmp(arg, "type"))
		return conf_err(err, errsz, "expected \"type ID\" after %s",
				v->address);
	arg = args_next(a);
	errno = 0;
	id = arg && *arg >= '1' && *arg <= '9' ? strtoul(arg, &end, 10) : 0;
	if (!id || errno || *end || id > UINT32_MAX)
		return conf_err(err, errsz,
				"type takes a vGPU type id, a number from 1 to 4294967295");
	v->type = id;
	arg = args_next(a);
	if (arg)
		return conf_err(err, errsz, "unexpected argument \"%s\"", arg);
	return 0;
}

/**
 * conf_line_parse() - read one line of the config file
 * @line: the line, cut into words in place; "#" starts a comment
 * @cl: what the line declares, when it declares something
 * @err: the reason, when the line is wrong
 * @errsz: size of @err
 *
 * Return: enum conf_kind, or -EINVAL with @err set.
 */
int conf_line_parse(char *line, struct conf_line *cl, char *err,
		    size_t errsz)
{
	char *words[CONF_WORDS_MAX];
	struct args a = { .argv = words };
	char *tok, *save = NULL;
	const char *verb;

	line[strcspn(line, "#")] = '\0';
	for (tok = strtok_r(line, " \t\r\n\v\f", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		if (a.argc == CONF_WORDS_MAX)
			return conf_err(err, errsz, "too many words");
		words[a.argc++] = tok;
	}
	if (!a.argc)
		return CONF_BLANK;
	verb = args_next(&a);
	if (!strcmp(verb, "reserve"))
		return rule_args_parse(&a, &cl->rule, err, errsz) ? -EINVAL :
								      CONF_RULE;
	if (!strcmp(verb, "dev"))
		return conf_vfs_parse(&a, &cl->vfs, err, errsz) ? -EINVAL :
								   CONF_VFS;
	if (!strcmp(verb, "vgpu"))
		return conf_vgpu_parse(&a, &cl->vgpu, err, errsz) ? -EINVAL :
								     CONF_VGPU;
	if (!strcmp(verb, "vf"))
		return conf_vf_type_parse(&a, &cl->vf_type, err, errsz) ?
		       -EINVAL : CONF_VF_TYPE;
	return conf_err(err, errsz,
			"unknown keyword \"%s\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"",
			verb);
}

/*
 * One of the arrays of struct conf: entries of @size bytes, each with a
 * string at offset @key that no two entries share, and its line in the
 * file at offset @line. A second entry with a key is "@what KEY is already
 * on line N".
 */
struct conf_array {
	size_t size;
	size_t key;
	size_t line;
	const char *what;
};

static const struct conf_array conf_rules = {
	.size = sizeof(struct rule_spec),
	.key = offsetof(struct rule_spec, match),
	.line = offsetof(struct rule_spec, line),
	.what = "a rule for",
};

static const struct conf_array conf_vfs = {
	.size = sizeof(struct vfs_spec),
	.key = offsetof(struct vfs_spec, address),
	.line = offsetof(struct vfs_spec, line),
	.what = "numvfs for",
};

static const struct conf_array conf_vgpus = {
	.size = sizeof(struct vgpu_spec),
	.key = offsetof(struct vgpu_spec, uuid),
	.line = offsetof(struct vgpu_spec, line),
	.what = "vgpu",
};

static const struct conf_array conf_vf_types = {
	.size = sizeof(struct vf_type_spec),
	.key = offsetof(struct vf_type_spec, address),
	.line = offsetof(struct vf_type_spec, line),
	.what = "a type for",
};

/*
 * Appends a copy of @e to the array *@v of *@n entries of kind @a, unless
 * an entry there has its key. Return: 0, -EINVAL with @err set, or -ENOMEM
 * (*@v and *@n unchanged).
 */
static int conf_append(const struct conf_array *a, void **v, size_t *n,
		       const void *e, char *err, size_t errsz)
{
	const char *key = (const char *)e + a->key;
	char *p = *v;
	size_t i;

	for (i = 0; i < *n; i++, p += a->size) {
		if (!strcmp(p + a->key, key))
			return conf_err(err, errsz,
					"%s %s is already on line %u", a->what,
					key, *(const unsigned int *)(p + a->line));
	}
	p = realloc(*v, (*n + 1) * a->size);
	if (!p)
		return -ENOMEM;
	memcpy(p + *n * a->size, e, a->size);
	*v = p;
	(*n)++;
	return 0;
}

/* One line into the conf @ctx; the message in @err when it is wrong */
static int conf_take(void *ctx, char *line, unsigned int lineno, char *err,
		     size_t errsz)
{
	struct conf *conf = ctx;
	struct conf_line cl;

	switch (conf_line_parse(line, &cl, err, errsz)) {
	case CONF_BLANK:
		return 0;
	case CONF_RULE:
		cl.rule.line = lineno;
		return conf_append(&conf_rules, (void **)&conf->rules.v,
				   &conf->rules.n, &cl.rule, err, errsz);
	case CONF_VFS:
		cl.vfs.line = lineno;
		return conf_append(&conf_vfs, (void **)&conf->vfs,
				   &conf->n_vfs, &cl.vfs, err, errsz);
	case CONF_VGPU:
		cl.vgpu.line = lineno;
		return conf_append(&conf_vgpus, (void **)&conf->vgpus,
				   &conf->n_vgpus, &cl.vgpu, err, errsz);
	case CONF_VF_TYPE:
		cl.vf_type.line = lineno;
		return conf_append(&conf_vf_types, (void **)&conf->vf_types,
				   &conf->n_vf_types, &cl.vf_type, err, errsz);
	default:
		return -EINVAL;
	}
}

/**
 * conf_file_parse() - read a whole config file
 * @fp: the file
 * @name: its name, for the messages
 * @conf: filled with what the file declares; empty on error
 *
 * Every error is printed as "FILE:LINE: message", and the whole file is
 * read, so that one run shows every mistake. A second rule for the same
 * match, a second numvfs for the same device, a second vgpu with the
 * same UUID, or a second type for the same VF, is an error.
 *
 * Return: 0, -EINVAL when the file has errors, or another negative errno
 * (printed) when it could not be read.
 */
int conf_file_parse(FILE *fp, const char *name, struct conf *conf)
{
	int ret;

	memset(conf, 0, sizeof(*conf));
	ret = file_lines_read(fp, name, CONF_LINE_MAX, conf_take, conf);
	if (ret)
		conf_free(conf);
	return ret;
}

void conf_free(struct conf *conf)
{
	rule_set_free(&conf->rules);
	free(conf->vfs);
	conf->vfs = NULL;
	conf->n_vfs = 0;
	free(conf->vgpus);
	conf->vgpus = NULL;
	conf->n_vgpus = 0;
	free(conf->vf_types);
	conf->vf_types = NULL;
	conf->n_vf_types = 0;
}
