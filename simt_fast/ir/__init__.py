"""Kernel IR: PTX parser, CFG and control-flow analyses (docs/ir.md).

    from simt_fast.ir import parse_ptx, build_cfg, flatten
    module = parse_ptx(Path("kernel.ptx"))
    kernel = module.find_kernel("saxpy")
    cfg = build_cfg(kernel)           # cfg.blocks, cfg.ipdom, cfg.loops, cfg.control_deps ...
    arrays = flatten(kernel, cfg)     # DESIGN §2 numpy views
"""

from .cfg import CFG, BasicBlock, build_cfg
from .flat import flatten, register_ids
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
from .ptx_parser import parse_ptx

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
