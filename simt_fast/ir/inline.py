"""Inline direct ``call``s into a kernel, so that the emulator and the trace see one CFG.

The emulator (:mod:`simt_fast.emu`) runs the *inlined* kernel: every ``call`` to a ``.func``
defined in the module is replaced by a copy of the callee body, which makes call/return part of
the kernel's control flow (what the timing core needs: a ``ret`` inside a callee becomes a branch
to the instruction after the call site, so a divergent return reconverges there, Wu et al. 2012 §4).

Renaming rules for one call site number ``k`` of callee ``f``:

* callee registers ``%r3`` become ``%f$k$r3`` (new ``.reg`` declarations are added to the kernel);
* callee labels ``L`` become ``f$k$L``; each ``ret`` becomes ``bra.uni f$k$ret`` (with the same
  guard), where ``f$k$ret`` labels the instruction after the inlined body;
* callee ``.param`` parameters name the caller's argument symbols of the ``call`` (``param0`` ...),
  the return parameter names the caller's return symbol (``retval0``): the caller's
  ``st.param``/``ld.param`` sequence around the call then passes values through them unchanged;
* callee local variables (``.local`` depots, call-sequence ``.param`` buffers) are renamed
  ``f$k$name`` and appended to the kernel's local variables.

Indirect calls (through a register), guarded calls, calls to undefined (extern) functions and
recursion are rejected with a :class:`~simt_fast.ir.model.PTXError` naming the call site.
"""

from __future__ import annotations

import dataclasses

from .model import (
    Address,
    Function,
    Instruction,
    Label,
    Module,
    OpClass,
    ParamList,
    PTXError,
    Reg,
    RegDecl,
    Symbol,
    Vector,
)

__all__ = ["inline_calls"]


def _call_parts(func: Function, ins: Instruction):
    """(return symbols, callee name, argument symbols) of a ``call`` instruction."""
    ops = list(ins.operands)
    rets: tuple = ()
    if ops and isinstance(ops[0], ParamList):
        rets = ops.pop(0).elems
    if not ops or not isinstance(ops[0], Symbol):
        raise PTXError(
            "indirect calls (through a register or a .calltargets list) are not supported by the emulator",
            func.path, ins.line, ins.column, ins.text,
        )
    callee = ops.pop(0).name
    args: tuple = ()
    if ops and isinstance(ops[0], ParamList):
        args = ops.pop(0).elems
    for o in rets + args:
        if not isinstance(o, Symbol):
            raise PTXError(
                "call arguments must be .param variables (register arguments need -abi=no, which is not supported)",
                func.path, ins.line, ins.column, ins.text,
            )
    return [o.name for o in rets], callee, [o.name for o in args]


def _rename_operand(op, regs: dict, syms: dict, labels: dict):
    if isinstance(op, Reg):
        return Reg(regs.get(op.name, op.name))
    if isinstance(op, Symbol):
        return Symbol(syms.get(op.name, op.name))
    if isinstance(op, Label):
        return Label(labels.get(op.name, op.name))
    if isinstance(op, Address):
        return Address(_rename_operand(op.base, regs, syms, labels) if op.base is not None else None, op.offset)
    if isinstance(op, Vector):
        return Vector(tuple(_rename_operand(e, regs, syms, labels) if e is not None else None for e in op.elems))
    if isinstance(op, ParamList):
        return ParamList(tuple(_rename_operand(e, regs, syms, labels) for e in op.elems))
    return op


def _inline_body(module: Module, caller: Function, ins: Instruction, site: int, stack: tuple, out: Function):
    """Append the renamed, already-inlined body of the callee of ``ins`` to ``out``."""
    rets, callee_name, args = _call_parts(caller, ins)
    if ins.pred is not None:
        raise PTXError("guarded calls ('@%p call') are not supported by the emulator", caller.path, ins.line, ins.column, ins.text)
    callee = module.functions.get(callee_name)
    if callee is None or (not callee.instructions and callee.directives.get("linkage") == "extern"):
        raise PTXError(f"call to '{callee_name}', which has no body in this module", caller.path, ins.line, ins.column, ins.text)
    if callee_name in stack:
        chain = " -> ".join(stack + (callee_name,))
        raise PTXError(f"recursive call chain {chain} cannot be inlined (recursion is not supported)", caller.path, ins.line, ins.column, ins.text)
    if callee.is_entry:
        raise PTXError(f"call to kernel '{callee_name}' (an .entry cannot be called)", caller.path, ins.line, ins.column, ins.text)
    if len(args) != len(callee.params) or len(rets) != len(callee.return_params):
        raise PTXError(
            f"call passes {len(args)} argument(s) and {len(rets)} return value(s) but '{callee_name}' declares "
            f"{len(callee.params)} and {len(callee.return_params)}",
            caller.path, ins.line, ins.column, ins.text,
        )
    for p in list(callee.params) + list(callee.return_params):
        if p.space != "param":
            raise PTXError(f"'{callee_name}' takes register parameters (.reg), which are not supported", caller.path, ins.line, ins.column, ins.text)
    body = _inlined(module, callee, stack + (callee_name,))
    prefix = f"{callee_name}${site}$"
    regs = {}
    for d in body.reg_decls:
        for name in d.names:
            regs[name] = f"%{prefix}{name.lstrip('%')}"
        out.reg_decls.append(RegDecl(d.dtype, f"%{prefix}{d.prefix.lstrip('%')}", d.count, tuple(regs[n] for n in d.names)))
    syms = {p.name: a for p, a in zip(callee.params, args)}
    syms.update({p.name: r for p, r in zip(callee.return_params, rets)})
    for v in body.local_vars:
        syms[v.name] = prefix + v.name
        out.local_vars.append(dataclasses.replace(v, name=prefix + v.name))
    labels = {name: prefix + name for name in list(body.labels) + list(body.jump_tables)}
    ret_label = prefix + "ret"
    base = len(out.instructions)
    for name, idx in body.labels.items():
        out.labels[labels[name]] = base + idx
    for name, targets in body.jump_tables.items():
        out.jump_tables[labels[name]] = [labels[t] for t in targets]
    for b in body.instructions:
        if b.base in ("ret",):
            # A callee return continues after the call site: a branch in the inlined CFG.
            new = Instruction(
                "bra.uni", "bra", ("uni",), (Label(ret_label),),
                Reg(regs.get(b.pred.name, b.pred.name)) if b.pred is not None else None, b.pred_negated,
                b.line, b.column, f"{b.text}  // return from {callee_name}", OpClass.BRANCH,
            )
        else:
            new = dataclasses.replace(
                b,
                operands=tuple(_rename_operand(o, regs, syms, labels) for o in b.operands),
                pred=Reg(regs.get(b.pred.name, b.pred.name)) if b.pred is not None else None,
            )
        out.instructions.append(new)
    out.labels[ret_label] = len(out.instructions)


_CACHE_KEY = "_inlined_cache"


def _inlined(module: Module, func: Function, stack: tuple) -> Function:
    if not any(i.base == "call" for i in func.instructions):
        return func
    out = Function(
        name=func.name,
        is_entry=func.is_entry,
        params=list(func.params),
        return_params=list(func.return_params),
        reg_decls=list(func.reg_decls),
        local_vars=list(func.local_vars),
        instructions=[],
        labels={},
        jump_tables={k: list(v) for k, v in func.jump_tables.items()},
        directives=dict(func.directives),
        line=func.line,
        path=func.path,
    )
    # Map every original instruction index to its new index (labels move as bodies are spliced in).
    new_index = []
    site = 0
    for ins in func.instructions:
        new_index.append(len(out.instructions))
        if ins.base == "call":
            _inline_body(module, func, ins, site, stack, out)
            site += 1
        else:
            out.instructions.append(ins)
    new_index.append(len(out.instructions))
    for name, idx in func.labels.items():
        out.labels[name] = new_index[idx]
    return out


def inline_calls(module: Module, func: Function) -> Function:
    """A copy of ``func`` with every direct ``call`` replaced by the callee body (module docstring).

    ``func`` itself is not modified; a function without calls is returned as is.
    """
    if isinstance(func, str):
        func = module.find_kernel(func)
    return _inlined(module, func, (func.name,))
