// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * NVIDIA's vendor VFs (Ada, Hopper and Blackwell with vGPU 17+): each VF
 * of a PF on the "nvidia" driver has a sysfs group nvidia/ whose
 * current_vgpu_type ("%d", 0 for none) gives the VF a vGPU type when an
 * id is written and takes it away when 0 is, and whose
 * creatable_vgpu_types lists, under a header line, the "ID : name" of the
 * types the VF could take now (none once it has one).
 *
 * A vendor VF is known by those files and its physfn link, never by
 * vendor id. Like the mdev core's files (mdev_sysfs.c), the tool reads
 * and writes these itself: they belong to the vendor's driver, which
 * exports no call, and the module never writes another driver's objects.
 * Type writes make no uevent, so they are read afresh at every call.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mdev_sysfs.h"
#include "vf_sysfs.h"

#define VF_PATH_BUFSZ 256
/* Every type of a card on its own line, with room to spare */
#define VF_TYPES_TEXT_BUFSZ 8192

static int vf_path(char *buf, const char *addr, const char *file)
{
	int len = snprintf(buf, VF_PATH_BUFSZ, "%s/bus/pci/devices/%s/%s",
			   mdev_sysfs_root, addr, file);

	return len < 0 || len >= VF_PATH_BUFSZ ? -ENAMETOOLONG : 0;
}

/**
 * vf_vgpu_capable() - whether a function is a vendor VF
 * @addr: its canonical address
 *
 * Return: true when it has a physfn link and nvidia/current_vgpu_type.
 */
bool vf_vgpu_capable(const char *addr)
{
	char path[VF_PATH_BUFSZ];

	if (vf_path(path, addr, "physfn") || access(path, F_OK))
		return false;
	return !vf_path(path, addr, "nvidia/current_vgpu_type") &&
	       !access(path, F_OK);
}

/**
 * vf_vgpu_current() - a vendor VF's vGPU type now
 * @addr: its canonical address
 * @id: the type's id, 0 for none
 *
 * Return: 0 or a negative errno (-ENOENT: no vendor VF).
 */
int vf_vgpu_current(const char *addr, u32 *id)
{
	char path[VF_PATH_BUFSZ], buf[32], *end;
	unsigned long v;
	int ret;

	ret = vf_path(path, addr, "nvidia/current_vgpu_type");
	if (!ret)
		ret = sysfs_read_text(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || *end || v > UINT32_MAX)
		return -EINVAL;
	*id = v;
	return 0;
}

/* "1156  : NVIDIA L40S-24Q" into @t; the header and blank lines are not */
static bool vf_type_line(char *line, struct vf_vgpu_type *t)
{
	char *end, *name;
	unsigned long v;
	size_t len;

	while (isspace((unsigned char)*line))
		line++;
	if (!isdigit((unsigned char)*line))
		return false;
	errno = 0;
	v = strtoul(line, &end, 10);
	if (errno || v > UINT32_MAX)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end != ':')
		return false;
	name = end + 1;
	while (isspace((unsigned char)*name))
		name++;
	len = strlen(name);
	while (len && isspace((unsigned char)name[len - 1]))
		name[--len] = '\0';
	if (!len || len >= sizeof(t->name))
		return false;
	t->id = v;
	memcpy(t->name, name, len + 1);
	return true;
}

/**
 * vf_vgpu_types_parse() - the types of a creatable_vgpu_types text
 * @text: the file's text; changed
 * @types: a new array, for free(); NULL when @n is 0
 * @n: how many
 *
 * As NVIDIA's KubeVirt plugin reads it: lines "ID : name", the header
 * ("ID    : vGPU Name") and anything else skipped.
 *
 * Return: 0 or -ENOMEM.
 */
int vf_vgpu_types_parse(char *text, struct vf_vgpu_type **types, size_t *n)
{
	struct vf_vgpu_type t, *v = NULL, *grown;
	char *line, *save = NULL;
	size_t count = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!vf_type_line(line, &t))
			continue;
		grown = realloc(v, (count + 1) * sizeof(*v));
		if (!grown) {
			free(v);
			return -ENOMEM;
		}
		v = grown;
		v[count++] = t;
	}
	*types = v;
	*n = count;
	return 0;
}

/**
 * vf_vgpu_creatable() - the types a vendor VF could take now
 * @addr: its canonical address
 * @types: a new array, for free(); NULL when @n is 0
 * @n: how many; 0 when the VF has a type or the card no room
 *
 * Return: 0 or a negative errno.
 */
int vf_vgpu_creatable(const char *addr, struct vf_vgpu_type **types,
		      size_t *n)
{
	char path[VF_PATH_BUFSZ], *text;
	ssize_t len;
	int fd, ret;

	ret = vf_path(path, addr, "nvidia/creatable_vgpu_types");
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	text = malloc(VF_TYPES_TEXT_BUFSZ);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	len = read(fd, text, VF_TYPES_TEXT_BUFSZ - 1);
	ret = len < 0 ? -errno : 0;
	close(fd);
	if (!ret) {
		text[len] = '\0';
		ret = vf_vgpu_types_parse(text, types, n);
	}
	free(text);
	return ret;
}

/**
 * vf_vgpu_write() - give a vendor VF a type, or take it away
 * @addr: its canonical address
 * @id: the type's id, 0 for none
 *
 * Return: 0, or the driver's errno, negative: -EPERM a type over a type
 * or none over none, -EBUSY open, -ENODEV no such type, -EINVAL another
 * type than the card's, -ENOSPC no room.
 */
int vf_vgpu_write(const char *addr, u32 id)
{
	char path[VF_PATH_BUFSZ], buf[16];

	snprintf(buf, sizeof(buf), "%u", id);
	return vf_path(path, addr, "nvidia/current_vgpu_type") ?:
	       sysfs_write_text(path, buf);
}

/**
 * vf_vgpu_physfn() - a VF's PF
 * @addr: its canonical address
 * @pf: the PF's address
 * @size: size of @pf
 *
 * Return: 0 or a negative errno.
 */
int vf_vgpu_physfn(const char *addr, char *pf, size_t size)
{
	char path[VF_PATH_BUFSZ];

	return vf_path(path, addr, "physfn") ?: sysfs_link_base(path, pf, size);
}

static int addr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vf_addr *)a)->addr,
		      ((const struct vf_addr *)b)->addr);
}

/**
 * vf_vgpu_list() - every vendor VF of the host, in address order
 * @vfs: a new array, for free(); NULL when @n is 0
 * @n: how many
 *
 * Return: 0 or a negative errno.
 */
int vf_vgpu_list(struct vf_addr **vfs, size_t *n)
{
	struct vf_addr *v = NULL, *grown;
	char path[VF_PATH_BUFSZ];
	struct dirent *de;
	size_t count = 0;
	DIR *dir;

	if (snprintf(path, sizeof(path), "%s/bus/pci/devices",
		     mdev_sysfs_root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	*vfs = NULL;
	*n = 0;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;	/* no PCI bus */
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= ADDR_BUFSZ ||
		    !vf_vgpu_capable(de->d_name))
			continue;
		grown = realloc(v, (count + 1) * sizeof(*v));
		if (!grown) {
			free(v);
			closedir(dir);
			return -ENOMEM;
		}
		v = grown;
		snprintf(v[count++].addr, ADDR_BUFSZ, "%s", de->d_name);
	}
	closedir(dir);
	if (count)
		qsort(v, count, sizeof(*v), addr_cmp);
	*vfs = v;
	*n = count;
	return 0;
}
