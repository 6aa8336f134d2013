"""The interpreter's control block: where a resumable run stands, and how it stops.

``ctl`` (int64[CTL_SIZE]) is shared by :func:`simt_fast.emu.machine.run` and the host side
(:mod:`simt_fast.emu.host`): the CTA range of the batch, the resume phase, the log fill levels,
the instruction count and, after ``ST_FAULT``, what went wrong (``F_*`` fields, read by the host's
fault message). Every exit of the interpreter goes through :func:`suspend`; every fault is noted
by :func:`fault`, so the epilogue exists once.
"""

from __future__ import annotations

from .._jit import jit

# ---- control block layout ---------------------------------------------------------------------
CTA, CTA_END, BATCH_CTA0, PHASE, NEV, NMEV, INSTS, MAX_INSTS = 0, 1, 2, 3, 4, 5, 6, 7
F_CODE, F_THREAD, F_PC, F_ADDR, F_AUX, F_CTA = 8, 9, 10, 11, 12, 13
EV_SOFT = 14  # flush after the CTA that takes either log past this many entries
CTL_SIZE = 16

# ---- statuses ---------------------------------------------------------------------------------
ST_DONE, ST_EV_FULL, ST_MEV_FULL, ST_FAULT, ST_FLUSH = 0, 1, 2, 3, 4

# ---- faults (F_CODE) --------------------------------------------------------------------------
F_NONE, F_OOB, F_MISALIGNED, F_BARRIER, F_LIMIT, F_TRAP, F_WARPSYNC, F_BRX, F_CONST_WRITE = 0, 1, 2, 3, 4, 5, 6, 7, 8
F_TEXTURE = 9  # tex with a handle that is no texture of the launch (F_ADDR: the handle)

# ---- region table (rgn, int64): byte offset and size of each per-launch region in the flat memory
RG_CONST, RG_CONST_N, RG_PARAM, RG_PARAM_N, RG_SHARED, RG_SHARED_N, RG_LOCAL, RG_LOCAL_N = range(8)

# ---- thread states ----------------------------------------------------------------------------
RUN, WAIT, DONE = 0, 1, 2


@jit(inline="always")
def fault(ctl, code, thread, pc, addr, aux):
    """Note a fault of ``thread`` at instruction ``pc``; returns ``code`` for the caller to pass up."""
    ctl[F_CODE] = code
    ctl[F_THREAD] = thread
    ctl[F_PC] = pc
    ctl[F_ADDR] = addr
    ctl[F_AUX] = aux
    return code


@jit(inline="always")
def suspend(ctl, status, nev, nmev, insts):
    """Store the counters the interpreter keeps in locals and return ``status`` to the host."""
    ctl[NEV] = nev
    ctl[NMEV] = nmev
    ctl[INSTS] = insts
    return status
