// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl: show the GPUs of this host and the members of their IOMMU
 * groups, as the gpuctl kernel module tracks them, and reserve GPUs for
 * virtual machines.
 *
 * main(), global options, object dispatch and the top-level help.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "gpuctl.h"
#include "pci_names.h"
#include "json_print.h"

#ifndef GPUCTL_VERSION
#define GPUCTL_VERSION "0.1"
#endif

const struct object *const gpuctl_objects[] = {
	&dev_object, &group_object, &vgpu_object, &reserve_object,
	&apply_object, &alloc_object, &limit_object, &monitor_object,
	&metrics_object, &export_object, &doctor_object, &module_object,
};

const size_t gpuctl_nobjects = ARRAY_SIZE(gpuctl_objects);

/* Where the help's lists wrap, as iproute2's do, to fit a terminal */
#define HELP_WIDTH 78

/* "OBJECT := { dev | group | ... }", wrapped under its first name */
static void help_objects(FILE *fp)
{
	const char *lead = "where  OBJECT := { ";
	int indent = strlen(lead), col = indent;
	size_t i;

	fputs(lead, fp);
	for (i = 0; i < gpuctl_nobjects; i++) {
		const char *name = gpuctl_objects[i]->name;
		int len = strlen(name) + 2;	/* " |" or " }" */

		if (i && col + 1 + len > HELP_WIDTH) {
			fprintf(fp, "\n%*s", indent, "");
			col = indent;
		} else if (i) {
			col += fprintf(fp, " ");
		}
		col += fprintf(fp, "%s %c", name,
			       i + 1 < gpuctl_nobjects ? '|' : '}');
	}
	fputc('\n', fp);
}

static void gpuctl_help(FILE *fp)
{
	size_t i;

	fprintf(fp,
		"Usage: gpuctl [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       gpuctl [ OPTIONS ]\n");
	help_objects(fp);
	fprintf(fp,
		"       OPTIONS := { -V[ersion] | -j[son] | -p[retty] | -h[elp] }\n"
		"Without an OBJECT, gpuctl runs \"dev show\".\n"
		"\n"
		"Objects (\"gpuctl OBJECT help\" lists an object's commands):\n");
	for (i = 0; i < gpuctl_nobjects; i++)
		fprintf(fp, "  %-9s %s\n", gpuctl_objects[i]->name,
			gpuctl_objects[i]->desc);
}

/* One line of a usage: "gpuctl [ -j ] OBJECT [ CMD ] [ ARGS ]" */
static void usage_line(FILE *fp, bool first, bool json, const char *object,
		       const char *cmd, const char *args)
{
	fprintf(fp, "%s gpuctl %s%s", first ? "Usage:" : "      ",
		json ? "[ -j ] " : "", object);
	if (cmd)
		fprintf(fp, " %s", cmd);
	if (args && *args)
		fprintf(fp, " %s", args);
	fputc('\n', fp);
}

/**
 * object_help() - print "gpuctl OBJECT help", from the object's table
 * @fp: where to
 * @o: the object
 *
 * A usage line for each command (or the object's own, without commands),
 * then "help", the commands' descriptions and the object's notes.
 */
void object_help(FILE *fp, const struct object *o)
{
	size_t i;

	if (!o->ncmds)
		usage_line(fp, true, o->json, o->name, NULL, o->usage);
	for (i = 0; i < o->ncmds; i++)
		usage_line(fp, !i, o->cmds[i].json, o->name, o->cmds[i].name,
			   o->cmds[i].usage);
	usage_line(fp, false, false, o->name, "help", NULL);
	for (i = 0; i < o->ncmds; i++)
		if (o->cmds[i].desc)
			fprintf(fp, "%s: %s\n", o->cmds[i].name,
				o->cmds[i].desc);
	if (o->notes)
		fputs(o->notes, fp);
}

/**
 * cmd_find() - the command of an object a word names
 * @o: the object
 * @word: the word
 *
 * Return: the command, or NULL when @o has none of that name.
 */
const struct cmd_entry *cmd_find(const struct object *o, const char *word)
{
	size_t i;

	for (i = 0; i < o->ncmds; i++)
		if (!strcmp(word, o->cmds[i].name))
			return &o->cmds[i];
	return NULL;
}

/**
 * cmd_help() - print one command's usage line, for its own help
 * @fp: where to
 * @o: its object
 * @cmd: its name, one of @o's commands
 */
void cmd_help(FILE *fp, const struct object *o, const char *cmd)
{
	const struct cmd_entry *c = cmd_find(o, cmd);

	if (c)
		usage_line(fp, true, c->json, o->name, c->name, c->usage);
}

/* "-j", "-json" and "--json" all name the same option */
static bool option_is(const char *arg, const char *shrt, const char *lng)
{
	if (arg[0] != '-')
		return false;
	arg += arg[1] == '-' ? 2 : 1;
	return !strcmp(arg, shrt) || !strcmp(arg, lng);
}

/**
 * gpuctl_nl() - the netlink socket, opened on first use
 * @g: the tool's state
 * @nl: set to the open socket
 *
 * Return: 0, or the exit code after the error has been printed.
 */
int gpuctl_nl(struct gpuctl *g, struct nl_ctx **nl)
{
	int ret;

	if (!g->nl_ok) {
		ret = nl_open(&g->nl);
		if (ret == -ENOENT) {
			fprintf(stderr,
				"gpuctl: kernel module not loaded (modprobe gpuctl)\n");
			return EXIT_NO_MODULE;
		}
		if (ret)
			return EXIT_KERNEL;
		g->nl_ok = true;
	}
	*nl = &g->nl;
	return EXIT_OK;
}

/**
 * cmd_dispatch() - run the command an object's first word names
 * @g: the tool's state
 * @a: the words after the object
 * @o: the object; its default command runs when no word is left
 *
 * Return: the exit code.
 */
int cmd_dispatch(struct gpuctl *g, struct args *a, const struct object *o)
{
	const char *word = args_next(a);
	const struct cmd_entry *c;

	if (!word)
		return cmd_find(o, o->dflt)->fn(g, a);
	if (!strcmp(word, "help")) {
		object_help(stdout, o);
		return EXIT_OK;
	}
	c = cmd_find(o, word);
	if (c)
		return c->fn(g, a);

	fprintf(stderr,
		"gpuctl: %s: unknown command \"%s\", try \"gpuctl %s help\"\n",
		o->name, word, o->name);
	return EXIT_USAGE;
}

/**
 * args_done() - check that a command used every word
 * @a: the words left
 * @cmd: the command, for the message ("dev show")
 *
 * Return: true when none is left; otherwise says which one is unexpected.
 */
bool args_done(const struct args *a, const char *cmd)
{
	if (args_end(a))
		return true;
	fprintf(stderr, "gpuctl: %s: unexpected argument \"%s\"\n", cmd,
		args_peek(a));
	return false;
}

/**
 * show_by_id() - read the objects "OBJECT show [ ID ]" asks for
 * @g: the tool's state
 * @a: the words after "show"
 * @s: the object's command, messages and attributes
 * @list: an empty list of the object, filled
 * @collected: set when @list was filled and is for the caller to print
 *
 * Dumps every object, or gets the one ID names (a number, or a UUID with
 * @s->by_uuid); "help" prints the object's help instead.
 *
 * Return: the exit code.
 */
int show_by_id(struct gpuctl *g, struct args *a, const struct show_by_id *s,
	       struct nl_list *list, bool *collected)
{
	char uuid[GPUCTL_UUID_LEN + 1];
	struct nlmsghdr *nlh;
	struct nl_ctx *nl;
	bool one = false;
	const char *arg;
	u32 id = 0;
	int ret;

	*collected = false;
	arg = args_next(a);
	if (arg) {
		if (!strcmp(arg, "help")) {
			object_help(stdout, s->object);
			return EXIT_OK;
		}
		if (s->by_uuid && uuid_parse(arg, uuid, sizeof(uuid))) {
			fprintf(stderr, "gpuctl: %s: malformed UUID \"%s\"\n",
				s->cmd, arg);
			return EXIT_USAGE;
		}
		if (!s->by_uuid && parse_u32(arg, &id)) {
			fprintf(stderr,
				"gpuctl: invalid %s \"%s\", expected a number\n",
				s->id_name, arg);
			return EXIT_USAGE;
		}
		one = true;
	}
	if (!args_done(a, s->cmd))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	nlh = nl_msg_start(nl, s->nl_cmd, !one);
	if (one && s->by_uuid)
		mnl_attr_put_strz(nlh, s->id_attr, uuid);
	else if (one)
		mnl_attr_put_u32(nlh, s->id_attr, id);
	if (nl_collect(nl, nlh, list)) {
		if (one && s->by_uuid)
			fprintf(stderr, "gpuctl: cannot show %s %s\n",
				s->one_name, uuid);
		else if (one)
			fprintf(stderr, "gpuctl: cannot show %s %u\n",
				s->one_name, id);
		return EXIT_KERNEL;
	}
	*collected = true;
	return EXIT_OK;
}

static int dispatch(struct gpuctl *g, struct args *a)
{
	const char *obj;
	size_t i;

	/* a bare "gpuctl" is "gpuctl dev show", as "wg" is "wg show" */
	if (args_end(a))
		return cmd_dispatch(g, a, &dev_object);

	obj = args_next(a);
	if (!strcmp(obj, "help")) {
		gpuctl_help(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < gpuctl_nobjects; i++) {
		const struct object *o = gpuctl_objects[i];

		if (strcmp(obj, o->name))
			continue;
		return o->run ? o->run(g, a) : cmd_dispatch(g, a, o);
	}

	fprintf(stderr, "gpuctl: unknown object \"%s\", try \"gpuctl help\"\n",
		obj);
	return EXIT_USAGE;
}

/**
 * gpuctl_run() - run one gpuctl command line
 * @argc: number of words in @argv, including the program name
 * @argv: the command line
 * @dry_run: stop after parsing, before any netlink traffic
 *
 * Return: the exit code.
 */
int gpuctl_run(int argc, char **argv, bool dry_run)
{
	struct gpuctl g = { .dry_run = dry_run };
	struct args a = { .argc = argc - 1, .argv = argv + 1 };
	const char *opt;
	int ret;

	while ((opt = args_peek(&a)) && opt[0] == '-') {
		if (option_is(opt, "V", "Version")) {
			printf("gpuctl version %s\n", GPUCTL_VERSION);
			return EXIT_OK;
		}
		if (option_is(opt, "h", "help")) {
			gpuctl_help(stdout);
			return EXIT_OK;
		}
		if (option_is(opt, "j", "json")) {
			g.json = true;
		} else if (option_is(opt, "p", "pretty")) {
			g.pretty = true;
		} else {
			fprintf(stderr,
				"gpuctl: unknown option \"%s\", try \"gpuctl help\"\n",
				opt);
			return EXIT_USAGE;
		}
		args_next(&a);
	}

	json_print_init(stdout, g.json, g.pretty);
	ret = dispatch(&g, &a);
	if (g.nl_ok)
		nl_close(&g.nl);
	pci_names_cleanup();
	return ret;
}

#ifndef GPUCTL_NO_MAIN
int main(int argc, char **argv)
{
	return gpuctl_run(argc, argv, false);
}
#endif
