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

static void export_help(FILE *fp)
{
	fprintf(fp,
		"Usage: gpuctl export cloudstack\n"
		"       gpuctl export libvirt { ID | id ID | owner UUID | DEV | MDEV }\n"
		"       gpuctl [ -j ] export kubevirt\n"
		"       gpuctl export help\n"
		"cloudstack: the JSON CloudStack's KVM agent reads from gpudiscovery.sh\n"
		"libvirt: the <hostdev> elements of an allocation, device or mdev\n"
		"kubevirt: KubeVirt's permittedHostDevices, YAML (JSON with -j)\n");
}

static int export_kubevirt_cmd(struct gpuctl *g, struct args *a)
{
	struct nl_ctx *nl;
	int ret;

	if (!args_done(a, "export kubevirt"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	return export_kubevirt(nl, g->json, g->pretty) ? EXIT_KERNEL : EXIT_OK;
}

/**
 * cmd_export() - gpuctl export FORMAT
 * @g: the tool's state
 * @a: the words after "export"
 *
 * Return: the exit code.
 */
int cmd_export(struct gpuctl *g, struct args *a)
{
	const char *format = args_next(a);
	struct nl_ctx *nl;
	int ret;

	if (!format) {
		fprintf(stderr, "gpuctl: export: missing format, try \"gpuctl export help\"\n");
		return EXIT_USAGE;
	}
	if (!strcmp(format, "help")) {
		export_help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(format, "libvirt"))
		return cmd_export_libvirt(g, a);
	if (!strcmp(format, "kubevirt"))
		return export_kubevirt_cmd(g, a);
	if (strcmp(format, "cloudstack")) {
		fprintf(stderr,
			"gpuctl: export: unknown format \"%s\", try \"gpuctl export help\"\n",
			format);
		return EXIT_USAGE;
	}
	if (!args_done(a, "export cloudstack"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	return export_cloudstack(nl, g->pretty) ? EXIT_KERNEL : EXIT_OK;
}
