"""The core kernel's own state (beside the machine's, `sim.visits.Machine`), allocated in Python.

Per warp slot (``sm * WS + CTA slot * wpc + warp of the CTA``): its split and reconvergence tables
(``st``, ``rt``; layout in `sim.mech._tables`), its info row ``winfo`` and its register scoreboard
(`sim.core.scoreboard`). Tables are written in full when a row is appended and read only below
their counts, so they need no zeroing; big tables are left uninitialised (untouched pages cost
nothing).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..mech import MIMD
from ..mech._tables import R_NF, S_ROW, W_CTA
from ..visits import NEVER

W_ROW = 16  # allocated words per warp-info row (its fields fit the first cache line)
RAN_EPOCH = 0
RAN_MASK = 1
SB_ENTRY = 4  # words of a scoreboard entry (`scoreboard.py`)

CoreState = namedtuple("CoreState", [
    "st",  # [n_slots, W, S_ROW]: split table rows (issue units)
    "rt",  # [n_slots, 2W + 2, R_NF]: reconvergence table rows
    "winfo",  # [n_slots, W_ROW]: per warp slot (W_* fields)
    "sb",  # scoreboard entries, SB_ENTRY words per (warp slot, register)
    "sbr",  # scoreboard overflow records, rec_words per (warp slot, register)
    "ran",  # [n_slots, n_blocks, 2]: (epoch, mask) of the threads that last ran each block (expanded_insts)
    "wready",  # [n_slots]: earliest cycle any schedulable unit of the warp can issue (NEVER: empty slot)
    "sk_next",  # [n_sms, n_sched]: per scheduler, the earliest cycle any of its warps can issue
    "rr",  # [n_sms, n_sched]: lrr: position of the warp that issued last
    "last",  # [n_sms, n_sched]: gto: the warp that issued last
    "order",  # [n_sms * n_sched, WS]: each scheduler's resident warp slots, oldest first (gto; row sm * n_sched + k)
    "order_n",  # [n_sms * n_sched]
    "sm_retire",  # [n_sms]: 1: a CTA of this SM may have finished (scan its CTA slots)
    "nxt",  # scratch [64]: next block per lane
    "gblk",  # scratch [max successors]: the groups of a block end
    "gmask",
    "cand",  # scratch [W]: schedulable units of a warp
])


def aligned_empty(n: int) -> np.ndarray:
    """An uninitialised int64 array of n words whose data starts on a 64-byte cache-line boundary, so
    rows of 8 or 16 words each begin a line."""
    buf = np.empty(n + 8, np.int64)
    off = (-buf.ctypes.data % 64) // 8
    return buf[off:off + n]


def scoreboard_slots(p) -> int:
    """K: pending writes tracked per (warp, register); mimd never folds (one slot per lane)."""
    return p.W if p.mech == MIMD else 4


def record_words(p) -> int:
    """Words of a scoreboard overflow record: K - 1 (ready, mask) pairs, or one ready cycle per
    lane under mimd; one record per cache line."""
    if p.mech == MIMD:
        return (p.W + 7) // 8 * 8
    return (2 * (p.K - 1) + 7) // 8 * 8


def allocate(p, program) -> tuple:
    """(params with the core's fields set, CoreState)."""
    p = p._replace(K=scoreboard_slots(p))
    n_slots = p.n_sms * p.WS
    n_regs = max(p.n_regs, 1)
    n_blocks = program.block_start.shape[0] - 1
    winfo = aligned_empty(n_slots * W_ROW).reshape((n_slots, W_ROW))
    winfo[:] = 0
    winfo[:, W_CTA] = -1
    sb = aligned_empty(n_slots * n_regs * SB_ENTRY)
    sb[:] = 0
    if p.mech == MIMD:
        ran = np.zeros((1, 1, 2), np.int64)
    else:
        ran = np.zeros((n_slots, n_blocks, 2), np.int64)
        ran[:, :, RAN_EPOCH] = -1
    max_succ = max(1, int(np.max(np.diff(program.succ_ptr), initial=1)))
    state = CoreState(
        st=aligned_empty(n_slots * p.W * S_ROW).reshape((n_slots, p.W, S_ROW)),
        rt=np.empty((n_slots, 2 * p.W + 2, R_NF), np.int64), winfo=winfo, sb=sb,
        sbr=aligned_empty(n_slots * n_regs * record_words(p)), ran=ran,
        wready=np.full(n_slots, NEVER, np.int64), sk_next=np.zeros((p.n_sms, p.n_sched), np.int64),
        rr=np.full((p.n_sms, p.n_sched), -1, np.int64), last=np.full((p.n_sms, p.n_sched), -1, np.int64),
        order=np.zeros((p.n_sms * p.n_sched, p.WS), np.int64), order_n=np.zeros(p.n_sms * p.n_sched, np.int64),
        sm_retire=np.zeros(p.n_sms, np.int64), nxt=np.zeros(64, np.int64), gblk=np.zeros(max_succ, np.int64),
        gmask=np.zeros(max_succ, np.int64), cand=np.zeros(p.W, np.int64),
    )
    return p, state
