#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check gpuctl export kubevirt's output as KubeVirt would take it.

usage: check_permitted.py FILE [FILE...]
       check_permitted.py --each FILE...

Each FILE (YAML, or JSON, which YAML's parser reads too) must hold the
same document. With --each, each FILE is checked on its own, its errors
or "accepted" printed after "FILE: ", so that one run (Python starts
slowly under TCG) can check many broken files. It is checked against permittedHostDevices.schema.json
(python3-jsonschema), then against the rules KubeVirt and Kubernetes
apply beyond the structure:
  - pciVendorSelector is sysfs's "vendor:device" in lower case, the form
    virt-handler compares with what it reads from sysfs;
  - mdevNameSelector has no space: virt-handler reads an mdev's type
    name with each space made '_' and compares it with the selector;
  - resourceName is a Kubernetes extended resource name (below), and
    each is used once: two entries of one name would pool two models
    in one resource;
  - no selector is listed twice, and each matches something on this
    host: a PCI function KubeVirt's PCI plugin takes (bound to vfio-pci,
    or an NVIDIA vendor VF on nvidia with a non-zero current_vgpu_type)
    or an mdev type of a parent here.
It then prints what KubeVirt's device plugins would advertise from this
host's sysfs, one line per device: "PCI RESOURCE ADDRESS" and
"MDEV RESOURCE UUID". Errors go to stderr, and the exit status is 1.
"""

import json
import os
import re
import sys

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SYS = os.environ.get("SYSFS_ROOT", "/sys")

# Kubernetes' qualified name (the docs' "Syntax and character set" of
# labels and annotations): an optional DNS subdomain prefix of at most 253
# characters, lower-case labels that begin and end with a letter or digit,
# then '/', then a name of at most 63 characters that begins and ends with
# a letter or digit and has only letters, digits, '-', '_' and '.'.
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(rf"^{DNS_LABEL}(\.{DNS_LABEL})*$")
NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def qualified_name_error(name):
    """Why NAME is no qualified name, or None."""
    prefix, slash, last = name.rpartition("/")
    if slash and not prefix:
        return "empty prefix"
    if prefix:
        if len(prefix) > 253:
            return "prefix longer than 253 characters"
        if not DNS_SUBDOMAIN.match(prefix):
            return "prefix is no DNS subdomain"
    if not last:
        return "empty name"
    if len(last) > 63:
        return "name longer than 63 characters"
    if not NAME.match(last):
        return "name has characters other than [-A-Za-z0-9_.] or does not begin and end with one of [A-Za-z0-9]"
    return None


def extended_resource_error(name):
    """Why NAME is no extended resource name (the docs' "Extended resources":
    a fully qualified name outside the kubernetes.io domain, and still
    one with "requests." before it, as a quota names it), or None."""
    if "/" not in name:
        return "no domain: a name without '/' is a native resource"
    if "kubernetes.io" in name:
        return "in the kubernetes.io domain"
    if name.startswith("requests."):
        return "begins with \"requests.\""
    return qualified_name_error(name) or qualified_name_error("requests." + name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def sysfs(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return default


def pci_functions():
    """(address, "vendor:device") of each function KubeVirt's PCI plugin
    takes: on vfio-pci, or a vendor VF on nvidia with a vGPU type."""
    base = f"{SYS}/bus/pci/devices"
    for addr in sorted(os.listdir(base)):
        d = f"{base}/{addr}"
        drv = os.path.basename(os.readlink(f"{d}/driver")) if os.path.exists(f"{d}/driver") else ""
        if drv == "nvidia":
            if not os.path.exists(f"{d}/physfn") or sysfs(f"{d}/nvidia/current_vgpu_type", "0") == "0":
                continue
        elif drv != "vfio-pci":
            continue
        ids = f"{sysfs(d + '/vendor')[2:]}:{sysfs(d + '/device')[2:]}"
        yield addr, ids


def mdev_type_names():
    """Each mdev type's name on this host as virt-handler reads it."""
    names = set()
    base = f"{SYS}/class/mdev_bus"
    for parent in os.listdir(base) if os.path.isdir(base) else []:
        types = f"{base}/{parent}/mdev_supported_types"
        for t in os.listdir(types) if os.path.isdir(types) else []:
            names.add(sysfs(f"{types}/{t}/name", t).replace(" ", "_"))
    return names


def mdevs():
    """(uuid, type name) of each mdev, its type's name as virt-handler
    reads it: the name file, else the type's id, spaces made '_'."""
    base = f"{SYS}/bus/mdev/devices"
    for uuid in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        t = f"{base}/{uuid}/mdev_type"
        name = sysfs(f"{t}/name")
        if name is None:
            name = os.path.basename(os.readlink(t))
        yield uuid, name.replace(" ", "_").strip()


def check(doc):
    errors = []
    with open(f"{HERE}/permittedHostDevices.schema.json", encoding="utf-8") as f:
        schema = json.load(f)
    v = jsonschema.Draft202012Validator(schema)
    for e in sorted(v.iter_errors(doc), key=str):
        where = "/".join(str(p) for p in e.absolute_path)
        errors.append(f"ValidationError at {where or '(top)'}: {e.message}")
    if errors:
        return errors, {}, {}
    phd = doc["spec"]["configuration"]["permittedHostDevices"]
    pci_ids = {ids for _, ids in pci_functions()}
    type_names = mdev_type_names()
    resources = set()
    pci, mdev = {}, {}
    for kind, key, entries, table in (("pci", "pciVendorSelector", phd["pciHostDevices"], pci),
                                      ("mdev", "mdevNameSelector", phd["mediatedDevices"], mdev)):
        for e in entries:
            sel, res = e[key], e["resourceName"]
            if kind == "pci" and sel != sel.lower():
                errors.append(f"{key} \"{sel}\" is not sysfs's vendor:device in lower case")
            if kind == "mdev" and " " in sel:
                errors.append(f"{key} \"{sel}\" has a space, which KubeVirt reads as '_'")
            if sel in table:
                errors.append(f"{key} \"{sel}\" is listed twice")
            why = extended_resource_error(res)
            if why:
                errors.append(f"resourceName \"{res}\" is no extended resource name: {why}")
            if res in resources:
                errors.append(f"resourceName \"{res}\" is used twice")
            resources.add(res)
            if sel not in (pci_ids if kind == "pci" else type_names):
                errors.append(f"{key} \"{sel}\" matches nothing on this host")
            if not e.get("externalResourceProvider", False):
                table[sel] = res
    return errors, pci, mdev


def each(paths):
    """Check each of PATHS on its own; 1 if any is refused."""
    rc = 0
    for p in paths:
        errors, _, _ = check(read(p))
        for e in errors or ["accepted"]:
            print(f"{p}: {e}")
        rc |= bool(errors)
    return rc


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--each":
        return each(sys.argv[2:])
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    docs = [read(p) for p in sys.argv[1:]]
    for p, d in zip(sys.argv[2:], docs[1:]):
        if d != docs[0]:
            print(f"{p} differs from {sys.argv[1]}", file=sys.stderr)
            return 1
    errors, pci, mdev = check(docs[0])
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    # what the plugins advertise: virt-handler's maps, keyed by selector
    for addr, ids in pci_functions():
        if ids in pci:
            print(f"PCI {pci[ids]} {addr}")
    for uuid, name in mdevs():
        if name in mdev:
            print(f"MDEV {mdev[name]} {uuid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
