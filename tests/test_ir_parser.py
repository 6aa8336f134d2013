"""Parser unit tests: declarations, operands, opcodes, call-sequence scopes, errors and the CLI."""

import json
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.ir import (
    Address,
    Imm,
    Label,
    OpClass,
    ParamList,
    PTXError,
    Reg,
    SpecialReg,
    Symbol,
    Vector,
    build_cfg,
    parse_ptx,
)

DATA = Path(__file__).parent / "data" / "ir"
HEAD = ".version 8.5\n.target sm_80\n.address_size 64\n"

KERNEL = HEAD + """
.const .align 4 .b8 cc[8] = {0, 0, 128, 63, 0, 0, 0, 192};
.global .align 8 .f64 dd[2] = {0d3FF0000000000000, 2.5};
.global .align 4 .u32 counter = 7;
.extern .shared .align 16 .b8 dyn[];
.func  (.param .b32 func_retval0) helper(.param .b32 helper_param_0)
;
/* a block
   comment */
.visible .entry k(
	.param .u64 .ptr .global .align 4 k_param_0,
	.param .align 8 .b8 k_param_1[16]
)
.maxntid 128, 1, 1
{
	.local .align 4 .b8 	__local_depot0[32];
	.reg .pred 	%p<3>;
	.reg .f32 	%f<6>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<4>;
	.shared .align 4 .b8 smem[64];

	ld.param.u64 	%rd1, [k_param_0];           // trailing comment
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %laneid;
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd1+16];
	ld.local.u32 	%r3, [%rd2+-4];
	mov.u32 	%r4, smem;
	ld.shared.u32 	%r5, [smem+8];
	mov.f32 	%f5, 0f3F800000;
	add.s32 	%r6, %r1, -2147483648;
	and.b32 	%r6, %r6, 0xFF;
	shfl.sync.bfly.b32 	%r7|%p2, %r6, 1, 31, -1;
	st.global.v2.f32 	[%rd1], {%f1, _};
	setp.lt.s32 	%p1, %r1, 4;
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0),
	helper,
	(
	param0
	);
	ld.param.b32 	%r8, [retval0+0];
	} // callseq 0
	@!%p1 bra 	$L__BB0_2;
	sin.approx.f32 	%f5, %f5;
	bar.sync 	0;
$L__BB0_2:
	ret;
}
.func  (.param .b32 func_retval0) helper(.param .b32 helper_param_0)
{
	.reg .b32 	%r<3>;
	ld.param.b32 	%r1, [helper_param_0];
	st.param.b32 	[func_retval0+0], %r1;
	ret;
}
"""


@pytest.fixture(scope="module")
def module():
    return parse_ptx(KERNEL, "kernel.ptx")


def test_module_header_and_globals(module):
    assert (module.version, module.target, module.address_size) == ("8.5", "sm_80", 64)
    g = {v.name: v for v in module.globals}
    assert g["cc"].space == "const" and g["cc"].count == 8 and g["cc"].align == 4
    assert struct.unpack("<2f", g["cc"].init) == (1.0, -2.0)
    assert struct.unpack("<2d", g["dd"].init) == (1.0, 2.5)
    assert g["counter"].init == (7).to_bytes(4, "little") and g["counter"].dtype == "u32"
    assert g["dyn"].linkage == "extern" and g["dyn"].count == 0 and g["dyn"].align == 16
    assert list(module.functions) == ["k", "helper"]
    assert [f.name for f in module.kernels] == ["k"]


def test_function_params_and_declarations(module):
    k = module.functions["k"]
    assert k.is_entry and k.directives["maxntid"] == (128, 1, 1)
    p0, p1 = k.params
    assert (p0.name, p0.dtype, p0.ptr_space, p0.align) == ("k_param_0", "u64", "global", 4)
    assert (p1.size, p1.align) == (16, 8)
    decl = {d.prefix: d for d in k.reg_decls}
    assert decl["%r"].count == 9 and decl["%r"].names[0] == "%r0" and decl["%r"].names[-1] == "%r8"
    assert decl["temp_param_reg"].count is None  # nested call-sequence scope
    spaces = [(v.name, v.space) for v in k.local_vars]
    assert ("__local_depot0", "local") in spaces and ("smem", "shared") in spaces
    assert ("param0", "param") in spaces and ("retval0", "param") in spaces
    h = module.functions["helper"]
    assert not h.is_entry and h.return_params[0].name == "func_retval0"


def test_operands(module):
    ins = module.functions["k"].instructions
    by_op = {}
    for i in ins:
        by_op.setdefault(i.opcode, i)
    assert by_op["mov.u32"].operands == (Reg("%r1"), SpecialReg("%tid", "x"))
    assert ins[2].operands[1] == SpecialReg("%laneid")
    ld = by_op["ld.global.nc.v4.f32"]
    assert ld.base == "ld" and ld.modifiers == ("global", "nc", "v4", "f32")
    assert ld.operands == (Vector((Reg("%f1"), Reg("%f2"), Reg("%f3"), Reg("%f4"))), Address(Reg("%rd1"), 16))
    assert by_op["ld.local.u32"].operands[1] == Address(Reg("%rd2"), -4)
    assert ins[5].operands[1] == Symbol("smem")
    assert by_op["ld.shared.u32"].operands[1] == Address(Symbol("smem"), 8)
    one = by_op["mov.f32"].operands[1]
    assert one.is_float and one.value == 1.0 and one.bits == 0x3F800000
    assert by_op["add.s32"].operands[2] == Imm(-2147483648, "-2147483648")
    assert by_op["and.b32"].operands[2].value == 255
    assert by_op["shfl.sync.bfly.b32"].operands[0] == Vector((Reg("%r7"), Reg("%p2")))
    assert by_op["st.global.v2.f32"].operands[1] == Vector((Reg("%f1"), None))
    call = by_op["call.uni"]
    assert call.operands == (ParamList((Symbol("retval0"),)), Symbol("helper"), ParamList((Symbol("param0"),)))
    assert call.text == "call.uni (retval0), helper, ( param0 )"  # a multi-line statement reads as one line
    bra = by_op["bra"]
    assert bra.pred == Reg("%p1") and bra.pred_negated and bra.operands == (Label("$L__BB0_2"),)
    assert bra.text.startswith("@!%p1 bra") and bra.line > 0 and bra.column == 2


def test_op_classes(module):
    cls = {i.opcode: i.op_class for i in module.functions["k"].instructions}
    assert cls["ld.param.u64"] == OpClass.MEM_CONST
    assert cls["ld.global.nc.v4.f32"] == OpClass.MEM_GLOBAL
    assert cls["ld.local.u32"] == OpClass.MEM_LOCAL
    assert cls["ld.shared.u32"] == OpClass.MEM_SHARED
    assert cls["sin.approx.f32"] == OpClass.SFU
    assert cls["bar.sync"] == OpClass.BARRIER
    assert cls["bra"] == OpClass.BRANCH
    assert cls["ret"] == OpClass.EXIT
    assert cls["add.s32"] == OpClass.ALU
    assert cls["call.uni"] == OpClass.OTHER


def test_cfg_of_parsed_kernel(module):
    cfg = build_cfg(module.functions["k"])
    # the guarded branch ends block 0; sin + bar.sync form block 1 (barrier last); $L__BB0_2 block 2
    assert [b.succs for b in cfg.blocks] == [[2, 1], [2], [3], []]
    assert list(cfg.has_barrier) == [False, True, False, False]


def test_path_input_and_find_kernel(tmp_path):
    p = tmp_path / "x.ptx"
    p.write_text(KERNEL)
    m = parse_ptx(p)
    assert m.path == str(p) and m.find_kernel().name == "k"
    assert parse_ptx(str(p)).find_kernel("k").name == "k"
    with pytest.raises(FileNotFoundError):
        parse_ptx(tmp_path / "missing.ptx")


# ---------------------------------------------------------------------------------------------
# errors: one sentence with file:line:col and the offending text
# ---------------------------------------------------------------------------------------------

BODY = HEAD + ".visible .entry e()\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n{lines}\n\tret;\n}\n"


def body(*lines):
    return BODY.replace("{lines}", "\n".join("\t" + l for l in lines))


@pytest.mark.parametrize(
    "lines, message, line, col, text",
    [
        (["frobnicate.u32 %r1, %r2;"], "unsupported opcode 'frobnicate.u32'", 8, 2, "frobnicate.u32 %r1, %r2"),
        (["add.u32 %r1, %r9x, 1;"], "register '%r9x' is not declared", 8, 15, "add.u32 %r1, %r9x, 1"),
        (["mov.u32 %r1, 1;", "bra.uni $L_nowhere;"], "branch to undefined label '$L_nowhere'", 9, 10, "bra.uni $L_nowhere"),
        (["setp.eq.and.u32 %p1, %r1, 1, !%p0;"], "negated predicate operands", 8, 31, "setp.eq.and.u32"),
        (["@%q1 bra $X;", "$X:"], "guard predicate '%q1' is not a declared register", 8, 3, "@%q1 bra $X"),
        (["mov.u32 %r1, [%rd1*4];"], "unsupported address expression", 8, 15, "[%rd1*4]"),
        ([".reg .b32 %r<4>;", "$A:", "$A:"], "label '$A' is defined twice", 10, 2, "$A:"),
        ([".weird 3;"], "unsupported directive '.weird'", 8, 2, ".weird 3"),
        (["mov.u32 %r1, %tid.w;"], "special register '%tid.w' has no component", 8, 15, "%tid.w"),
        (["brx.idx %r1, $T;"], "brx.idx target list '$T' is not defined", 8, 2, "brx.idx"),
        (["mov.u32 %r1, 1;", "ld.global.u32 %r2, [nosuchvar+4];"], "'nosuchvar' is not a declared variable", 9, 22, "[nosuchvar+4]"),
        (["ld.global.u32 %r2, [%r1+09];"], "address offset '09'", 8, 21, "[%r1+09]"),
        ([".reg .b32 %big<100000>;"], "declares more than 65536 registers", 8, 2, "%big<100000>"),
        ([".shared .align 3 .b8 s[4];"], ".align 3 is not a positive power of two", 8, 2, ".align 3"),
        (["add.u32 %r1, %r2;"], "'add.u32' takes 3 operands, not 2", 8, 2, "add.u32 %r1, %r2"),
        (["fma.rn.f32 %r1, %r2, %r3;"], "'fma.rn.f32' takes 4 operands, not 3", 8, 2, "fma.rn.f32"),
    ],
)
def test_errors_name_file_line_column_and_text(lines, message, line, col, text):
    """The column points at the offending token when there is one, else at the statement."""
    with pytest.raises(PTXError) as info:
        parse_ptx(body(*lines), "bad.ptx")
    e = info.value
    assert message in str(e)
    assert (e.path, e.line, e.column) == ("bad.ptx", line, col)
    assert text in e.text
    assert str(e).startswith(f"bad.ptx:{line}:{col}: ")
    assert "\n" not in str(e)


def test_structural_errors():
    with pytest.raises(PTXError, match=r"x\.ptx:6:2: statement is not terminated"):
        parse_ptx(HEAD + ".visible .entry e()\n{\n\tret\n", "x.ptx")
    with pytest.raises(PTXError, match="has no closing"):
        parse_ptx(HEAD + ".visible .entry e()\n{\n\tret;\n", "x.ptx")
    with pytest.raises(PTXError, match="missing .version"):
        parse_ptx(".target sm_75\n", "x.ptx")
    with pytest.raises(PTXError, match="only allowed inside a function body"):
        parse_ptx(HEAD + "add.u32 %r1, %r2, 1;\n", "x.ptx")
    with pytest.raises(PTXError, match="call to undeclared function 'nothere'"):
        parse_ptx(HEAD + ".visible .entry e()\n{\n\tcall.uni nothere;\n\tret;\n}\n", "x.ptx")
    with pytest.raises(PTXError, match="unsupported initialiser element '1..2'"):
        parse_ptx(HEAD + ".global .u64 p[1] = {1..2};\n", "x.ptx")


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_json_matches_library():
    res = runner.invoke(app, ["cfg", str(DATA / "loop_two_exits.ptx"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    (k,) = data["kernels"]
    assert k["name"] == "two_exits" and k["entry"] == 0 and k["exit"] == 6
    assert [b["succs"] for b in k["blocks"]] == [[1], [5, 2], [4, 3], [1], [5], [6], []]
    assert [b["ipdom"] for b in k["blocks"]] == [1, 5, 5, 1, 5, 6, None]
    assert [b["loop_header"] for b in k["blocks"]] == [False, True, False, False, False, False, False]
    assert [b["n_instrs"] for b in k["blocks"]] == [3, 2, 3, 2, 1, 1, 0]
    assert k["blocks"][1]["label"] == "$LOOP"


def test_cli_table_dot_and_kernel_selection(tmp_path):
    res = runner.invoke(app, ["cfg", str(DATA / "nested_loops.ptx")])
    assert res.exit_code == 0 and "nested" in res.stdout and "header" in res.stdout
    out = tmp_path / "g.dot"
    res = runner.invoke(app, ["cfg", str(DATA.parent.parent.parent / "data/ptx/corpus/loops.O3.ptx"), "--kernel", "collatz", "--dot", "-o", str(out)])
    assert res.exit_code == 0, res.output
    dot = out.read_text()
    assert dot.startswith('digraph "collatz"') and "->" in dot and "style=dashed" in dot
    res = runner.invoke(app, ["cfg", str(DATA / "ifelse.ptx"), "--dot", "--instructions"])
    assert res.exit_code == 0
    assert 'b3 [label="3: $JOIN\\nld.param.u64  %rd1, [ifelse_param_0]\\lst.global.u32  [%rd1], %r2\\lret\\l"];' in res.stdout
    res = runner.invoke(app, ["cfg", str(DATA.parent.parent.parent / "data/ptx/corpus/loops.O3.ptx"), "--kernel", "nosuch"])
    assert res.exit_code == 2 and "no kernel matches 'nosuch'" in res.output


def test_cli_error_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(body("frobnicate.u32 %r1, %r2;"))
    res = runner.invoke(app, ["cfg", str(bad)])
    assert res.exit_code == 2
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1
    assert lines[0] == f"error: {bad}:8:2: unsupported opcode 'frobnicate.u32': `frobnicate.u32 %r1, %r2`"
    res = runner.invoke(app, ["cfg", str(tmp_path / "missing.ptx")])
    assert res.exit_code == 2 and "not found" in res.output


# ---------------------------------------------------------------------------------------------
# less common nvcc output and hand-written layouts
# ---------------------------------------------------------------------------------------------


def test_printf_function_pointers_inline_asm_texture():
    m = parse_ptx(DATA / "nvcc_misc_features.ptx")
    g = {v.name: v for v in m.globals}
    # function-pointer table: zero bytes + relocations the emulator resolves
    assert g["ops"].init == bytes(16) and g["ops"].init_symbols == ((0, "_Z3inci", 0), (8, "_Z3dbli", 0))
    assert g["$str"].init.startswith(b"hello %d\n")
    k = m.find_kernel("h")
    assert "prototype_0" in k.directives["callprototype"] and "prototype_0" not in k.labels
    indirect = [i for i in k.instructions if i.base == "call" and isinstance(i.operands[1], Reg)]
    assert len(indirect) == 1 and indirect[0].operands[-1] == Symbol("prototype_0")
    # the inline-asm scope declares a register without '%'
    setp = next(i for i in k.instructions if i.operands and i.operands[0] == Reg("p"))
    assert setp.opcode == "setp.ne.u32"
    tex = next(i for i in k.instructions if i.base == "tex")
    assert tex.operands[1] == Vector((Reg("%rd3"), Vector((Reg("%r3"),))))
    assert tex.op_class == OpClass.MEM_GLOBAL
    cfg = build_cfg(k)
    assert cfg.blocks[-1].label == "<exit>"


def test_crlf_block_comments_and_several_statements_per_line():
    src = (HEAD + ".visible .entry e() {\n\t.reg .b32 %r<3>; .reg .pred %p1;\n"
           "\tmov.u32 %r1, 1; /* inline */ add.u32 %r2, %r1,\n\t\t2;\n"
           "$L1: setp.lt.u32 %p1, %r2, 9; @%p1 bra $L1; // loop\n\tret; }\n").replace("\n", "\r\n")
    m = parse_ptx(src, "crlf.ptx")
    k = m.find_kernel("e")
    assert [i.opcode for i in k.instructions] == ["mov.u32", "add.u32", "setp.lt.u32", "bra", "ret"]
    assert k.labels == {"$L1": 2}
    add = k.instructions[1]
    assert add.operands == (Reg("%r2"), Reg("%r1"), Imm(2, "2")) and add.line == 6
    assert add.column == 31 and k.instructions[0].column == 2  # columns survive the /* */ comment
    setp = k.instructions[2]
    assert (setp.line, setp.column) == (8, 6)  # after the label on the same line
    assert [b.succs for b in build_cfg(k).blocks] == [[1], [1, 2], [3], []]


def test_absolute_and_symbolic_addresses():
    m = parse_ptx(body("ld.const.u32 %r1, [16];", "ld.const.u32 %r2, [0x20];", "ld.global.u32 %r3, [-4];"))
    assert [i.operands[1] for i in m.kernels[0].instructions[:3]] == [Address(None, 16), Address(None, 32), Address(None, -4)]


def test_address_initialiser_must_name_a_declared_symbol():
    with pytest.raises(PTXError, match=r"u\.ptx:4:1: initialiser of 'p' takes the address of undeclared 'nothere'"):
        parse_ptx(HEAD + ".global .align 8 .u64 p[2] = {nothere, 0};\n", "u.ptx")
    m = parse_ptx(HEAD + ".global .align 4 .b8 buf[8];\n.global .align 8 .u64 p[1] = {generic(buf)+4};\n")
    assert m.globals[1].init_symbols == ((0, "buf", 4),)


def test_initialiser_sizes():
    g = parse_ptx(HEAD + ".global .u32 x[] = {1, 2, 3};\n.global .u16 y[4] = {7};\n").globals
    assert (g[0].count, g[0].init) == (3, bytes([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]))
    assert (g[1].count, g[1].init) == (4, bytes([7, 0, 0, 0, 0, 0, 0, 0]))
    for bad in (".global .u32 x[2] = {1, 2, 3};", ".global .u32 x[0] = {1};"):
        with pytest.raises(PTXError, match="initialiser of 'x' has more elements than the variable"):
            parse_ptx(HEAD + bad + "\n")


def test_cli_all_functions_and_alias():
    res = runner.invoke(app, ["cfg", str(DATA.parent.parent.parent / "data/ptx/corpus/switch_calls.O3.ptx"), "--all", "--json"])
    assert res.exit_code == 0, res.output
    names = [k["name"] for k in json.loads(res.stdout)["kernels"]]
    assert "dispatch" in names and any("classify" in n for n in names) and any("mix" in n for n in names)
    m = parse_ptx(HEAD + ".func f()\n{\n\tret;\n}\n.alias g, f;\n.visible .entry e()\n{\n\tcall.uni g;\n\tret;\n}\n")
    assert list(m.functions) == ["f", "e"]


def test_flat_register_rules():
    """dst = operand 0 unless the opcode writes nothing; srcs = guard, then operands left to right, max 3."""
    from simt_fast.ir import flatten

    src = body(
        "bar.sync %r1;",                        # a register operand 0 that is read
        "atom.global.add.u32 %r2, [%rd1], %r3;",
        "@%p1 fma.rn.f32 %f1, %f2, %f3, %f4;",  # guard first, the 4th source is dropped
        "st.global.v4.f32 [%rd1+16], {%f1, %f2, %f3, %f4};",
        "shfl.sync.bfly.b32 %r1|%p0, %r2, 1, 31, -1;",
        "mov.b64 {%r1, %r2}, %rd1;",
        "setp.lt.s32 %p1, %r1, %r1;",           # duplicates counted once
    ).replace(".reg .pred %p<2>;", ".reg .pred %p<2>;\n\t.reg .f32 %f<5>;\n\t.reg .b64 %rd<2>;")
    k = parse_ptx(src).kernels[0]
    flat = flatten(k, build_cfg(k))
    ids = flat["reg_ids"]
    r = lambda *names: [ids[n] for n in names] + [-1] * (3 - len(names))  # noqa: E731
    assert flat["dst_reg"][:7].tolist() == [-1, ids["%r2"], ids["%f1"], -1, ids["%r1"], ids["%r1"], ids["%p1"]]
    assert flat["src_reg"][:7].tolist() == [
        r("%r1"),
        r("%rd1", "%r3"),
        r("%p1", "%f2", "%f3"),
        r("%rd1", "%f1", "%f2"),
        r("%r2"),
        r("%rd1"),
        r("%r1"),
    ]
    assert flat["reg_names"][:4] == ["%r0", "%r1", "%r2", "%r3"]


def test_cli_inline_shows_the_trace_cfg():
    """--inline: the CFG after direct calls are inlined (what a trace of the kernel records)."""
    from simt_fast.ir.inline import inline_calls

    path = DATA.parent.parent.parent / "data/ptx/corpus/switch_calls.O3.ptx"
    res = runner.invoke(app, ["cfg", str(path), "--kernel", "dispatch", "--inline", "--json"])
    assert res.exit_code == 0, res.output
    (k,) = json.loads(res.stdout)["kernels"]
    m = parse_ptx(path)
    inlined = build_cfg(inline_calls(m, m.find_kernel("dispatch")))
    assert [b["succs"] for b in k["blocks"]] == [b.succs for b in inlined.blocks]
    assert len(k["blocks"]) > build_cfg(m.find_kernel("dispatch")).n_blocks
