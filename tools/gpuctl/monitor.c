// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl monitor: print inventory changes, gpuctl's own actions, rule and
 * allocation changes, and VFIO opens and closes as the module announces
 * them, one line or one JSON document per event, until SIGINT or SIGTERM.
 * With --metrics DIR it also keeps DIR/gpuctl.prom current (metrics.c):
 * written at start and again after each burst of events, through a second
 * socket, since dump replies and events must not share one.
 */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"
#include "metrics.h"
#include "nl.h"

/* What a notification describes, and so how it is read and printed */
enum ntf_object {
	NTF_DEV,	/* dev-*-ntf and vfio-*-ntf */
	NTF_RULE,
	NTF_ALLOC,
	NTF_MDEV,
};

static enum ntf_object ntf_object(u8 cmd)
{
	switch (cmd) {
	case GPUCTL_CMD_RULE_NEW_NTF:
	case GPUCTL_CMD_RULE_DEL_NTF:
		return NTF_RULE;
	case GPUCTL_CMD_ALLOC_NEW_NTF:
	case GPUCTL_CMD_ALLOC_DEL_NTF:
	case GPUCTL_CMD_ALLOC_CHANGE_NTF:
		return NTF_ALLOC;
	case GPUCTL_CMD_MDEV_ADD_NTF:
	case GPUCTL_CMD_MDEV_DEL_NTF:
		return NTF_MDEV;
	default:
		return NTF_DEV;
	}
}

/* One event: a dev, rule, allocation or vGPU parsed from @nlh, then printed */
union ntf_msg {
	struct dev_info dev;
	struct rule_info rule;
	struct alloc_info alloc;
	struct vgpu_info vgpu;
};

static int ntf_parse(enum ntf_object obj, const struct nlmsghdr *nlh,
		     union ntf_msg *m)
{
	int ret;

	switch (obj) {
	case NTF_RULE:
		return rule_info_parse(nlh, &m->rule);
	case NTF_ALLOC:
		return alloc_info_parse(nlh, &m->alloc);
	case NTF_MDEV:
		return vgpu_info_parse(nlh, &m->vgpu);
	default:
		ret = dev_info_parse(nlh, &m->dev);
		if (!ret)
			dev_vgpu_type_read(&m->dev);
		return ret;
	}
}

static void ntf_print(enum ntf_object obj, const union ntf_msg *m)
{
	switch (obj) {
	case NTF_RULE:
		rule_info_print(&m->rule, RULE_FORM_LINE);
		break;
	case NTF_ALLOC:
		alloc_info_print(&m->alloc, ALLOC_FORM_LINE);
		break;
	case NTF_MDEV:
		vgpu_info_print(&m->vgpu);
		break;
	default:
		dev_info_print(&m->dev, NULL);
	}
}

static void ntf_release(enum ntf_object obj, union ntf_msg *m)
{
	if (obj == NTF_RULE)
		rule_info_release(&m->rule);
	else if (obj == NTF_ALLOC)
		alloc_info_release(&m->alloc);
}

static int monitor_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	enum ntf_object obj = ntf_object(genl->cmd);
	union ntf_msg m;
	const char *name;

	(void)data;
	/* an event this tool does not know yet is not an error */
	name = ntf_name(genl->cmd);
	if (!name)
		return MNL_CB_OK;
	memset(&m, 0, sizeof(m));
	if (ntf_parse(obj, nlh, &m)) {
		ntf_release(obj, &m);
		return MNL_CB_ERROR;
	}

	new_json_obj();
	print_string(PRINT_JSON, "name", NULL, name);
	print_string(PRINT_FP, NULL, "[%s] ", ntf_label(genl->cmd));
	open_json_object("msg");
	ntf_print(obj, &m);
	close_json_object();
	print_nl();
	delete_json_obj();
	ntf_release(obj, &m);
	return MNL_CB_OK;
}

/* The metrics file gpuctl monitor --metrics keeps, and what it knows */
struct monitor_metrics {
	struct nl_ctx nl;	/* for the dumps: events come on the other */
	char path[PATH_MAX];
	uint64_t lost;
};

/* Reads every event queued on @nl now, so that a burst costs one write */
static int monitor_drain(struct nl_ctx *nl)
{
	struct pollfd pfd = { .fd = nl_fd(nl), .events = POLLIN };
	int ret = 0;

	while (!ret && poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN))
		ret = nl_monitor_recv(nl, monitor_event_cb, NULL);
	return ret;
}

static int monitor_loop(struct nl_ctx *nl, int sfd, struct monitor_metrics *m)
{
	struct pollfd pfd[2] = {
		{ .fd = nl_fd(nl), .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
	};
	int ret;

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("gpuctl: poll");
			return EXIT_KERNEL;
		}
		/*
		 * SIGINT and SIGTERM are the normal way to stop. Read the
		 * signal, or it would still be pending, and fatal, once the
		 * mask is restored.
		 */
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				perror("gpuctl: signalfd");
			return EXIT_OK;
		}
		if (!pfd[0].revents)
			continue;
		ret = nl_monitor_recv(nl, monitor_event_cb, NULL);
		if (!ret && m)
			ret = monitor_drain(nl);
		if (ret == -ENOBUFS) {
			/* the socket overflowed; say so and keep listening */
			fprintf(stderr, "gpuctl: monitor: events lost\n");
			if (m)
				m->lost++;
		} else if (ret) {
			nl_perror(nl, ret);
			return EXIT_KERNEL;
		}
		/* a failed write leaves the last file; the next event retries */
		if (m)
			metrics_write(&m->nl, m->path, &m->lost);
	}
}

static int cmd_monitor_run(struct gpuctl *g, const char *dir)
{
	struct monitor_metrics *m = NULL;
	struct nl_ctx *nl;
	sigset_t mask, old;
	int sfd, ret;

	/* blocked first, so a signal during start-up is not lost either */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, &old) < 0) {
		perror("gpuctl: sigprocmask");
		return EXIT_KERNEL;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("gpuctl: signalfd");
		ret = EXIT_KERNEL;
		goto out_restore_mask;
	}
	ret = gpuctl_nl(g, &nl);
	if (ret)
		goto out_close_sfd;
	if (nl_monitor_join(nl)) {
		ret = EXIT_KERNEL;
		goto out_close_sfd;
	}
	if (dir) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			fprintf(stderr, "gpuctl: out of memory\n");
			ret = EXIT_KERNEL;
			goto out_close_sfd;
		}
		snprintf(m->path, sizeof(m->path), "%s/%s", dir, METRICS_FILE);
		/* after the join: an event from here on rewrites the file */
		if (nl_open(&m->nl)) {
			ret = EXIT_KERNEL;
			goto out_free;
		}
		if (metrics_write(&m->nl, m->path, &m->lost)) {
			ret = EXIT_KERNEL;
			goto out_close_metrics;
		}
	}
	ret = monitor_loop(nl, sfd, m);
out_close_metrics:
	if (m)
		nl_close(&m->nl);
out_free:
	free(m);
out_close_sfd:
	close(sfd);
out_restore_mask:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/**
 * cmd_monitor() - gpuctl monitor [ help ]
 * @g: the tool's state
 * @a: the words after "monitor"
 *
 * Return: the exit code.
 */
static int cmd_monitor(struct gpuctl *g, struct args *a)
{
	if (args_is(a, "help")) {
		object_help(stdout, &monitor_object);
		return EXIT_OK;
	}
	const char *dir = NULL;

	if (args_is(a, "--metrics")) {
		args_next(a);
		dir = args_next(a);
		if (!dir || !*dir) {
			fprintf(stderr, "gpuctl: monitor: --metrics needs a directory\n");
			return EXIT_USAGE;
		}
	}
	if (!args_end(a)) {
		fprintf(stderr,
			"gpuctl: monitor: unexpected argument \"%s\", try \"gpuctl monitor help\"\n",
			args_peek(a));
		return EXIT_USAGE;
	}
	if (g->dry_run)
		return EXIT_OK;
	return cmd_monitor_run(g, dir);
}

const struct object monitor_object = {
	.name = "monitor",
	.desc = "print the module's events as they happen",
	.run = cmd_monitor,
	.usage = "[ --metrics DIR ]",
	.notes = "--metrics DIR also keeps DIR/" METRICS_FILE " current, for the node\n"
		 "exporter's textfile collector.\n",
};
