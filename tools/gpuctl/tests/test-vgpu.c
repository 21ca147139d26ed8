// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * mdev types without a kernel: the description's fields, and "gpuctl vgpu
 * types" over a sysfs tree made in a temporary directory, with a PCI
 * parent that describes its types as NVIDIA's vGPU manager does, a
 * virtual one that writes prose, and a type with neither name nor
 * description, as mtty's; and vendor VFs with NVIDIA's nvidia/ files.
 * The QEMU tests read the kernel's own.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "vf_sysfs.h"
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
	"\"max_resolution\":null,\"description\":null,\"kind\":\"mdev\"}]}\n"

/* creatable_vgpu_types texts, and the "id name;" pairs read from them */
static const char *const vf_parse_cases[][2] = {
	{ "ID    : vGPU Name\n1155  : NVIDIA L40S-12Q\n1156  : NVIDIA L40S-24Q\n",
	  "1155 NVIDIA L40S-12Q;1156 NVIDIA L40S-24Q;" },
	{ "ID    : vGPU Name\n", "" },
	{ "", "" },
	{ "  42:A\t\n\n7 :  spaced name\t\t\nx : y\n9 :\n10 11 : z\n",
	  "42 A;7 spaced name;" },
	{ "99999999999 : too big\n1 : ok", "1 ok;" },
};

static void test_vf_parse(void)
{
	char text[256], got[256], name[64];
	struct vf_vgpu_type *t;
	size_t i, j, n, len;

	for (i = 0; i < ARRAY_SIZE(vf_parse_cases); i++) {
		snprintf(text, sizeof(text), "%s", vf_parse_cases[i][0]);
		snprintf(name, sizeof(name), "creatable_vgpu_types case %zu", i);
		if (vf_vgpu_types_parse(text, &t, &n)) {
			report(false, "%s", name);
			continue;
		}
		got[0] = '\0';
		for (j = 0, len = 0; j < n && len < sizeof(got); j++)
			len += snprintf(got + len, sizeof(got) - len, "%u %s;",
					t[j].id, t[j].name);
		free(t);
		check_str(name, got, vf_parse_cases[i][1]);
	}
}

/* A PF with two vendor VFs, one of them able to take two types */
#define PCI "bus/pci/devices/"
static const char *const vf_tree[][2] = {
	{ PCI "0000:41:00.0/sriov_totalvfs", "2\n" },
	{ PCI "0000:41:00.4/nvidia/current_vgpu_type", "0\n" },
	{ PCI "0000:41:00.4/nvidia/creatable_vgpu_types",
	  "ID    : vGPU Name\n1155  : NVIDIA L40S-12Q\n1156  : NVIDIA L40S-24Q\n" },
	{ PCI "0000:41:00.5/nvidia/current_vgpu_type", "0\n" },
	{ PCI "0000:41:00.5/nvidia/creatable_vgpu_types",
	  "ID    : vGPU Name\n1156  : NVIDIA L40S-24Q\n" },
	/* no physfn: no vendor VF */
	{ PCI "0000:42:00.0/nvidia/current_vgpu_type", "0\n" },
	{ NULL, NULL },
};

#define VF_TEXT \
	"0000:41:00.0 1155 name \"NVIDIA L40S-12Q\" api vfio-pci available 1 kind vf\n" \
	"0000:41:00.0 1156 name \"NVIDIA L40S-24Q\" api vfio-pci available 2 kind vf\n"

#define VF_JSON_TYPE(id, name, n) \
	"{\"parent\":\"0000:41:00.0\",\"type\":" id ",\"name\":\"" name "\"," \
	"\"device_api\":\"vfio-pci\",\"available_instances\":" n "," \
	"\"max_instance\":null,\"framebuffer_mb\":null,\"num_heads\":null," \
	"\"max_resolution\":null,\"description\":null,\"kind\":\"vf\"}"
#define VF_JSON \
	"{\"vgpu_types\":[" VF_JSON_TYPE("1155", "NVIDIA L40S-12Q", "1") "," \
	VF_JSON_TYPE("1156", "NVIDIA L40S-24Q", "2") "]}\n"

static int vf_tree_make(const char *dir)
{
	char link[512];
	size_t i;

	for (i = 0; vf_tree[i][0]; i++)
		if (put(dir, vf_tree[i][0], vf_tree[i][1]))
			return -1;
	snprintf(link, sizeof(link), "%s/" PCI "0000:41:00.4/physfn", dir);
	if (symlink("../0000:41:00.0", link))
		return -1;
	snprintf(link, sizeof(link), "%s/" PCI "0000:41:00.5/physfn", dir);
	return symlink("../0000:41:00.0", link);
}

/*
 * What dev_vgpu_type_read() makes of the tree: a vendor VF's type, 0 for
 * none; nothing for a function the module sends without a PF.
 */
static void vf_dev_cases(const char *dir)
{
	struct dev_info d = { .address = "0000:41:00.4", .has_physfn = true };
	const char *cur = PCI "0000:41:00.4/nvidia/current_vgpu_type";

	dev_vgpu_type_read(&d);
	report(d.has_vgpu_type && !d.vgpu_type, "%s",
	       "dev_vgpu_type_read: a vendor VF without a type");
	report(!put(dir, cur, "1156\n"), "%s", "vendor VF typed");
	dev_vgpu_type_read(&d);
	report(d.has_vgpu_type && d.vgpu_type == 1156, "%s",
	       "dev_vgpu_type_read: a vendor VF's type");
	report(!put(dir, cur, "0\n"), "%s", "vendor VF type cleared");
	d = (struct dev_info){ .address = "0000:42:00.0" };
	dev_vgpu_type_read(&d);
	report(!d.has_vgpu_type && !d.vgpu_type, "%s",
	       "dev_vgpu_type_read: no physfn, no type");
}

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

	/* vendor VFs: their PF's types, after the mdev types */
	report(!vf_tree_make(dir), "%s", "vendor VF tree");
	types_case("vgpu types 41:00.0", 0, VF_TEXT, "");
	types_case("vgpu types", 0,
		   NV_TEXT_222 NV_TEXT_1000 MB_TEXT TT_TEXT VF_TEXT, "");
	types_case("-j vgpu types 0000:41:00.0", 0, VF_JSON, "");
	/* a PF without vendor VFs is no parent */
	types_case("vgpu types 42:00.0", 2, "",
		   "gpuctl: vgpu types: no mdev parent \"0000:42:00.0\" (parents: 0000:00:02.0, mbochs, mtty)\n");
	vf_dev_cases(dir);
	/* a PF whose VFs list no type now is their parent still */
	if (put(dir, PCI "0000:41:00.4/nvidia/creatable_vgpu_types",
		"ID    : vGPU Name\n") ||
	    put(dir, PCI "0000:41:00.5/nvidia/creatable_vgpu_types",
		"ID    : vGPU Name\n"))
		report(false, "%s", "vendor VFs full");
	types_case("-j vgpu types 41:00.0", 0, "{\"vgpu_types\":[]}\n", "");

	/* no mdev.ko, no parent: an empty list, not an error */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	report(!system(cmd), "%s", "fake sysfs removed");
	types_case("-j vgpu types", 0, "{\"vgpu_types\":[]}\n", "");
	mdev_sysfs_root = root;
}

/* Words vgpu set refuses before it asks anyone */
static const char *const set_usage_cases[][2] = {
	{ "vgpu set", "gpuctl: vgpu set: expected \"VF type TYPE\"\n" },
	{ "vgpu set 41:00.x type 1", "gpuctl: vgpu set: invalid VF address \"41:00.x\"\n" },
	{ "vgpu set 41:00.4",
	  "gpuctl: vgpu set: expected \"type TYPE\" or \"type none\" after 0000:41:00.4\n" },
	{ "vgpu set 41:00.4 kind 1156",
	  "gpuctl: vgpu set: expected \"type TYPE\" or \"type none\" after 0000:41:00.4\n" },
	{ "vgpu set 41:00.4 type",
	  "gpuctl: vgpu set: expected \"type TYPE\" or \"type none\" after 0000:41:00.4\n" },
};

static void test_set_usage(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(set_usage_cases); i++)
		types_case(set_usage_cases[i][0], 1, "", set_usage_cases[i][1]);
}

void test_vgpus(void)
{
	test_descriptions();
	test_vf_parse();
	test_types();
	test_set_usage();
}
