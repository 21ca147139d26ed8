// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Netlink requests on reservation rules: rule-new, rule-del and rule-get.
 * All three need CAP_NET_ADMIN (GENL_ADMIN_PERM in the generated ops
 * table) and CAP_SYS_ADMIN (pre_doit and gpuctl_nl_dump() check it). A
 * request either changes nothing and says why in its extack, or is
 * applied whole.
 */

#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "inventory.h"
#include "iommu.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "reserve.h"
#include "rule.h"
#include "sriov.h"

/* "group 4294967295 is not viable: 0000:09:02.0 is bound to <driver> ..." */
#define GPUCTL_WARNING_LEN (GPUCTL_DRIVER_NAME_LEN + 128)

/* What an operator should know about one device of a rule, if anything. */
static bool gpuctl_nl_rule_warning(const struct gpuctl_rule *rule,
				   const struct gpuctl_dev *dev, char *buf)
{
	const struct gpuctl_dev *offender;

	switch (dev->res.state) {
	case GPUCTL_DEV_STATE_HELD:
		/* A rule with take is announced before the worker took it. */
		snprintf(buf, GPUCTL_WARNING_LEN, "%s is held by %s%s",
			 pci_name(dev->pdev), dev->driver,
			 rule->take ? ", being taken" :
			 " (add take to take it over)");
		return true;
	case GPUCTL_DEV_STATE_BLOCKED:
		snprintf(buf, GPUCTL_WARNING_LEN, "%s is blocked: %s",
			 pci_name(dev->pdev), dev->res.blocked);
		return true;
	}

	if (dev->role != GPUCTL_DEV_ROLE_GPU || !dev->group)
		return false;
	offender = gpuctl_group_offender(dev->group);
	if (!offender || offender->res.rule)
		return false;

	snprintf(buf, GPUCTL_WARNING_LEN,
		 "group %u is not viable: %s is bound to %s%s", dev->group->id,
		 pci_name(offender->pdev), offender->driver,
		 offender->role == GPUCTL_DEV_ROLE_FOREIGN && !rule->force ?
		 " (add force to take the whole group)" : "");
	return true;
}

static int gpuctl_nl_rule_put_orphan(struct pci_dev *pdev, void *msg)
{
	return nla_put_string(msg, GPUCTL_A_RULE_ORPHAN, pci_name(pdev));
}

/**
 * gpuctl_nl_rule_fill() - put a rule's attributes into a message
 * @msg: the message
 * @rule: the rule
 *
 * Context: gpuctl_lock held.
 * Return: 0 or -EMSGSIZE.
 */
int gpuctl_nl_rule_fill(struct sk_buff *msg, const struct gpuctl_rule *rule)
{
	char match[GPUCTL_MATCH_STR_LEN], warning[GPUCTL_WARNING_LEN];
	struct gpuctl_dev *dev;
	unsigned long key;

	gpuctl_match_format(&rule->match, match, sizeof(match));

	if (nla_put_u32(msg, GPUCTL_A_RULE_ID, rule->id) ||
	    nla_put_string(msg, GPUCTL_A_RULE_MATCH, match) ||
	    nla_put_string(msg, GPUCTL_A_RULE_DRIVER, rule->driver) ||
	    (rule->force && nla_put_flag(msg, GPUCTL_A_RULE_FORCE)) ||
	    (rule->take && nla_put_flag(msg, GPUCTL_A_RULE_TAKE)) ||
	    nla_put_u32(msg, GPUCTL_A_RULE_SOURCE, rule->source))
		return -EMSGSIZE;

	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (dev->res.rule == rule &&
		    nla_put_string(msg, GPUCTL_A_RULE_DEVICE, pci_name(dev->pdev)))
			return -EMSGSIZE;
	}
	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (dev->res.rule == rule &&
		    gpuctl_nl_rule_warning(rule, dev, warning) &&
		    nla_put_string(msg, GPUCTL_A_RULE_WARNING, warning))
			return -EMSGSIZE;
	}
	return gpuctl_reserve_orphans_of(rule->id, gpuctl_nl_rule_put_orphan,
					 msg);
}

static int gpuctl_nl_rule_reply(struct genl_info *info,
				const struct gpuctl_rule *rule)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr, gpuctl_nl_rule_fill(msg, rule));
}

/**
 * gpuctl_nl_rule_lookup() - find the rule a rule-del or rule-get names
 * @info: the request; the rule goes into user_ptr[0]
 *
 * rule-get names it by id; rule-del by id or by match (or both, if they
 * agree).
 *
 * Context: gpuctl_lock held.
 * Return: 0, -EINVAL or -ENOENT, with the extack set.
 */
int gpuctl_nl_rule_lookup(struct genl_info *info)
{
	struct nlattr *id_attr = info->attrs[GPUCTL_A_RULE_ID];
	struct nlattr *match_attr = NULL;
	struct gpuctl_rule *rule = NULL, *by_match;
	struct gpuctl_match match;
	const char *why;

	/* rule-get's policy stops at the id; its attrs[] has no match slot. */
	if (info->genlhdr->cmd == GPUCTL_CMD_RULE_DEL)
		match_attr = info->attrs[GPUCTL_A_RULE_MATCH];
	else if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_RULE_ID))
		return -EINVAL;

	if (!id_attr && !match_attr) {
		NL_SET_ERR_MSG(info->extack, "a rule id or match is required");
		return -EINVAL;
	}

	if (id_attr) {
		rule = gpuctl_rule_find(nla_get_u32(id_attr));
		if (!rule) {
			NL_SET_ERR_MSG_ATTR(info->extack, id_attr, "no such rule");
			return -ENOENT;
		}
	}

	if (match_attr) {
		if (gpuctl_match_parse(nla_data(match_attr), &match, &why)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, match_attr, "%s",
					       why);
			return -EINVAL;
		}
		by_match = gpuctl_rule_find_match(&match);
		if (!by_match) {
			NL_SET_ERR_MSG_ATTR(info->extack, match_attr,
					    "no rule with this match");
			return -ENOENT;
		}
		if (rule && rule != by_match) {
			NL_SET_ERR_MSG_ATTR(info->extack, match_attr,
					    "id and match name different rules");
			return -EINVAL;
		}
		rule = by_match;
	}

	info->user_ptr[0] = rule;
	return 0;
}

/* Whether @m is a device @tmpl would reserve through the GPU @gpu. */
static bool gpuctl_nl_rule_covers(const struct gpuctl_rule *tmpl,
				  const struct gpuctl_dev *gpu,
				  const struct gpuctl_dev *m)
{
	if (m == gpu)
		return true;
	if (m->role == GPUCTL_DEV_ROLE_COMPANION)
		return m->pdev->bus == gpu->pdev->bus &&
		       PCI_SLOT(m->pdev->devfn) == PCI_SLOT(gpu->pdev->devfn);
	return m->role == GPUCTL_DEV_ROLE_FOREIGN && tmpl->force;
}

/*
 * A device a new rule with "take" would have to take from a VFIO user:
 * that would block until the user lets go, so the rule is refused.
 */
static struct gpuctl_dev *gpuctl_nl_rule_busy(const struct gpuctl_rule *tmpl)
{
	struct gpuctl_dev *gpu, *m;
	unsigned long key;

	for (key = 0; (gpu = gpuctl_inventory_next(&key)); key++) {
		if (gpu->res.rule || !gpuctl_rule_selects(tmpl, gpu->pdev))
			continue;
		if (!gpu->group) {
			if (gpuctl_reserve_vfio_busy(gpu))
				return gpu;
			continue;
		}
		list_for_each_entry(m, &gpu->group->members, group_node) {
			if (gpuctl_nl_rule_covers(tmpl, gpu, m) &&
			    strcmp(m->driver, tmpl->driver) &&
			    gpuctl_reserve_vfio_busy(m))
				return m;
		}
	}
	return NULL;
}

/*
 * A PF a new rule with "take" would take from its driver while one of its
 * VFs is allocated or open: the PF's unbind would destroy the VF. Every
 * PCI function is looked at, since a rule by address or ids may name a PF
 * gpuctl does not track yet.
 */
static bool gpuctl_nl_rule_vf_in_use(const struct gpuctl_rule *tmpl,
				     char *why, size_t len)
{
	const struct gpuctl_dev *dev;
	struct pci_dev *pdev = NULL;

	if (gpuctl_rule_driver_vf_only(tmpl->driver))
		return false;	/* it never takes a PF */
	for_each_pci_dev(pdev) {
		if (!pdev->is_physfn || !gpuctl_rule_selects(tmpl, pdev))
			continue;
		dev = gpuctl_inventory_find_pdev(pdev);
		if (dev && !strcmp(dev->driver, tmpl->driver))
			continue;	/* on the rule's driver: stays */
		if (gpuctl_sriov_vf_in_use(pdev, why, len)) {
			pci_dev_put(pdev);
			return true;
		}
	}
	return false;
}

static int gpuctl_nl_rule_parse(struct genl_info *info,
				struct gpuctl_rule *tmpl)
{
	struct nlattr *match = info->attrs[GPUCTL_A_RULE_MATCH];
	struct nlattr *driver = info->attrs[GPUCTL_A_RULE_DRIVER];
	char buf[GPUCTL_NEVER_LEN];
	const char *why;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_RULE_MATCH))
		return -EINVAL;

	memset(tmpl, 0, sizeof(*tmpl));
	if (gpuctl_match_parse(nla_data(match), &tmpl->match, &why)) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, match, "%s", why);
		return -EINVAL;
	}

	strscpy(tmpl->driver, "vfio-pci", sizeof(tmpl->driver));
	if (driver) {
		if (gpuctl_rule_check_driver(nla_data(driver), &why)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, driver, "%s: %s",
					       (char *)nla_data(driver), why);
			return -EINVAL;
		}
		strscpy(tmpl->driver, nla_data(driver), sizeof(tmpl->driver));
	}

	if (gpuctl_match_names_never(&tmpl->match, buf, sizeof(buf))) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, match, "%s: never reserved",
				       buf);
		return -EINVAL;
	}

	if (info->attrs[GPUCTL_A_RULE_ID])
		tmpl->id = nla_get_u32(info->attrs[GPUCTL_A_RULE_ID]);
	tmpl->force = nla_get_flag(info->attrs[GPUCTL_A_RULE_FORCE]);
	tmpl->take = nla_get_flag(info->attrs[GPUCTL_A_RULE_TAKE]);
	tmpl->source = GPUCTL_RULE_SOURCE_NETLINK;
	return 0;
}

/*
 * Check the "orphan" attributes of a rule-new: each the address of a PCI
 * function, and only with an id, as a module reload sends them.
 */
static int gpuctl_nl_rule_orphans_check(struct genl_info *info)
{
	char addr[GPUCTL_MATCH_LEN + 1];
	struct gpuctl_match m;
	struct nlattr *attr;
	const char *why;
	int rem;

	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) != GPUCTL_A_RULE_ORPHAN)
			continue;
		if (!info->attrs[GPUCTL_A_RULE_ID]) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "orphans are carried over with the id of their rule");
			return -EINVAL;
		}
		/* a multi-attr string policy is NLA_STRING: maybe no NUL */
		nla_strscpy(addr, attr, sizeof(addr));
		if (gpuctl_match_parse(addr, &m, &why) || !m.by_address) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "an orphan is a PCI address DDDD:BB:DD.F");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Keep the present functions the "orphan" attributes name as orphans of
 * @rule on the request's driver (gpuctl_reserve_adopt_orphan()); checked
 * by gpuctl_nl_rule_orphans_check(). On failure none is kept: they stay
 * on their driver, untracked, as they were before the request.
 */
static int gpuctl_nl_rule_orphans_adopt(struct genl_info *info, u32 rule,
					const char *target)
{
	char addr[GPUCTL_MATCH_LEN + 1];
	struct pci_dev *pdev;
	struct gpuctl_match m;
	struct nlattr *attr;
	const char *why;
	int rem, ret;

	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) != GPUCTL_A_RULE_ORPHAN)
			continue;
		nla_strscpy(addr, attr, sizeof(addr));
		if (gpuctl_match_parse(addr, &m, &why))
			continue;
		pdev = pci_get_domain_bus_and_slot(m.key >> 16,
						   (m.key >> 8) & 0xff,
						   m.key & 0xff);
		if (!pdev)
			continue;	/* it left meanwhile: no orphan */
		ret = gpuctl_reserve_adopt_orphan(pdev, rule, target);
		pci_dev_put(pdev);
		if (ret) {
			gpuctl_reserve_forget_orphans(rule);
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "no memory to keep the orphan");
			return ret;
		}
	}
	return 0;
}

/*
 * rule-new with the id and the match of a rule the module has, carrying
 * orphans: the reload hands them to a rule that modprobe.d gave the new
 * module at load. Returns 1 when that is not the request.
 */
static int gpuctl_nl_rule_orphans_to(struct genl_info *info,
				     const struct gpuctl_rule *tmpl,
				     struct gpuctl_rule *rule)
{
	int ret;

	if (!tmpl->id || rule->id != tmpl->id ||
	    !info->attrs[GPUCTL_A_RULE_ORPHAN])
		return 1;
	ret = gpuctl_nl_rule_orphans_adopt(info, rule->id, tmpl->driver);
	if (ret)
		return ret;
	/* No rule is new: nothing is announced. */
	gpuctl_reserve_refresh();
	return gpuctl_nl_rule_reply(info, rule);
}

/*
 * Track the functions a new rule names (they were not in the table), with
 * gpuctl_lock dropped as the bus scan wants, and take it again for the
 * reply and post_doit. The scan takes no device lock: it cannot wait on a
 * driver.
 */
static void gpuctl_nl_rule_rescan(void)
{
	mutex_unlock(&gpuctl_lock);
	gpuctl_inventory_rescan();
	mutex_lock(&gpuctl_lock);
	gpuctl_reserve_kick();
}

/**
 * gpuctl_nl_rule_new_doit() - add a rule, have it enforced, reply with it
 * @skb: the request
 * @info: the request
 *
 * The worker binds and takes the rule's devices after the reply; they are
 * "pending" until it did.
 *
 * Context: gpuctl_lock held by pre_doit; dropped while the bus is scanned.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_rule_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *match_attr = info->attrs[GPUCTL_A_RULE_MATCH];
	char why[GPUCTL_BLOCKED_LEN];
	struct gpuctl_rule tmpl, *rule;
	struct gpuctl_dev *busy;
	int ret;
	u32 id;

	ret = gpuctl_nl_rule_parse(info, &tmpl);
	if (!ret)
		ret = gpuctl_nl_rule_orphans_check(info);
	if (ret)
		return ret;

	rule = gpuctl_rule_find_match(&tmpl.match);
	if (rule) {
		ret = gpuctl_nl_rule_orphans_to(info, &tmpl, rule);
		if (ret <= 0)
			return ret;
		GPUCTL_SET_ERR_MSG_FMT(info->extack, match_attr,
				       "rule %u has this match already",
				       rule->id);
		return -EEXIST;
	}

	busy = tmpl.take ? gpuctl_nl_rule_busy(&tmpl) : NULL;
	if (busy) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, match_attr,
				       "%s is open by a VFIO user through %s",
				       pci_name(busy->pdev), busy->driver);
		return -EBUSY;
	}
	if (tmpl.take && gpuctl_nl_rule_vf_in_use(&tmpl, why, sizeof(why))) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, match_attr, "%s", why);
		return -EBUSY;
	}

	rule = gpuctl_rule_insert(&tmpl);
	if (IS_ERR(rule)) {
		if (PTR_ERR(rule) == -EEXIST)
			GPUCTL_SET_ERR_MSG_FMT(info->extack,
					       info->attrs[GPUCTL_A_RULE_ID],
					       "rule %u exists", tmpl.id);
		return PTR_ERR(rule);
	}

	id = rule->id;
	ret = gpuctl_nl_rule_orphans_adopt(info, id, rule->driver);
	if (ret) {
		/* no device points to it yet */
		gpuctl_rule_unlink(rule);
		kfree(rule);
		return ret;
	}
	/* Tracked functions it names are units now, with new roles. */
	gpuctl_inventory_prune();
	gpuctl_reserve_refresh();
	gpuctl_netlink_notify_rule(rule, GPUCTL_CMD_RULE_NEW_NTF);
	gpuctl_reserve_kick();

	/* A "VVVV:*" rule names only GPUs, which are all tracked. */
	if (!rule->match.any_device)
		gpuctl_nl_rule_rescan();

	rule = gpuctl_rule_find(id);
	if (!rule) {
		NL_SET_ERR_MSG(info->extack,
			       "the rule was deleted while it was applied");
		return -ENOENT;
	}
	return gpuctl_nl_rule_reply(info, rule);
}

/**
 * gpuctl_nl_rule_del_doit() - delete a rule and release its devices
 * @skb: the request
 * @info: the request; user_ptr[0] holds the rule pre_doit found
 *
 * The worker releases the devices after the reply; they are "pending"
 * until it did.
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_rule_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuctl_rule *rule = info->user_ptr[0];
	char why[GPUCTL_BLOCKED_LEN];
	struct gpuctl_dev *dev;
	unsigned long key;

	for (key = 0; (dev = gpuctl_inventory_next(&key)); key++) {
		if (dev->res.rule != rule)
			continue;
		if (dev->alloc) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
					       "%s is allocated to %u; delete the allocation first",
					       pci_name(dev->pdev),
					       dev->alloc->info.id);
			return -EBUSY;
		}
		if (dev->holder.open || gpuctl_reserve_vfio_busy(dev)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
					       "%s is open by a VFIO user; close it first",
					       pci_name(dev->pdev));
			return -EBUSY;
		}
		/* A PF on the rule's driver is unbound, and its VFs go. */
		if (!strcmp(dev->driver, rule->driver) &&
		    gpuctl_sriov_vf_in_use(dev->pdev, why, sizeof(why))) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL, "%s", why);
			return -EBUSY;
		}
	}

	gpuctl_netlink_notify_rule(rule, GPUCTL_CMD_RULE_DEL_NTF);
	gpuctl_rule_unlink(rule);
	/* What only it named leaves the table, to be released as orphans. */
	gpuctl_inventory_prune();
	gpuctl_reserve_refresh();
	kfree(rule);
	gpuctl_reserve_kick();
	return 0;
}

/**
 * gpuctl_nl_rule_get_doit() - reply with one rule
 * @skb: the request
 * @info: the request; user_ptr[0] holds the rule pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_rule_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return gpuctl_nl_rule_reply(info, info->user_ptr[0]);
}

static int gpuctl_nl_rule_fill_next(struct sk_buff *msg, unsigned long *key,
				    bool admin)
{
	struct gpuctl_rule *rule = gpuctl_rule_next(key);

	return rule ? gpuctl_nl_rule_fill(msg, rule) ?: 1 : 0;
}

/**
 * gpuctl_nl_rule_get_dumpit() - dump every rule in id order
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_RULE_GET,
			      gpuctl_nl_rule_fill_next, GPUCTL_NL_DUMP_ADMIN);
}
