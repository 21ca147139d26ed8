// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * hwdb.c against libudev, on the host's own hwdb: every vendor, device
 * and class pattern of systemd's PCI hwdb.d files must read the same
 * through both, and a damaged hwdb.bin must read as a file without the
 * pattern, never crash. Prints TAP; run by make check on the host.
 *
 * Usage: test-hwdb [HWDB.BIN [HWDB.D]]
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libudev.h>

#include "hwdb.h"
#include "utils.h"

static int test_num, failed;

static void result(bool ok, const char *what, int n)
{
	printf("%sok %d - %s (%d)\n", ok ? "" : "not ", ++test_num, what, n);
	if (!ok)
		failed++;
}

/* libudev's value of @key for @modalias, copied, or NULL */
static char *udev_value(struct udev_hwdb *h, const char *modalias,
			const char *key)
{
	struct udev_list_entry *e;

	udev_list_entry_foreach(e, udev_hwdb_get_properties_list_entry(h, modalias, 0))
		if (!strcmp(udev_list_entry_get_name(e), key))
			return strdup(udev_list_entry_get_value(e));
	return NULL;
}

/* Whether both answers agree, and if not, says how */
static bool same(const char *what, const char *a, const char *b)
{
	if (!a && !b)
		return true;
	if (a && b && !strcmp(a, b))
		return true;
	printf("# %s: libudev \"%s\", hwdb.c \"%s\"\n", what, a ? a : "(none)",
	       b ? b : "(none)");
	return false;
}

/*
 * Each "pci:vVVVVVVVVdDDDDDDDD*" pattern of @file: the device's model and
 * its vendor's name, as libudev gives them for the device's modalias.
 * Return: how many patterns disagreed; @n counts them all.
 */
static int check_ids(struct udev_hwdb *h, const struct hwdb *db,
		     const char *file, int *n)
{
	char line[512], modalias[64], pat[64];
	unsigned int v, d;
	int bad = 0;
	char *a;
	FILE *f;

	f = fopen(file, "r");
	if (!f) {
		printf("# %s: cannot read\n", file);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pci:v%8Xd%8X*", &v, &d) != 2 ||
		    strchr(line, 's'))
			continue;
		snprintf(modalias, sizeof(modalias), "pci:v%08Xd%08X", v, d);
		a = udev_value(h, modalias, "ID_MODEL_FROM_DATABASE");
		snprintf(pat, sizeof(pat), "pci:v%08Xd%08X*", v, d);
		bad += !same(modalias, a, hwdb_value(db, pat, "ID_MODEL_FROM_DATABASE"));
		free(a);
		a = udev_value(h, modalias, "ID_VENDOR_FROM_DATABASE");
		snprintf(pat, sizeof(pat), "pci:v%08X*", v);
		bad += !same(modalias, a, hwdb_value(db, pat, "ID_VENDOR_FROM_DATABASE"));
		free(a);
		(*n)++;
	}
	fclose(f);
	return bad;
}

/* Every base class and subclass, both ways; @n counts the pairs named */
static int check_classes(struct udev_hwdb *h, const struct hwdb *db, int *n)
{
	char modalias[80], pat[64];
	unsigned int c;
	int bad = 0;
	char *a;

	for (c = 0; c < 0x10000; c++) {
		snprintf(modalias, sizeof(modalias),
			 "pci:v00000000d00000000sv00000000sd00000000bc%02Xsc%02Xi00",
			 c >> 8, c & 0xff);
		a = udev_value(h, modalias, "ID_PCI_SUBCLASS_FROM_DATABASE");
		snprintf(pat, sizeof(pat), "pci:v*d*sv*sd*bc%02Xsc%02X*",
			 c >> 8, c & 0xff);
		bad += !same(modalias, a,
			     hwdb_value(db, pat, "ID_PCI_SUBCLASS_FROM_DATABASE"));
		*n += !!a;
		free(a);
		if (c & 0xff)
			continue;
		a = udev_value(h, modalias, "ID_PCI_CLASS_FROM_DATABASE");
		snprintf(pat, sizeof(pat), "pci:v*d*sv*sd*bc%02X*", c >> 8);
		bad += !same(modalias, a,
			     hwdb_value(db, pat, "ID_PCI_CLASS_FROM_DATABASE"));
		free(a);
	}
	return bad;
}

/* Lookups a damaged copy must survive: names, a class, a miss */
static void probe(const struct hwdb *db)
{
	static const char * const pats[] = {
		"pci:v000010DE*", "pci:v000010DEd00002335*", "pci:v00008086*",
		"pci:v*d*sv*sd*bc03sc02*", "pci:v*d*sv*sd*bc03*", "pci:v00001234*",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pats); i++) {
		hwdb_value(db, pats[i], "ID_VENDOR_FROM_DATABASE");
		hwdb_value(db, pats[i], "ID_MODEL_FROM_DATABASE");
	}
}

/* A copy of @src in @dst, cut to @len bytes or with byte @flip inverted */
static bool damaged_copy(const char *src, const char *dst, long len, long flip)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	long i;
	int c;

	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		return false;
	}
	for (i = 0; (c = fgetc(in)) != EOF && (len < 0 || i < len); i++)
		fputc(i == flip ? c ^ 0xff : c, out);
	fclose(in);
	return !fclose(out);
}

/*
 * Truncated copies must not open (the header names the size), and copies
 * with a byte inverted anywhere must answer without a crash; with
 * @stride over the file, every structure is hit somewhere.
 */
static int check_damaged(const char *bin, int *n)
{
	char tmp[] = "/tmp/test-hwdb.XXXXXX";
	struct hwdb *db;
	long size, off;
	int fd, bad = 0;
	FILE *f;

	fd = mkstemp(tmp);
	f = fopen(bin, "rb");
	if (fd < 0 || !f || fseek(f, 0, SEEK_END)) {
		printf("# cannot copy %s\n", bin);
		return 1;
	}
	close(fd);
	size = ftell(f);
	fclose(f);
	for (off = 0; off < size; off += size / 7) {
		if (!damaged_copy(bin, tmp, off, -1))
			return 1;
		db = hwdb_open_path(tmp);
		if (db) {
			printf("# cut at %ld bytes of %ld: opened\n", off, size);
			bad++;
		}
		hwdb_close(db);
		(*n)++;
	}
	for (off = 0; off < size; off += size / 61 + 1) {
		if (!damaged_copy(bin, tmp, -1, off))
			return 1;
		db = hwdb_open_path(tmp);
		if (db)
			probe(db);
		hwdb_close(db);
		(*n)++;
	}
	unlink(tmp);
	return bad;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 2 ? argv[2] : "/usr/lib/udev/hwdb.d";
	const char *bin = argc > 1 ? argv[1] : "/usr/lib/udev/hwdb.bin";
	struct udev_hwdb *h;
	struct udev *udev;
	char file[4096];
	struct hwdb *db;
	int n = 0, bad;

	printf("TAP version 13\n");
	udev = udev_new();
	h = udev ? udev_hwdb_new(udev) : NULL;
	db = hwdb_open();
	if (!h || !db) {
		printf("Bail out! no hwdb on this host (libudev %s, hwdb.c %s)\n",
		       h ? "has one" : "has none", db ? "has one" : "has none");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/20-pci-vendor-model.hwdb", dir);
	bad = check_ids(h, db, file, &n);
	result(!bad && n > 10000,
	       "every device's model and vendor as libudev reads them", n);
	n = 0;
	bad = check_classes(h, db, &n);
	result(!bad && n > 100,
	       "every PCI class and subclass as libudev reads them", n);
	n = 0;
	bad = check_damaged(bin, &n);
	result(!bad && n > 60,
	       "damaged copies are refused or answer without a crash", n);
	hwdb_close(db);
	udev_hwdb_unref(h);
	udev_unref(udev);
	printf("1..%d\n# %d of %d failed\n", test_num, failed, test_num);
	return failed ? 1 : 0;
}
