/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The QEMU monitor of the VM a test runs in, through the port that
 * selftests/qemu/run.sh wires to $GPUCTL_QMP: commands and their answers,
 * and events such as DEVICE_DELETED.
 */
#ifndef _GPUCTL_QMP_H
#define _GPUCTL_QMP_H

#include <stddef.h>

#define QMP_TIMEOUT_MS	10000

/* Opens $GPUCTL_QMP and negotiates; the fd, -ENOENT when unset, or -errno. */
int qmp_open(void);

/*
 * Sends @execute with @args (a JSON object, or NULL) tagged @id and waits
 * for the answer that carries @id, skipping the greeting and events. The
 * answer goes to @answer. Returns 0 for "return", -EIO for "error",
 * -ETIMEDOUT.
 */
int qmp_exec(int fd, const char *execute, const char *args, const char *id,
	     char *answer, size_t len);

/*
 * Waits up to @timeout_ms for event @event about device @device
 * ("data": {"device": ...}). Returns 0 or -ETIMEDOUT.
 */
int qmp_wait_event(int fd, const char *event, const char *device,
		   int timeout_ms);

#endif /* _GPUCTL_QMP_H */
