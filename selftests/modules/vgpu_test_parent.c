// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Test only, never for a real host: an mdev parent with NVIDIA-style
 * types on a stand-in PCI display, for the vGPU tests. On real hosts the
 * parents of NVIDIA's (pre-Ampere) and Intel's GVT-g vGPUs are PCI
 * functions, their type ids are "<driver>-<number>" ("nvidia-222"), their
 * names "GRID T4-2B", and their descriptions carry "key=value" fields
 * (framebuffer, num_heads, max_resolution, max_instance) that CloudStack
 * and Nova read; the kernel's sample drivers have virtual parents and
 * prose. So this PCI driver is named "nvidia" (the types' ids follow the
 * driver's name) and binds only through driver_override, here to QEMU's
 * vmware-svga, which no Linux driver takes.
 *
 * Like a time-sliced GPU, a card holds instances of one type at a time,
 * from one 16 GiB framebuffer (fb_mb): 8 of "GRID T4-2B" (2 GiB each) or
 * 1 of "GRID T4-16Q". An instance is bound by this driver and is not a VFIO
 * device (no VM can open it): the tests need the parent, the types and
 * the capacity, not a guest.
 */

#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/vfio.h>

/*
 * A T4's 16 GiB by default. The scale benchmark (selftests/bench/scale.sh)
 * gives one card room for a thousand "GRID T4-2B" instances.
 */
static unsigned int card_fb_mb = 16384;
module_param_named(fb_mb, card_fb_mb, uint, 0444);
MODULE_PARM_DESC(fb_mb, "the card's framebuffer in MB (default 16384)");

struct vtp_type {
	struct mdev_type type;
	unsigned int fb_mb;
	unsigned int heads;
	const char *resolution;
};

static const struct {
	const char *id;
	const char *name;
	unsigned int fb_mb;
	const char *resolution;
} vtp_models[] = {
	{ "222", "GRID T4-2B", 2048, "5120x2880" },
	{ "230", "GRID T4-16Q", 16384, "7680x4320" },
};

/* The one card this driver takes: its types and what they use. */
struct vtp_card {
	struct mdev_parent parent;
	struct vtp_type types[ARRAY_SIZE(vtp_models)];
	struct mdev_type *type_ptrs[ARRAY_SIZE(vtp_models)];
	struct mutex lock;		/* @used_mb, @instances, @current */
	unsigned int used_mb;
	unsigned int instances;
	const struct vtp_type *current_type;
};

static struct vtp_card *vtp_card_of(struct mdev_type *mtype)
{
	return container_of(mtype->parent, struct vtp_card, parent);
}

static int vtp_mdev_probe(struct mdev_device *mdev)
{
	struct vtp_type *t = container_of(mdev->type, struct vtp_type, type);
	struct vtp_card *card = vtp_card_of(mdev->type);
	int ret = 0;

	mutex_lock(&card->lock);
	if ((card->current_type && card->current_type != t) ||
	    card->used_mb + t->fb_mb > card_fb_mb) {
		ret = -ENOSPC;
	} else {
		card->used_mb += t->fb_mb;
		card->instances++;
		card->current_type = t;
	}
	mutex_unlock(&card->lock);
	return ret;
}

static void vtp_mdev_remove(struct mdev_device *mdev)
{
	struct vtp_type *t = container_of(mdev->type, struct vtp_type, type);
	struct vtp_card *card = vtp_card_of(mdev->type);

	mutex_lock(&card->lock);
	card->used_mb -= t->fb_mb;
	if (!--card->instances)
		card->current_type = NULL;
	mutex_unlock(&card->lock);
}

static unsigned int vtp_get_available(struct mdev_type *mtype)
{
	struct vtp_type *t = container_of(mtype, struct vtp_type, type);
	struct vtp_card *card = vtp_card_of(mtype);
	unsigned int n;

	mutex_lock(&card->lock);
	n = card->current_type && card->current_type != t ? 0 :
		(card_fb_mb - card->used_mb) / t->fb_mb;
	mutex_unlock(&card->lock);
	return n;
}

static ssize_t vtp_show_description(struct mdev_type *mtype, char *buf)
{
	struct vtp_type *t = container_of(mtype, struct vtp_type, type);

	return sysfs_emit(buf,
			  "num_heads=%u, frame_rate_limiter=0, framebuffer=%uM, max_resolution=%s, max_instance=%u\n",
			  t->heads, t->fb_mb, t->resolution,
			  card_fb_mb / t->fb_mb);
}

static struct mdev_driver vtp_mdev_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "vgpu_test_parent",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
	},
	.probe = vtp_mdev_probe,
	.remove = vtp_mdev_remove,
	.get_available = vtp_get_available,
	.show_description = vtp_show_description,
};

static int vtp_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vtp_card *card;
	unsigned int i;

	/* the types are this card's objects: allocated per bind */
	card = devm_kzalloc(&pdev->dev, sizeof(*card), GFP_KERNEL);
	if (!card)
		return -ENOMEM;
	mutex_init(&card->lock);
	for (i = 0; i < ARRAY_SIZE(vtp_models); i++) {
		card->types[i].type.sysfs_name = vtp_models[i].id;
		card->types[i].type.pretty_name = vtp_models[i].name;
		card->types[i].fb_mb = vtp_models[i].fb_mb;
		card->types[i].heads = 4;
		card->types[i].resolution = vtp_models[i].resolution;
		card->type_ptrs[i] = &card->types[i].type;
	}
	pci_set_drvdata(pdev, card);
	return mdev_register_parent(&card->parent, &pdev->dev,
				    &vtp_mdev_driver, card->type_ptrs,
				    ARRAY_SIZE(card->type_ptrs));
}

static void vtp_pci_remove(struct pci_dev *pdev)
{
	struct vtp_card *card = pci_get_drvdata(pdev);

	/* removes the card's instances, and its types, before devm frees them */
	mdev_unregister_parent(&card->parent);
}

/* No id table: it binds only a device whose driver_override names it. */
static struct pci_driver vtp_pci_driver = {
	.name = "nvidia",
	.probe = vtp_pci_probe,
	.remove = vtp_pci_remove,
};

static int __init vtp_init(void)
{
	int ret = mdev_register_driver(&vtp_mdev_driver);

	if (ret)
		return ret;
	ret = pci_register_driver(&vtp_pci_driver);
	if (ret)
		mdev_unregister_driver(&vtp_mdev_driver);
	return ret;
}

static void __exit vtp_exit(void)
{
	pci_unregister_driver(&vtp_pci_driver);
	mdev_unregister_driver(&vtp_mdev_driver);
}

module_init(vtp_init);
module_exit(vtp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpuctl test only: an mdev parent with NVIDIA-style types on a stand-in PCI display");
