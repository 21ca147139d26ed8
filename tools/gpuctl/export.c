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
		"       gpuctl export nova\n"
		"       gpuctl export libvirt { ID | id ID | owner UUID | DEV | MDEV }\n"
		"       gpuctl [ -j ] export kubevirt\n"
		"       gpuctl export help\n"
		"cloudstack: the JSON CloudStack's KVM agent reads from gpudiscovery.sh\n"
		"nova: nova.conf's [pci] and [devices] options for this host\n"
		"libvirt: the <hostdev> elements of an allocation, device or mdev\n"
		"kubevirt: KubeVirt's permittedHostDevices, YAML (JSON with -j)\n");
}

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
	if (!strcmp(format, "cloudstack") || !strcmp(format, "nova") ||
	    !strcmp(format, "kubevirt"))
		return export_whole(g, a, format);
	fprintf(stderr,
		"gpuctl: export: unknown format \"%s\", try \"gpuctl export help\"\n",
		format);
	return EXIT_USAGE;
}
