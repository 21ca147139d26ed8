#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
#
# Read a nova.conf snippet (gpuctl export nova) as nova-compute does, with
# Debian 12's Nova (26.2.2, Zed) unpacked by scripts/fetch-nova.sh into
# build/nova-root, and print what Nova understood, for the shell test to
# compare with sysfs. Run by Debian's /usr/bin/python3 with -S, so only
# the unpacked packages count, not what the host has installed.
#
#   - nova.config.parse_args() loads the file into nova.conf's options
#     (oslo.config: repeated device_spec and alias keys are one value each);
#   - [pci] device_spec: nova.pci.whitelist.Whitelist, as init_host() and
#     the PCI tracker build it (PciDeviceSpec per entry), then matched
#     against every PCI function in sysfs, as libvirt reports them: dev_type
#     type-VF with a physfn, type-PF with SR-IOV capability, else type-PCI;
#   - the matched devices go through the Placement view nova-compute
#     builds (nova.compute.pci_placement_translator.PlacementView), which
#     refuses a PF next to its VFs and VFs of one PF in two classes;
#   - [pci] alias: nova.pci.request._get_alias_from_config() (its JSON
#     schema, then its checks);
#   - [devices] enabled_mdev_types and [mdev_*]: nova.conf.devices'
#     register_dynamic_opts(), then LibvirtDriver._get_supported_vgpu_types()
#     (the duplicate address and address format checks), on a driver object
#     that has only the mappings its __init__ gives them. max_instances,
#     which Zed does not know, is registered as Nova 2024.1 does (an
#     integer of at least 1) so that oslo.config parses it.
#
# Output, one line each:
#   SPEC ADDRESS VENDOR PRODUCT DEV_TYPE NUMA managed=VALUE rc=CLASS
#        live_migratable=VALUE
#   RP NAME CLASS COUNT
#   ALIAS NAME NUMA_POLICY DEV_TYPE VENDOR PRODUCT
#   MDEV TYPE PARENT CLASS MAX_INSTANCES|-
# A file Nova refuses: "EXCEPTION: message" on stderr, exit 1.
#
# Usage: nova_check.py FILE
#        nova_check.py --serve   (file names on stdin; see serve())

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get('GPUCTL_NOVA_ROOT',
                      os.path.join(HERE, '..', '..', 'build', 'nova-root'))
sys.path.insert(0, os.path.join(ROOT, 'usr', 'lib', 'python3',
                                'dist-packages'))

import collections  # noqa: E402
import warnings  # noqa: E402

warnings.simplefilter('ignore')

SYS_PCI = '/sys/bus/pci/devices'


def sysfs(addr, name):
    try:
        with open(os.path.join(SYS_PCI, addr, name)) as f:
            return f.read().strip()
    except OSError:
        return None


def host_devices(objects, fields):
    """Every PCI function, as nova-compute's PCI tracker gets it from libvirt."""
    devs = []
    for addr in sorted(os.listdir(SYS_PCI)):
        physfn = os.path.join(SYS_PCI, addr, 'physfn')
        parent = None
        if os.path.islink(physfn):
            parent = os.path.basename(os.readlink(physfn))
            dev_type = fields.PciDeviceType.SRIOV_VF
        elif int(sysfs(addr, 'sriov_totalvfs') or 0) > 0:
            dev_type = fields.PciDeviceType.SRIOV_PF
        else:
            dev_type = fields.PciDeviceType.STANDARD
        numa = int(sysfs(addr, 'numa_node') or -1)
        devs.append(objects.PciDevice(
            address=addr,
            vendor_id=sysfs(addr, 'vendor')[2:],
            product_id=sysfs(addr, 'device')[2:],
            dev_type=dev_type, parent_addr=parent,
            numa_node=numa if numa >= 0 else None,
            status=fields.PciDeviceStatus.AVAILABLE, instance_uuid=None,
            extra_info={}))
    return devs


def check_pci(CONF, objects, fields):
    from nova.compute import pci_placement_translator as ppt
    from nova.pci import whitelist

    wl = whitelist.Whitelist(CONF.pci.device_spec)
    ppt.ensure_no_dev_spec_with_devname(wl.specs)
    view = ppt.PlacementView('host', [])
    for dev in host_devices(objects, fields):
        spec = wl.get_devspec(dev)
        if not spec:
            continue
        tags = spec.get_tags()
        print('SPEC %s %s %s %s %s managed=%s rc=%s live_migratable=%s' % (
            dev.address, dev.vendor_id, dev.product_id, dev.dev_type,
            -1 if dev.numa_node is None else dev.numa_node,
            tags.get('managed', '-'), ppt._get_rc_for_dev(dev, tags),
            tags.get('live_migratable', '-')))
        view.process_dev(dev, spec)
    for rp in view.rps.values():
        print('RP %s %s %d' % (rp.name, rp.resource_class, len(rp.devs)))


def check_alias():
    from nova.pci import request

    for name, (policy, specs) in sorted(
            request._get_alias_from_config().items()):
        for s in specs:
            print('ALIAS %s %s %s %s %s' % (
                name, policy, s.get('dev_type', '-'),
                s.get('vendor_id', '-'), s.get('product_id', '-')))


def check_mdev(CONF):
    import nova.conf.devices
    from nova.virt.libvirt import driver as libvirt_driver
    from oslo_config import cfg
    import os_resource_classes as orc

    nova.conf.devices.register_dynamic_opts(CONF)
    for t in CONF.devices.enabled_mdev_types:
        CONF.register_opt(cfg.IntOpt('max_instances', default=None, min=1),
                          group='mdev_%s' % t)
    drv = libvirt_driver.LibvirtDriver.__new__(libvirt_driver.LibvirtDriver)
    drv.pgpu_type_mapping = collections.defaultdict(str)
    drv.mdev_class_mapping = collections.defaultdict(lambda: orc.VGPU)
    drv.mdev_classes = set([])
    types = drv._get_supported_vgpu_types()
    for addr, t in sorted(drv.pgpu_type_mapping.items()):
        group = getattr(CONF, 'mdev_%s' % t)
        print('MDEV %s %s %s %s' % (
            t, addr, drv.mdev_class_mapping[addr],
            '-' if group.max_instances is None else group.max_instances))
    for t in types:
        if t not in drv.pgpu_type_mapping.values():
            print('MDEV %s - %s -' % (t, orc.VGPU))


def check(path):
    """Nova's reading of one file: 0, or 1 with the exception on stderr."""
    import nova.conf
    from nova import config
    from nova import objects
    from nova.objects import fields

    objects.register_all()
    CONF = nova.conf.CONF
    try:
        config.parse_args(['nova-compute', '--config-file', path],
                          default_config_files=[], configure_db=False,
                          init_rpc=False)
        if 'pci' not in CONF.list_all_sections():
            raise ValueError('no [pci] section in %s' % path)
        check_pci(CONF, objects, fields)
        check_alias()
        check_mdev(CONF)
    except Exception as e:
        print('%s: %s' % (type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


def serve():
    """Read file names from stdin; for each, a child that reads it.

    Importing Nova takes a minute under TCG, so it is done once: each
    child starts from the imported modules and an unparsed CONF, and
    writes FILE.nova (stdout) and FILE.err (stderr); the server answers
    "rc N" per name.
    """
    import nova.conf  # noqa: F401
    from nova import config  # noqa: F401
    from nova import objects
    import nova.compute.pci_placement_translator  # noqa: F401
    import nova.pci.request  # noqa: F401
    import nova.pci.whitelist  # noqa: F401
    import nova.virt.libvirt.driver  # noqa: F401

    objects.register_all()
    print('ready', flush=True)
    for line in sys.stdin:
        path = line.rstrip('\n')
        pid = os.fork()
        if not pid:
            with open(path + '.nova', 'w') as out, \
                 open(path + '.err', 'w') as err:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = os.fdopen(1, 'w')
                sys.stderr = os.fdopen(2, 'w')
                rc = check(path)
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(rc)
        _, status = os.waitpid(pid, 0)
        print('rc %d' % os.waitstatus_to_exitcode(status), flush=True)
    return 0


def main():
    if sys.argv[1:] == ['--serve']:
        return serve()
    if len(sys.argv) != 2:
        print('usage: nova_check.py FILE | --serve', file=sys.stderr)
        return 2
    return check(sys.argv[1])


if __name__ == '__main__':
    sys.exit(main())
