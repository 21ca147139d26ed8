// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl metrics: the module's view in the Prometheus text exposition
 * format, for the node exporter's textfile collector. Every value is read
 * afresh from the module and sysfs. No sample carries a timestamp, since
 * the collector refuses a file that has one. A file is written under a
 * temporary name that the collector skips (it reads only *.prom) and
 * renamed over the old one, so that a scrape never reads half of it.
 * Families that stay the same shape have every label combination, zeros
 * included, so that a series does not vanish when its count drops to 0.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "metrics.h"
#include "migration.h"
#include "vgpu_vf.h"
#include "view.h"

/* A label value, with backslash, double quote and newline escaped */
static void label_put(FILE *fp, const char *name, const char *value, bool last)
{
	fprintf(fp, "%s=\"", name);
	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			fputc('\\', fp);
		if (*value == '\n')
			fputs("\\n", fp);
		else
			fputc(*value, fp);
	}
	fputs(last ? "\"}" : "\",", fp);
}

static void family_put(FILE *fp, const char *name, const char *type,
		       const char *help)
{
	fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void devices_put(FILE *fp, const struct nl_list *devs)
{
	const struct dev_info *d = devs->v;
	char pid[16];
	u32 role, state, n;
	size_t i;

	family_put(fp, "gpuctl_devices", "gauge",
		   "Devices the module tracks, by role and reservation state.");
	for (role = 1; role <= GPUCTL_DEV_ROLE_MAX; role++)
		for (state = 1; state <= GPUCTL_DEV_STATE_MAX; state++) {
			for (n = 0, i = 0; i < devs->n; i++)
				n += d[i].role == role && d[i].state == state;
			fputs("gpuctl_devices{", fp);
			label_put(fp, "role", role_name(role), false);
			label_put(fp, "state", state_name(state), true);
			fprintf(fp, " %u\n", n);
		}

	family_put(fp, "gpuctl_device_vfio_open", "gauge",
		   "1 while a VFIO user has the device open, else 0.");
	for (i = 0; i < devs->n; i++) {
		fputs("gpuctl_device_vfio_open{", fp);
		label_put(fp, "address", d[i].address, false);
		label_put(fp, "role", role_name(d[i].role), true);
		fprintf(fp, " %d\n", d[i].has_holder);
	}

	/* the module's holder, or for root the one found in /proc */
	family_put(fp, "gpuctl_device_holder_info", "gauge",
		   "The process that has the device open: pid, comm, QEMU's guest name, and whether it is the allocation's VM.");
	for (i = 0; i < devs->n; i++) {
		if (!d[i].has_holder)
			continue;
		snprintf(pid, sizeof(pid), "%u", d[i].holder_pid);
		fputs("gpuctl_device_holder_info{", fp);
		label_put(fp, "address", d[i].address, false);
		label_put(fp, "pid", d[i].holder_pid ? pid : "", false);
		label_put(fp, "comm", d[i].has_holder_comm ? d[i].holder_comm : "",
			  false);
		label_put(fp, "vm", d[i].holder_vm, false);
		label_put(fp, "match", open_match_name(d[i].open_match), true);
		fputs(" 1\n", fp);
	}
}

static void allocs_put(FILE *fp, const struct nl_list *allocs)
{
	const struct alloc_info *al = allocs->v;
	u32 state, n, gpus;
	size_t i;

	family_put(fp, "gpuctl_allocations", "gauge",
		   "Allocations in the ledger, by state.");
	for (state = 1; state <= GPUCTL_ALLOC_STATE_MAX; state++) {
		for (n = 0, i = 0; i < allocs->n; i++)
			n += al[i].state == state;
		fputs("gpuctl_allocations{", fp);
		label_put(fp, "state", alloc_state_name(state), true);
		fprintf(fp, " %u\n", n);
	}
	family_put(fp, "gpuctl_allocated_gpus", "gauge",
		   "GPUs the allocations hold, each vGPU and VF counted as one, by allocation state.");
	for (state = 1; state <= GPUCTL_ALLOC_STATE_MAX; state++) {
		for (gpus = 0, i = 0; i < allocs->n; i++)
			if (al[i].state == state)
				gpus += al[i].gpus;
		fputs("gpuctl_allocated_gpus{", fp);
		label_put(fp, "state", alloc_state_name(state), true);
		fprintf(fp, " %u\n", gpus);
	}
}

static void limits_put(FILE *fp, const struct nl_list *limits)
{
	const struct limit_info *l = limits->v;
	size_t i;

	family_put(fp, "gpuctl_limit_used_gpus", "gauge",
		   "GPUs a tenant's allocations hold, per limit.");
	for (i = 0; i < limits->n; i++) {
		fputs("gpuctl_limit_used_gpus{", fp);
		label_put(fp, "scope", limit_scope_name(l[i].scope), false);
		label_put(fp, "name", l[i].name, true);
		fprintf(fp, " %u\n", l[i].used);
	}
	family_put(fp, "gpuctl_limit_max_gpus", "gauge",
		   "The most GPUs a tenant's allocations may hold, per limit that has one.");
	for (i = 0; i < limits->n; i++) {
		if (!l[i].has_max)
			continue;
		fputs("gpuctl_limit_max_gpus{", fp);
		label_put(fp, "scope", limit_scope_name(l[i].scope), false);
		label_put(fp, "name", l[i].name, true);
		fprintf(fp, " %u\n", l[i].max);
	}
}

/* Instances of mdev type @type on @parent that the module knows */
static u32 mdev_instances(const struct nl_list *vgpus, const char *parent,
			  const char *type)
{
	const struct vgpu_info *v = vgpus->v;
	size_t i;
	u32 n = 0;

	for (i = 0; i < vgpus->n; i++)
		n += !strcmp(v[i].parent, parent) && !strcmp(v[i].type, type);
	return n;
}

/* Vendor VFs of @pf that have type @id now */
/* Whether @d is a vendor VF of @pf that has type @id */
static bool vf_typed_as(const struct dev_info *d, const char *pf, u32 id)
{
	return d->has_vgpu_type && d->vgpu_type == id && dev_is_vf_of(d, pf);
}

static u32 vf_instances(const struct nl_list *devs, const char *pf, u32 id)
{
	const struct dev_info *d = devs->v;
	size_t i;
	u32 n = 0;

	for (i = 0; i < devs->n; i++)
		n += vf_typed_as(&d[i], pf, id);
	return n;
}

static void vgpu_labels_put(FILE *fp, const char *kind, const char *parent,
			    const char *type, const char *name)
{
	label_put(fp, "kind", kind, false);
	label_put(fp, "parent", parent, false);
	label_put(fp, "type", type, false);
	label_put(fp, "name", name, true);
}

static void vgpus_put(FILE *fp, const struct view *s)
{
	const struct dev_info *d = s->devs.v;
	char id[16];
	size_t i, j;

	family_put(fp, "gpuctl_vgpu_available", "gauge",
		   "vGPUs of a type that can be made now: an mdev type's available_instances, or the vendor VFs of a PF that can take the type.");
	for (i = 0; i < s->ntypes; i++) {
		fputs("gpuctl_vgpu_available{", fp);
		vgpu_labels_put(fp, "mdev", s->types[i].parent, s->types[i].id,
				s->types[i].name);
		fprintf(fp, " %u\n", s->types[i].available);
	}
	for (i = 0; i < s->nvf_types; i++) {
		snprintf(id, sizeof(id), "%u", s->vf_types[i].type.id);
		fputs("gpuctl_vgpu_available{", fp);
		vgpu_labels_put(fp, "vf", s->vf_types[i].pf, id,
				s->vf_types[i].type.name);
		fprintf(fp, " %u\n", s->vf_types[i].available);
	}

	family_put(fp, "gpuctl_vgpu_instances", "gauge",
		   "vGPUs of a type that exist: mdevs, or vendor VFs that have the type.");
	for (i = 0; i < s->ntypes; i++) {
		fputs("gpuctl_vgpu_instances{", fp);
		vgpu_labels_put(fp, "mdev", s->types[i].parent, s->types[i].id,
				s->types[i].name);
		fprintf(fp, " %u\n", mdev_instances(&s->vgpus,
						    s->types[i].parent,
						    s->types[i].id));
	}
	/*
	 * A card full of one type lists it on no VF, so the typed VFs are
	 * counted from the devices, once per PF and type, named when a VF
	 * still lists the type.
	 */
	for (i = 0; i < s->devs.n; i++) {
		const char *name = "";
		bool seen = false;

		if (!d[i].has_vgpu_type || !d[i].vgpu_type || !d[i].has_physfn)
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = vf_typed_as(&d[j], d[i].physfn, d[i].vgpu_type);
		if (seen)
			continue;
		for (j = 0; j < s->nvf_types; j++)
			if (s->vf_types[j].type.id == d[i].vgpu_type &&
			    !strcmp(s->vf_types[j].pf, d[i].physfn))
				name = s->vf_types[j].type.name;
		snprintf(id, sizeof(id), "%u", d[i].vgpu_type);
		fputs("gpuctl_vgpu_instances{", fp);
		vgpu_labels_put(fp, "vf", d[i].physfn, id, name);
		fprintf(fp, " %u\n",
			vf_instances(&s->devs, d[i].physfn, d[i].vgpu_type));
	}
}

static void migration_labels_put(FILE *fp, const char *kind,
				 const char *dev, bool known, u32 caps,
				 const char *compat)
{
	char names[64];

	migration_caps_str(caps, names, sizeof(names));
	fputs("gpuctl_migration_info{", fp);
	label_put(fp, "kind", kind, false);
	label_put(fp, "device", dev, false);
	label_put(fp, "capabilities", names, false);
	label_put(fp, "live_migratable",
		  migration_live(known, caps) ? "true" : "false", false);
	label_put(fp, "compat", compat, true);
	fputs(" 1\n", fp);
}

/*
 * Live migration as the host sees it: each device and mdev instance on a
 * VFIO driver with its capabilities and compatibility key, and whether
 * each allocation's VM could migrate with all it is given.
 */
static void migration_put(FILE *fp, struct view *s)
{
	const struct dev_info *d = s->devs.v;
	const struct vgpu_info *v = s->vgpus.v;
	struct alloc_info *al = s->allocs.v;
	char key[MIGRATION_COMPAT_BUFSZ], id[16];
	size_t i;

	family_put(fp, "gpuctl_migration_info", "gauge",
		   "Each device and mdev instance on a VFIO driver: its VFIO migration capabilities, whether its state can move (stop-copy), and its compatibility key.");
	for (i = 0; i < s->devs.n; i++)
		if (dev_migration_compat(&d[i], key, sizeof(key)))
			migration_labels_put(fp, "pci", d[i].address, true,
					     d[i].migration, key);
	for (i = 0; i < s->vgpus.n; i++)
		if (vgpu_migration_compat(&v[i], key, sizeof(key)))
			migration_labels_put(fp, "mdev", v[i].uuid, true,
					     v[i].migration, key);

	family_put(fp, "gpuctl_allocation_live_migratable", "gauge",
		   "1 when every device and vGPU of the allocation can move its state, else 0.");
	for (i = 0; i < s->allocs.n; i++) {
		if (alloc_migration_read(&al[i], &s->devs, &s->vgpus))
			continue;
		snprintf(id, sizeof(id), "%u", al[i].id);
		fputs("gpuctl_allocation_live_migratable{", fp);
		label_put(fp, "id", id, false);
		label_put(fp, "name", al[i].name, true);
		fprintf(fp, " %d\n", !al[i].nblockers);
	}
}

/**
 * metrics_print() - write every metric to a stream
 * @nl: an open socket
 * @fp: where
 * @events_lost: for gpuctl monitor, how often its socket overflowed; NULL
 *	otherwise, and the family is left out
 *
 * Return: 0 or a negative errno, which has been printed; nothing is
 * written then.
 */
int metrics_print(struct nl_ctx *nl, FILE *fp, const uint64_t *events_lost)
{
	struct view s;
	int ret;

	ret = view_read(nl, &s, "metrics");
	if (ret)
		return ret;
	devices_put(fp, &s.devs);
	allocs_put(fp, &s.allocs);
	limits_put(fp, &s.limits);
	vgpus_put(fp, &s);
	migration_put(fp, &s);
	if (events_lost) {
		family_put(fp, "gpuctl_monitor_events_lost_total", "counter",
			   "How often gpuctl monitor's socket overflowed and events were lost.");
		fprintf(fp, "gpuctl_monitor_events_lost_total %llu\n",
			(unsigned long long)*events_lost);
	}
	view_free(&s);
	return 0;
}

/**
 * metrics_write() - replace a file with every metric, in one rename
 * @nl: an open socket
 * @path: the file; the collector reads it only if it ends in ".prom"
 * @events_lost: as for metrics_print()
 *
 * Return: 0 or a negative errno, which has been printed; @path is left
 * as it was then.
 */
int metrics_write(struct nl_ctx *nl, const char *path, const uint64_t *events_lost)
{
	char tmp[PATH_MAX];
	FILE *fp;
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		fprintf(stderr, "gpuctl: metrics: %s: name too long\n", path);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (!fp) {
		ret = -errno;
		fprintf(stderr, "gpuctl: metrics: %s: %s\n", tmp, strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	ret = metrics_print(nl, fp, events_lost);
	if (fflush(fp) || ferror(fp)) {
		ret = -errno;
		fprintf(stderr, "gpuctl: metrics: %s: %s\n", tmp, strerror(-ret));
	}
	fclose(fp);
	if (!ret && rename(tmp, path)) {
		ret = -errno;
		fprintf(stderr, "gpuctl: metrics: %s: %s\n", path, strerror(-ret));
	}
	if (ret)
		unlink(tmp);
	return ret;
}

/**
 * cmd_metrics() - gpuctl metrics [ FILE ]
 * @g: the tool's state
 * @a: the words after "metrics"
 *
 * Return: the exit code.
 */
static int cmd_metrics(struct gpuctl *g, struct args *a)
{
	const char *file = args_next(a);
	struct nl_ctx *nl;
	int ret;

	if (file && !strcmp(file, "help")) {
		object_help(stdout, &metrics_object);
		return EXIT_OK;
	}
	if (!args_done(a, "metrics"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	ret = file ? metrics_write(nl, file, NULL) :
		     metrics_print(nl, stdout, NULL);
	return ret ? EXIT_KERNEL : EXIT_OK;
}

const struct object metrics_object = {
	.name = "metrics",
	.desc = "the module's view in the Prometheus text format",
	.run = cmd_metrics,
	.usage = "[ FILE ]",
	.notes = "Prints the Prometheus text format, or replaces FILE with it in one rename\n"
		 "(name it *.prom in the node exporter's textfile directory).\n"
		 "gpuctl monitor --metrics DIR keeps DIR/gpuctl.prom current.\n",
};
