/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_NL_H
#define _GPUCTL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

#include "utils.h"

#define NL_SEND_BUFSZ 4096

/*
 * Every function here returns 0 or a negative errno; the kernel's and
 * libmnl's conventions are turned into that in nl.c and nowhere else.
 */
struct nl_ctx {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
	u16 family;
	u32 mcgrp_monitor;
	u32 mcgrp_ledger;
	char *rbuf;
	char sbuf[NL_SEND_BUFSZ];
	char ext_msg[256];
};

int nl_open(struct nl_ctx *nl);
void nl_close(struct nl_ctx *nl);
struct nlmsghdr *nl_msg_start(struct nl_ctx *nl, u8 cmd, bool dump);
int nl_request(struct nl_ctx *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void (*reset)(void *data), void *data);

/*
 * The replies to a get or a dump, each parsed into one element of an
 * array that grows as they come. @parse fills a zeroed element and
 * returns 0, or -1 with errno set; @release, if set, frees what it
 * allocated.
 */
struct nl_list {
	size_t size;
	int (*parse)(const struct nlmsghdr *nlh, void *elem);
	void (*release)(void *elem);
	void *v;
	size_t n;
	size_t cap;
};

int nl_collect(struct nl_ctx *nl, struct nlmsghdr *nlh, struct nl_list *list);
int nl_collect_quiet(struct nl_ctx *nl, struct nlmsghdr *nlh,
		     struct nl_list *list);
void nl_list_free(struct nl_list *list);
int nl_attr_str_append(void *v, size_t *n, size_t size,
		       const struct nlattr *attr);
int nl_monitor_join(struct nl_ctx *nl);
int nl_monitor_recv(struct nl_ctx *nl, mnl_cb_t cb, void *data);
int nl_fd(const struct nl_ctx *nl);
void nl_perror(const struct nl_ctx *nl, int err);

#endif /* _GPUCTL_NL_H */
