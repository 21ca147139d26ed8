// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * udev's compiled hardware database, read directly: hwdb.bin is a trie
 * of the match patterns of the hwdb.d files, each node holding the
 * properties of the pattern that ends there. libudev answers a modalias
 * by matching it against every pattern it could fit, and because the PCI
 * class entries ("pci:v*d*sv*sd*bc03sc02*") hang under a '*' right after
 * "pci:v", each PCI lookup fnmatch()es all of them: 250,000 to 350,000
 * instructions per lookup (callgrind), most of what "gpuctl dev show"
 * cost beyond the kernel's dump. The names gpuctl wants sit under patterns of known form
 * ("pci:v000010DE*", "pci:v000010DEd00002335*", the class ones above), so
 * it walks the trie to that exact pattern instead: a few dozen steps.
 * A local hwdb.d entry is seen when it is written in the same form as
 * systemd's own (it then overrides the shipped one, as for udev).
 *
 * The file is mapped read-only and every offset in it is checked against
 * its size before use, so a damaged hwdb.bin reads as one without the
 * pattern, never as a crash.
 */

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "hwdb.h"
#include "utils.h"

/* Where libudev looks, in its order: the first that exists is used */
static const char * const hwdb_paths[] = {
	"/etc/systemd/hwdb/hwdb.bin",
	"/etc/udev/hwdb.bin",
	"/usr/lib/systemd/hwdb/hwdb.bin",
	"/lib/systemd/hwdb/hwdb.bin",
	"/lib/udev/hwdb.bin",
};

/*
 * The on-disk objects, little-endian, laid out with explicit padding so
 * that they need no packing; systemd writes them at 8-byte aligned
 * offsets, and their sizes in this file are in the header.
 */
struct hwdb_header {
	__u8 signature[8];
	__le64 tool_version;
	__le64 file_size;
	__le64 header_size;
	__le64 node_size;
	__le64 child_entry_size;
	__le64 value_entry_size;
	__le64 nodes_root_off;
	__le64 nodes_len;
	__le64 strings_len;
};

struct hwdb_node {
	__le64 prefix_off;
	__u8 children_count;
	__u8 padding[7];
	__le64 values_count;
};

struct hwdb_child {
	__u8 c;
	__u8 padding[7];
	__le64 child_off;
};

/* Format 2 appends where the value came from, which orders duplicates */
struct hwdb_value {
	__le64 key_off;
	__le64 value_off;
	__le64 filename_off;
	__le32 line_number;
	__le16 file_priority;
	__le16 padding;
};

#define HWDB_VALUE_V1_SIZE (2 * sizeof(__le64))

static_assert(sizeof(struct hwdb_header) == 80, "hwdb header layout");
static_assert(sizeof(struct hwdb_node) == 24, "hwdb node layout");
static_assert(sizeof(struct hwdb_child) == 16, "hwdb child layout");
static_assert(sizeof(struct hwdb_value) == 32, "hwdb value layout");

struct hwdb {
	const char *map;
	size_t size;
	size_t node_size;
	size_t child_size;
	size_t value_size;
	uint64_t root;
};

/*
 * The structure of @len bytes at @off, or NULL when it is not all inside
 * the file or not aligned as systemd writes it (a damaged offset).
 */
static const void *hwdb_at(const struct hwdb *db, uint64_t off, size_t len)
{
	if (off % sizeof(__le64) || off > db->size || len > db->size - off)
		return NULL;
	return db->map + off;
}

/* The NUL-terminated string at @off, or NULL when it runs off the end */
static const char *hwdb_string(const struct hwdb *db, uint64_t off)
{
	if (off >= db->size || !memchr(db->map + off, '\0', db->size - off))
		return NULL;
	return db->map + off;
}

static const struct hwdb_node *hwdb_node(const struct hwdb *db, uint64_t off)
{
	return hwdb_at(db, off, db->node_size);
}

/* The child of @node under character @c, or 0 when it has none */
static uint64_t hwdb_child(const struct hwdb *db, uint64_t node_off,
			   const struct hwdb_node *node, char c)
{
	const struct hwdb_child *child;
	unsigned int i;

	for (i = 0; i < node->children_count; i++) {
		child = hwdb_at(db, node_off + db->node_size +
				(uint64_t)i * db->child_size,
				sizeof(*child));
		if (!child)
			return 0;
		if (child->c == (__u8)c)
			return le64toh(child->child_off);
	}
	return 0;
}

/* Whether value @v outranks @best, as udev orders one key's duplicates */
static bool hwdb_value_wins(const struct hwdb *db, const struct hwdb_value *v,
			    const struct hwdb_value *best)
{
	if (!best || db->value_size < sizeof(*v))
		return true;	/* format 1: the last one */
	if (le16toh(v->file_priority) != le16toh(best->file_priority))
		return le16toh(v->file_priority) > le16toh(best->file_priority);
	return le32toh(v->line_number) >= le32toh(best->line_number);
}

/* The value of property @key among those of @node */
static const char *hwdb_node_value(const struct hwdb *db, uint64_t node_off,
				   const struct hwdb_node *node,
				   const char *key)
{
	const struct hwdb_value *v, *best = NULL;
	uint64_t base, i, n = le64toh(node->values_count);
	const char *k;

	base = node_off + db->node_size +
	       (uint64_t)node->children_count * db->child_size;
	for (i = 0; i < n && i < db->size / db->value_size; i++) {
		v = hwdb_at(db, base + i * db->value_size, db->value_size);
		if (!v)
			return NULL;
		k = hwdb_string(db, le64toh(v->key_off));
		/* keys are stored after a space; others are future extensions */
		if (!k || k[0] != ' ' || strcmp(k + 1, key))
			continue;
		if (hwdb_value_wins(db, v, best))
			best = v;
	}
	return best ? hwdb_string(db, le64toh(best->value_off)) : NULL;
}

/**
 * hwdb_value() - a property of one exact hwdb pattern
 * @db: the database, from hwdb_open()
 * @pattern: the pattern as the hwdb.d file writes it,
 *           e.g. "pci:v000010DEd00002335*"
 * @key: the property, e.g. "ID_MODEL_FROM_DATABASE"
 *
 * Return: the value, inside the mapping of @db, or NULL when the hwdb
 * has no such pattern or no such property for it.
 */
const char *hwdb_value(const struct hwdb *db, const char *pattern,
		       const char *key)
{
	uint64_t off = db->root;
	const struct hwdb_node *node;
	const char *prefix;

	/*
	 * Each step takes at least one character of @pattern, so even a
	 * damaged file that loops ends the walk.
	 */
	for (;;) {
		node = hwdb_node(db, off);
		prefix = node ? hwdb_string(db, le64toh(node->prefix_off)) : NULL;
		if (!prefix)
			return NULL;
		for (; *prefix; prefix++, pattern++)
			if (*prefix != *pattern)
				return NULL;
		if (!*pattern)
			return hwdb_node_value(db, off, node, key);
		off = hwdb_child(db, off, node, *pattern++);
		if (!off)
			return NULL;
	}
}

/* Whether the header describes a file we can walk: sizes we know, in it */
static bool hwdb_header_ok(const struct hwdb_header *h, size_t size)
{
	static const __u8 sig[8] = { 'K', 'S', 'L', 'P', 'H', 'H', 'R', 'H' };

	return !memcmp(h->signature, sig, sizeof(sig)) &&
	       le64toh(h->file_size) == size &&
	       le64toh(h->header_size) >= sizeof(*h) &&
	       le64toh(h->node_size) >= sizeof(struct hwdb_node) &&
	       le64toh(h->child_entry_size) >= sizeof(struct hwdb_child) &&
	       le64toh(h->value_entry_size) >= HWDB_VALUE_V1_SIZE &&
	       le64toh(h->node_size) < size &&
	       le64toh(h->child_entry_size) < size &&
	       le64toh(h->value_entry_size) < size;
}

/* Maps the hwdb open at @fd, which it closes */
static struct hwdb *hwdb_map(int fd)
{
	const struct hwdb_header *h;
	struct hwdb *db;
	struct stat st;
	void *map;

	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*h)) {
		close(fd);
		return NULL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	h = map;
	db = malloc(sizeof(*db));
	if (!db || !hwdb_header_ok(h, st.st_size)) {
		free(db);
		munmap(map, st.st_size);
		return NULL;
	}
	db->map = map;
	db->size = st.st_size;
	db->node_size = le64toh(h->node_size);
	db->child_size = le64toh(h->child_entry_size);
	db->value_size = le64toh(h->value_entry_size);
	db->root = le64toh(h->nodes_root_off);
	return db;
}

/**
 * hwdb_open_path() - map one hwdb.bin
 * @path: the file
 *
 * Return: the database, or NULL when @path cannot be read or is not a
 * hwdb whose header we can walk.
 */
struct hwdb *hwdb_open_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? NULL : hwdb_map(fd);
}

/**
 * hwdb_open() - map the host's hwdb.bin
 *
 * The first file of libudev's list that exists is the host's hwdb, as for
 * udev; if it is not a hwdb we can read, the host has none for us. Each
 * is opened rather than first tested for, which would cost a second
 * path walk.
 *
 * Return: the database, or NULL when there is none.
 */
struct hwdb *hwdb_open(void)
{
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(hwdb_paths); i++) {
		fd = open(hwdb_paths[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return hwdb_map(fd);
		if (errno != ENOENT && errno != ENOTDIR)
			return NULL;	/* there, but not for us */
	}
	return NULL;
}

/**
 * hwdb_close() - unmap a database
 * @db: from hwdb_open(), or NULL
 */
void hwdb_close(struct hwdb *db)
{
	if (!db)
		return;
	munmap((void *)db->map, db->size);
	free(db);
}
