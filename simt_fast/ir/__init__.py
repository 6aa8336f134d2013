"""Kernel IR: PTX parser, CFG and control-flow analyses (docs/ir.md).

    from simt_fast.ir import parse_ptx, build_cfg, flatten
    module = parse_ptx(Path("kernel.ptx"))
    kernel = module.find_kernel("saxpy")
    cfg = build_cfg(kernel)           # cfg.blocks, cfg.ipdom, cfg.loops, cfg.control_deps ...
    arrays = flatten(kernel, cfg)     # DESIGN §2 numpy views
"""

import importlib

from .model import (
    Address,
    Function,
    Imm,
    Instruction,
    Label,
    Module,
    OpClass,
    Param,
    ParamList,
    PTXError,
    Reg,
    RegDecl,
    SpecialReg,
    Symbol,
    Variable,
    Vector,
)

# The parser and the CFG builder load on first use: importing the IR's data model (every trace and
# simulation does, for OpClass) does not compile the parser's regular expressions.
_LAZY = {"parse_ptx": "ptx_parser", "build_cfg": "cfg", "CFG": "cfg", "BasicBlock": "cfg", "flatten": "flat",
         "register_ids": "flat"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "parse_ptx",
    "build_cfg",
    "flatten",
    "register_ids",
    "CFG",
    "BasicBlock",
    "Address",
    "Function",
    "Imm",
    "Instruction",
    "Label",
    "Module",
    "OpClass",
    "Param",
    "ParamList",
    "PTXError",
    "Reg",
    "RegDecl",
    "SpecialReg",
    "Symbol",
    "Variable",
    "Vector",
]
