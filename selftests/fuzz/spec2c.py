#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Turn a YNL spec into the C tables the fuzzer walks (types in spec.h), so
# that a new op or attribute in the spec is fuzzed without editing the
# fuzzer. The spec is read with the kernel's own YNL library (nlspec.py in
# linux-source's tools/net/ynl/lib), so ids and subsets follow the same
# rules as the generated uapi header and kernel policies.
#
# Usage: spec2c.py YNL_LIB_DIR SCHEMA SPEC > spec-gen.c

import sys

sys.dont_write_bytecode = True

KINDS = {
    'flag': 'FZ_FLAG', 'u8': 'FZ_U8', 'u16': 'FZ_U16', 'u32': 'FZ_U32',
    'u64': 'FZ_U64', 's8': 'FZ_S8', 's16': 'FZ_S16', 's32': 'FZ_S32',
    's64': 'FZ_S64', 'uint': 'FZ_U64', 'sint': 'FZ_S64',
    'string': 'FZ_STRING', 'binary': 'FZ_BINARY', 'nest': 'FZ_NEST',
    'pad': 'FZ_PAD', 'bitfield32': 'FZ_BITFIELD32',
}
LIMITS = {'u8-max': 0xff, 'u16-max': 0xffff, 'u32-max': 0xffffffff,
          's8-min': -0x80, 's8-max': 0x7f, 's16-min': -0x8000,
          's16-max': 0x7fff, 's32-min': -0x80000000, 's32-max': 0x7fffffff}


def c_str(s):
    return 'NULL' if s is None else '"%s"' % s


def c_bool(b):
    return 'true' if b else 'false'


def ident(*parts):
    return '_'.join(['fz'] + [p.replace('-', '_') for p in parts])


def check_value(family, v):
    """A check's value and the constant it names: int, constant, limit."""
    if isinstance(v, int):
        return v, None
    if v in LIMITS:
        return LIMITS[v], None
    return family.consts[v]['value'], v


def attr_init(family, attr):
    checks = attr.yaml.get('checks', {})
    f = ['.name = %s' % c_str(attr.name), '.type = %d' % attr.value,
         '.kind = %s' % KINDS.get(attr.type, 'FZ_OTHER')]
    if attr.is_multi:
        f.append('.multi = true')
    if attr.byte_order == 'big-endian':
        f.append('.big_endian = true')
    for key, field in (('max-len', 'max_len'), ('min-len', 'min_len'),
                       ('exact-len', 'exact_len')):
        if key in checks:
            val, const = check_value(family, checks[key])
            f.append('.%s = %d' % (field, val))
            if const:
                f.append('.len_const = %s' % c_str(const))
    for key in ('min', 'max'):
        if key in checks:
            val = check_value(family, checks[key])[0]
            f.append('.has_%s = true, .%s = %dLL' % (key, key, val))
    if 'unterminated-ok' in checks:
        f.append('.unterminated_ok = true')
    enum = attr.yaml.get('enum')
    if enum:
        eset = family.consts[enum]
        f.append('.enum_vals = %s, .enum_names = %s_names, .n_enum = %d'
                 % (ident('enum', enum), ident('enum', enum),
                    len(eset.entries)))
        if eset['type'] == 'flags' or attr.yaml.get('enum-as-flags'):
            f.append('.enum_flags = true')
    if attr.type == 'nest':
        nest = attr.yaml['nested-attributes']
        f.append('.nest = %d' % list(family.attr_sets).index(nest))
    return '{ ' + ', '.join(f) + ' }'


def emit_enums(family, out):
    for name, c in family.consts.items():
        if c['type'] not in ('enum', 'flags'):
            continue
        vals = ', '.join('%dLL' % e.user_value() for e in c.entries.values())
        names = ', '.join(c_str(n) for n in c.entries)
        out.append('static const long long %s[] = { %s };'
                   % (ident('enum', name), vals))
        out.append('static const char *const %s_names[] = { %s };'
                   % (ident('enum', name), names))


def emit_sets(family, out):
    inits = []
    for name, attr_set in family.attr_sets.items():
        out.append('static const struct fz_attr %s[] = {'
                   % ident('attrs', name))
        for attr in attr_set.attrs.values():
            out.append('\t%s,' % attr_init(family, attr))
        out.append('};')
        inits.append('\t{ .name = %s, .attrs = %s, .n = %d, .max_type = %d },'
                     % (c_str(name), ident('attrs', name),
                        len(attr_set.attrs), max(attr_set.attrs_by_val)))
    return inits


def index_list(out, name, attr_set, names):
    idx = [str(list(attr_set.attrs).index(n)) for n in names]
    out.append('static const unsigned short %s[] = { %s };'
               % (name, ', '.join(idx) or '0'))


def mode_init(out, op, mode):
    if mode not in op.yaml:
        return '{ 0 }'
    m = op.yaml[mode] or {}
    req = m.get('request', {}).get('attributes', [])
    rsp = m.get('reply', {}).get('attributes', [])
    base = ident(op.name, mode)
    index_list(out, base + '_req', op.attr_set, req)
    index_list(out, base + '_rsp', op.attr_set, rsp)
    return ('{ .present = true, .req = %s_req, .n_req = %d, .rsp = %s_rsp, '
            '.n_rsp = %d, .has_reply = %s }'
            % (base, len(req), base, len(rsp), c_bool('reply' in m)))


def emit_ops(family, ops, out):
    inits = []
    sets = list(family.attr_sets)
    for op in ops:
        # admin-perm, uns-admin-perm: either way not for an unprivileged user
        admin = any('admin-perm' in f for f in op.yaml.get('flags', []))
        modes = [mode_init(out, op, m) for m in ('do', 'dump')]
        inits.append('\t{ .name = %s, .cmd = %d, .admin = %s, .set = %d,\n'
                     '\t  .mode = { %s } },'
                     % (c_str(op.name), op.req_value, c_bool(admin),
                        sets.index(op.attr_set.name),
                        ',\n\t\t    '.join(modes)))
    return inits


def emit_ntfs(family, ops):
    names = [op.name for op in ops]
    sets = list(family.attr_sets)
    inits = []
    for n in family.ntfs.values():
        target = n.yaml.get('notify')
        inits.append('\t{ .name = %s, .cmd = %d, .op = %d, .set = %d },'
                     % (c_str(n.name), n.rsp_value,
                        names.index(target) if target in names else -1,
                        sets.index(n.attr_set.name)))
    return inits


def main():
    lib, schema, spec_path = sys.argv[1:4]
    sys.path.insert(0, lib)
    from nlspec import SpecFamily

    family = SpecFamily(spec_path, schema)
    ops = [op for op in family.ops.values() if not op.is_resv]
    out = ['/* SPDX-License-Identifier: GPL-2.0 */',
           '/* Generated by selftests/fuzz/spec2c.py from the spec. */',
           '#include "spec.h"', '']
    emit_enums(family, out)
    sets = emit_sets(family, out)
    op_inits = emit_ops(family, ops, out)
    ntfs = emit_ntfs(family, ops)
    grps = ', '.join(c_str(g) for g in family.mcast_groups) or 'NULL'
    out += ['', 'static const struct fz_set fz_sets[] = {'] + sets + ['};']
    out += ['static const struct fz_op fz_ops[] = {'] + op_inits + ['};']
    out += ['static const struct fz_ntf fz_ntfs[] = {'] + ntfs + ['};']
    out += ['static const char *const fz_mcgrps[] = { %s };' % grps, '',
            'const struct fz_spec fz_spec = {',
            '\t.family = %s,' % c_str(family.yaml['name']),
            '\t.sets = fz_sets, .n_sets = %d,' % len(sets),
            '\t.ops = fz_ops, .n_ops = %d,' % len(op_inits),
            '\t.ntfs = fz_ntfs, .n_ntfs = %d,' % len(ntfs),
            '\t.mcgrps = fz_mcgrps, .n_mcgrps = %d,'
            % len(family.mcast_groups),
            '};']
    print('\n'.join(out))


if __name__ == '__main__':
    main()
