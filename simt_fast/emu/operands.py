"""Operand reads shared by every instruction family of the interpreter (numba, inlined)."""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .alu import U0
from .codes import K_IMM, K_REG, K_SREG


@jit(inline="always")
def rdop(okind, oval, i, j, regs, rb, sregs, sb):
    """Operand ``j`` of instruction ``i`` for the thread whose registers start at ``rb``."""
    k = okind[i, j]
    if k == K_REG:
        return regs[rb + np.int64(oval[i, j])]
    if k == K_IMM:
        return oval[i, j]
    if k == K_SREG:
        return sregs[sb + np.int64(oval[i, j])]
    return U0


@jit(inline="always")
def opval(k, v, i, regs, rb, sregs, sb):
    """A hoisted operand (kind k, value v, index i) for the thread at register base rb."""
    if k == K_REG:
        return regs[rb + i]
    if k == K_SREG:
        return sregs[sb + i]
    return v
