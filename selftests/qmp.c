// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * A QMP client as small as the tests need; see qmp.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qmp.h"
#include "testlib.h"

/*
 * Reads lines until @match says one is the line wanted, which goes to
 * @line. Lines come one JSON object each; an overlong one is dropped.
 * Returns 0 or -ETIMEDOUT, -ECONNRESET, -errno.
 */
static int qmp_read_until(int fd, bool (*match)(const char *line,
						const void *arg),
			  const void *arg, char *line, size_t len,
			  int timeout_ms)
{
	long deadline = tl_now_ms() + timeout_ms;
	char buf[8192];
	size_t used = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long left = deadline - tl_now_ms();
		char *nl;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		used += n;
		buf[used] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (match(buf, arg)) {
				strscpy(line, buf, len);
				return 0;
			}
			used -= nl + 1 - buf;
			memmove(buf, nl + 1, used + 1);
		}
		if (used == sizeof(buf) - 1)
			used = 0;
	}
}

static bool has_id(const char *line, const void *arg)
{
	const char *id = arg;
	char tag[128];

	snprintf(tag, sizeof(tag), "\"id\": \"%s\"", id);
	if (strstr(line, tag))
		return true;
	snprintf(tag, sizeof(tag), "\"id\":\"%s\"", id);
	return strstr(line, tag);
}

int qmp_exec(int fd, const char *execute, const char *args, const char *id,
	     char *answer, size_t len)
{
	char cmd[512];
	int ret;

	snprintf(cmd, sizeof(cmd), "{\"execute\": \"%s\", %s%s%s\"id\": \"%s\"}\n",
		 execute, args ? "\"arguments\": " : "", args ?: "",
		 args ? ", " : "", id);
	fprintf(stderr, "# to QMP: %s", cmd);
	if (write(fd, cmd, strlen(cmd)) < 0)
		return -errno;
	ret = qmp_read_until(fd, has_id, id, answer, len, QMP_TIMEOUT_MS);
	if (ret)
		return ret;
	return strstr(answer, "\"return\"") ? 0 : -EIO;
}

struct event_want {
	const char *event;
	const char *device;
};

static bool is_event(const char *line, const void *arg)
{
	const struct event_want *w = arg;
	char tag[128];

	snprintf(tag, sizeof(tag), "\"event\": \"%s\"", w->event);
	if (!strstr(line, tag))
		return false;
	snprintf(tag, sizeof(tag), "\"device\": \"%s\"", w->device);
	return strstr(line, tag);
}

int qmp_wait_event(int fd, const char *event, const char *device,
		   int timeout_ms)
{
	struct event_want w = { event, device };
	char line[1024];

	return qmp_read_until(fd, is_event, &w, line, sizeof(line), timeout_ms);
}

int qmp_open(void)
{
	const char *path = getenv("GPUCTL_QMP");
	char answer[512];
	int fd;

	if (!path)
		return -ENOENT;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "already negotiated" is an error too, and fine. */
	qmp_exec(fd, "qmp_capabilities", NULL, "caps", answer, sizeof(answer));
	return fd;
}
