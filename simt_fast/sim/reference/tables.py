"""Reference model's per-warp state: plain objects and lists, readable first (never fast).

Same ordering conventions as the numba tables (``simt_fast.sim.mech._tables``): ``warp.st`` and
``warp.rt`` are lists, oldest first; removal keeps order, new rows are appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


class ReferenceError_(RuntimeError):
    """A reference run that cannot finish (the kernels' SimulationError, without its sentences)."""


@dataclass(eq=False)  # identity: list.index/remove must find this very unit
class Unit:
    """One issue unit: the threads (lane mask) of a warp at one PC."""

    blk: int
    off: int
    mask: int
    rpc: Optional[tuple] = None  # (block, offset) reconvergence PC, None if the unit never reconverges
    parent: int = -1  # id of the RT entry it reconverges into
    waiting: bool = False  # at a barrier
    not_before: int = 0  # earliest issue cycle
    bar_t: int = 0
    expanding: bool = False
    sync_wait: bool = False  # stackless: waiting at a syncwarp block

    @property
    def pc(self) -> tuple:
        return (self.blk, self.off)


@dataclass
class RTEntry:
    id: int
    pc: tuple  # reconvergence PC
    rpc: Optional[tuple]  # where the reconverged split reconverges next
    rmask: int
    pending: int
    parent: int


@dataclass(eq=False)
class Warp:
    cta: int
    gid: int
    tbase: int
    nlanes: int
    live: int
    epoch: int
    age: int
    slot: int  # warp slot on its SM
    cta_slot: int
    st: list = field(default_factory=list)
    rt: list = field(default_factory=list)
    next_id: int = 0
    not_before: int = 0  # sps, frontier: no unit issues before its last branch resolves

    def find_rt(self, rid: int) -> RTEntry:
        return next(e for e in self.rt if e.id == rid)

    def new_rt(self, **kw) -> RTEntry:
        e = RTEntry(id=self.next_id, **kw)
        self.next_id += 1
        self.rt.append(e)
        return e


def lanes(mask: int, nlanes: int) -> list:
    return [lane for lane in range(nlanes) if mask >> lane & 1]


def popcount(mask: int) -> int:
    return bin(mask).count("1")
