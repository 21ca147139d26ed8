// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Reservation rules: their syntax, what they match, and the rule table.
 * Enforcing them is reserve.c's business.
 *
 * Locking: the table and every rule in it are under gpuctl_lock, which is
 * all that rule.c takes from inventory.c: the address and class helpers it
 * uses are pci-func.h's, so the rules depend on no state of the table.
 */

#include <linux/ctype.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>
#include <uapi/linux/gpuctl.h>

#include "inventory.h"
#include "rule.h"

/* Rule id -> struct gpuctl_rule, under gpuctl_lock. */
static DEFINE_XARRAY_ALLOC1(gpuctl_rules);

/*
 * The id the next rule gets (or the first free one after it). Readable in
 * /sys/module/gpuctl/parameters, and given at load by "gpuctl module
 * reload" from the module it replaces, so that no id is ever reused.
 */
static u32 gpuctl_rule_next_id;
module_param_named(next_rule_id, gpuctl_rule_next_id, uint, 0444);
MODULE_PARM_DESC(next_rule_id,
		 "The id the next reservation rule gets (gpuctl module reload carries it over)");

/* Exactly @n hex digits at @s, lower or upper case. */
static int gpuctl_parse_hex(const char *s, unsigned int n, unsigned int *v)
{
	unsigned int i;
	int h;

	*v = 0;
	for (i = 0; i < n; i++) {
		h = hex_to_bin(s[i]);
		if (h < 0)
			return -EINVAL;
		*v = *v << 4 | h;
	}
	return 0;
}

/**
 * gpuctl_parse_address() - parse a PCI address "DDDD:BB:DD.F"
 * @s: the string; only exactly that shape is accepted, in either case
 * @key: out: gpuctl_inventory_key() of the address
 *
 * Context: any.
 * Return: 0, or -EINVAL for anything else.
 */
int gpuctl_parse_address(const char *s, unsigned long *key)
{
	unsigned int domain, bus, slot, fn;

	if (strlen(s) != GPUCTL_ADDRESS_LEN || s[4] != ':' || s[7] != ':' ||
	    s[10] != '.')
		return -EINVAL;
	if (gpuctl_parse_hex(s, 4, &domain) ||
	    gpuctl_parse_hex(s + 5, 2, &bus) ||
	    gpuctl_parse_hex(s + 8, 2, &slot) ||
	    gpuctl_parse_hex(s + 11, 1, &fn) || slot > 0x1f || fn > 7)
		return -EINVAL;

	*key = gpuctl_inventory_key(domain, bus, PCI_DEVFN(slot, fn));
	return 0;
}

/**
 * gpuctl_match_parse() - parse what a rule matches
 * @s: "DDDD:BB:DD.F", "VVVV:DDDD", "VVVV:*" or "VVVV:DDDD:SSSS:SSSS"
 * @m: out: the match
 * @why: out: on error, a message for the operator
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int gpuctl_match_parse(const char *s, struct gpuctl_match *m, const char **why)
{
	size_t len = strlen(s);
	unsigned int v[4] = {};

	memset(m, 0, sizeof(*m));

	if (len == GPUCTL_ADDRESS_LEN) {
		m->by_address = true;
		if (gpuctl_parse_address(s, &m->key)) {
			*why = "malformed pci address, expected DDDD:BB:DD.F";
			return -EINVAL;
		}
		return 0;
	}

	*why = "expected DDDD:BB:DD.F, VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS";
	if (len < 6 || s[4] != ':' || gpuctl_parse_hex(s, 4, &v[0]))
		return -EINVAL;

	if (len == 6 && s[5] == '*') {
		m->any_device = true;
	} else if (len == 9 || len == 19) {
		if (gpuctl_parse_hex(s + 5, 4, &v[1]))
			return -EINVAL;
		if (len == 19) {
			if (s[9] != ':' || s[14] != ':' ||
			    gpuctl_parse_hex(s + 10, 4, &v[2]) ||
			    gpuctl_parse_hex(s + 15, 4, &v[3]))
				return -EINVAL;
			m->subsystem = true;
		}
	} else {
		return -EINVAL;
	}

	m->vendor = v[0];
	m->device = v[1];
	m->subvendor = v[2];
	m->subdevice = v[3];
	return 0;
}

/**
 * gpuctl_match_format() - the canonical, lower-case form of a match
 * @m: the match
 * @buf: out
 * @len: size of @buf, at least GPUCTL_MATCH_STR_LEN
 *
 * Context: any.
 */
void gpuctl_match_format(const struct gpuctl_match *m, char *buf, size_t len)
{
	unsigned long k = m->key;

	if (m->by_address)
		snprintf(buf, len, "%04lx:%02lx:%02lx.%lx", k >> 16,
			 (k >> 8) & 0xff, PCI_SLOT(k & 0xff), PCI_FUNC(k & 0xff));
	else if (m->any_device)
		snprintf(buf, len, "%04x:*", m->vendor);
	else if (m->subsystem)
		snprintf(buf, len, "%04x:%04x:%04x:%04x", m->vendor, m->device,
			 m->subvendor, m->subdevice);
	else
		snprintf(buf, len, "%04x:%04x", m->vendor, m->device);
}

/**
 * gpuctl_match_equal() - whether two matches select the same devices
 * @a: one match
 * @b: the other
 *
 * Context: any.
 * Return: true when they are the same match.
 */
bool gpuctl_match_equal(const struct gpuctl_match *a,
			const struct gpuctl_match *b)
{
	char sa[GPUCTL_MATCH_STR_LEN], sb[GPUCTL_MATCH_STR_LEN];

	gpuctl_match_format(a, sa, sizeof(sa));
	gpuctl_match_format(b, sb, sizeof(sb));
	return !strcmp(sa, sb);
}

/**
 * gpuctl_match_pdev() - whether a match selects a PCI function
 * @m: the match
 * @pdev: the function
 *
 * Context: any.
 * Return: true when it does.
 */
bool gpuctl_match_pdev(const struct gpuctl_match *m, const struct pci_dev *pdev)
{
	if (m->by_address)
		return m->key == gpuctl_inventory_key(pci_domain_nr(pdev->bus),
						      pdev->bus->number,
						      pdev->devfn);

	return pdev->vendor == m->vendor &&
	       (m->any_device || pdev->device == m->device) &&
	       (!m->subsystem || (pdev->subsystem_vendor == m->subvendor &&
				  pdev->subsystem_device == m->subdevice));
}

/**
 * gpuctl_rule_driver_vf_only() - whether a rule's driver takes only VFs
 * @name: the driver name
 *
 * NVIDIA's vGPU 17+ driver registers each of its VFs as a VFIO device
 * (vfio-pci-core), so a vendor VF is reserved by staying on "nvidia";
 * but a PF on "nvidia" is the host's, so such a rule never binds one.
 *
 * Context: any.
 * Return: true for "nvidia".
 */
bool gpuctl_rule_driver_vf_only(const char *name)
{
	return !strcmp(name, "nvidia");
}

/**
 * gpuctl_rule_check_driver() - whether a driver may be a rule's target
 * @name: the driver name
 * @why: out: on error, a message for the operator, to follow the name
 *
 * Only drivers that leave DMA to userspace keep a GPU away from the host:
 * vfio-pci, its variants (their names all contain "vfio") and pci-stub;
 * and, for NVIDIA's vendor VFs alone, the host driver "nvidia", which
 * makes each VF a VFIO device itself (gpuctl_rule_driver_vf_only()).
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int gpuctl_rule_check_driver(const char *name, const char **why)
{
	const char *c;

	if (!*name || strlen(name) >= GPUCTL_DRIVER_NAME_LEN) {
		*why = "empty or too long";
		return -EINVAL;
	}
	for (c = name; *c; c++) {
		if (!isalnum(*c) && *c != '-' && *c != '_') {
			*why = "only letters, digits, - and _ allowed";
			return -EINVAL;
		}
	}
	if (!strstr(name, "vfio") && strcmp(name, "pci-stub") &&
	    !gpuctl_rule_driver_vf_only(name)) {
		*why = "not vfio-pci, a vfio variant, pci-stub or nvidia";
		return -EINVAL;
	}
	return 0;
}

/**
 * gpuctl_rule_parse_param() - parse one rule of the "reserve" parameter
 * @s: "MATCH[@DRIVER][+force][+take]"; modified
 * @rule: out: match, driver (vfio-pci by default), force and take
 * @why: out: on error, a message for the operator
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int gpuctl_rule_parse_param(char *s, struct gpuctl_rule *rule,
			    const char **why)
{
	char *flags = strchr(s, '+');
	char *driver, *flag;

	memset(rule, 0, sizeof(*rule));
	strscpy(rule->driver, "vfio-pci", sizeof(rule->driver));

	if (flags) {
		*flags++ = '\0';
		while ((flag = strsep(&flags, "+"))) {
			if (!strcmp(flag, "force")) {
				rule->force = true;
			} else if (!strcmp(flag, "take")) {
				rule->take = true;
			} else {
				*why = "unknown flag, expected +force or +take";
				return -EINVAL;
			}
		}
	}

	driver = strchr(s, '@');
	if (driver) {
		*driver++ = '\0';
		if (gpuctl_rule_check_driver(driver, why))
			return -EINVAL;
		strscpy(rule->driver, driver, sizeof(rule->driver));
	}
	return gpuctl_match_parse(s, &rule->match, why);
}

/**
 * gpuctl_rule_insert() - add a rule to the table
 * @tmpl: the rule; copied. With an id (a rule a module reload carries
 *	over), the rule takes it, or the call fails with -EEXIST.
 *
 * Otherwise ids count up from next_rule_id and are not reused, across a
 * module reload too, so a client never mistakes a new rule for one it
 * deleted.
 *
 * Context: gpuctl_lock held; sleeps.
 * Return: the new rule, or an ERR_PTR().
 */
struct gpuctl_rule *gpuctl_rule_insert(const struct gpuctl_rule *tmpl)
{
	struct gpuctl_rule *rule;
	int ret;

	lockdep_assert_held(&gpuctl_lock);

	rule = kmemdup(tmpl, sizeof(*rule), GFP_KERNEL);
	if (!rule)
		return ERR_PTR(-ENOMEM);

	if (tmpl->id) {
		/* a rule carried over by a module reload keeps its id */
		ret = xa_insert(&gpuctl_rules, tmpl->id, rule, GFP_KERNEL);
		if (ret == -EBUSY)
			ret = -EEXIST;
	} else {
		ret = xa_alloc_cyclic(&gpuctl_rules, &rule->id, rule,
				      xa_limit_32b, &gpuctl_rule_next_id,
				      GFP_KERNEL);
	}
	if (ret < 0) {
		kfree(rule);
		return ERR_PTR(ret);
	}
	return rule;
}

/**
 * gpuctl_rule_unlink() - take a rule out of the table
 * @rule: the rule; the caller frees it with kfree() once no device points
 *	to it any more (gpuctl_reserve_refresh())
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_rule_unlink(struct gpuctl_rule *rule)
{
	lockdep_assert_held(&gpuctl_lock);
	xa_erase(&gpuctl_rules, rule->id);
}

/**
 * gpuctl_rule_find() - look up a rule by id
 * @id: the id
 *
 * Context: gpuctl_lock held.
 * Return: the rule or NULL.
 */
struct gpuctl_rule *gpuctl_rule_find(u32 id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_load(&gpuctl_rules, id);
}

/**
 * gpuctl_rule_find_match() - look up a rule by what it matches
 * @m: the match
 *
 * Context: gpuctl_lock held.
 * Return: the rule with the same match, or NULL.
 */
struct gpuctl_rule *gpuctl_rule_find_match(const struct gpuctl_match *m)
{
	struct gpuctl_rule *rule;
	unsigned long id;

	lockdep_assert_held(&gpuctl_lock);

	xa_for_each(&gpuctl_rules, id, rule) {
		if (gpuctl_match_equal(&rule->match, m))
			return rule;
	}
	return NULL;
}

/**
 * gpuctl_rule_next() - iterate over rules in id order
 * @id: in: the first id to consider; out: the id of the returned rule
 *
 * Context: gpuctl_lock held.
 * Return: the first rule with an id of at least *@id, or NULL.
 */
struct gpuctl_rule *gpuctl_rule_next(unsigned long *id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_find(&gpuctl_rules, id, ULONG_MAX, XA_PRESENT);
}

/**
 * gpuctl_rule_never() - whether a function is the host's own plumbing
 * @pdev: the function
 * @what: out: when it is, what it is, for the operator
 *
 * No rule may reserve these, whatever it names: a VM has no use for them
 * and the host cannot lose them (vfio-pci would even put an idle host
 * bridge into D3). They are bridges of every kind (host, ISA/LPC,
 * PCI-to-PCI: base class 0x06, and any function with a bridge header),
 * base system peripherals (0x08: IOMMUs, interrupt controllers, timers),
 * memory controllers (0x05), processors (0x0b) and SMBus controllers
 * (0x0c05).
 *
 * Context: any.
 * Return: true when no rule may reserve it.
 */
bool gpuctl_rule_never(const struct pci_dev *pdev, const char **what)
{
	switch (pdev->class >> 16) {
	case PCI_BASE_CLASS_BRIDGE:
		*what = "a bridge";
		return true;
	case PCI_BASE_CLASS_SYSTEM:
		*what = "a base system peripheral";
		return true;
	case PCI_BASE_CLASS_MEMORY:
		*what = "a memory controller";
		return true;
	case PCI_BASE_CLASS_PROCESSOR:
		*what = "a processor";
		return true;
	}
	if (pdev->class >> 8 == PCI_CLASS_SERIAL_SMBUS) {
		*what = "an SMBus controller";
		return true;
	}
	/* pci_is_bridge(), which takes no const pointer. */
	if (pdev->hdr_type == PCI_HEADER_TYPE_BRIDGE ||
	    pdev->hdr_type == PCI_HEADER_TYPE_CARDBUS) {
		*what = "a bridge";
		return true;
	}
	return false;
}

/**
 * gpuctl_match_names_never() - whether a match names the host's plumbing
 * @m: the match
 * @buf: out: when it does, what the function is, for the operator
 * @len: size of @buf
 *
 * A match by address of a present function that no rule may reserve
 * (gpuctl_rule_never()) would do nothing at all, so rule-new and the
 * module parameter refuse it.
 *
 * Context: process.
 * Return: true when it does.
 */
bool gpuctl_match_names_never(const struct gpuctl_match *m, char *buf,
			      size_t len)
{
	struct pci_dev *pdev;
	const char *what;
	bool never;

	if (!m->by_address)
		return false;
	pdev = pci_get_domain_bus_and_slot(m->key >> 16, (m->key >> 8) & 0xff,
					   m->key & 0xff);
	if (!pdev)
		return false;
	never = gpuctl_rule_never(pdev, &what);
	if (never)
		snprintf(buf, len, "%s is %s (class 0x%06x)", pci_name(pdev),
			 what, pdev->class);
	pci_dev_put(pdev);
	return never;
}

/**
 * gpuctl_rule_selects() - whether a rule reserves a function by itself
 * @rule: the rule (or a template)
 * @pdev: the function
 *
 * A rule that names a function, by its address or by exact ids, selects
 * it whatever its class: operators hand NICs, NVMe drives and their VFs to
 * VMs too. A "VVVV:*" rule selects only GPUs, so that "8086:*" can never
 * take a host's chipset or its disk controller, and no rule selects the
 * host's plumbing (gpuctl_rule_never()).
 *
 * Context: any.
 * Return: true when it does.
 */
bool gpuctl_rule_selects(const struct gpuctl_rule *rule,
			 const struct pci_dev *pdev)
{
	const char *what;

	if (!gpuctl_match_pdev(&rule->match, pdev))
		return false;
	if (gpuctl_inventory_is_gpu(pdev))
		return true;
	return !rule->match.any_device && !gpuctl_rule_never(pdev, &what);
}

/**
 * gpuctl_rule_for_pdev() - the rule that reserves a unit
 * @pdev: the unit: a GPU or a function a rule names
 *
 * Context: gpuctl_lock held.
 * Return: the oldest rule that selects it, or NULL.
 */
struct gpuctl_rule *gpuctl_rule_for_pdev(const struct pci_dev *pdev)
{
	struct gpuctl_rule *rule;
	unsigned long id;

	lockdep_assert_held(&gpuctl_lock);

	xa_for_each(&gpuctl_rules, id, rule) {
		if (gpuctl_rule_selects(rule, pdev))
			return rule;
	}
	return NULL;
}

/**
 * gpuctl_rule_flush() - free every rule
 *
 * Context: module exit, once no device points to a rule; takes gpuctl_lock.
 */
void gpuctl_rule_flush(void)
{
	struct gpuctl_rule *rule;
	unsigned long id;

	mutex_lock(&gpuctl_lock);
	xa_for_each(&gpuctl_rules, id, rule) {
		gpuctl_rule_unlink(rule);
		kfree(rule);
	}
	mutex_unlock(&gpuctl_lock);
}
