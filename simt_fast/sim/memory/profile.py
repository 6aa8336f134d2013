"""A trace's memory behaviour without a cycle loop (docs/memory.md, *Measuring a trace*).

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
def _walk(block_start, mem_space, mem_kind, mem_bytes, dst_reg, path_ptr, path, mem_ptr, mem_addr, warp_size, tpc,
          n_sms, state, params, counters, inst_requests, inst_units):
    n_instrs = mem_space.shape[0]
    n_threads = path_ptr.shape[0] - 1
    n_ctas = n_threads // tpc
    wpc = (tpc + warp_size - 1) // warp_size
    occ = np.zeros(n_instrs, np.int64)  # executions of each instruction by the current thread so far
    seen = np.empty(n_instrs, np.int64)  # instructions whose occ must be reset after the thread
    addrs = np.empty(warp_size, np.int64)
    tids = np.empty(warp_size, np.int64)
    for cta in range(n_ctas):
        sm = cta % n_sms
        for wi in range(wpc):
            t0 = cta * tpc + wi * warp_size
            t1 = min(t0 + warp_size, (cta + 1) * tpc)
            n_entries = mem_ptr[t1] - mem_ptr[t0]
            key = np.empty(n_entries, np.int64)  # (occurrence, instruction): one warp-level access
            pos = np.empty(n_entries, np.int64)  # position in the thread's own access sequence
            lane_of = np.empty(n_entries, np.int64)
            e = 0
            for t in range(t0, t1):
                n_seen = 0
                k = 0
                for step in range(path_ptr[t], path_ptr[t + 1]):
                    b = path[step]
                    for instr in range(block_start[b], block_start[b + 1]):
                        if mem_space[instr] < 0:
                            continue
                        if occ[instr] == 0:
                            seen[n_seen] = instr
                            n_seen += 1
                        key[e] = occ[instr] * n_instrs + instr
                        occ[instr] += 1
                        pos[e] = k
                        lane_of[e] = t - t0
                        e += 1
                        k += 1
                for j in range(n_seen):
                    occ[seen[j]] = 0
            order = np.argsort(key, kind="mergesort")
            # groups of equal key, then the groups in program order
            starts = np.empty(n_entries + 1, np.int64)
            n_groups = 0
            i = 0
            while i < n_entries:
                starts[n_groups] = i
                n_groups += 1
                j = i + 1
                while j < n_entries and key[order[j]] == key[order[i]]:
                    j += 1
                i = j
            starts[n_groups] = n_entries
            gkey = np.empty(n_groups, np.int64)
            for g in range(n_groups):
                first = pos[order[starts[g]]]
                for j in range(starts[g], starts[g + 1]):
                    if pos[order[j]] < first:
                        first = pos[order[j]]
                gkey[g] = first * n_instrs + key[order[starts[g]]] % n_instrs
            gorder = np.argsort(gkey, kind="mergesort")
            for gi in range(n_groups):
                g = gorder[gi]
                instr = key[order[starts[g]]] % n_instrs
                for lane in range(t1 - t0):
                    addrs[lane] = NO_ACCESS
                    tids[lane] = t0 + lane
                for j in range(starts[g], starts[g + 1]):
                    entry = order[j]
                    t = t0 + lane_of[entry]
                    addrs[lane_of[entry]] = mem_addr[mem_ptr[t] + pos[entry]]
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
