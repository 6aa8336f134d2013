"""A trace's memory behaviour without a cycle loop (docs/memory.md, *How to measure*).

Threads form fixed warps of ``warp_size`` consecutive threads of a CTA, and all threads of a warp
execute a memory instruction together as under a reconvergence stack at full convergence: the n-th
execution of instruction i by the warp's threads is one warp-level access (a thread that executes it
fewer times is inactive in the later ones). A warp's accesses run in program order (the earliest
position any of its threads executes them at, then instruction order); warps run one after another,
CTA by CTA, CTA c on SM ``c % n_sms``. Each access goes through the memory model's
:func:`~simt_fast.sim.memory.hierarchy.access`, so coalescing, bank conflicts and cache hits are
exactly what the timing model computes for such a schedule; cycles are not modelled (every access
issues at cycle 0), so only the counts mean something.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit
from .hierarchy import access
from .layout import C_CONST_ACCESSES, C_MEM_SECTORS, C_SHARED_PASSES, NO_ACCESS, SPACE_CONST, SPACE_SHARED


@jit
def _walk(block_mem_ptr, block_mem, mem_space, mem_kind, mem_bytes, dst_reg, path_ptr, path, mem_ptr, mem_addr,
          warp_size, tpc, n_sms, state, params, counters, inst_requests, inst_units):
    n_instrs = mem_space.shape[0]
    n_threads = path_ptr.shape[0] - 1
    n_ctas = n_threads // tpc
    wpc = (tpc + warp_size - 1) // warp_size
    occ = np.zeros(n_instrs, np.int64)  # executions of each instruction by the current thread so far
    seen = np.empty(n_instrs, np.int64)  # instructions the current thread executed
    most_occ = np.zeros(n_instrs, np.int64)  # most executions of each instruction by one thread of the warp
    first_group = np.zeros(n_instrs, np.int64)  # group id of each instruction's first execution
    warp_seen = np.empty(n_instrs, np.int64)  # instructions the warp executed
    addrs = np.empty(warp_size, np.int64)
    tids = np.empty(warp_size, np.int64)
    most = 0  # the most /mem entries of one warp: every per-warp buffer is allocated once
    for cta in range(n_ctas):
        for wi in range(wpc):
            t0 = cta * tpc + wi * warp_size
            most = max(most, mem_ptr[min(t0 + warp_size, (cta + 1) * tpc)] - mem_ptr[t0])
    e_instr = np.empty(most, np.int64)
    e_occ = np.empty(most, np.int64)
    e_pos = np.empty(most, np.int64)  # position in the thread's own access sequence
    e_lane = np.empty(most, np.int64)
    order = np.empty(most, np.int64)  # entries grouped by warp-level access
    starts = np.zeros(most + 2, np.int64)
    g_instr = np.empty(most, np.int64)
    g_key = np.empty(most, np.int64)
    for cta in range(n_ctas):
        sm = cta % n_sms
        for wi in range(wpc):
            t0 = cta * tpc + wi * warp_size
            t1 = min(t0 + warp_size, (cta + 1) * tpc)
            n_entries = mem_ptr[t1] - mem_ptr[t0]
            e = 0
            n_warp_seen = 0
            for t in range(t0, t1):
                n_seen = 0
                k = 0
                for step in range(path_ptr[t], path_ptr[t + 1]):
                    b = path[step]
                    for j in range(block_mem_ptr[b], block_mem_ptr[b + 1]):
                        instr = block_mem[j]
                        if occ[instr] == 0:
                            seen[n_seen] = instr
                            n_seen += 1
                        e_instr[e] = instr
                        e_occ[e] = occ[instr]
                        occ[instr] += 1
                        e_pos[e] = k
                        e_lane[e] = t - t0
                        e += 1
                        k += 1
                for j in range(n_seen):
                    i = seen[j]
                    if most_occ[i] == 0:
                        warp_seen[n_warp_seen] = i
                        n_warp_seen += 1
                    if occ[i] > most_occ[i]:
                        most_occ[i] = occ[i]
                    occ[i] = 0
            # The warp-level accesses are exactly (instruction i, occurrence < most_occ[i]): number them
            # densely and bucket the entries by them (a counting sort)
            n_groups = 0
            for j in range(n_warp_seen):
                i = warp_seen[j]
                first_group[i] = n_groups
                for g in range(n_groups, n_groups + most_occ[i]):
                    g_instr[g] = i
                    g_key[g] = -1  # earliest position, set below
                n_groups += most_occ[i]
                most_occ[i] = 0
            for g in range(n_groups + 2):
                starts[g] = 0
            for x in range(n_entries):
                g = first_group[e_instr[x]] + e_occ[x]
                starts[g + 2] += 1
                if g_key[g] < 0 or e_pos[x] < g_key[g]:
                    g_key[g] = e_pos[x]
            for g in range(n_groups):
                starts[g + 2] += starts[g + 1]
            for x in range(n_entries):
                g = first_group[e_instr[x]] + e_occ[x]
                order[starts[g + 1]] = x
                starts[g + 1] += 1
            # program order: the earliest position any thread executes the access at, then instruction
            for g in range(n_groups):
                g_key[g] = g_key[g] * n_instrs + g_instr[g]
            gorder = np.argsort(g_key[:n_groups], kind="mergesort")  # ties: same instruction, lower occurrence first
            for gi in range(n_groups):
                g = gorder[gi]
                instr = g_instr[g]
                for lane in range(t1 - t0):
                    addrs[lane] = NO_ACCESS
                    tids[lane] = t0 + lane
                for j in range(starts[g], starts[g + 1]):
                    x = order[j]
                    t = t0 + e_lane[x]
                    addrs[e_lane[x]] = mem_addr[mem_ptr[t] + e_pos[x]]
                space = mem_space[instr]
                before = counters[C_SHARED_PASSES] if space == SPACE_SHARED else (
                    counters[C_CONST_ACCESSES] if space == SPACE_CONST else counters[C_MEM_SECTORS])
                access(state, params, sm, 0, 0, space, mem_kind[instr], mem_bytes[instr], dst_reg[instr] >= 0, addrs,
                       tids, t1 - t0, counters)
                after = counters[C_SHARED_PASSES] if space == SPACE_SHARED else (
                    counters[C_CONST_ACCESSES] if space == SPACE_CONST else counters[C_MEM_SECTORS])
                if after > before:
                    inst_requests[instr] += 1
                    inst_units[instr] += after - before
