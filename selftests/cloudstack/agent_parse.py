#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Reads gpudiscovery.sh output as CloudStack's KVM agent does, for the
# tests: python3-jsonschema checks it against gpudiscovery.schema.json,
# then the rules of LibvirtComputingResource.parseGpuDevicesFromResult()
# that a schema cannot say are applied in its order, with Gson's
# semantics: a missing or null required key, or an "enabled" that
# getAsInt() refuses (a boolean, a string), throws, and the exception
# drops that GPU and every GPU after it; an mdev or VF with an empty
# profile is skipped. The keys must come in the script's order.
#
# Usage: agent_parse.py [--rules-only] FILE
# Prints one line per device the agent makes ("PCI ADDR passthrough",
# "MDEV UUID PROFILE", "PCI VF PROFILE") and exits 1 when a GPU was
# dropped or the schema refused FILE. --rules-only skips the schema and
# the key order, to show what the agent itself does with a bad file.
import json
import os
import sys

import jsonschema

GPU_KEYS = ["pci_address", "vendor_id", "device_id", "vendor", "device",
            "driver", "pci_class", "iommu_group", "pci_root", "numa_node",
            "sriov_totalvfs", "sriov_numvfs", "max_instances", "video_ram",
            "max_heads", "max_resolution_x", "max_resolution_y",
            "full_passthrough", "vgpu_instances", "vf_instances"]
NUMBERS = ["max_instances", "video_ram", "max_heads", "max_resolution_x",
           "max_resolution_y"]
VGPU_KEYS = ["mdev_uuid", "profile_name"] + NUMBERS + ["libvirt_address",
                                                       "used_by_vm"]
VF_KEYS = ["vf_pci_address", "vf_profile"] + NUMBERS + ["libvirt_address",
                                                        "used_by_vm"]
FP_KEYS = ["enabled", "libvirt_address", "used_by_vm"]
ADDR_KEYS = ["domain", "bus", "slot", "function"]


class AgentError(Exception):
    pass


def required(obj, key):
    """JsonObject.get(key).getAsString(): missing or null throws"""
    if key not in obj or obj[key] is None:
        raise AgentError(f"required key {key} is missing or null")
    return obj[key]


def as_int(value):
    """JsonElement.getAsInt(): a number with no fraction; not a boolean"""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise AgentError(f"getAsInt() on {json.dumps(value)}")
    try:
        return int(value)
    except ValueError as err:
        raise AgentError(f"getAsInt() on {json.dumps(value)}") from err


def xml_address(bdf):
    """LibvirtGpuDef: split on ':' and '.', the domain fixed at 0x0000"""
    parts = bdf.replace(".", ":").split(":")
    if len(parts) != 3:
        raise AgentError(f"{bdf}: LibvirtGpuDef would build a wrong address")
    return {"domain": "0x0000", "bus": "0x" + parts[0],
            "slot": "0x" + parts[1], "function": "0x" + parts[2]}


def order(obj, keys, what):
    got = [k for k, _ in obj]
    if got != keys:
        raise SystemExit(f"agent_parse: {what}: keys {got}, want {keys}")


def check_order(doc):
    top = dict(doc)
    for gpu in top["gpus"]:
        order(gpu, GPU_KEYS, "gpu")
        g = dict(gpu)
        order(g["full_passthrough"], FP_KEYS, "full_passthrough")
        order(dict(g["full_passthrough"])["libvirt_address"], ADDR_KEYS,
              "libvirt_address")
        for m in g["vgpu_instances"]:
            order(m, VGPU_KEYS, "vgpu_instances[]")
        for v in g["vf_instances"]:
            order(v, VF_KEYS, "vf_instances[]")


def parse(doc):
    devices = []
    for gpu in required(doc, "gpus"):
        try:
            addr = required(gpu, "pci_address")
            for key in ["vendor_id", "vendor", "device_id", "device"]:
                required(gpu, key)
            vgpus = required(gpu, "vgpu_instances")
            vfs = required(gpu, "vf_instances")
            fp = required(gpu, "full_passthrough")
            as_int(required(fp, "enabled"))
            if fp["libvirt_address"] != xml_address(addr):
                raise AgentError(f"{addr}: libvirt_address "
                                 f"{fp['libvirt_address']} is not what "
                                 "LibvirtGpuDef builds")
            devices.append(f"PCI {addr} passthrough")
            for m in vgpus:
                profile = m.get("profile_name") or ""
                if profile:
                    devices.append(f"MDEV {m.get('mdev_uuid')} {profile}")
            for v in vfs:
                vf = required(v, "vf_pci_address")
                profile = required(v, "vf_profile")
                if profile:
                    xml_address(vf)
                    devices.append(f"PCI {vf} {profile}")
        except AgentError as err:
            rest = len(doc["gpus"]) - doc["gpus"].index(gpu)
            print(f"agent_parse: {err}: {rest} GPUs dropped", file=sys.stderr)
            return devices, False
    return devices, True


def main():
    args = sys.argv[1:]
    rules_only = args[:1] == ["--rules-only"]
    if rules_only:
        args = args[1:]
    if len(args) != 1:
        raise SystemExit("usage: agent_parse.py [--rules-only] FILE")
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    schema_path = os.path.join(os.path.dirname(__file__),
                               "gpudiscovery.schema.json")
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    doc = json.loads(text)
    if not rules_only:
        jsonschema.validate(doc, schema,
                            cls=jsonschema.validators.validator_for(schema))
        check_order(json.loads(text, object_pairs_hook=lambda p: p))
    devices, whole = parse(doc)
    for d in devices:
        print(d)
    sys.exit(0 if whole else 1)


if __name__ == "__main__":
    main()
