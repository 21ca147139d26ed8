// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * NVIDIA's vendor VFs as vGPUs: the types each PF's VFs can take
 * ("gpuctl vgpu types"), and setting or clearing one VF's type ("gpuctl
 * vgpu set VF type TYPE|none"). The tool writes the vendor driver's sysfs
 * (vf_sysfs.c says why); the module's ledger and VFIO watch say whether
 * the VF may change: never while it is allocated or open.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuctl.h"
#include "json_print.h"
#include "vf_sysfs.h"
#include "vgpu_vf.h"

/**
 * vgpu_vf_types_add() - count one VF's creatable types, per PF
 * @vf: the VF's address
 * @pf: its PF's address
 * @types: grown by the types not yet in it, one entry per PF and type;
 *	for free()
 * @n: how many @types has
 *
 * A type's available count is the number of the PF's VFs that list it
 * as creatable: VFs without a type, on a card with room for it. A
 * function that is no vendor VF, or went meanwhile, lists none.
 *
 * Return: 0 or a negative errno.
 */
int vgpu_vf_types_add(const char *vf, const char *pf,
		      struct vgpu_vf_type **types, size_t *n)
{
	struct vf_vgpu_type *listed;
	struct vgpu_vf_type *grown;
	size_t count, i, j;
	int ret;

	ret = vf_vgpu_creatable(vf, &listed, &count);
	if (ret == -ENOENT || ret == -ENODEV)
		return 0;
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		for (j = 0; j < *n; j++)
			if (!strcmp((*types)[j].pf, pf) &&
			    (*types)[j].type.id == listed[i].id)
				break;
		if (j < *n) {
			(*types)[j].available++;
			continue;
		}
		grown = realloc(*types, (*n + 1) * sizeof(**types));
		if (!grown) {
			free(listed);
			return -ENOMEM;
		}
		*types = grown;
		snprintf(grown[*n].pf, sizeof(grown[*n].pf), "%s", pf);
		grown[*n].type = listed[i];
		grown[*n].available = 1;
		(*n)++;
	}
	free(listed);
	return 0;
}

/**
 * vgpu_vf_types_read() - the types vendor VFs can take now, per PF
 * @pf: only this PF's VFs, or NULL for every PF
 * @types: a new array, for free(); NULL when @n is 0
 * @n: how many
 * @found: unless NULL, whether the host has a vendor VF (of @pf, when
 *	given), even one that lists no type now; set on error too, so that
 *	false then means the error came before any such VF
 *
 * Every vendor VF of sysfs counts, tracked or not (vgpu_vf_types_add()).
 *
 * Return: 0 or a negative errno.
 */
int vgpu_vf_types_read(const char *pf, struct vgpu_vf_type **types,
		       size_t *n, bool *found)
{
	char vf_pf[ADDR_BUFSZ];
	struct vf_addr *vfs;
	size_t nvfs, i;
	int ret;

	*types = NULL;
	*n = 0;
	if (found)
		*found = false;
	ret = vf_vgpu_list(&vfs, &nvfs);
	if (ret)
		return ret;
	for (i = 0; !ret && i < nvfs; i++) {
		ret = vf_vgpu_physfn(vfs[i].addr, vf_pf, sizeof(vf_pf));
		/* a VF that went meanwhile has no types */
		if (ret == -ENOENT || ret == -ENODEV) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (pf && strcmp(vf_pf, pf))
			continue;
		if (found)
			*found = true;
		ret = vgpu_vf_types_add(vfs[i].addr, vf_pf, types, n);
	}
	free(vfs);
	if (ret) {
		free(*types);
		*types = NULL;
		*n = 0;
	}
	return ret;
}

/**
 * vgpu_vf_type_print() - one PF's type on one line, or one JSON object
 * @t: the type
 *
 * The keys of an mdev type (vgpu_type.c), with null where a vendor VF
 * says nothing, and "kind" "vf".
 */
void vgpu_vf_type_print(const struct vgpu_vf_type *t)
{
	print_string(PRINT_ANY, "parent", "%s", t->pf);
	print_uint(PRINT_ANY, "type", " %u", t->type.id);
	print_string(PRINT_ANY, "name", " name \"%s\"", t->type.name);
	print_string(PRINT_ANY, "device_api", " api %s", "vfio-pci");
	print_uint(PRINT_ANY, "available_instances", " available %u",
		   t->available);
	print_null(PRINT_JSON, "max_instance", NULL, NULL);
	print_null(PRINT_JSON, "framebuffer_mb", NULL, NULL);
	print_null(PRINT_JSON, "num_heads", NULL, NULL);
	print_null(PRINT_JSON, "max_resolution", NULL, NULL);
	print_null(PRINT_JSON, "description", NULL, NULL);
	print_string(PRINT_ANY, "kind", " kind %s", "vf");
}

/* "1155 NVIDIA L40S-12Q, 1156 ..." or "none" */
static void vf_types_join(const struct vf_vgpu_type *t, size_t n, char *buf,
			  size_t size)
{
	size_t i, len = 0;

	snprintf(buf, size, "none");
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%u %s",
				i ? ", " : "", t[i].id, t[i].name);
}

/*
 * The id of the type named @name ("NVIDIA L40S-24Q") among those @vf
 * could take now. Return: 0, or the exit code after a message.
 */
static int vf_type_by_name(const char *vf, const char *name, u32 *id,
			   const char *cmd)
{
	struct vf_vgpu_type *types;
	char names[512];
	size_t n, i;
	int ret;

	ret = vf_vgpu_creatable(vf, &types, &n);
	if (ret) {
		fprintf(stderr, "gpuctl: %s: cannot read the types of %s: %s\n",
			cmd, vf, strerror(-ret));
		return EXIT_KERNEL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(types[i].name, name))
			break;
	if (i < n)
		*id = types[i].id;
	else
		vf_types_join(types, n, names, sizeof(names));
	free(types);
	if (i < n)
		return 0;
	fprintf(stderr, "gpuctl: %s: %s cannot take type \"%s\" now (creatable: %s)\n",
		cmd, vf, name, names);
	return EXIT_KERNEL;
}

/* "1156": a type id; Return: 0, or -EINVAL for anything else */
static int vf_type_id_parse(const char *s, u32 *id)
{
	unsigned long v;
	char *end;

	if (*s < '1' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*id = v;
	return 0;
}

/* Gives @vf back the type @cur it had, if any */
static void vf_restore(const char *vf, u32 cur, const char *cmd)
{
	if (cur && vf_vgpu_write(vf, cur))
		fprintf(stderr, "gpuctl: %s: cannot give %s its type %u back\n",
			cmd, vf, cur);
}

/**
 * vf_write_error() - explain the vendor driver's refusal to give a type
 * @cmd: "vgpu set", "apply" or "alloc add", for the message
 * @vf: the VF
 * @id: the type, 0 for none
 * @err: the negative errno of vf_vgpu_write()
 */
void vf_write_error(const char *cmd, const char *vf, u32 id, int err)
{
	switch (err) {
	case -EBUSY:
		fprintf(stderr, "gpuctl: %s: %s is open by a VFIO user\n", cmd,
			vf);
		break;
	case -EINVAL:
		fprintf(stderr,
			"gpuctl: %s: the card of %s has VFs of another type; it takes one type at a time\n",
			cmd, vf);
		break;
	case -ENOSPC:
		fprintf(stderr, "gpuctl: %s: the card of %s has no room for type %u\n",
			cmd, vf, id);
		break;
	case -ENODEV:
		fprintf(stderr, "gpuctl: %s: the driver of %s has no type %u\n",
			cmd, vf, id);
		break;
	default:
		if (id)
			fprintf(stderr, "gpuctl: %s: cannot give %s type %u: %s\n",
				cmd, vf, id, strerror(-err));
		else
			fprintf(stderr, "gpuctl: %s: cannot clear the type of %s: %s\n",
				cmd, vf, strerror(-err));
	}
}

/*
 * Whether the module lets @vf change now: not allocated, not open. A VF
 * it does not track cannot be allocated, and its driver refuses a type
 * change while it is open. Return: 0, or the exit code after a message.
 */
static int vf_change_allowed(struct nl_ctx *nl, const char *vf,
			     const char *cmd)
{
	struct dev_info d = {};
	int ret;

	ret = dev_get_quiet(nl, vf, &d);
	if (ret == -ENODEV)
		return 0;
	if (ret) {
		nl_perror(nl, ret);
		fprintf(stderr, "gpuctl: %s: cannot look up %s\n", cmd, vf);
		return EXIT_KERNEL;
	}
	if (d.has_allocation) {
		fprintf(stderr,
			"gpuctl: %s: %s is in allocation %u; delete the allocation first\n",
			cmd, vf, d.allocation);
		return EXIT_KERNEL;
	}
	if (d.has_holder) {
		fprintf(stderr, "gpuctl: %s: %s is open by a VFIO user; stop the VM first\n",
			cmd, vf);
		return EXIT_KERNEL;
	}
	return 0;
}

/**
 * vgpu_vf_set() - give a vendor VF a type, or take its type away
 * @nl: an open socket
 * @vf: the VF's canonical address
 * @type: an id, a name as creatable_vgpu_types lists it, or "none"
 * @cmd: "vgpu set", "apply" or "alloc add", for messages
 *
 * A VF that has another type is cleared first and given its old type
 * back if the new one fails: the VF ends with the new type or the old.
 *
 * Return: 0, or the exit code after the error has been printed.
 */
int vgpu_vf_set(struct nl_ctx *nl, const char *vf, const char *type,
		const char *cmd)
{
	bool cleared = false;
	u32 id, cur;
	int ret;

	if (!vf_vgpu_capable(vf)) {
		fprintf(stderr,
			"gpuctl: %s: %s is no vendor VF (no physfn and nvidia/current_vgpu_type)\n",
			cmd, vf);
		return EXIT_KERNEL;
	}
	ret = vf_change_allowed(nl, vf, cmd);
	if (ret)
		return ret;
	ret = vf_vgpu_current(vf, &cur);
	if (ret) {
		fprintf(stderr, "gpuctl: %s: cannot read the type of %s: %s\n",
			cmd, vf, strerror(-ret));
		return EXIT_KERNEL;
	}
	if (!strcmp(type, "none")) {
		id = 0;
	} else if (!vf_type_id_parse(type, &id)) {
		/* by id: the driver's own checks say what is wrong */
	} else if (!cur) {
		ret = vf_type_by_name(vf, type, &id, cmd);
		if (ret)
			return ret;
	} else {
		/* a VF with a type lists none: look with it cleared */
		ret = vf_vgpu_write(vf, 0);
		if (ret) {
			vf_write_error(cmd, vf, 0, ret);
			return EXIT_KERNEL;
		}
		cleared = true;
		ret = vf_type_by_name(vf, type, &id, cmd);
		if (ret) {
			vf_restore(vf, cur, cmd);
			return ret;
		}
	}
	if (id == cur) {
		if (cleared)
			vf_restore(vf, cur, cmd);
		return EXIT_OK;
	}

	if (cur && !cleared) {
		ret = vf_vgpu_write(vf, 0);
		if (ret) {
			vf_write_error(cmd, vf, 0, ret);
			return EXIT_KERNEL;
		}
	}
	if (!id)
		return EXIT_OK;
	ret = vf_vgpu_write(vf, id);
	if (!ret)
		return EXIT_OK;
	vf_write_error(cmd, vf, id, ret);
	vf_restore(vf, cur, cmd);
	return EXIT_KERNEL;
}

/*
 * gpuctl vgpu set VF type { TYPE | none }: then shows the VF as the
 * module lists it, or, untracked, its type.
 */
int cmd_vgpu_set(struct gpuctl *g, struct args *a)
{
	char vf[ADDR_BUFSZ];
	const char *arg, *type;
	struct nl_ctx *nl;
	u32 id;
	int ret;

	arg = args_next(a);
	if (!arg) {
		fprintf(stderr, "gpuctl: vgpu set: expected \"VF type TYPE\"\n");
		return EXIT_USAGE;
	}
	if (parse_pci_address(arg, vf, sizeof(vf))) {
		fprintf(stderr, "gpuctl: vgpu set: invalid VF address \"%s\"\n",
			arg);
		return EXIT_USAGE;
	}
	arg = args_next(a);
	type = args_next(a);
	if (!arg || strcmp(arg, "type") || !type || !*type) {
		fprintf(stderr,
			"gpuctl: vgpu set: expected \"type TYPE\" or \"type none\" after %s\n",
			vf);
		return EXIT_USAGE;
	}
	if (!args_done(a, "vgpu set"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	/* the module must be there to say whether the VF may change */
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	ret = vgpu_vf_set(nl, vf, type, "vgpu set");
	if (ret)
		return ret;
	if (!dev_show_quiet(nl, vf))
		return EXIT_OK;
	if (vf_vgpu_current(vf, &id))
		return EXIT_KERNEL;
	new_json_obj();
	open_json_object(NULL);
	print_string(PRINT_ANY, "address", "%s", vf);
	print_uint(PRINT_ANY, "vgpu_type", " vgpu_type %u", id);
	close_json_object();
	print_nl();
	delete_json_obj();
	return EXIT_OK;
}
