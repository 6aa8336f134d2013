"""Flat numpy (SoA) views of a function and its CFG, for numba kernels and the trace file.

``flatten(func, cfg)`` returns the DESIGN §2 / trace §3 arrays:

=================  ======================  ==================================================
key                dtype / shape           meaning
=================  ======================  ==================================================
block_start        int32[n_blocks+1]       block b owns instructions block_start[b]:[b+1]
succ_ptr/succ_idx  int32 CSR               successors (order as in :mod:`simt_fast.ir.cfg`)
ipdom              int32[n_blocks]         immediate post-dominator, -1 for the virtual exit
label              list[str]               PTX label or "" per block; "<exit>" for the exit
has_barrier        bool[n_blocks]          the block ends with a CTA barrier
op_class           uint8[n_instrs]         :class:`~simt_fast.ir.model.OpClass`
dst_reg            int16[n_instrs]         first destination register id, -1 for none
src_reg            int16[n_instrs, 3]      up to 3 source register ids, -1 padded
text               list[str]               the PTX statement, for humans
reg_names          list[str]               register id -> name
reg_ids            dict[str, int]          name -> register id
=================  ======================  ==================================================

Register numbering: every register the function declares (``.reg`` in the body, nested call-sequence
scopes included, and ``.reg`` parameters of a ``.func``), in declaration order, gets one id. A name
redeclared in another ``{ }`` scope (``temp_param_reg``) shares the id -- the scopes never overlap
in time.

Sources and destinations: the destination is operand 0 unless the opcode writes no register
(``st``, ``red``, ``bar``, ``bra``, ``call`` ...); for a vector or ``%r|%p`` pair destination the
first element is used. Sources are collected in this order: the guard predicate, then every
register read by the operands left to right (address bases and vector elements included), without
duplicates; only the first three are kept, so e.g. ``st.v4 [%rd], {%f1,%f2,%f3,%f4}`` keeps
``%rd, %f1, %f2`` and ``@%p fma %f, %a, %b, %c`` keeps ``%p, %a, %b``. The timing core uses them
only for scoreboard waits, where dropping the last operands under-counts stalls slightly.
"""

from __future__ import annotations

import numpy as np

from .cfg import CFG
from .model import Address, Function, PTXError, Reg, Vector
from .ptx_parser import _NO_DST

MAX_REGS = np.iinfo(np.int16).max


def register_ids(func: Function) -> dict:
    """Register name -> int id (declaration order); see the module docstring."""
    ids: dict = {}
    for p in list(func.params) + list(func.return_params):
        if p.space == "reg" and p.name not in ids:
            ids[p.name] = len(ids)
    for d in func.reg_decls:
        for name in d.names:
            if name not in ids:
                ids[name] = len(ids)
    if len(ids) > MAX_REGS:
        raise PTXError(f"function '{func.name}' declares {len(ids)} registers; at most {MAX_REGS} are supported", func.path, func.line)
    return ids


def _regs_in(op, out: list):
    if isinstance(op, Reg):
        out.append(op.name)
    elif isinstance(op, Address):
        if isinstance(op.base, Reg):
            out.append(op.base.name)
    elif isinstance(op, Vector):
        for e in op.elems:
            _regs_in(e, out)


def instruction_registers(ins) -> tuple:
    """(destination register names, source register names) of one instruction, per the rules above."""
    ops = ins.operands
    dsts: list = []
    srcs: list = []
    if ins.pred is not None:
        srcs.append(ins.pred.name)
    first = 0
    if ops and ins.base not in _NO_DST and isinstance(ops[0], (Reg, Vector)):
        _regs_in(ops[0], dsts)
        first = 1
    for op in ops[first:]:
        _regs_in(op, srcs)
    return dsts, srcs


def flatten(func: Function, cfg: CFG) -> dict:
    """The flat arrays of ``func`` / ``cfg`` (table in the module docstring)."""
    ids = register_ids(func)
    instrs = func.instructions
    n = len(instrs)
    op_class = np.fromiter((int(i.op_class) for i in instrs), np.uint8, count=n)
    dst_reg = np.full(n, -1, np.int16)
    src_reg = np.full((n, 3), -1, np.int16)
    for k, ins in enumerate(instrs):
        dsts, srcs = instruction_registers(ins)
        if dsts:
            dst_reg[k] = ids[dsts[0]]
        j = 0
        seen = set()
        for s in srcs:
            if s in seen:
                continue
            seen.add(s)
            src_reg[k, j] = ids[s]
            j += 1
            if j == 3:
                break
    labels = [b.label for b in cfg.blocks]
    labels[cfg.exit] = "<exit>"
    return {
        "block_start": cfg.block_start.copy(),
        "succ_ptr": cfg.succ_ptr.copy(),
        "succ_idx": cfg.succ_idx.copy(),
        "ipdom": cfg.ipdom.astype(np.int32, copy=True),
        "label": labels,
        "has_barrier": cfg.has_barrier.copy(),
        "op_class": op_class,
        "dst_reg": dst_reg,
        "src_reg": src_reg,
        "text": [i.text for i in instrs],
        "reg_names": list(ids),
        "reg_ids": ids,
    }
