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
#include "doctor.h"
#include "export.h"
#include "metrics.h"

#ifndef GPUCTL_VERSION
#define GPUCTL_VERSION "0.1"
#endif

static void gpuctl_help(FILE *fp)
{
	fprintf(fp,
		"Usage: gpuctl [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       gpuctl [ OPTIONS ]\n"
		"where  OBJECT := { dev | group | vgpu | reserve | apply |\n"
		"                  alloc | limit | monitor | doctor | module }\n"
		"       OPTIONS := { -V[ersion] | -j[son] | -p[retty] | -h[elp] }\n"
		"Without an OBJECT, gpuctl runs \"dev show\".\n");
}

static const struct {
	const char *name;
	int (*cmd)(struct gpuctl *g, struct args *a);
} objects[] = {
	{ "dev", cmd_dev },
	{ "group", cmd_group },
	{ "vgpu", cmd_vgpu },
	{ "reserve", cmd_reserve },
	{ "apply", cmd_apply },
	{ "alloc", cmd_alloc },
	{ "limit", cmd_limit },
	{ "monitor", cmd_monitor },
	{ "metrics", cmd_metrics },
	{ "export", cmd_export },
	{ "doctor", cmd_doctor },
	{ "module", cmd_module },
};

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
 * @object: the object's name, for messages
 * @cmds: its commands; the first one runs when no word is left
 * @n: number of @cmds
 * @help: prints the object's help
 *
 * Return: the exit code.
 */
int cmd_dispatch(struct gpuctl *g, struct args *a, const char *object,
		 const struct cmd_entry *cmds, size_t n, void (*help)(FILE *fp))
{
	const char *word = args_next(a);
	size_t i;

	if (!word)
		return cmds[0].fn(g, a);
	if (!strcmp(word, "help")) {
		help(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(word, cmds[i].name))
			return cmds[i].fn(g, a);

	fprintf(stderr,
		"gpuctl: %s: unknown command \"%s\", try \"gpuctl %s help\"\n",
		object, word, object);
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
			s->help(stdout);
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
		return cmd_dev(g, a);

	obj = args_next(a);
	if (!strcmp(obj, "help")) {
		gpuctl_help(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < ARRAY_SIZE(objects); i++)
		if (!strcmp(obj, objects[i].name))
			return objects[i].cmd(g, a);

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
