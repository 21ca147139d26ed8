#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the newest installed kernel that has both an image and headers.
for f in /boot/vmlinuz-*; do
	r=${f#/boot/vmlinuz-}
	[ -d "/lib/modules/$r/build" ] && echo "$r"
done | sort -V | tail -n1
