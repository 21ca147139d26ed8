#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian 12's Nova (python3-nova, Zed) and the python3-* packages
# it imports into build/nova-root, for selftests/nova/nova_check.py, which
# reads gpuctl export nova's output with Nova's own parsers in the guest
# (no network there). Nothing is installed into the system: the packages
# are fetched with apt-get download into /var/cache/gpuctl/nova
# (GPUCTL_CACHE) and unpacked with dpkg-deb -x. Installing python3-nova
# would pull about 236 packages and start services.
#
# The list is the least that lets Debian's /usr/bin/python3 -S (no
# system site-packages, so nothing the host happens to have counts)
# import nova.conf, nova.config (parse_args()), nova.objects, nova.pci.devspec,
# nova.pci.request, nova.pci.whitelist,
# nova.compute.pci_placement_translator and nova.virt.libvirt.driver,
# whose LibvirtDriver._get_supported_vgpu_types() holds the [mdev_*]
# checks; found by importing them and adding each missing module's
# package. The C extensions among them need libxslt1.1 and libsodium23,
# which scripts/install-deps.sh installs.
#
# Idempotent: quiet, and nothing fetched, when build/nova-root has this
# list. Usage: scripts/fetch-nova.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${GPUCTL_CACHE:-/var/cache/gpuctl}/nova
root=$top/build/nova-root

pkgs="python3-nova
	python3-alembic python3-appdirs python3-attr python3-autopage
	python3-bcrypt python3-castellan python3-certifi python3-cffi
	python3-cffi-backend python3-charset-normalizer python3-cinderclient
	python3-cliff python3-cryptography python3-cursive python3-dateutil
	python3-debtcollector python3-decorator python3-dnspython
	python3-dogpile.cache python3-eventlet python3-fasteners
	python3-glanceclient python3-greenlet python3-idna
	python3-importlib-metadata python3-iso8601 python3-jinja2
	python3-jmespath python3-json-pointer python3-jsonpatch
	python3-jsonschema python3-keystoneauth1 python3-lxml python3-mako
	python3-markupsafe python3-more-itertools python3-msgpack python3-munch
	python3-nacl python3-netaddr python3-netifaces python3-neutronclient
	python3-openssl python3-openstacksdk python3-os-brick
	python3-os-resource-classes python3-os-service-types python3-os-traits
	python3-os-vif python3-oslo.cache python3-oslo.concurrency
	python3-oslo.config python3-oslo.context python3-oslo.db
	python3-oslo.i18n python3-oslo.limit python3-oslo.log python3-oslo.messaging
	python3-oslo.middleware
	python3-oslo.metrics python3-oslo.policy python3-oslo.privsep
	python3-oslo.serialization python3-oslo.service python3-oslo.utils
	python3-oslo.versionedobjects python3-packaging python3-paramiko
	python3-pbr python3-pkg-resources python3-ply python3-prettytable
	python3-pycparser python3-pyrsistent python3-requests
	python3-requestsexceptions python3-retrying python3-rfc3986 python3-six
	python3-sqlalchemy python3-stevedore python3-tenacity python3-tz
	python3-urllib3 python3-warlock python3-wcwidth python3-webob
	python3-wrapt python3-yaml python3-yappi python3-zipp"
# one line per package, so that a changed list unpacks again
# shellcheck disable=SC2086 # a list of package names
pkgs=$(printf '%s\n' $pkgs)

if [ -f "$root/.stamp" ] && [ "$(cat "$root/.stamp")" = "$pkgs" ]; then
	exit 0
fi

mkdir -p "$cache"
missing=()
for p in $pkgs; do
	debs=("$cache/${p}_"*.deb)
	[ -f "${debs[-1]}" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	# Package lists may be missing or stale on a machine whose other
	# packages were all installed already.
	(cd "$cache" && { apt-get download "${missing[@]}" ||
		{ apt-get update -q && apt-get download "${missing[@]}"; }; }) >&2 || {
		echo "gpuctl: cannot fetch Nova's packages into $cache" >&2
		exit 1
	}
fi

rm -rf "$root"
mkdir -p "$root"
for p in $pkgs; do
	debs=("$cache/${p}_"*.deb)
	dpkg-deb -x "${debs[-1]}" "$root"
done
# Compiled now, as the packages' postinst would: the guests see the tree
# read-only and would compile every module on each import, under TCG.
/usr/bin/python3 -m compileall -q -j 0 "$root/usr/lib/python3/dist-packages" >/dev/null || {
	echo "gpuctl: cannot compile Nova's modules in $root" >&2
	exit 1
}
PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -S -W ignore -c '
import nova.conf, nova.config, nova.objects, nova.pci.devspec, nova.pci.request
import nova.pci.whitelist; nova.objects.register_all()
import nova.compute.pci_placement_translator, nova.virt.libvirt.driver' || {
	echo "gpuctl: Nova does not import from $root" >&2
	exit 1
}
echo "$pkgs" >"$root/.stamp"
