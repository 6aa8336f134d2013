"""Kernel IR -> PTX text that ``ptxas`` accepts (original or transformed functions).

The printer works from the decoded IR (opcode, operands, declarations), never from the source
text, so a transformed function (duplicated blocks, new labels, Cut flag code) prints the same way
as a parsed one. Round trip: ``parse_ptx(print_module(parse_ptx(x)))`` equals ``parse_ptx(x)``
structurally (same functions, declarations, instructions and operands, labels at the same places).

Choices:

* ``.file``/``.loc`` debug directives are not printed (the ``.file`` table is not kept in the IR,
  and a ``.loc`` without it would not assemble); ``.pragma`` lines are printed where they were.
* Every ``.func`` gets a prototype at the top of the module, so definitions can follow any order;
  prototypes of called functions the module only declares (``.extern .func vprintf``) and globals
  initialised with addresses (``{_Z3inci, _Z3dbli}``: the IR keeps only their zero bytes) are
  copied from the module's source text, before the globals that may use them.
* Body-scoped ``.param``/``.local``/``.shared`` declarations (the call scopes of ``-O0`` code) are
  printed once at function scope; redeclarations of one name with the same shape collapse.
"""

from __future__ import annotations

import re
import struct
from typing import Iterable, Optional

from .model import Address, Function, Imm, Instruction, Label, Module, ParamList, Reg, SpecialReg, Symbol, Variable, Vector

__all__ = ["print_module", "print_function", "format_instruction", "format_operand"]

_TEXTURE_OPS = frozenset("tex tld4 txq suld sust sured suq".split())
_FLOAT_TYPES = {"f32": ("<f", "0f{:08X}", "<I"), "f64": ("<d", "0d{:016X}", "<Q")}


def format_operand(op, ins: Optional[Instruction] = None, position: int = 0) -> str:
    """One operand in PTX syntax."""
    if op is None:
        return "_"
    if isinstance(op, Reg):
        return op.name
    if isinstance(op, SpecialReg):
        return f"{op.name}.{op.component}" if op.component else op.name
    if isinstance(op, Imm):
        if op.text:
            return op.text
        if op.is_float and op.bits is not None:
            return f"0d{op.bits:016X}" if op.bits > 0xFFFFFFFF else f"0f{op.bits:08X}"
        return str(op.value)
    if isinstance(op, (Symbol, Label)):
        return op.name
    if isinstance(op, Address):
        if op.base is None:
            return f"[{op.offset}]"
        base = op.base.name
        # nvcc spells negative offsets `[%rd9+-4]`; ptxas rejects `[%rd9-4]`
        return f"[{base}+{op.offset}]" if op.offset else f"[{base}]"
    if isinstance(op, Vector):
        parts = [format_operand(e) for e in op.elems]
        if ins is not None and position == 0 and ins.base in ("setp", "shfl") and len(parts) == 2:
            # the dual destination `%p|%q` (setp) / `%r|%p` (shfl) is a two-element vector in the IR
            return "|".join(parts)
        if ins is not None and ins.base in _TEXTURE_OPS and op.elems and (
                isinstance(op.elems[0], Symbol) or isinstance(op.elems[-1], Vector)):
            # `[tex, {coords}]`: the texture (a name or a handle register) and its coordinates
            return "[" + ", ".join(parts) + "]"
        return "{" + ", ".join(parts) + "}"
    if isinstance(op, ParamList):
        return "(" + ", ".join(format_operand(e) for e in op.elems) + ")"
    raise TypeError(f"cannot print operand {op!r}")


def format_instruction(ins: Instruction) -> str:
    guard = ""
    if ins.pred is not None:
        guard = f"@{'!' if ins.pred_negated else ''}{ins.pred.name} "
    ops = ", ".join(format_operand(o, ins, i) for i, o in enumerate(ins.operands))
    return f"{guard}{ins.opcode}{' ' + ops if ops else ''};"


def _elements(var: Variable) -> list:
    """Initialiser bytes as PTX element literals of the variable's type."""
    data = var.init or b""
    size = var.elem_size
    out = []
    for k in range(0, len(data), size):
        chunk = data[k : k + size]
        if var.dtype in _FLOAT_TYPES:
            _, fmt, ufmt = _FLOAT_TYPES[var.dtype]
            out.append(fmt.format(struct.unpack(ufmt, chunk)[0]))
        else:
            out.append(str(int.from_bytes(chunk, "little", signed=var.dtype.startswith("s"))))
    return out


def format_variable(var: Variable, param: bool = False) -> str:
    """A declaration (without the trailing ``;``)."""
    words = []
    if var.linkage:
        words.append(f".{var.linkage}")
    words.append(f".{var.space}")
    ptr_space = getattr(var, "ptr_space", "")
    if ptr_space:
        words.append(".ptr")
        if ptr_space != "generic":
            words.append(f".{ptr_space}")
    natural = var.elem_size
    if var.align and (var.align != natural or var.count != 1 or ptr_space):
        words.append(f".align {var.align}")
    words.append(f".{var.dtype}")
    name = var.name
    if var.count == 0:
        name += "[]"
    elif var.count != 1 or (var.init is not None and len(var.init) > var.elem_size):
        name += f"[{var.count}]"
    text = " ".join(words) + " " + name
    if var.init is not None and not param:
        elems = _elements(var)
        text += " = " + ("{" + ", ".join(elems) + "}" if var.count != 1 else elems[0])
    return text


def _header(func: Function) -> str:
    linkage = func.directives.get("linkage", "visible" if func.is_entry else "")
    words = [f".{linkage}"] if linkage else []
    words.append(".entry" if func.is_entry else ".func")
    head = " ".join(words)
    if func.return_params:
        head += " (" + ", ".join(format_variable(p, True) for p in func.return_params) + ")"
    head += f" {func.name}"
    if func.params or func.is_entry:
        inner = ",\n".join("\t" + format_variable(p, True) for p in func.params)
        head += "(\n" + inner + "\n)" if func.params else "()"
    return head


_HEADER_DIRECTIVES = ("maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg", "noreturn",
                      "maxclusterrank", "reqnctapercluster", "explicitcluster")


def _mentions(op, name) -> bool:
    if isinstance(op, Symbol):
        return op.name == name
    if isinstance(op, Address):
        return isinstance(op.base, Symbol) and op.base.name == name
    if isinstance(op, (ParamList, Vector)):
        return any(_mentions(e, name) for e in op.elems)
    return False


def _rename(op, old, new):
    if isinstance(op, Symbol) and op.name == old:
        return Symbol(new)
    if isinstance(op, Address) and isinstance(op.base, Symbol) and op.base.name == old:
        return Address(Symbol(new), op.offset)
    if isinstance(op, ParamList):
        return ParamList(tuple(_rename(e, old, new) for e in op.elems))
    if isinstance(op, Vector):
        return Vector(tuple(_rename(e, old, new) for e in op.elems))
    return op


def _scoped_locals(func: Function):
    """Declarations at function scope plus per-instruction renames.

    The call scopes ``{ .param .b32 param0; st.param ...; call ...; }`` of ``-O0`` code may reuse a
    name with a different shape in each scope; the IR keeps one flat list. Same-shaped
    redeclarations collapse into one; when shapes differ, the k-th declaration of the name belongs to
    the k-th ``call`` that mentions it (argument stores before it, result loads after it), and each
    differently shaped scope gets its own name ``<name>_s<k>``.
    """
    by_name: dict = {}
    for var in func.local_vars:
        by_name.setdefault(var.name, []).append(var)
    decls, renames = [], {}
    for name, vs in by_name.items():
        shapes = {(v.space, v.dtype, v.count, v.align, v.init) for v in vs}
        if len(shapes) == 1:
            decls.append(vs[0])
            continue
        calls = [i for i, ins in enumerate(func.instructions)
                 if ins.base == "call" and any(_mentions(o, name) for o in ins.operands)]
        if len(calls) != len(vs):
            decls.append(max(vs, key=lambda v: v.size))
            continue
        first_shape = (vs[0].space, vs[0].dtype, vs[0].count, vs[0].align, vs[0].init)
        scope_name = []
        for k, v in enumerate(vs):
            same = (v.space, v.dtype, v.count, v.align, v.init) == first_shape
            scope_name.append(name if same else f"{name}_s{k}")
            if not same or k == 0:
                decls.append(Variable(scope_name[-1], v.space, v.dtype, v.elem_size, v.count, v.align, v.init, v.linkage))
        for i, ins in enumerate(func.instructions):
            if not any(_mentions(o, name) for o in ins.operands):
                continue
            if ins.base == "call":
                k = calls.index(i)
            elif ins.base == "ld":  # a result read after its call
                k = max([j for j, c in enumerate(calls) if c <= i], default=0)
            else:  # an argument written before its call
                k = min([j for j, c in enumerate(calls) if c >= i], default=len(calls) - 1)
            if scope_name[k] != name:
                renames.setdefault(i, []).append((name, scope_name[k]))
    return decls, renames


def print_function(func: Function, prototype: bool = False) -> str:
    """One ``.entry``/``.func`` definition (or only its prototype)."""
    lines = [_header(func)]
    if prototype:
        return lines[0] + ";\n"
    for d in _HEADER_DIRECTIVES:
        if d in func.directives:
            args = func.directives[d]
            if isinstance(args, tuple):
                lines.append(f".{d} " + ", ".join(str(a) for a in args) if args else f".{d}")
    lines.append("{")
    declared = set()
    for decl in func.reg_decls:
        # nested call scopes of nvcc output redeclare scratch registers (%temp, temp_param_reg);
        # the IR has one flat scope, so each name is declared once
        if set(decl.names) <= declared:
            continue
        if decl.count is not None and not (set(decl.names) & declared):
            lines.append(f"\t.reg .{decl.dtype} {decl.prefix}<{decl.count}>;")
        else:
            fresh = [n for n in decl.names if n not in declared]
            lines.append(f"\t.reg .{decl.dtype} {', '.join(fresh)};")
        declared.update(decl.names)
    decls, renames = _scoped_locals(func)
    for var in decls:
        lines.append(f"\t{format_variable(var)};")
    for name, targets in func.jump_tables.items():
        lines.append(f"{name}: .branchtargets {', '.join(targets)};")
    for word in ("callprototype", "calltargets"):
        for label, text in func.directives.get(word, {}).items():
            lines.append(f"{label}: {text}" + ("" if text.rstrip().endswith(";") else ";"))
    labels_at: dict = {}
    for name, idx in func.labels.items():
        labels_at.setdefault(idx, []).append(name)
    pragmas: dict = {}
    for idx, text in func.directives.get("pragma", []):
        pragmas.setdefault(idx, []).append(text)
    for i, ins in enumerate(func.instructions):
        for name in labels_at.get(i, ()):
            lines.append(f"{name}:")
        for text in pragmas.get(i, ()):
            lines.append(f"\t.pragma {text}" + ("" if text.endswith(";") else ";"))
        for old_name, new_name in renames.get(i, ()):
            ins = Instruction(ins.opcode, ins.base, ins.modifiers, tuple(_rename(o, old_name, new_name) for o in ins.operands),
                              ins.pred, ins.pred_negated, ins.line, ins.column, ins.text, ins.op_class)
        lines.append("\t" + format_instruction(ins))
    n = len(func.instructions)
    for name in labels_at.get(n, ()):
        lines.append(f"{name}:")
    for text in pragmas.get(n, ()):
        lines.append(f"\t.pragma {text}" + ("" if text.endswith(";") else ";"))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _called_names(funcs) -> list:
    names = []
    for f in funcs:
        for ins in f.instructions:
            if ins.base == "call":
                callee = next((o for o in ins.operands if isinstance(o, Symbol)), None)
                if callee is not None and callee.name not in names:
                    names.append(callee.name)
    return names


def _external_prototypes(module: Module, funcs) -> list:
    """Declarations of called functions the module does not define (``.extern .func vprintf``).

    The IR keeps no prototypes, only definitions, so they are copied from the module's source text
    (the statement that declares the name, up to its ``;``)."""
    defined = {f.name for f in funcs}
    out = []
    for name in _called_names(funcs):
        if name in defined or not module.source:
            continue
        m = re.search(r"^[ \t]*((?:\.(?:extern|weak|visible)\s+)*\.func\b[^;{]*?\b" + re.escape(name) + r"\b[^;{]*;)",
                      module.source, re.M)
        if m:
            out.append(re.sub(r"\s+", " ", m.group(1)).strip() + "\n")
    return out


def _symbolic_initialiser(module: Module, var: Variable) -> str:
    """A global initialised with addresses (``.u64 ops[2] = {f, g}``) keeps only zero bytes in the
    IR; its declaration is copied from the module's source text instead."""
    if var.init is None or not module.source:
        return ""
    m = re.search(r"^[ \t]*(\.[^;\n]*?[ \t]" + re.escape(var.name) + r"[ \t]*(?:\[[^\]]*\][ \t]*)*=([^;]*);)",
                  module.source, re.M)
    if not m:
        return ""
    init_text = re.sub(r"\b0[fFdD][0-9A-Fa-f]+\b", "", m.group(2))
    if not re.search(r"[A-Za-z_$%]", init_text):
        return ""
    return re.sub(r"\s+", " ", m.group(1)).strip()


def _target(target: str) -> str:
    # `-G` output says `.target sm_75, debug`; the DWARF sections are not kept, so drop the flag
    return ", ".join(t.strip() for t in target.split(",") if t.strip() != "debug")


def print_module(module: Module, functions: Optional[Iterable[Function]] = None) -> str:
    """The whole module as PTX. ``functions`` replaces the module's functions (same order) if given."""
    funcs = list(functions) if functions is not None else list(module.functions.values())
    out = [
        "//",
        "// Generated by simt-fast (ptx_printer)",
        "//",
        "",
        f".version {module.version}",
        f".target {_target(module.target)}",
        f".address_size {module.address_size}",
        "",
    ]
    # prototypes first: globals may be initialised with function addresses
    out += _external_prototypes(module, funcs)
    for f in funcs:
        if not f.is_entry:
            out.append(print_function(f, prototype=True))
    for var in module.globals:
        out.append(_symbolic_initialiser(module, var) or format_variable(var) + ";")
    if module.globals:
        out.append("")
    for f in funcs:
        out.append(print_function(f))
    return "\n".join(out)
