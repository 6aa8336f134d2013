"""Combined convergence and variance analysis, affine addresses, syncwarp points (Lee et al. 2013 §3, §5.2).

Fig. 3 of the paper, on PTX virtual registers (not SSA: def-use chains come from reaching
definitions, and a guarded write does not kill earlier definitions):

* optimistic start: every block convergent, every instruction thread-invariant;
* worklist seeds: reads of thread-indexed special registers (``%tid``, ``%laneid``, lane masks,
  clocks), atomics (``atom``/``red``), volatile or memory-model-ordered accesses, reads of
  thread-private ``.local`` memory (and generic loads in a function that has a ``.local`` frame),
  lane exchanges (``shfl``, ``match``), and -- in a ``.func`` -- its own parameters and call results
  (callers and callees are not analysed here);
* pop an instruction: it is thread-variant; its invariant data-flow successors join the worklist;
  a variant *conditional* branch makes every block iteratively control dependent on it divergent,
  unless the block holds a barrier (``bar.sync``: a programmer assertion of convergence; the block
  after the barrier split is the same source block) and unless the early-exit rule applies (§3.4:
  one side of the branch leaves the kernel, so the threads that stay are together);
  every instruction of a newly divergent block joins the worklist.

Affine analysis (§3.5) then gives every thread-variant value written in a convergent block a stride
(bytes per consecutive thread) when it is ``uniform + stride * %tid.x`` (through mov/cvt/cvta, add,
sub, neg, mul/mad/shl by immediates); loads and stores whose address stride equals the access size
are *warp-sequential*. Instructions are classified ``uniform``, ``affine`` or ``variant``.

Stackless SIMT (§5.2): a ``syncwarp`` goes in every convergent block with a divergent predecessor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .cfg import CFG, build_cfg
from .flat import instruction_registers
from .model import Address, Function, Imm, Reg, SpecialReg, Vector

#: Special registers whose value differs between the threads of a warp.
VARIANT_SPECIAL = frozenset({"%tid", "%laneid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
                             "%lanemask_ge", "%lanemask_gt", "%clock", "%clock64", "%globaltimer",
                             "%globaltimer_lo", "%globaltimer_hi"})
_ORDERED = frozenset({"volatile", "relaxed", "acquire", "release", "mmio"})
_LANE_EXCHANGE = frozenset({"shfl", "match", "atom", "red", "redux"})
_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
               "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}

BOTTOM = None  # affine lattice: not an affine function of %tid.x


@dataclass
class ConvergenceResult:
    """Per-block and per-instruction facts of one function."""

    func: Function
    cfg: CFG
    convergent: np.ndarray  # bool[n_blocks] (virtual exit included, always convergent)
    structurally_convergent: np.ndarray  # bool[n_blocks]: no control-dependence predecessor (§3.1)
    invariant: np.ndarray  # bool[n_instrs]: thread-invariant (Fig. 3)
    stride: list  # per instruction: bytes per thread of its written value (0 uniform), None if not affine
    instr_class: list  # "uniform" | "affine" | "variant"
    warp_sequential: np.ndarray  # bool[n_instrs]
    syncwarp_blocks: list  # convergent blocks with a divergent predecessor (§5.2)
    variant_branches: list  # blocks whose conditional branch is thread-variant

    @property
    def syncwarp_mask(self) -> np.ndarray:
        """bool per CFG block (trace numbering when the CFG is the traced kernel's): the blocks whose
        entry gets a compiler-placed ``syncwarp`` for stackless SIMT (``simulate(..., syncwarp=)``)."""
        mask = np.zeros(self.cfg.n_blocks, dtype=np.bool_)
        mask[self.syncwarp_blocks] = True
        return mask

    @property
    def divergent_blocks(self) -> list:
        return [b for b in range(self.cfg.n_blocks) if not self.convergent[b]]

    def block_name(self, b: int) -> str:
        blk = self.cfg.blocks[b]
        return blk.label or ("<exit>" if b == self.cfg.exit else f"B{b}")

    def summary(self) -> dict:
        n = len(self.instr_class)
        real = [b for b in range(self.cfg.n_blocks) if b != self.cfg.exit]
        return {
            "blocks": len(real),
            "convergent_blocks": int(sum(self.convergent[b] for b in real)),
            "instructions": n,
            "uniform": self.instr_class.count("uniform"),
            "affine": self.instr_class.count("affine"),
            "variant": self.instr_class.count("variant"),
            "warp_sequential": int(self.warp_sequential.sum()),
            "syncwarp_points": len(self.syncwarp_blocks),
        }

    def to_dict(self) -> dict:
        blocks = []
        for b in range(self.cfg.n_blocks):
            if b == self.cfg.exit:
                continue
            blk = self.cfg.blocks[b]
            blocks.append({
                "block": self.block_name(b),
                "convergent": bool(self.convergent[b]),
                "syncwarp": b in self.syncwarp_blocks,
                "instructions": [
                    {"text": self.func.instructions[i].text or "", "class": self.instr_class[i],
                     "stride": self.stride[i], "warp_sequential": bool(self.warp_sequential[i])}
                    for i in range(blk.start, blk.end)
                ],
            })
        return {"kernel": self.func.name, "summary": self.summary(), "blocks": blocks}


# ---------------------------------------------------------------------------------------------
# Def-use chains from reaching definitions
# ---------------------------------------------------------------------------------------------


def _reaching_definitions(func: Function, cfg: CFG):
    """Per instruction and source register, the instruction indices whose definition reaches it."""
    instrs = func.instructions
    regs = [instruction_registers(ins) for ins in instrs]
    defs_of: dict = {}
    for i, (dsts, _) in enumerate(regs):
        for r in dsts:
            defs_of.setdefault(r, []).append(i)
    bit = {}  # (instr, reg) -> bit position
    for r, ds in defs_of.items():
        for i in ds:
            bit[(i, r)] = len(bit)
    reg_mask = {r: sum(1 << bit[(i, r)] for i in ds) for r, ds in defs_of.items()}
    n = cfg.n_blocks
    gen = [0] * n
    kill = [0] * n
    for blk in cfg.blocks:
        g = k = 0
        for i in range(blk.start, blk.end):
            for r in regs[i][0]:
                b = 1 << bit[(i, r)]
                if instrs[i].pred is None:  # an unguarded write replaces every earlier value
                    g &= ~reg_mask[r]
                    k |= reg_mask[r]
                g |= b
        gen[blk.id], kill[blk.id] = g, k
    preds = [blk.preds for blk in cfg.blocks]
    live_in = [0] * n
    out = [gen[b] for b in range(n)]
    changed = True
    order = [int(b) for b in cfg.rpo]
    while changed:
        changed = False
        for b in order:
            inn = 0
            for p in preds[b]:
                inn |= out[p]
            new_out = gen[b] | (inn & ~kill[b])
            if inn != live_in[b] or new_out != out[b]:
                live_in[b], out[b] = inn, new_out
                changed = True
    by_bit = {v: k for k, v in bit.items()}
    uses = [dict() for _ in instrs]  # instr -> {reg: [def instrs]}
    for blk in cfg.blocks:
        cur = live_in[blk.id]
        for i in range(blk.start, blk.end):
            for r in regs[i][1]:
                m = cur & reg_mask.get(r, 0)
                ds = []
                while m:
                    low = m & -m
                    ds.append(by_bit[low.bit_length() - 1][0])
                    m ^= low
                uses[i][r] = ds
            for r in regs[i][0]:
                if instrs[i].pred is None:
                    cur &= ~reg_mask[r]
                cur |= 1 << bit[(i, r)]
    return regs, uses


# ---------------------------------------------------------------------------------------------
# Fig. 3
# ---------------------------------------------------------------------------------------------


def _reads_variant_special(op) -> bool:
    if isinstance(op, SpecialReg):
        return op.name in VARIANT_SPECIAL
    if isinstance(op, Vector):
        return any(_reads_variant_special(e) for e in op.elems)
    return False


def _is_seed(ins, func: Function) -> bool:
    if any(_reads_variant_special(o) for o in ins.operands):
        return True
    if ins.base in _LANE_EXCHANGE:
        return True
    mods = set(ins.modifiers)
    if ins.base in ("ld", "st", "ldu") and mods & _ORDERED:
        return True
    if ins.base in ("ld", "ldu") and "local" in mods:
        return True  # thread-private memory: the same address holds different values per thread
    if ins.base in ("ld", "ldu") and not mods & _SPACES and _has_local_memory(func):
        return True  # a generic load may read the thread's own .local frame
    if ins.base == "ld" and "param" in mods:
        addr = next((o for o in ins.operands if isinstance(o, Address)), None)
        kernel_params = {p.name for p in func.params} if func.is_entry else set()
        if not (addr is not None and getattr(addr.base, "name", None) in kernel_params):
            return True  # call results and .func parameters: not analysed interprocedurally
    return False


_SPACES = frozenset({"global", "shared", "local", "const", "param", "tex"})


def _has_local_memory(func: Function) -> bool:
    return any(v.space == "local" for v in func.local_vars)


def _is_conditional_branch(cfg: CFG, b: int) -> bool:
    blk = cfg.blocks[b]
    return len(blk.succs) > 1


def _exits_early(cfg: CFG, b: int) -> bool:
    """§3.4: one direction of branch ``b`` leaves the kernel (an exit block is control dependent on
    it, or one successor does nothing but return)."""
    ins = cfg.func.instructions
    for s in cfg.blocks[b].succs:
        if s == cfg.exit:
            return True
        blk = cfg.blocks[s]
        if blk.end - blk.start == 1 and ins[blk.start].is_exit and ins[blk.start].pred is None:
            return True
    for e in cfg.blocks[cfg.exit].preds:
        if b in cfg.control_deps[e] and e != b:
            return True
    return False


def _barrier_protected(cfg: CFG) -> np.ndarray:
    """Blocks of a source block that calls __syncthreads(): the block ending at the barrier and the
    block it falls into when that block has no other predecessor."""
    out = cfg.has_barrier.copy()
    for blk in cfg.blocks:
        if cfg.has_barrier[blk.id] and len(blk.succs) == 1:
            s = blk.succs[0]
            if cfg.blocks[s].preds == [blk.id] and s != cfg.exit:
                out[s] = True
    return out


def analyze_convergence(func: Function, cfg: Optional[CFG] = None, variance: bool = True,
                        early_exit: bool = True) -> ConvergenceResult:
    """Run the analysis on ``func``. ``variance=False`` treats every branch as thread-variant (the
    paper's structure-only convergence, "CA"); ``early_exit=False`` disables the §3.4 rule."""
    cfg = cfg or build_cfg(func)
    instrs = func.instructions
    n_instr, n_blocks = len(instrs), cfg.n_blocks
    regs, uses = _reaching_definitions(func, cfg)
    succ_of = [[] for _ in instrs]  # data-flow successors
    for i, u in enumerate(uses):
        for ds in u.values():
            for d in ds:
                succ_of[d].append(i)
    block_of = cfg.block_of_instr
    icd = cfg.iterated_control_deps
    icd_succ = [[] for _ in range(n_blocks)]
    for y in range(n_blocks):
        for x in icd[y]:
            icd_succ[x].append(y)
    protected = _barrier_protected(cfg)
    branch_at = {}  # instruction index of each conditional branch -> its block
    for blk in cfg.blocks:
        if blk.end > blk.start and _is_conditional_branch(cfg, blk.id):
            branch_at[blk.end - 1] = blk.id

    conv = np.ones(n_blocks, dtype=bool)
    invariant = np.ones(n_instr, dtype=bool)
    worklist = [i for i, ins in enumerate(instrs) if _is_seed(ins, func)]
    if not variance:
        worklist += list(branch_at)
    queued = set(worklist)
    variant_branches = []
    while worklist:
        i = worklist.pop()
        invariant[i] = False
        for s in succ_of[i]:
            if invariant[s] and s not in queued:
                queued.add(s)
                worklist.append(s)
        if i in branch_at:
            b = branch_at[i]
            variant_branches.append(b)
            if early_exit and func.is_entry and _exits_early(cfg, b):  # §3.4 speaks of the kernel's exit
                continue
            for y in icd_succ[b]:
                if protected[y] or not conv[y] or y == cfg.exit:
                    continue
                conv[y] = False
                blk = cfg.blocks[y]
                for k in range(blk.start, blk.end):
                    if k not in queued or invariant[k]:
                        queued.add(k)
                        worklist.append(k)
    structural = np.array([not cfg.control_deps[b] for b in range(n_blocks)], dtype=bool)
    stride = _affine(func, cfg, regs, uses, invariant, conv, block_of)
    classes, wseq = [], np.zeros(n_instr, dtype=bool)
    for i, ins in enumerate(instrs):
        if invariant[i]:
            classes.append("uniform")
        elif stride[i] not in (None, 0):
            classes.append("affine")
        else:
            classes.append("variant")
        if conv[block_of[i]] and ins.base in ("ld", "st", "ldu"):
            wseq[i] = _warp_sequential(ins, i, uses, stride, invariant)
    syncwarp = [b for b in range(n_blocks) if b != cfg.exit and conv[b]
                and any(not conv[p] for p in cfg.blocks[b].preds)]
    return ConvergenceResult(func, cfg, conv, structural, invariant, stride, classes, wseq, syncwarp,
                             sorted(set(variant_branches)))


# ---------------------------------------------------------------------------------------------
# Affine analysis (§3.5)
# ---------------------------------------------------------------------------------------------

_TOP = "top"


def _meet(a, b):
    if a == _TOP:
        return b
    if b == _TOP:
        return a
    return a if a == b else BOTTOM


def _affine(func, cfg, regs, uses, invariant, conv, block_of) -> list:
    """Stride of each instruction's written value (optimistic fixpoint over the def-use chains)."""
    instrs = func.instructions
    n = len(instrs)
    stride = [0 if invariant[i] else _TOP for i in range(n)]
    for i in range(n):
        if not invariant[i] and (not conv[block_of[i]] or not regs[i][0]):
            stride[i] = BOTTOM  # a value chosen by divergent control flow has no common base

    def operand_stride(i, op):
        if isinstance(op, Imm):
            return 0
        if isinstance(op, SpecialReg):
            if op.name == "%tid":
                return 1 if op.component in (None, "x") else BOTTOM
            if op.name == "%laneid":
                return 1
            return BOTTOM if op.name in VARIANT_SPECIAL else 0
        if isinstance(op, Reg):
            ds = uses[i].get(op.name, [])
            val = _TOP if ds else 0
            for d in ds:
                val = _meet(val, stride[d])
            return val
        return BOTTOM

    def transfer(i):
        ins = instrs[i]
        ops = ins.operands[1:]
        base = ins.base
        if ins.pred is not None and not invariant[i]:
            return BOTTOM
        vals = [operand_stride(i, o) for o in ops]
        if any(v is BOTTOM for v in vals):
            return BOTTOM
        if any(v == _TOP for v in vals):
            return _TOP
        if base != "cvta" and any(m in ("f16", "bf16", "f32", "f64") for m in ins.modifiers):
            return BOTTOM
        if base in ("mov", "cvt", "cvta") and len(vals) == 1:
            return vals[0]
        if base == "add" and len(vals) == 2:
            return vals[0] + vals[1]
        if base == "sub" and len(vals) == 2:
            return vals[0] - vals[1]
        if base == "neg" and len(vals) == 1:
            return -vals[0]
        if base == "mul" and len(vals) == 2 and "hi" not in ins.modifiers:
            return _scale(ops[0], vals[0], ops[1], vals[1])
        if base == "shl" and len(vals) == 2 and isinstance(ops[1], Imm):
            return vals[0] << int(ops[1].value)
        if base == "mad" and len(vals) == 3 and "hi" not in ins.modifiers:
            prod = _scale(ops[0], vals[0], ops[1], vals[1])
            return BOTTOM if prod is BOTTOM else prod + vals[2]
        return BOTTOM

    changed = True
    while changed:
        changed = False
        for i in range(n):
            if invariant[i] or stride[i] is BOTTOM:
                continue
            new = _meet(stride[i], transfer(i)) if stride[i] != _TOP else transfer(i)
            if new != stride[i]:
                stride[i] = new
                changed = True
    return [BOTTOM if s == _TOP else s for s in stride]


def _scale(op_a, a, op_b, b):
    if isinstance(op_b, Imm) and not isinstance(op_b.value, float):
        return a * int(op_b.value)
    if isinstance(op_a, Imm) and not isinstance(op_a.value, float):
        return b * int(op_a.value)
    if a == 0 and b == 0:
        return 0
    return BOTTOM


def access_bytes(ins) -> int:
    vec = 1
    size = 0
    for m in ins.modifiers:
        if m in ("v2", "v4", "v8"):
            vec = int(m[1:])
        elif m in _TYPE_BYTES:
            size = _TYPE_BYTES[m]
    return vec * size


def _warp_sequential(ins, i, uses, stride, invariant) -> bool:
    mods = set(ins.modifiers)
    if mods & {"local", "param", "const"}:
        return False
    addr = next((o for o in ins.operands if isinstance(o, Address)), None)
    if addr is None or not isinstance(addr.base, Reg):
        return False
    ds = uses[i].get(addr.base.name, [])
    if not ds:
        return False
    s = stride[ds[0]]
    if any(stride[d] != s for d in ds):
        return False
    return s is not None and s != 0 and s == access_bytes(ins)
