"""The debug event log of both cycle loops: one row layout, one overflow rule, one decoder.

``simulate(..., events=[])`` fills a list with one dict per event, for golden tests on small traces:
every issue (cycle, warp, PC, lane or slot mask; the formation kernel adds the slot array's
checksum) and, in the core, every change of a warp's split/reconvergence tables (its ST and RT rows).
A kernel writes int64 rows ``[kind, cycle, warp, f0 … f7, visit key]`` into a buffer of
``MAX_EVENTS`` rows; a full buffer sets ``G_EV_OVERFLOW`` and the run's events are refused. The
visit key (``G_VKEY``) orders the rows of an SM-major run as the cycle-major run writes them.
"""

from __future__ import annotations

import numpy as np

from .._jit import helper
from .stats import G_EV_OVERFLOW, G_NEVENTS, G_VKEY

MAX_EVENTS = 2_000_000
EV_WIDTH = 12

EV_TABLES = 0  # f0 = ST rows, f1 = RT rows (the rows follow)
EV_ST = 1  # f0 blk, f1 off, f2 mask, f3 rpc blk, f4 rpc off, f5 parent RT id, f6 state
EV_RT = 2  # f0 id, f1 blk, f2 off, f3 rpc blk, f4 rpc off, f5 rmask, f6 pending, f7 parent
EV_ISSUE = 3  # f0 blk, f1 off, f2 mask (formation: slot mask), f3 formation: the slot array's checksum, sum of
#   (thread + 1) * (slot + 1) over its threads, f4 active threads


@helper
def emit(ev, g, kind, now, warp, f0, f1, f2, f3, f4, f5, f6, f7):
    n = g[G_NEVENTS]
    if n >= ev.shape[0]:
        g[G_EV_OVERFLOW] = 1
        return
    ev[n, 0] = kind
    ev[n, 1] = now
    ev[n, 2] = warp
    ev[n, 3] = f0
    ev[n, 4] = f1
    ev[n, 5] = f2
    ev[n, 6] = f3
    ev[n, 7] = f4
    ev[n, 8] = f5
    ev[n, 9] = f6
    ev[n, 10] = f7
    ev[n, 11] = g[G_VKEY]
    g[G_NEVENTS] = n + 1


def buffer(wanted: bool) -> np.ndarray:
    return np.zeros((MAX_EVENTS if wanted else 0, EV_WIDTH), np.int64)


def decode(ev: np.ndarray, n: int, family: str) -> list:
    """The kernel's event rows as dicts, in cycle-major order (a stable sort by visit key keeps each
    visit's rows in order)."""

    def u(x) -> int:  # masks are int64 in the kernels; lane 63 is the sign bit
        return int(x) & 0xFFFF_FFFF_FFFF_FFFF

    ev = ev[:n][np.argsort(ev[:n, 11], kind="stable")]
    out = []
    k = 0
    while k < n:
        row = ev[k]
        kind, cycle, warp = int(row[0]), int(row[1]), int(row[2])
        if kind == EV_ISSUE:
            e = dict(kind="issue", cycle=cycle, warp=warp, pc=(int(row[3]), int(row[4])), mask=u(row[5]))
            if family == "formation":
                e["checksum"] = int(row[6])
            out.append(e)
            k += 1
        elif kind == EV_TABLES:
            n_st, n_rt = int(row[3]), int(row[4])
            st = [dict(pc=(int(r[3]), int(r[4])), mask=u(r[5]), rpc=(int(r[6]), int(r[7])), parent=int(r[8]),
                       waiting=bool(r[9])) for r in ev[k + 1: k + 1 + n_st]]
            rt = [dict(id=int(r[3]), pc=(int(r[4]), int(r[5])), rpc=(int(r[6]), int(r[7])), rmask=u(r[8]),
                       pending=u(r[9]), parent=int(r[10])) for r in ev[k + 1 + n_st: k + 1 + n_st + n_rt]]
            out.append(dict(kind="tables", cycle=cycle, warp=warp, st=st, rt=rt))
            k += 1 + n_st + n_rt
        else:  # pragma: no cover - rows are only written by emit()
            raise AssertionError(f"unknown event kind {kind}")
    return out
