// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The mdev core's sysfs: parents under /sys/class/mdev_bus, their types
 * under mdev_supported_types, and the "create" and "remove" files.
 *
 * The tool, not the module, reads and writes these. The mdev core exports
 * neither mdev_device_create() nor its list of parents, so a module cannot
 * create an instance or find a parent that has none; sysfs is the
 * interface the core offers, the one mdevctl and libvirt use. Types are
 * read afresh at every call: a vendor driver's capacity changes with
 * every instance and no event says so. What the tool changes here, the
 * module confirms from the mdev bus (vgpu.c).
 */

#define _GNU_SOURCE		/* strverscmp() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "mdev_sysfs.h"

const char *mdev_sysfs_root = "/sys";

/* The longest path built here: root, parent, type and file name */
#define MDEV_PATH_BUFSZ 512

/* snprintf()'s length as an errno: a path that does not fit is an error */
static int path_len_ok(int len)
{
	return len < 0 || len >= MDEV_PATH_BUFSZ ? -ENAMETOOLONG : 0;
}

/*
 * A path into @buf, MDEV_PATH_BUFSZ long; a macro, so that the compiler
 * checks the format as snprintf()'s.
 */
#define path_of(buf, ...) path_len_ok(snprintf(buf, MDEV_PATH_BUFSZ, __VA_ARGS__))

/**
 * sysfs_read_text() - one sysfs file's text, on one line
 * @path: the file
 * @buf: the text, newlines turned into spaces and trailing ones cut
 * @size: size of @buf; a longer text is cut
 *
 * Return: 0 or a negative errno.
 */
int sysfs_read_text(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0) {
		len = -errno;
		close(fd);
		return len;
	}
	close(fd);
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	for (; len > 0; len--)
		if (buf[len - 1] == '\n')
			buf[len - 1] = ' ';
	return 0;
}

/**
 * sysfs_write_text() - write @text to a sysfs file in one write()
 * @path: the file
 * @text: what to write
 *
 * Return: 0, or the errno the file's store() gave, negative.
 */
int sysfs_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write(fd, text, len);
	if (ret < 0)
		ret = -errno;
	else if ((size_t)ret != len)
		ret = -EIO;
	else
		ret = 0;
	close(fd);
	return ret;
}

/**
 * mdev_parent_name() - the name a parent has under /sys/class/mdev_bus
 * @arg: a PCI address ("BB:DD.F" or "DDDD:BB:DD.F") or a virtual parent's
 *	name ("mbochs")
 * @out: the address in canonical form, or @arg
 * @size: size of @out
 *
 * Return: 0, or -EINVAL for a name that cannot be a device's.
 */
int mdev_parent_name(const char *arg, char *out, size_t size)
{
	const char *c;

	if (!parse_pci_address(arg, out, size))
		return 0;
	if (!*arg || !strcmp(arg, ".") || !strcmp(arg, "..") ||
	    strlen(arg) >= size)
		return -EINVAL;
	for (c = arg; *c; c++)
		if (*c == '/' || *c <= ' ' || *c == 0x7f)
			return -EINVAL;
	snprintf(out, size, "%s", arg);
	return 0;
}

/* The directory of @parent's types */
static int types_dir(char *buf, const char *parent)
{
	return path_of(buf, "%s/class/mdev_bus/%s/mdev_supported_types",
		       mdev_sysfs_root, parent);
}

/**
 * mdev_parent_exists() - whether @parent is registered with the mdev core
 * @parent: its name as mdev_parent_name() gives it
 *
 * Return: true when it has an mdev_supported_types directory.
 */
bool mdev_parent_exists(const char *parent)
{
	char path[MDEV_PATH_BUFSZ];
	struct stat st;

	return !types_dir(path, parent) && !stat(path, &st) &&
	       S_ISDIR(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

/* Names in @dir, sorted as people count ("nvidia-9" before "nvidia-10") */
static int dir_names(const char *dir, char ***names, size_t *n)
{
	struct dirent *de;
	size_t cap = 0;
	char **v = NULL;
	DIR *d;

	*n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **nv;

			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[*n] = strdup(de->d_name);
		if (!v[*n])
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), name_cmp);
	*names = v;
	return 0;

nomem:
	closedir(d);
	names_free(v, *n);
	*n = 0;
	return -ENOMEM;
}

/* A size such as "2048M", "1G" or "1073741824", in MiB */
static int size_mb(const char *val, u32 *mb)
{
	unsigned long long n;
	char *end;

	if (*val < '0' || *val > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(val, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'G': case 'g':
		n *= 1024;
		end++;
		break;
	case 'M': case 'm':
		end++;
		break;
	case 'K': case 'k':
		n /= 1024;
		end++;
		break;
	case '\0':
		n >>= 20;
		break;
	default:
		return -EINVAL;
	}
	if ((*end == 'B' || *end == 'b') && end[-1] > '9')
		end++;
	if (*end || n > UINT32_MAX)
		return -EINVAL;
	*mb = n;
	return 0;
}

/**
 * mdev_description_parse() - the fields of a type's description
 * @t: its @description is read; its other description fields are set
 *
 * The description is "key=value" pairs separated by commas and spaces, as
 * NVIDIA's vGPU manager writes it; a word that is not such a pair, or a
 * value that does not parse, is skipped, so prose yields no field.
 */
void mdev_description_parse(struct mdev_type_info *t)
{
	char buf[MDEV_DESC_BUFSZ];
	char *word, *save, *val;

	snprintf(buf, sizeof(buf), "%s", t->description);
	for (word = strtok_r(buf, ", \t", &save); word;
	     word = strtok_r(NULL, ", \t", &save)) {
		val = strchr(word, '=');
		if (!val)
			continue;
		*val++ = '\0';
		if (!strcmp(word, "max_instance"))
			t->has_max_instance = !parse_u32(val, &t->max_instance);
		else if (!strcmp(word, "framebuffer"))
			t->has_framebuffer = !size_mb(val, &t->framebuffer_mb);
		else if (!strcmp(word, "num_heads"))
			t->has_num_heads = !parse_u32(val, &t->num_heads);
		else if (!strcmp(word, "max_resolution") &&
			 strlen(val) < sizeof(t->max_resolution))
			snprintf(t->max_resolution, sizeof(t->max_resolution),
				 "%s", val);
	}
}

/* One type of @parent; -ENOENT when it went away while being read */
static int type_read(const char *parent, const char *id,
		     struct mdev_type_info *t)
{
	char path[MDEV_PATH_BUFSZ], dir[MDEV_PATH_BUFSZ], num[16];
	int ret;

	memset(t, 0, sizeof(*t));
	snprintf(t->parent, sizeof(t->parent), "%s", parent);
	if (strlen(id) >= sizeof(t->id))
		return -ENAMETOOLONG;
	snprintf(t->id, sizeof(t->id), "%s", id);
	ret = types_dir(dir, parent);
	if (ret)
		return ret;

	/* the files every type has */
	ret = path_of(path, "%s/%s/available_instances", dir, id);
	if (!ret)
		ret = sysfs_read_text(path, num, sizeof(num));
	if (!ret && parse_u32(num, &t->available))
		ret = -EINVAL;
	if (!ret)
		ret = path_of(path, "%s/%s/device_api", dir, id);
	if (!ret)
		ret = sysfs_read_text(path, t->device_api, sizeof(t->device_api));
	if (ret)
		return ret;

	/* and the ones a driver may leave out */
	if (!path_of(path, "%s/%s/name", dir, id) &&
	    sysfs_read_text(path, t->name, sizeof(t->name)))
		t->name[0] = '\0';
	if (!path_of(path, "%s/%s/description", dir, id) &&
	    sysfs_read_text(path, t->description, sizeof(t->description)))
		t->description[0] = '\0';
	mdev_description_parse(t);
	return 0;
}

/* Appends @parent's types to @v, growing it */
static int parent_types_read(const char *parent, struct mdev_type_info **v,
			     size_t *n, size_t *cap)
{
	char dir[MDEV_PATH_BUFSZ];
	char **ids;
	size_t nids, i;
	int ret;

	ret = types_dir(dir, parent);
	if (!ret)
		ret = dir_names(dir, &ids, &nids);
	if (ret)
		return ret;
	for (i = 0; i < nids && !ret; i++) {
		if (*n == *cap) {
			struct mdev_type_info *nv;

			*cap = *cap ? 2 * *cap : 16;
			nv = realloc(*v, *cap * sizeof(**v));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			*v = nv;
		}
		ret = type_read(parent, ids[i], &(*v)[*n]);
		if (!ret)
			(*n)++;
		else if (ret == -ENOENT)
			ret = 0;	/* the parent went meanwhile */
	}
	names_free(ids, nids);
	return ret;
}

/**
 * mdev_types_read() - the types of one parent, or of all
 * @parent: a name from mdev_parent_name(), or NULL for every parent
 * @types: the types, sorted by parent and id; for the caller to free()
 * @n: how many
 *
 * A parent or type that goes away while it is read is left out.
 *
 * Return: 0, -ENOENT when @parent is not an mdev parent, or another
 * negative errno; nothing is returned then.
 */
int mdev_types_read(const char *parent, struct mdev_type_info **types,
		    size_t *n)
{
	char dir[MDEV_PATH_BUFSZ];
	size_t cap = 0, nparents, i;
	char **parents = NULL;
	int ret = 0;

	*types = NULL;
	*n = 0;
	if (parent) {
		if (!mdev_parent_exists(parent))
			return -ENOENT;
		ret = parent_types_read(parent, types, n, &cap);
	} else {
		ret = path_of(dir, "%s/class/mdev_bus", mdev_sysfs_root);
		if (!ret)
			ret = dir_names(dir, &parents, &nparents);
		if (ret == -ENOENT)
			return 0;	/* mdev.ko is not loaded: no parent */
		if (ret)
			return ret;
		for (i = 0; !ret && i < nparents; i++) {
			ret = parent_types_read(parents[i], types, n, &cap);
			if (ret == -ENOENT)
				ret = 0;
		}
		names_free(parents, nparents);
	}
	if (ret) {
		free(*types);
		*types = NULL;
		*n = 0;
	}
	return ret;
}

/* Joins the names in @dir into @buf as "a, b, c", or "none" */
static int names_join(const char *dir, char *buf, size_t size)
{
	size_t n, i, len = 0;
	char **names;
	int ret;

	ret = dir_names(dir, &names, &n);
	if (ret == -ENOENT)
		n = 0;
	else if (ret)
		return ret;
	snprintf(buf, size, "none");
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
				names[i]);
	if (n)
		names_free(names, n);
	return 0;
}

/**
 * mdev_type_list() - @parent's type ids, for an error message
 * @parent: the parent
 * @buf: "mbochs-large, mbochs-medium, mbochs-small", or "none"
 * @size: size of @buf
 *
 * Return: 0 or a negative errno.
 */
int mdev_type_list(const char *parent, char *buf, size_t size)
{
	char dir[MDEV_PATH_BUFSZ];

	return types_dir(dir, parent) ?: names_join(dir, buf, size);
}

/**
 * mdev_parent_list() - the mdev parents, for an error message
 * @buf: "0000:00:02.0, mbochs", or "none"
 * @size: size of @buf
 *
 * Return: 0 or a negative errno.
 */
int mdev_parent_list(char *buf, size_t size)
{
	char dir[MDEV_PATH_BUFSZ];

	return path_of(dir, "%s/class/mdev_bus", mdev_sysfs_root) ?:
	       names_join(dir, buf, size);
}

/**
 * mdev_parent_node() - the NUMA node of a parent device
 * @parent: the parent
 *
 * Return: its node, or -1 when the platform gives none or the parent is
 * a virtual device (which has no numa_node file).
 */
int mdev_parent_node(const char *parent)
{
	char path[MDEV_PATH_BUFSZ], buf[16];
	int node;

	if (path_of(path, "%s/class/mdev_bus/%s/numa_node", mdev_sysfs_root,
		    parent) || sysfs_read_text(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%d", &node) != 1)
		return -1;
	return node;
}

/**
 * mdev_exists() - whether an instance @uuid is on the mdev bus
 * @uuid: in canonical (lower case) form
 *
 * Return: true when sysfs has it.
 */
bool mdev_exists(const char *uuid)
{
	char path[MDEV_PATH_BUFSZ];

	return !path_of(path, "%s/bus/mdev/devices/%s", mdev_sysfs_root,
			uuid) && !access(path, F_OK);
}

/**
 * sysfs_link_base() - the last component of what a symlink points to
 * @path: the symlink
 * @out: "0000:11:00.0" for physfn -> ../0000:11:00.0
 * @size: size of @out
 *
 * Return: 0, or a negative errno with @out "".
 */
int sysfs_link_base(const char *path, char *out, size_t size)
{
	char target[MDEV_PATH_BUFSZ];
	const char *base;
	ssize_t len;

	/* callers read @out as "" on error: a missing "driver" link is none */
	out[0] = '\0';
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= size)
		return -ENAMETOOLONG;
	snprintf(out, size, "%s", base);
	return 0;
}

/**
 * mdev_identity() - the type and parent of instance @uuid, per sysfs
 * @uuid: canonical
 * @type: its type's id
 * @parent: its parent's name
 * @size: size of @type and of @parent
 *
 * Return: 0, -ENOENT when there is no such instance, or another negative
 * errno.
 */
int mdev_identity(const char *uuid, char *type, char *parent, size_t size)
{
	char path[MDEV_PATH_BUFSZ], real[PATH_MAX], *slash;
	int ret;

	ret = path_of(path, "%s/bus/mdev/devices/%s/mdev_type",
		      mdev_sysfs_root, uuid);
	if (!ret)
		ret = sysfs_link_base(path, type, size);
	if (ret)
		return ret;
	/* the instance's directory is a child of its parent's */
	ret = path_of(path, "%s/bus/mdev/devices/%s", mdev_sysfs_root, uuid);
	if (ret)
		return ret;
	if (!realpath(path, real))
		return -errno;
	slash = strrchr(real, '/');
	if (!slash || slash == real)
		return -EINVAL;
	*slash = '\0';
	slash = strrchr(real, '/');
	if (strlen(slash + 1) >= size)
		return -ENAMETOOLONG;
	snprintf(parent, size, "%s", slash + 1);
	return 0;
}

/**
 * mdev_create() - an instance of @type on @parent, through "create"
 * @parent: the parent
 * @type: the type's id
 * @uuid: the new instance's UUID, canonical
 *
 * The write returns once the parent's driver bound the instance, or
 * failed to: the mdev core adds and probes it in the writer's task.
 *
 * Return: 0, or the write's negative errno: -ENOENT for no such type,
 * -ENOSPC past the parent's capacity, -EEXIST for a UUID in use.
 */
int mdev_create(const char *parent, const char *type, const char *uuid)
{
	char dir[MDEV_PATH_BUFSZ], path[MDEV_PATH_BUFSZ];

	return types_dir(dir, parent) ?:
	       path_of(path, "%s/%s/create", dir, type) ?:
	       sysfs_write_text(path, uuid);
}

/**
 * mdev_remove() - remove instance @uuid through its "remove" file
 * @uuid: canonical
 *
 * The mdev core waits for the instance's VFIO user to close it first
 * (vfio_unregister_group_dev() relays a request to the user and waits):
 * callers refuse to remove an instance that is open before they get here.
 *
 * Return: 0, -ENOENT when there is no such instance, or another negative
 * errno from the write.
 */
int mdev_remove(const char *uuid)
{
	char path[MDEV_PATH_BUFSZ];

	return path_of(path, "%s/bus/mdev/devices/%s/remove", mdev_sysfs_root,
		       uuid) ?: sysfs_write_text(path, "1");
}

/**
 * mdev_uuid_generate() - a random (version 4) UUID, as mdevctl makes them
 * @out: canonical form
 * @size: at least 37
 *
 * Return: 0 or a negative errno from getrandom().
 */
int mdev_uuid_generate(char *out, size_t size)
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -errno ?: -EIO;
	b[6] = (b[6] & 0x0f) | 0x40;	/* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	snprintf(out, size,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}
