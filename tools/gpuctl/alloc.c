// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl alloc: the ledger of which VM owns which GPU. The module keeps
 * it, picks GPUs for "count" requests and enforces it at VFIO open; this
 * file adds, deletes and shows allocations. Saving and restoring the
 * ledger is in ledger.c.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "holders.h"
#include "json_print.h"
#include "migration.h"

static int alloc_str(const struct nlattr *attr, char *buf, size_t size)
{
	if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return -1;
	snprintf(buf, size, "%s", mnl_attr_get_str(attr));
	return 0;
}

static int alloc_u32(const struct nlattr *attr, u32 *val)
{
	if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return -1;
	*val = mnl_attr_get_u32(attr);
	return 0;
}

/**
 * alloc_typed() - whether an allocation gave a vendor VF its type
 * @al: the allocation
 * @addr: the VF
 *
 * Return: true when the kernel lists @addr as "device-typed".
 */
bool alloc_typed(const struct alloc_info *al, const char *addr)
{
	size_t i;

	for (i = 0; i < al->ntyped; i++)
		if (!strcmp(al->typed[i], addr))
			return true;
	return false;
}

static int alloc_vgpu_attr(struct alloc_info *al, const struct nlattr *attr,
			   bool made)
{
	struct alloc_vgpu *v;

	if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return -1;
	v = realloc(al->vgpus, (al->nvgpus + 1) * sizeof(*v));
	if (!v)
		return -1;
	al->vgpus = v;
	snprintf(v[al->nvgpus].uuid, sizeof(v->uuid), "%s",
		 mnl_attr_get_str(attr));
	v[al->nvgpus++].made = made;
	return 0;
}

static int alloc_attr_add(struct alloc_info *al, const struct nlattr *attr)
{
	switch (mnl_attr_get_type(attr)) {
	case GPUCTL_A_ALLOC_ID:
		return alloc_u32(attr, &al->id);
	case GPUCTL_A_ALLOC_OWNER:
		return alloc_str(attr, al->owner, sizeof(al->owner));
	case GPUCTL_A_ALLOC_NAME:
		return alloc_str(attr, al->name, sizeof(al->name));
	case GPUCTL_A_ALLOC_ACCOUNT:
		return alloc_str(attr, al->labels[GPUCTL_LIMIT_SCOPE_ACCOUNT - 1],
				 sizeof(al->labels[0]));
	case GPUCTL_A_ALLOC_PROJECT:
		return alloc_str(attr, al->labels[GPUCTL_LIMIT_SCOPE_PROJECT - 1],
				 sizeof(al->labels[0]));
	case GPUCTL_A_ALLOC_DOMAIN:
		return alloc_str(attr, al->labels[GPUCTL_LIMIT_SCOPE_DOMAIN - 1],
				 sizeof(al->labels[0]));
	case GPUCTL_A_ALLOC_DEVICE:
		return nl_attr_str_append(&al->devs, &al->ndevs,
					  sizeof(*al->devs), attr);
	case GPUCTL_A_ALLOC_DEVICE_TYPED:
		return nl_attr_str_append(&al->typed, &al->ntyped,
					  sizeof(*al->typed), attr);
	case GPUCTL_A_ALLOC_DETACH_ON_STOP:
		al->detach_on_stop = true;
		break;
	case GPUCTL_A_ALLOC_UID:
		al->has_uid = true;
		return alloc_u32(attr, &al->uid);
	case GPUCTL_A_ALLOC_GID:
		al->has_gid = true;
		return alloc_u32(attr, &al->gid);
	case GPUCTL_A_ALLOC_STATE:
		return alloc_u32(attr, &al->state);
	case GPUCTL_A_ALLOC_STATE_REASON:
		al->has_state_reason = true;
		return alloc_str(attr, al->state_reason,
				 sizeof(al->state_reason));
	case GPUCTL_A_ALLOC_GPUS:
		return alloc_u32(attr, &al->gpus);
	case GPUCTL_A_ALLOC_END:
		return alloc_u32(attr, &al->end);
	case GPUCTL_A_ALLOC_MDEV:
		return alloc_vgpu_attr(al, attr, false);
	case GPUCTL_A_ALLOC_MDEV_MADE:
		return alloc_vgpu_attr(al, attr, true);
	}
	/* attributes from a newer module are skipped, not refused */
	return 0;
}

/**
 * alloc_info_parse() - read an alloc-get reply or an allocation notification
 * @nlh: the message
 * @al: a zeroed allocation, filled; free it with alloc_info_release()
 *
 * Return: 0, or -1 with errno set when an attribute is malformed.
 */
int alloc_info_parse(const struct nlmsghdr *nlh, struct alloc_info *al)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		if (alloc_attr_add(al, attr))
			return -1;
	return 0;
}

void alloc_info_release(struct alloc_info *al)
{
	free(al->devs);
	al->devs = NULL;
	al->ndevs = 0;
	free(al->typed);
	al->typed = NULL;
	al->ntyped = 0;
	free(al->vgpus);
	al->vgpus = NULL;
	al->nvgpus = 0;
	free(al->holders);
	al->holders = NULL;
	al->nholders = 0;
	free(al->blockers);
	al->blockers = NULL;
	al->nblockers = 0;
}

/* "name vm1" in text and "name":"vm1" in JSON, or "name":null */
static void print_label(const char *key, const char *value)
{
	char fmt[32];

	snprintf(fmt, sizeof(fmt), " %s %%s", key);
	print_string(value[0] ? PRINT_ANY : PRINT_JSON, key, fmt,
		     value[0] ? value : NULL);
}

static void print_opt_uint(const char *key, bool has, u32 value)
{
	char fmt[32];

	snprintf(fmt, sizeof(fmt), " %s %%u", key);
	if (has)
		print_uint(PRINT_ANY, key, fmt, value);
	else
		print_null(PRINT_JSON, key, NULL, NULL);
}

/*
 * Who has its devices open, "holders": one line in text, as
 * "ADDR COMM[PID] guest VM (MATCH)", each match but the owner's said.
 */
static void alloc_holders_print(const struct alloc_info *al)
{
	const struct alloc_holder *h;
	size_t i;

	if (al->nholders)
		print_string(PRINT_FP, NULL, "%s", "\n  holders:");
	open_json_array(PRINT_JSON, "holders");
	for (i = 0; i < al->nholders; i++) {
		h = &al->holders[i];
		open_json_object(NULL);
		print_string(PRINT_FP, NULL, "%s", i ? "," : "");
		print_string(PRINT_ANY, "dev", " %s", h->dev);
		print_uint(PRINT_JSON, "pid", NULL, h->pid);
		print_string(PRINT_JSON, "comm", NULL, h->comm[0] ? h->comm : NULL);
		print_string(PRINT_JSON, "vm", NULL, h->vm[0] ? h->vm : NULL);
		print_string(PRINT_JSON, "match", NULL, open_match_name(h->match));
		if (h->pid)
			print_string(PRINT_FP, NULL, " %s", h->comm);
		if (h->pid)
			print_uint(PRINT_FP, NULL, "[%u]", h->pid);
		else
			print_string(PRINT_FP, NULL, "%s", " unknown");
		if (h->vm[0])
			print_string(PRINT_FP, NULL, " guest %s", h->vm);
		if (h->match != GPUCTL_OPEN_MATCH_OWNER)
			print_string(PRINT_FP, NULL, " (%s)",
				     open_match_name(h->match));
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/*
 * Whether the VM could live-migrate with all it is given:
 * "live-migration: yes", or "live-migration: no, cannot migrate: ADDR UUID"
 * naming what cannot move its state
 */
static void alloc_migration_print(const struct alloc_info *al)
{
	size_t i;

	print_bool(PRINT_JSON, "live_migratable", NULL, !al->nblockers);
	print_string(PRINT_FP, NULL, "\n  live-migration: %s",
		     al->nblockers ? "no, cannot migrate:" : "yes");
	open_json_array(PRINT_JSON, "migration_blockers");
	for (i = 0; i < al->nblockers; i++)
		print_string(PRINT_ANY, NULL, " %s", al->blockers[i]);
	close_json_array(PRINT_JSON, NULL);
}

/**
 * alloc_info_print() - print one allocation, as lines, one line or JSON
 * @al: the allocation
 * @form: which text form; JSON is the same for both
 *
 * The caller ends the text with print_nl() and, in JSON, opens and
 * closes the object around it.
 */
void alloc_info_print(const struct alloc_info *al, enum alloc_form form)
{
	static const char *const label_keys[ALLOC_NR_LABELS] = {
		"account", "project", "domain",
	};
	char state[STATE_REASON_BUFSZ + 32];
	size_t i;

	print_uint(PRINT_ANY, "id", "alloc %u", al->id);
	print_string(PRINT_ANY, "owner", " owner %s", al->owner);
	print_label("name", al->name);
	for (i = 0; i < ALLOC_NR_LABELS; i++)
		print_label(label_keys[i], al->labels[i]);

	open_json_array(PRINT_JSON, "devices");
	for (i = 0; i < al->ndevs; i++)
		print_string(PRINT_JSON, NULL, NULL, al->devs[i]);
	close_json_array(PRINT_JSON, NULL);
	open_json_array(PRINT_JSON, "vf_typed");
	for (i = 0; i < al->ntyped; i++)
		print_string(PRINT_JSON, NULL, NULL, al->typed[i]);
	close_json_array(PRINT_JSON, NULL);
	open_json_array(PRINT_JSON, "vgpus");
	for (i = 0; i < al->nvgpus; i++) {
		open_json_object(NULL);
		print_string(PRINT_JSON, "uuid", NULL, al->vgpus[i].uuid);
		print_bool(PRINT_JSON, "made", NULL, al->vgpus[i].made);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);

	print_uint(PRINT_ANY, "gpus", " gpus %u", al->gpus);
	/* "lost (0000:0e:00.0 was removed)": the reason is the news */
	print_string(PRINT_JSON, "state", NULL, alloc_state_name(al->state));
	if (al->has_state_reason) {
		snprintf(state, sizeof(state), "%s (%s)",
			 alloc_state_name(al->state), al->state_reason);
		print_string(PRINT_JSON, "state_reason", NULL,
			     al->state_reason);
	} else {
		snprintf(state, sizeof(state), "%s",
			 alloc_state_name(al->state));
		print_null(PRINT_JSON, "state_reason", NULL, NULL);
	}
	print_string(PRINT_FP, NULL, " state %s", state);
	print_bool(PRINT_JSON, "detach_on_stop", NULL, al->detach_on_stop);
	if (al->detach_on_stop)
		print_string(PRINT_FP, NULL, "%s", " detach-on-stop");
	print_opt_uint("uid", al->has_uid, al->uid);
	print_opt_uint("gid", al->has_gid, al->gid);
	if (al->end)
		print_string(PRINT_ANY, "end", " end %s",
			     alloc_end_name(al->end));
	else
		print_null(PRINT_JSON, "end", NULL, NULL);

	/* in text the devices come last, on a line of their own in a block */
	print_string(PRINT_FP, NULL, "%s",
		     form == ALLOC_FORM_LINE ? " devices" : "\n  devices:");
	for (i = 0; i < al->ndevs; i++) {
		print_string(PRINT_FP, NULL, " %s", al->devs[i]);
		/* a vendor VF it gave its vGPU type */
		if (alloc_typed(al, al->devs[i]))
			print_string(PRINT_FP, NULL, "%s", " (typed)");
	}
	if (!al->ndevs)
		print_string(PRINT_FP, NULL, "%s", " -");
	/* vGPUs after the devices, "(made)" for those made for it */
	if (al->nvgpus)
		print_string(PRINT_FP, NULL, "%s",
			     form == ALLOC_FORM_LINE ? " vgpus" : "\n  vgpus:");
	for (i = 0; i < al->nvgpus; i++) {
		print_string(PRINT_FP, NULL, " %s", al->vgpus[i].uuid);
		if (al->vgpus[i].made)
			print_string(PRINT_FP, NULL, "%s", " (made)");
	}
	if (al->migration_read)
		alloc_migration_print(al);
	if (al->holders_read)
		alloc_holders_print(al);
}

static int alloc_parse(const struct nlmsghdr *nlh, void *elem)
{
	return alloc_info_parse(nlh, elem);
}

static void alloc_release(void *elem)
{
	alloc_info_release(elem);
}

/* An empty list of allocations for nl_collect(); free it with nl_list_free() */
void alloc_list_init(struct nl_list *list)
{
	*list = (struct nl_list){ .size = sizeof(struct alloc_info),
				  .parse = alloc_parse,
				  .release = alloc_release };
}

/* Allocations as {"allocations":[...]} or as text, two lines each */
void alloc_list_print(const struct nl_list *list)
{
	const struct alloc_info *v = list->v;
	size_t i;

	new_json_obj();
	open_json_array(PRINT_JSON, "allocations");
	for (i = 0; i < list->n; i++) {
		open_json_object(NULL);
		alloc_info_print(&v[i], ALLOC_FORM_BLOCK);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
}

/* alloc_new() without the message: the caller explains the failure */
static int alloc_new_quiet(struct nl_ctx *nl, const struct alloc_spec *s,
			   struct nl_list *list)
{
	static const u16 label_attrs[ALLOC_NR_LABELS] = {
		GPUCTL_A_ALLOC_ACCOUNT, GPUCTL_A_ALLOC_PROJECT,
		GPUCTL_A_ALLOC_DOMAIN,
	};
	struct nlmsghdr *nlh;
	size_t i;

	nlh = nl_msg_start(nl, GPUCTL_CMD_ALLOC_NEW, false);
	if (s->has_id)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_ID, s->id);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_OWNER, s->owner);
	if (s->name[0])
		mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_NAME, s->name);
	for (i = 0; i < ALLOC_NR_LABELS; i++)
		if (s->labels[i][0])
			mnl_attr_put_strz(nlh, label_attrs[i], s->labels[i]);
	/* 64 addresses take 1.5 KiB, well inside the send buffer */
	for (i = 0; i < s->ndevs; i++)
		mnl_attr_put_strz(nlh, s->dev_typed[i] ?
				  GPUCTL_A_ALLOC_DEVICE_TYPED :
				  GPUCTL_A_ALLOC_DEVICE, s->devs[i]);
	if (s->count)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_COUNT, s->count);
	if (s->match[0])
		mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_MATCH, s->match);
	if (s->has_numa)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_NUMA_NODE, s->numa_node);
	if (s->numa_policy)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_NUMA_POLICY,
				 s->numa_policy);
	if (s->detach_on_stop)
		mnl_attr_put(nlh, GPUCTL_A_ALLOC_DETACH_ON_STOP, 0, NULL);
	if (s->has_uid)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_UID, s->uid);
	if (s->has_gid)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_GID, s->gid);
	/* 64 UUIDs take 2.8 KiB, with the devices still inside the buffer */
	for (i = 0; i < s->nvgpus; i++)
		mnl_attr_put_strz(nlh, s->vgpus[i].made ?
				  GPUCTL_A_ALLOC_MDEV_MADE : GPUCTL_A_ALLOC_MDEV,
				  s->vgpus[i].uuid);
	return nl_collect_quiet(nl, nlh, list);
}

/**
 * alloc_new() - ask the kernel for an allocation
 * @nl: an open socket
 * @s: what to allocate
 * @list: an allocation list, given the allocation the kernel made
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int alloc_new(struct nl_ctx *nl, const struct alloc_spec *s,
	      struct nl_list *list)
{
	int ret = alloc_new_quiet(nl, s, list);

	if (ret)
		nl_perror(nl, ret);
	return ret;
}

/**
 * alloc_del() - end an allocation, or every allocation of a VM
 * @nl: an open socket
 * @id: the allocation's id, used when @owner is NULL
 * @owner: the VM's UUID in the kernel's form, or NULL
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int alloc_del(struct nl_ctx *nl, u32 id, const char *owner)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(nl, GPUCTL_CMD_ALLOC_DEL, false);
	if (owner)
		mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_OWNER, owner);
	else
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_ID, id);
	return nl_request(nl, nlh, NULL, NULL, NULL);
}

/**
 * alloc_handover() - end an allocation for the module that replaces this one
 * @nl: an open socket
 * @id: the allocation
 *
 * The kernel lets it go while its VM runs on a VFIO driver that stays
 * across an unload, and refuses, naming the device, where none does.
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int alloc_handover(struct nl_ctx *nl, u32 id)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(nl, GPUCTL_CMD_ALLOC_DEL, false);
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_ID, id);
	mnl_attr_put(nlh, GPUCTL_A_ALLOC_HANDOVER, 0, NULL);
	return nl_request(nl, nlh, NULL, NULL, NULL);
}

/**
 * alloc_dump() - every allocation, in id order
 * @nl: an open socket
 * @list: an empty allocation list, filled
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int alloc_dump(struct nl_ctx *nl, struct nl_list *list)
{
	return nl_collect(nl, nl_msg_start(nl, GPUCTL_CMD_ALLOC_GET, true),
			  list);
}

/*
 * How often "alloc add ... vgpu" places its vendor VFs again after another
 * request won one of them: each loss takes a VF out of the free ones, so
 * a bound is only a guard against a host that keeps typing VFs by hand.
 */
#define ALLOC_VF_TRIES 8

static int cmd_alloc_add(struct gpuctl *g, struct args *a)
{
	struct alloc_made made = {};
	char err[ALLOC_ERR_BUFSZ];
	struct alloc_spec s;
	struct nl_list list;
	struct nl_ctx *nl;
	int tries, ret;

	if (args_is(a, "help")) {
		object_help(stdout, &alloc_object);
		return EXIT_OK;
	}
	if (alloc_args_parse(a, &s, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: alloc add: %s\n", err);
		return EXIT_USAGE;
	}
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	for (tries = 1;; tries++) {
		if (s.vgpu_type[0]) {
			ret = alloc_vgpus_make(nl, &s, &made);
			if (ret) {
				fprintf(stderr, "gpuctl: cannot allocate for %s\n",
					s.owner);
				return ret;
			}
		}
		alloc_list_init(&list);
		ret = alloc_new_quiet(nl, &s, &list);
		if (!ret)
			break;
		nl_list_free(&list);
		/*
		 * A VF placed as free may have gone to a concurrent request
		 * between the dump and this one: place the VFs again.
		 */
		if (ret == -EBUSY && s.vgpu_type[0] && tries < ALLOC_VF_TRIES &&
		    alloc_vfs_lost(nl, &s, &made)) {
			alloc_vgpus_unmake(nl, &s, &made);
			continue;
		}
		nl_perror(nl, ret);
		fprintf(stderr, "gpuctl: cannot allocate for %s%s\n", s.owner,
			s.vgpu_type[0] ? "; removing the vGPUs made for it" :
					 "");
		if (s.vgpu_type[0])
			alloc_vgpus_unmake(nl, &s, &made);
		return EXIT_KERNEL;
	}
	alloc_list_print(&list);
	nl_list_free(&list);
	return EXIT_OK;
}

/* "ID", "id ID" or "owner UUID": what alloc del deletes */
static int alloc_del_args(struct args *a, u32 *id, char *owner, size_t size)
{
	const char *arg = args_next(a);

	if (!arg) {
		fprintf(stderr, "gpuctl: alloc del: missing ID or owner UUID\n");
		return -EINVAL;
	}
	owner[0] = '\0';
	if (!strcmp(arg, "owner")) {
		arg = args_next(a);
		if (arg && !uuid_parse(arg, owner, size))
			return 0;
		fprintf(stderr,
			"gpuctl: alloc del: invalid owner \"%s\", expected a UUID\n",
			arg ? arg : "");
		return -EINVAL;
	}
	if (!strcmp(arg, "id"))
		arg = args_next(a);
	if (arg && !parse_u32(arg, id))
		return 0;
	fprintf(stderr,
		"gpuctl: alloc del: invalid allocation id \"%s\", expected a number\n",
		arg ? arg : "");
	return -EINVAL;
}

/*
 * The allocations alloc del is about to delete, as they are now: the vGPUs
 * made for them are removed after the deletion. Quiet: the deletion
 * itself says what is wrong with the request.
 */
static void alloc_del_victims(struct nl_ctx *nl, u32 id, const char *owner,
			      struct nl_list *list)
{
	const struct alloc_info *v;
	struct nlmsghdr *nlh;
	size_t i, n = 0;

	nlh = nl_msg_start(nl, GPUCTL_CMD_ALLOC_GET, !!owner);
	if (!owner)
		mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_ID, id);
	if (nl_collect_quiet(nl, nlh, list)) {
		nl_list_free(list);
		alloc_list_init(list);
		return;
	}
	if (!owner)
		return;
	/* keep the owner's, in place */
	v = list->v;
	for (i = 0; i < list->n; i++) {
		if (strcmp(v[i].owner, owner)) {
			alloc_info_release((struct alloc_info *)&v[i]);
			continue;
		}
		if (n != i)
			memcpy((struct alloc_info *)&v[n], &v[i], sizeof(*v));
		n++;
	}
	list->n = n;
}

static int cmd_alloc_del(struct gpuctl *g, struct args *a)
{
	char owner[GPUCTL_UUID_LEN + 1];
	struct nl_list victims;
	struct nl_ctx *nl;
	bool keep = false;
	u32 id = 0;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &alloc_object);
		return EXIT_OK;
	}
	if (alloc_del_args(a, &id, owner, sizeof(owner)))
		return EXIT_USAGE;
	if (args_is(a, "keep")) {
		args_next(a);
		keep = true;
	}
	if (!args_done(a, "alloc del"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	alloc_list_init(&victims);
	if (!keep)
		alloc_del_victims(nl, id, owner[0] ? owner : NULL, &victims);
	if (alloc_del(nl, id, owner[0] ? owner : NULL)) {
		if (owner[0])
			fprintf(stderr,
				"gpuctl: cannot delete the allocations of %s\n",
				owner);
		else
			fprintf(stderr, "gpuctl: cannot delete allocation %u\n",
				id);
		nl_list_free(&victims);
		return EXIT_KERNEL;
	}
	ret = alloc_vgpus_remove(nl, &victims);
	nl_list_free(&victims);
	return ret;
}

static int alloc_holder_add(struct alloc_info *al, const char *dev, u32 pid,
			    const char *comm, const char *vm, u32 match)
{
	struct alloc_holder *h;

	h = realloc(al->holders, (al->nholders + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	al->holders = h;
	h = &h[al->nholders++];
	memset(h, 0, sizeof(*h));
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	h->pid = pid;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	snprintf(h->vm, sizeof(h->vm), "%s", vm);
	h->match = match;
	return 0;
}

/* One allocation's holders, from the devices and the vGPUs */
static void alloc_holders_of(struct alloc_info *al, const struct nl_list *devs,
			     const struct nl_list *vgpus)
{
	const struct dev_info *d = devs->v;
	const struct vgpu_info *v = vgpus->v;
	size_t i;

	al->holders_read = true;
	for (i = 0; i < devs->n; i++) {
		if (!d[i].has_holder || !d[i].has_allocation ||
		    d[i].allocation != al->id)
			continue;
		if (alloc_holder_add(al, d[i].address, d[i].holder_pid,
				     d[i].has_holder_comm ? d[i].holder_comm : "",
				     d[i].holder_vm, d[i].open_match))
			return;
	}
	for (i = 0; i < vgpus->n; i++) {
		if (!v[i].open || !v[i].has_allocation ||
		    v[i].allocation != al->id)
			continue;
		if (alloc_holder_add(al, v[i].uuid, v[i].holder_pid,
				     v[i].holder_comm, v[i].holder_vm,
				     v[i].has_holder ? v[i].holder_match :
				     GPUCTL_OPEN_MATCH_UNKNOWN))
			return;
	}
}

/*
 * What alloc show adds to the ledger: whether each allocation could
 * live-migrate (migration.c) and, for root, who has its devices and vGPUs
 * open, the module's holders and those found in /proc (holders.c)
 */
static void alloc_facts_read(struct gpuctl *g, struct nl_list *list)
{
	struct nl_list devs, vgpus;
	struct holders f = {};
	bool root = !geteuid();
	struct nl_ctx *nl;
	size_t i;

	if (gpuctl_nl(g, &nl) || dev_dump(nl, &devs))
		return;
	if (!vgpu_dump(nl, &vgpus)) {
		if (root) {
			/* one read of /proc for both */
			holders_fill(&devs, list, &f);
			holders_fill_vgpus(&vgpus, list, &f);
			holders_free(&f);
		}
		for (i = 0; i < list->n; i++) {
			struct alloc_info *al = (struct alloc_info *)list->v + i;

			if (root)
				alloc_holders_of(al, &devs, &vgpus);
			alloc_migration_read(al, &devs, &vgpus);
		}
		nl_list_free(&vgpus);
	}
	nl_list_free(&devs);
}

static int cmd_alloc_show(struct gpuctl *g, struct args *a)
{
	static const struct show_by_id show = {
		.cmd = "alloc show", .id_name = "allocation id",
		.one_name = "allocation", .object = &alloc_object,
		.nl_cmd = GPUCTL_CMD_ALLOC_GET, .id_attr = GPUCTL_A_ALLOC_ID,
	};
	struct nl_list list;
	bool collected;
	int ret;

	alloc_list_init(&list);
	ret = show_by_id(g, a, &show, &list, &collected);
	if (collected) {
		alloc_facts_read(g, &list);
		alloc_list_print(&list);
	}
	nl_list_free(&list);
	return ret;
}

/* save and restore take one FILE, "-" for stdout or stdin */
static int ledger_file_arg(struct args *a, const char *cmd, const char **file)
{
	*file = args_next(a);
	if (!*file) {
		fprintf(stderr, "gpuctl: alloc %s: missing FILE (- for std%s)\n",
			cmd, strcmp(cmd, "save") ? "in" : "out");
		return -EINVAL;
	}
	return 0;
}

static int cmd_alloc_save(struct gpuctl *g, struct args *a)
{
	const char *file;

	if (args_is(a, "help")) {
		object_help(stdout, &alloc_object);
		return EXIT_OK;
	}
	if (ledger_file_arg(a, "save", &file) || !args_done(a, "alloc save"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	return alloc_save(g, file);
}

static int cmd_alloc_restore(struct gpuctl *g, struct args *a)
{
	const char *file;

	if (args_is(a, "help")) {
		object_help(stdout, &alloc_object);
		return EXIT_OK;
	}
	if (ledger_file_arg(a, "restore", &file) ||
	    !args_done(a, "alloc restore"))
		return EXIT_USAGE;
	/* a dry run stops before the file is read, as apply's does */
	if (g->dry_run)
		return EXIT_OK;
	return alloc_restore(g, file);
}

static const struct cmd_entry alloc_cmds[] = {
	/* the continuation lines line up under "owner" */
	{ .name = "add", .fn = cmd_alloc_add,
	  .usage = "owner UUID [ name NAME ] [ account NAME ]\n"
		   "                        [ project NAME ] [ domain NAME ] PICK\n"
		   "                        [ detach-on-stop ] [ uid UID ] [ gid GID ] [ id ID ]" },
	{ .name = "del", .fn = cmd_alloc_del,
	  .usage = "{ ID | id ID | owner UUID } [ keep ]" },
	{ .name = "show", .fn = cmd_alloc_show, .usage = "[ ID ]" },
	{ .name = "save", .fn = cmd_alloc_save, .usage = "{ FILE | - }" },
	{ .name = "restore", .fn = cmd_alloc_restore, .usage = "{ FILE | - }" },
};

const struct object alloc_object = {
	.name = "alloc",
	.desc = "the ledger: which VM owns which reserved GPUs",
	.cmds = alloc_cmds,
	.ncmds = ARRAY_SIZE(alloc_cmds),
	.dflt = "show",
	.notes = "where  PICK := { dev ADDR [ dev ADDR ]... |\n"
		 "                 count N [ match IDS ] [ numa NODE [ policy POLICY ] ] }\n"
		 "                [ vgpu UUID ]... [ vgpu TYPE [ count N ] ]\n"
		 "       ADDR := { DDDD:BB:DD.F | BB:DD.F }, a reserved GPU\n"
		 "       IDS := { VVVV:DDDD | VVVV:* | VVVV:DDDD:SSSS:SSSS }\n"
		 "       POLICY := { required | preferred | legacy }\n",
};
