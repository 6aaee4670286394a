#!/usr/bin/env python3
"""ptx_diff.py: which kernels of two PTX files of yolov9_kernels.cu differ.

A reorganisation of the kernel file that moves code without changing it
must leave every kernel's PTX the same: that is its evidence that the fast
paths keep their speed without a GPU to time them. This splits each file
into its entries (.entry, and the .func a kernel calls), compares them by
name (block labels and local depots, named by the function's number in
the file, renumbered), and the module's declarations (shared arrays, globals) as a
set. PTX of: nvcc -O3 -gencode=arch=compute_90a,code=compute_90a
-DYOLO_TIER=90 -ptx yolov9_kernels.cu (the Hopper tier), -arch=compute_80
-DYOLO_TIER=80 -ptx (the Ampere tier).

usage: ptx_diff.py A.ptx B.ptx     (exit 1 when any entry differs)
       ptx_diff.py --list A.ptx     (name and md5 of every entry)"""
import hashlib
import re
import sys


def split(path):
    """(declarations, {name: text}) of a PTX file"""
    decls, entries, cur, name = set(), {}, None, None
    for line in open(path):
        if cur is None:
            m = re.match(r'^(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)', line)
            if m:
                cur, name = [line], m.group(1)
                if line.rstrip().endswith(';'):   # a prototype
                    decls.add(line.strip())
                    cur = None
                continue
            if line.startswith(('.shared', '.global', '.const', '.extern')):
                decls.add(line.strip())
            continue
        # block labels and local depots carry the function's number in the file
        cur.append(re.sub(r'__local_depot\d+', '__local_depot', re.sub(r'\$L__BB\d+_', '$L__BB_', line)))
        if line.rstrip() == '}':
            entries[name] = ''.join(cur)
            cur = None
    return decls, entries


def main():
    if sys.argv[1] == '--list':
        _, e = split(sys.argv[2])
        for n in sorted(e):
            print(hashlib.md5(e[n].encode()).hexdigest(), n)
        return 0
    da, ea = split(sys.argv[1])
    db, eb = split(sys.argv[2])
    same = [n for n in ea if n in eb and ea[n] == eb[n]]
    diff = [n for n in ea if n in eb and ea[n] != eb[n]]
    only_a = sorted(set(ea) - set(eb))
    only_b = sorted(set(eb) - set(ea))
    print('%d entries the same, %d differ, %d only in %s, %d only in %s' % (len(same), len(diff), len(only_a), sys.argv[1],
                                                                          len(only_b), sys.argv[2]))
    for title, names in (('differ', diff), ('only in A', only_a), ('only in B', only_b)):
        for n in names:
            print('  %s: %s' % (title, n))
    for d in sorted(da - db):
        print('  declaration only in A: %s' % d)
    for d in sorted(db - da):
        print('  declaration only in B: %s' % d)
    return 1 if diff or only_a or only_b or da != db else 0


sys.exit(main())
