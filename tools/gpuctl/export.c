// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export FORMAT: which cloud stack's format to print. Each format
 * has a file of its own; this one only reads the command line.
 */

#include <stdio.h>
#include <string.h>

#include "export.h"
#include "gpuctl.h"

/* The formats that take no argument: one view of the host, printed */
static int export_whole(struct gpuctl *g, struct args *a, const char *format)
{
	char cmd[32];
	struct nl_ctx *nl;
	int ret;

	snprintf(cmd, sizeof(cmd), "export %s", format);
	if (!args_done(a, cmd))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	if (!strcmp(format, "cloudstack"))
		ret = export_cloudstack(nl, g->pretty);
	else if (!strcmp(format, "nova"))
		ret = export_nova(nl);
	else
		ret = export_kubevirt(nl, g->json, g->pretty);
	return ret ? EXIT_KERNEL : EXIT_OK;
}

static int cmd_export_cloudstack(struct gpuctl *g, struct args *a)
{
	return export_whole(g, a, "cloudstack");
}

static int cmd_export_nova(struct gpuctl *g, struct args *a)
{
	return export_whole(g, a, "nova");
}

static int cmd_export_kubevirt(struct gpuctl *g, struct args *a)
{
	return export_whole(g, a, "kubevirt");
}

/**
 * cmd_export() - gpuctl export FORMAT
 * @g: the tool's state
 * @a: the words after "export"
 *
 * Not cmd_dispatch(): there is no default format, and its messages say
 * "format".
 *
 * Return: the exit code.
 */
static int cmd_export(struct gpuctl *g, struct args *a)
{
	const char *format = args_next(a);
	const struct cmd_entry *c;

	if (!format) {
		fprintf(stderr, "gpuctl: export: missing format, try \"gpuctl export help\"\n");
		return EXIT_USAGE;
	}
	if (!strcmp(format, "help")) {
		object_help(stdout, &export_object);
		return EXIT_OK;
	}
	c = cmd_find(&export_object, format);
	if (c)
		return c->fn(g, a);
	fprintf(stderr,
		"gpuctl: export: unknown format \"%s\", try \"gpuctl export help\"\n",
		format);
	return EXIT_USAGE;
}

static const struct cmd_entry export_cmds[] = {
	{ .name = "cloudstack", .fn = cmd_export_cloudstack,
	  .desc = "the JSON CloudStack's KVM agent reads from gpudiscovery.sh" },
	{ .name = "nova", .fn = cmd_export_nova,
	  .desc = "nova.conf's [pci] and [devices] options for this host" },
	{ .name = "libvirt", .fn = cmd_export_libvirt,
	  .usage = "{ ID | id ID | owner UUID | DEV | MDEV }",
	  .desc = "the <hostdev> elements of an allocation, device or mdev" },
	{ .name = "kubevirt", .fn = cmd_export_kubevirt, .json = true,
	  .desc = "KubeVirt's permittedHostDevices, YAML (JSON with -j)" },
};

const struct object export_object = {
	.name = "export",
	.desc = "the module's view in the formats cloud stacks read",
	.run = cmd_export,
	.cmds = export_cmds,
	.ncmds = ARRAY_SIZE(export_cmds),
};
