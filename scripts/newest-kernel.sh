#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the newest installed kernel that has both an image and headers.
ls /boot/vmlinuz-* 2>/dev/null | sed 's,/boot/vmlinuz-,,' | sort -V |
	while read -r r; do [ -d "/lib/modules/$r/build" ] && echo "$r"; done | tail -n1
