"""The formation kernel's state: warp records, slot arrays, the pools and their views, TBC's stacks,
the per-thread scoreboard (docs/formation.md). Field names and state codes, and the allocation in
Python (the kernel never allocates).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..mechanisms import CODE
from ..visits import NEVER

DWF = CODE["dwf"]
EN_DWF = CODE["en-dwf"]
TBC = CODE["tbc"]

HOLE = -1
INF = NEVER

# warp states (F_STATE)
READY = 0
AT_BARRIER = 1  # issued a bar.sync; waits for every live thread of its CTA
AT_BRANCH = 2  # tbc: waits at a potentially divergent branch for the rest of its stack entry
AT_RPC = 3  # tbc: reached its stack entry's reconvergence point

F_USED = 0
F_ID = 1  # id reported in events: SM-local creation index * n_sms + SM (`pool.new_warp`)
F_AGE = 2  # creation order (round robin, oldest first)
F_BLK = 3
F_OFF = 4
F_NB = 5  # not before: one issue per cycle, new warps from the next cycle
F_STATE = 6  # READY, AT_BARRIER, AT_BRANCH or AT_RPC
F_BART = 7
F_CTA = 8  # tbc: owning CTA
F_N = 9  # threads in the warp
F_READY = 10  # cached earliest issue cycle of its next instruction (F_NB and operands)
F_CS = 11  # tbc: the owning CTA's residency slot (sm * cta_lim + CTA slot)
F_SM = 12  # the SM owning this record (records are allocated per SM; fixed)
F_PIDX = 13  # position in the SM's pool view pl (dwf: pool order, -1 when not in the pool; tbc: fixed)
F_CPC = 14  # dwf majority: the PC this warp's threads are counted at in pl[sm, P_CNT] (-1: not counted)
F_CN = 15  # dwf majority: how many threads it counts there
F_NROW = 16  # threads in the row cache wsl[w, W:W + F_NROW] (`pool.ready`)
F_MASK = 17  # occupied slots (bit s), as of the last `pool.ready`
F_BASE = 18  # tbc: the first warp record of the owning CTA (no divisions at a block end)
F_EP = 19  # epoch of its thread set: +1 at every `pool.rows` (tags its register summary, `pool.ready_rows`)
# Register bounds (dwf, en-dwf; docs/formation.md): every register of the warp's
# threads is ready by F_BOUND, and every one without a summary entry of the current epoch by F_LOOSE.
# A regrouped warp inherits F_BOUND from the warps its threads came from, so an operand whose entry
# is missing needs no gather over the threads when F_LOOSE is not later than the cycle the warp
# could issue anyway. INF (unknown: always gather) for tbc and for a record until its creator sets it.
F_LOOSE = 20
F_BOUND = 21
# The row cache's shape: F_RUN is its lowest row when its rows are one run of consecutive rows (a warp
# whose threads are consecutive in their CTA, as every warp of converged code), else -1; an issue then
# writes its destination register with one contiguous fill instead of a scatter over the rows
F_RUN = 22
F_QACT = 23  # quarters holding a thread (`pool.quarters` of F_MASK), -1 until the next issue computes it
F_NF = 24

# Per-warp register summary (wsl[w, 2W:]): NSUM direct-mapped entries (tag, ready) where ready is
# the latest ready cycle of register r over the warp's threads and tag = F_EP << 24 | r. Valid while
# the thread set is unchanged: only the warp holding a thread writes that thread's registers.
# A power of two; 64 rather than 16 since PTX kernels use hundreds of virtual registers (docs/formation.md).
NSUM = 64
SUM_R_BITS = 24  # registers below 2^24 (`allocate` checks)

# The SM's pool view pl[sm, P_*, j], kept in step with wf by `pool.sync_view`: the schedulers, the merge search
# and the next-event scan read these contiguous rows instead of chasing pool[sm, j] into wf (an
# SM's pool holds tens of warps on divergent code, ~40 on the bench trace, scanned several times
# per issue). Column j is the pool position under dwf (pool order = age order) and the warp slot
# under tbc.
P_RDY = 0  # earliest issue cycle (F_READY) if the warp can issue (used, state 0), else INF
P_PC = 1  # instruction index of its next instruction (block_start[F_BLK] + F_OFF)
P_AGE = 2  # F_AGE
P_CNT = 3  # indexed by PC, not by j: threads of the SM's state-0 warps at that PC (majority policy)
P_NF = 4

FormationState = namedtuple("FormationState", [
    "wf",  # [n_sms * NW, F_NF]: warp records (F_* fields); records sm * NW .. belong to SM sm
    "wsl",  # [n_sms * NW, 2W + 2 NSUM]: slots (thread per slot, HOLE), row cache, register summary
    "pool",  # [n_sms, NW]: dwf: each SM's warps in age order (tbc: unused, its view is the warp slots)
    "pool_n",  # [n_sms]
    "free",  # [n_sms, NW]: dwf: free warp records, a stack
    "free_n",  # [n_sms]
    "pl",  # [n_sms, P_NF, km]: each SM's pool view
    "depth",  # [n_sms * cta_lim]: tbc: stack depth per CTA residency slot
    "ent_pc",  # [n_sms * cta_lim, max_depth]: tbc stack entries: PC block
    "ent_rpc",  # reconvergence block
    "ent_nw",  # warps of the entry's layout
    "lay",  # [n_sms * cta_lim, max_depth, wpc, W]: tbc: each entry's warp layout (threads per slot)
    "sb_used",  # bool [n_sms * cta_lim]: CTA slots whose scoreboard block was ever used
    "cslot",  # [n_threads]: each resident thread's scoreboard row
    "reg_ready",  # per-thread scoreboard: ready cycle of register r of row x at x + r * tpc (`allocate`)
    "rr",  # [n_sms, n_sched]: tbc lrr: the slot that issued last
    "last",  # [n_sms, n_sched]: tbc gto: the slot that issued last
    "last_age",  # [n_sms]: dwf: age of the warp that issued last (round robin, gto)
    "smr",  # [n_sms]: cached earliest READY of the SM's issuable warps
    "dirty",  # bool [n_sms]: the SM's warps changed since `smr` was computed
    "chk",  # bool [n_sms]: look for finished CTAs at the SM's next visit (after a dispatch)
    "orig",  # scratch [W]: a finishing warp's slots
    "male",  # scratch [W]: the group looking for a warp to merge into
    "sq",  # scratch [W]: the group squeezed (hws)
    "nxt",  # scratch [W]: next block per slot
    "cnt",  # scratch [W]: tbc compaction: threads placed per home slot
    "sq_counts",  # scratch [n_q]: squeeze
    "sq_order",
    "ctas",  # scratch [W + 1]: the CTAs of a barrier's parts
    "rel",  # [n_sms * cta_lim + 1]: CTAs whose barrier an exit completed, first queued first (G_NREL)
])


def allocate(p, program) -> tuple:
    """(params with the formation fields set, FormationState)."""
    tbc = p.mech == TBC
    W = p.W
    if p.n_regs > 1 << SUM_R_BITS:
        raise ValueError(f"the trace uses {p.n_regs} registers; the formation kernel supports at most {1 << SUM_R_BITS}")
    n_sms = p.n_sms
    n_cs = n_sms * p.cta_lim
    n_blocks = program.block_start.shape[0] - 1
    max_succ = int(np.max(np.diff(program.succ_ptr), initial=1))
    NW = p.WS if tbc else p.cta_lim * p.tpc + 1  # dwf: every warp holds at least one thread
    n_pc = int(program.block_start[-1]) + 1
    km = 1
    while km < max(NW, n_pc):
        km *= 2  # a power of two: the majority pick takes its key apart with a mask
    max_depth = int(min(n_blocks * max(1, max_succ) + 2, 512)) if tbc else 1
    p = p._replace(NW=NW, km=km, max_depth=max_depth)
    wf = np.zeros((n_sms * NW, F_NF), np.int64)
    wf[:, F_SM] = np.arange(n_sms * NW) // NW
    wf[:, F_BOUND] = INF  # (tbc keeps it: its regroupings always gather)
    wf[:, F_LOOSE] = INF
    wf[:, F_CPC] = -1
    # tbc: warp slot j of an SM is column j of its pool view, all WS columns scanned
    wf[:, F_PIDX] = np.arange(n_sms * NW) % NW if tbc else -1
    pl = np.zeros((n_sms, P_NF, km), np.int64)
    pl[:, P_RDY, :] = INF
    free = (np.arange(n_sms)[:, None] * NW + NW - 1 - np.arange(NW)[None, :]).astype(np.int64)  # lowest first
    n_threads = p.n_ctas * p.tpc
    # Zeroed buffers (calloc): pages nobody touches are never faulted in. PTX kernels have hundreds of
    # virtual registers, and zeroing the whole scoreboard took up to 40% of a short run. The rest is
    # written before it is read (warp slots when a record is taken, TBC layouts when an entry is pushed).
    state = FormationState(
        wf=wf, wsl=np.zeros((n_sms * NW, 2 * W + 2 * NSUM), np.int64),
        pool=np.zeros((n_sms, NW), np.int64), pool_n=np.full(n_sms, NW if tbc else 0, np.int64),
        free=free, free_n=np.full(n_sms, NW, np.int64), pl=pl,
        depth=np.zeros(n_cs, np.int64), ent_pc=np.zeros((n_cs, max_depth), np.int64),
        ent_rpc=np.zeros((n_cs, max_depth), np.int64), ent_nw=np.zeros((n_cs, max_depth), np.int64),
        lay=np.empty((n_cs if tbc else 1, max_depth, p.wpc, W), np.int64), sb_used=np.zeros(n_cs, np.bool_),
        cslot=np.zeros(n_threads, np.int64),
        reg_ready=np.zeros(n_cs * max(p.n_regs, 1) * p.tpc, np.int64),
        rr=np.full((n_sms, p.n_sched), -1, np.int64), last=np.full((n_sms, p.n_sched), -1, np.int64),
        last_age=np.full(n_sms, -1, np.int64), smr=np.zeros(n_sms, np.int64), dirty=np.ones(n_sms, np.bool_),
        chk=np.ones(n_sms, np.bool_), orig=np.zeros(W, np.int64), male=np.zeros(W, np.int64),
        sq=np.zeros(W, np.int64), nxt=np.zeros(W, np.int64), cnt=np.zeros(W, np.int64),
        sq_counts=np.zeros(max(p.n_q, 1), np.int64), sq_order=np.zeros(max(p.n_q, 1), np.int64),
        ctas=np.zeros(W + 1, np.int64), rel=np.zeros(n_cs + 1, np.int64),
    )
    return p, state
