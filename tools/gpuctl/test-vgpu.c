// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * mdev types without a kernel: the description's fields, and "gpuctl vgpu
 * types" over a sysfs tree made in a temporary directory, with a PCI
 * parent that describes its types as NVIDIA's vGPU manager does, a
 * virtual one that writes prose, and a type with neither name nor
 * description, as mtty's. The QEMU tests read the kernel's own.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "test-cmdline.h"

/* As NVIDIA's vGPU manager describes its types */
#define T4_2B_DESC \
	"num_heads=4, frame_rate_limiter=0, framebuffer=2048M, " \
	"max_resolution=5120x2880, max_instance=8"
#define T4_16Q_DESC \
	"num_heads=4, frame_rate_limiter=1, framebuffer=16384M, " \
	"max_resolution=7680x4320, max_instance=1"

static const struct {
	const char *description;
	const char *want;	/* the fields found, as "i h f r" */
} desc_cases[] = {
	{ T4_2B_DESC, "8 4 2048 5120x2880" },
	{ "framebuffer=1G,max_instance=24", "24 - 1024 -" },
	{ "framebuffer=512MB", "- - 512 -" },
	{ "framebuffer=1073741824", "- - 1024 -" },
	{ "framebuffer=4096K", "- - 4 -" },
	{ "virtual display, 64 MB video memory", "- - - -" },
	{ "max_instance=x num_heads= framebuffer=M max_resolution", "- - - -" },
	{ "max_instance=99999999999 framebuffer=2T", "- - - -" },
	{ "", "- - - -" },
};

static void test_descriptions(void)
{
	char got[96], name[160], num[3][16];
	struct mdev_type_info t;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(desc_cases); i++) {
		memset(&t, 0, sizeof(t));
		snprintf(t.description, sizeof(t.description), "%s",
			 desc_cases[i].description);
		mdev_description_parse(&t);
		snprintf(num[0], sizeof(num[0]), "%u", t.max_instance);
		snprintf(num[1], sizeof(num[1]), "%u", t.num_heads);
		snprintf(num[2], sizeof(num[2]), "%u", t.framebuffer_mb);
		snprintf(got, sizeof(got), "%s %s %s %s",
			 t.has_max_instance ? num[0] : "-",
			 t.has_num_heads ? num[1] : "-",
			 t.has_framebuffer ? num[2] : "-",
			 t.max_resolution[0] ? t.max_resolution : "-");
		snprintf(name, sizeof(name), "description \"%.100s\"",
			 desc_cases[i].description);
		check_str(name, got, desc_cases[i].want);
	}
}

/* One file of the fake tree, its directories made on the way */
static int put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

#define NV "class/mdev_bus/0000:00:02.0/mdev_supported_types/"
#define MB "class/mdev_bus/mbochs/mdev_supported_types/"
#define TT "class/mdev_bus/mtty/mdev_supported_types/"

static const char *const tree[][2] = {
	{ NV "nvidia-222/name", "GRID T4-2B\n" },
	{ NV "nvidia-222/available_instances", "8\n" },
	{ NV "nvidia-222/device_api", "vfio-pci\n" },
	{ NV "nvidia-222/description", T4_2B_DESC "\n" },
	{ NV "nvidia-1000/name", "GRID T4-16Q\n" },
	{ NV "nvidia-1000/available_instances", "0\n" },
	{ NV "nvidia-1000/device_api", "vfio-pci\n" },
	{ NV "nvidia-1000/description", T4_16Q_DESC "\n" },
	{ MB "mbochs-small/name", "mbochs-small\n" },
	{ MB "mbochs-small/available_instances", "24\n" },
	{ MB "mbochs-small/device_api", "vfio-pci\n" },
	{ MB "mbochs-small/description",
	  "virtual display, 4 MB video memory\n" },
	{ TT "mtty-2/available_instances", "12\n" },
	{ TT "mtty-2/device_api", "vfio-pci\n" },
	{ NULL, NULL },
};

#define NV_TEXT_222 \
	"0000:00:02.0 nvidia-222 name \"GRID T4-2B\" api vfio-pci available 8" \
	" max_instance 8 framebuffer 2048M num_heads 4" \
	" max_resolution 5120x2880 description \"" T4_2B_DESC "\"\n"
#define NV_TEXT_1000 \
	"0000:00:02.0 nvidia-1000 name \"GRID T4-16Q\" api vfio-pci" \
	" available 0 max_instance 1 framebuffer 16384M num_heads 4" \
	" max_resolution 7680x4320 description \"" T4_16Q_DESC "\"\n"
#define MB_TEXT \
	"mbochs mbochs-small name \"mbochs-small\" api vfio-pci available 24" \
	" description \"virtual display, 4 MB video memory\"\n"
#define TT_TEXT "mtty mtty-2 name \"\" api vfio-pci available 12\n"
#define TT_JSON \
	"{\"vgpu_types\":[{\"parent\":\"mtty\",\"type\":\"mtty-2\",\"name\":\"\"," \
	"\"device_api\":\"vfio-pci\",\"available_instances\":12," \
	"\"max_instance\":null,\"framebuffer_mb\":null,\"num_heads\":null," \
	"\"max_resolution\":null,\"description\":null}]}\n"

static void types_case(const char *args, int rc_want, const char *out_want,
		       const char *err_want)
{
	char name[128], *out, *err;
	int rc;

	rc = run_args(args, false, &out, &err);
	snprintf(name, sizeof(name), "%s: exit code", args);
	report(rc == rc_want, "%s", name);
	snprintf(name, sizeof(name), "%s: stdout", args);
	check_str(name, out, out_want);
	snprintf(name, sizeof(name), "%s: stderr", args);
	check_str(name, err, err_want);
	free(out);
	free(err);
}

static void test_types(void)
{
	char dir[] = "/tmp/gpuctl-mdev.XXXXXX", cmd[600];
	const char *root = mdev_sysfs_root;
	size_t i;

	if (!mkdtemp(dir)) {
		report(false, "%s", "temporary directory");
		return;
	}
	for (i = 0; tree[i][0]; i++)
		if (put(dir, tree[i][0], tree[i][1]))
			report(false, "%s", tree[i][0]);
	mdev_sysfs_root = dir;

	types_case("vgpu types", 0, NV_TEXT_222 NV_TEXT_1000 MB_TEXT TT_TEXT, "");
	types_case("-j vgpu types mtty", 0, TT_JSON, "");
	types_case("vgpu types 00:02.0", 0, NV_TEXT_222 NV_TEXT_1000, "");
	types_case("vgpu types qxl", 2, "",
		   "gpuctl: vgpu types: no mdev parent \"qxl\" (parents: 0000:00:02.0, mbochs, mtty)\n");

	/* a type that goes while it is read (its files first) is left out */
	if (put(dir, TT "mtty-1/device_api", "vfio-pci\n"))
		report(false, "%s", "mtty-1");
	types_case("vgpu types mtty", 0, TT_TEXT, "");

	/* no mdev.ko, no parent: an empty list, not an error */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	report(!system(cmd), "%s", "fake sysfs removed");
	types_case("-j vgpu types", 0, "{\"vgpu_types\":[]}\n", "");
	mdev_sysfs_root = root;
}

void test_vgpus(void)
{
	test_descriptions();
	test_types();
}
