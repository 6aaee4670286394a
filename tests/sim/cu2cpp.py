#!/usr/bin/env python3
"""cu2cpp.py: turn yolov9_kernels.cu into plain C++ for tests/sim/cuda_sim.h.

The simulator runs the CUDA backend's own source on the CPU (no GPU, no
CUDA toolkit): each block's threads are fibers, __syncthreads() and the
warp's collective instructions are the points where they meet. Three
things in a .cu file are not C++, and this script rewrites them, nothing
else:
  - a launch, kernel<<<grid, block, bytes>>>(args): a call of sim_launch
    with a lambda that calls the kernel, as a function, with the arguments
    evaluated at the launch, as the kernel's parameters (a recorded
    launch, run later by a graph, sees them as they were);
  - an inline PTX statement, asm volatile("ptx" : outputs : inputs : clobbers):
    a call of the simulator's twin of that instruction (ldmatrix, mma.sync,
    cp.async; the Hopper path's wgmma, mbarriers and copy-engine boxes);
    an instruction it does not know is an error;
  - extern __shared__ T name[]: a pointer to the block's dynamic shared memory.
The CUDA headers are replaced by cuda_sim.h.

usage: cu2cpp.py yolov9_kernels.cu out.cpp"""
import re
import sys


def skip_string(s, i):
    """index after the string or char literal starting at s[i]"""
    q = s[i]
    i += 1
    while s[i] != q:
        i += 2 if s[i] == '\\' else 1
    return i + 1


def match_paren(s, i):
    """index after the ')' matching the '(' at s[i]"""
    depth = 0
    while True:
        c = s[i]
        if c in '"\'':
            i = skip_string(s, i)
            continue
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def split_top(s, sep):
    """s split at sep outside parentheses, brackets and strings"""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c in '"\'':
            i = skip_string(s, i)
            continue
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return parts


def operands(section):
    """the C++ expressions of an asm operand list: "constraint"(expr), ..."""
    out = []
    for op in split_top(section, ','):
        op = op.strip().replace('\\\n', ' ')
        if not op:
            continue
        m = re.match(r'^"[^"]*"\s*\((.*)\)$', op, re.S)
        if not m:
            sys.exit('cu2cpp: an asm operand not understood: %r' % op)
        out.append(m.group(1).strip())
    return out


def asm_call(body, line):
    """the simulator's call standing for asm volatile(body)"""
    sections = split_top(body, ':')
    ptx = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', sections[0]))
    known = [('ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'sim_ldmatrix_x4(1, %s)'),
             ('ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'sim_ldmatrix_x4(0, %s)'),
             ('mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32', 'sim_mma16816(0, %s)'),
             ('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', 'sim_mma16816(1, %s)'),
             ('mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32', 'sim_mma1688(%s)'),
             ('cp.async.cg.shared.global [%0], [%1], 16, %2;', 'sim_cp_async16(%s)'),
             ('cp.async.commit_group', 'sim_cp_async_commit()'),
             ('cp.async.wait_group', 'sim_cp_async_wait(%s)'),
             # the Hopper path: wgmma runs when its warpgroup has all arrived (its fences and waits have
             # nothing to wait for), the copy engine's boxes land when their mbarrier's phase is waited on
             ('wgmma.fence', '(void)0'), ('wgmma.commit_group', '(void)0'), ('wgmma.wait_group', '(void)0'),
             ('fence.proxy.async', '(void)0'), ('fence.mbarrier_init', '(void)0'),
             ('mbarrier.init.shared::cta.b64 [%0], 1;', 'sim_mbar_init(%s)'),
             ('mbarrier.expect_tx', 'sim_mbar_expect(%s)'),
             ('mbarrier.arrive', 'sim_mbar_arrive(%s)'),
             ('{\\n.reg .pred p;\\nmbarrier.try_wait.parity', 'sim_mbar_try_wait(%s)'),
             ('cp.async.bulk.tensor.2d.shared::cluster.global.tile', 'sim_tma_tile_2d(%s)'),
             ('cp.async.bulk.tensor.4d.shared::cluster.global.im2col', 'sim_tma_im2col_4d(%s)')]
    wg = re.search(r'wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16', ptx)
    if wg:   # the macro WGMMA_M64N<N>K16(TYPES) inside Wgmma<T, N>::mma<TA, TB>(d, da, db)
        return 'sim_wgmma(%s, TYPES, d, da, db, TA, TB)' % wg.group(1)
    if ptx == '':
        return '(void)0'   # a compiler barrier on registers: nothing to do on a CPU
    for prefix, call in known:
        if ptx.startswith(prefix):
            outs = operands(sections[1]) if len(sections) > 1 else []
            ins = operands(sections[2]) if len(sections) > 2 else []
            return call % ', '.join(outs + ins) if '%s' in call else call
    sys.exit('cu2cpp: yolov9_kernels.cu:%d: an instruction the simulator does not know: %s' % (line, ptx[:80]))


def rewrite_asm(src):
    out, i = [], 0
    pat = re.compile(r'\basm\s+volatile\s*\(')
    while True:
        m = pat.search(src, i)
        if not m:
            break
        end = match_paren(src, m.end() - 1)
        line = src.count('\n', 0, m.start()) + 1
        out.append(src[i:m.start()])
        call = asm_call(src[m.end():end - 1], line)
        # as many lines as the original (inside a macro, each continued)
        text = src[m.start():end]
        out.append(call + (' \\\n' if '\\\n' in text else '\n') * text.count('\n'))
        i = end
    out.append(src[i:])
    return ''.join(out)


def kernel_start(src, j):
    """start of the kernel expression ending at src[j] (a name, maybe <template arguments>)"""
    k = j
    if src[k - 1] == '>':
        depth, k = 0, k - 1
        while True:
            depth += {'>': 1, '<': -1}.get(src[k], 0)
            if depth == 0:
                break
            k -= 1
    while k > 0 and (src[k - 1].isalnum() or src[k - 1] in '_:'):
        k -= 1
    return k


def rewrite_launches(src):
    """kernel<<<config>>>(args) -> sim_launch("kernel", sim_config(config), [sim_a = std::make_tuple(args)]
    { std::apply([](const auto &...sim_v) { kernel(sim_v...); }, sim_a); }): the arguments evaluated once,
    at the launch (NULL as nullptr, which a tuple keeps a null pointer), with which each simulated thread
    calls the kernel, as a function"""
    while '<<<' in src:
        j = src.index('<<<')
        e = src.index('>>>', j)
        k = kernel_start(src, j)
        a = e + 3
        while src[a].isspace():
            a += 1
        end = match_paren(src, a)
        kernel = src[k:j]
        args = re.sub(r'\bNULL\b', 'nullptr', src[a:end])
        src = (src[:k] + 'sim_launch("%s", sim_config(%s), [sim_a = std::make_tuple%s] '
               '{ std::apply([](const auto &...sim_v) { %s(sim_v...); }, sim_a); })'
               % (kernel.replace('"', ''), src[j + 3:e], args, kernel) + src[end:])
    return src


def main():
    src = open(sys.argv[1]).read()
    src = rewrite_asm(src)
    src = re.sub(r'#include <(cuda|cudaTypedefs|cuda_runtime|cuda_fp16|cuda_bf16)\.h>', '', src)
    src = '#include "cuda_sim.h"\n#line 1 "%s"\n' % sys.argv[1] + src
    src = re.sub(r'extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s+(\w+)\[\];',
                 r'\1 *\2 = (\1 *)sim_dyn_smem;', src)
    src = rewrite_launches(src)
    open(sys.argv[2], 'w').write(src)


main()
