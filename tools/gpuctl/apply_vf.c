// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl apply, vendor VFs: the "vf VF type ID" lines, after the rules
 * and the VF counts (the VFs exist then) and before the mdevs. A VF that
 * has the type already is left alone; one with another type is an error,
 * not changed: a VM may use it. One that is not there yet (its PF's
 * driver has not enabled it) is skipped, said on stderr; the udev rule
 * applies the file again when it binds to nvidia.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "gpuctl.h"
#include "json_print.h"
#include "vgpu_vf.h"

/**
 * apply_vf_types() - give the file's vendor VFs their types
 * @nl: an open socket
 * @file: the file's name, for the notes
 * @conf: the file
 * @set: gets the lines whose VF this run gave its type, in file order
 * @n_set: how many
 *
 * Return: NULL, or the line that failed (its reason printed); *@n_set
 * tells what was set before it.
 */
const struct vf_type_spec *apply_vf_types(struct nl_ctx *nl, const char *file,
					  const struct conf *conf,
					  const struct vf_type_spec **set,
					  size_t *n_set)
{
	const struct vf_type_spec *v;
	char id[16];
	size_t i;
	u32 cur;
	int ret;

	*n_set = 0;
	for (i = 0; i < conf->n_vf_types; i++) {
		v = &conf->vf_types[i];
		if (!vf_vgpu_capable(v->address)) {
			fprintf(stderr,
				"%s:%u: vendor VF %s is not there yet; its type is set when it appears\n",
				file, v->line, v->address);
			continue;
		}
		ret = vf_vgpu_current(v->address, &cur);
		if (ret) {
			fprintf(stderr, "gpuctl: apply: cannot read the type of %s: %s\n",
				v->address, strerror(-ret));
			return v;
		}
		if (cur == v->type)
			continue;
		if (cur) {
			fprintf(stderr, "gpuctl: apply: %s has type %u\n",
				v->address, cur);
			return v;
		}
		snprintf(id, sizeof(id), "%u", v->type);
		if (vgpu_vf_set(nl, v->address, id, "apply"))
			return v;
		set[(*n_set)++] = v;
	}
	return NULL;
}

/**
 * apply_vf_types_rollback() - take back the types this run gave, last first
 * @set: from apply_vf_types()
 * @n: how many
 */
void apply_vf_types_rollback(const struct vf_type_spec *const *set, size_t n)
{
	int ret;

	while (n-- > 0) {
		ret = vf_vgpu_write(set[n]->address, 0);
		if (ret)
			fprintf(stderr, "gpuctl: apply: cannot clear the type of %s: %s\n",
				set[n]->address, strerror(-ret));
	}
}

/**
 * apply_vf_types_print() - "vf_types" of apply's output
 * @set: from apply_vf_types()
 * @n: how many
 */
void apply_vf_types_print(const struct vf_type_spec *const *set, size_t n)
{
	size_t i;

	open_json_array(PRINT_JSON, "vf_types");
	for (i = 0; i < n; i++) {
		open_json_object(NULL);
		print_string(PRINT_ANY, "address", "vf %s ", set[i]->address);
		print_uint(PRINT_ANY, "type", "type %u", set[i]->type);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
}
