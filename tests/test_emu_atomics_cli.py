"""Atomics (global and shared) against a sequential Python model in the documented thread order,
and the `simt-fast workloads` / `simt-fast trace` commands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.emu import launch
from simt_fast.trace import Trace, validate

from hypothesis_budget import examples

HEAD = ".version 7.0\n.target sm_75\n.address_size 64\n"


def atomic_kernel(op: str, ty: str, space: str) -> str:
    """Thread i applies `atom.<space>.<op>.<ty>` with operand v[i] (and w[i] for cas) to cell i % 4."""
    cas = op == "cas"
    sz = 8 if ty.endswith("64") else 4
    r = "%rd" if sz == 8 else "%r"
    if space == "global":
        target = "ld.param.u64 %rd9, [cells];\n add.s64 %rd10, %rd9, %rd8;\n"
        addr = "[%rd10]"
        prologue = epilogue = ""
    else:
        target = ""
        addr = "[%rs1]"
        # copy the 4 cells into shared memory, operate there, copy back (thread 0)
        prologue = (
            " mov.u32 %rs0, sbuf;\n cvt.u32.u64 %rs2, %rd8;\n add.u32 %rs1, %rs0, %rs2;\n"
            " setp.ne.u32 %p1, %r1, 0;\n @%p1 bra SYNC1;\n ld.param.u64 %rd9, [cells];\n"
            + "".join(f" ld.global.b{8 * sz} {r}20, [%rd9+{k * sz}];\n st.shared.b{8 * sz} [%rs0+{k * sz}], {r}20;\n" for k in range(4))
            + "SYNC1:\n bar.sync 0;\n"
        )
        epilogue = (
            " bar.sync 0;\n @%p1 bra DONE;\n ld.param.u64 %rd9, [cells];\n"
            + "".join(f" ld.shared.b{8 * sz} {r}20, [%rs0+{k * sz}];\n st.global.b{8 * sz} [%rd9+{k * sz}], {r}20;\n" for k in range(4))
            + "DONE:\n"
        )
    return HEAD + f"""
.visible .entry atom_test(.param .u64 cells, .param .u64 vals, .param .u64 wals, .param .u64 olds)
{{
 .reg .pred %p<3>;
 .reg .b32 %r<32>;
 .reg .b32 %rs<4>;
 .reg .b64 %rd<32>;
 .shared .align 8 .b8 sbuf[32];
 mov.u32 %r1, %tid.x;
 and.b32 %r2, %r1, 3;
 mul.wide.u32 %rd8, %r2, {sz};
 mul.wide.u32 %rd1, %r1, {sz};
 ld.param.u64 %rd2, [vals];
 add.s64 %rd3, %rd2, %rd1;
 ld.global.b{8 * sz} {r}4, [%rd3];
 ld.param.u64 %rd5, [wals];
 add.s64 %rd6, %rd5, %rd1;
 ld.global.b{8 * sz} {r}5, [%rd6];
{prologue} {target} atom.{space}.{op}.{ty} {r}6, {addr}, {r}4{', ' + r + '5' if cas else ''};
 ld.param.u64 %rd11, [olds];
 add.s64 %rd12, %rd11, %rd1;
 st.global.b{8 * sz} [%rd12], {r}6;
{epilogue} ret;
}}
"""


def apply(op, ty, old, v, w):
    bits = 64 if ty.endswith("64") else 32
    m = (1 << bits) - 1

    def s(x):
        x &= m
        return x - (1 << bits) if ty[0] == "s" and x >> (bits - 1) else x

    if op == "add":
        return (old + v) & m
    if op == "exch":
        return v & m
    if op == "cas":
        return w & m if old == v & m else old
    if op == "and":
        return old & v
    if op == "or":
        return old | v
    if op == "xor":
        return old ^ v
    if op == "inc":
        return 0 if old >= v else old + 1
    if op == "dec":
        return v if (old == 0 or old > v) else old - 1
    pick = min if op == "min" else max
    return pick(s(old), s(v)) & m


CASES = [("add", "u32"), ("add", "u64"), ("min", "s32"), ("max", "u32"), ("max", "s64"), ("exch", "b32"),
         ("cas", "b32"), ("and", "b32"), ("or", "b64"), ("xor", "b32"), ("inc", "u32"), ("dec", "u32")]


@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("op,ty", CASES)
@examples(8)
@given(data=st.data())
def test_atomics_match_sequential_model_in_thread_order(op, ty, space, data):
    n = 64
    bits = 64 if ty.endswith("64") else 32
    dt = np.uint64 if bits == 64 else np.uint32
    small = op in ("inc", "dec", "cas")
    elems = st.integers(0, 7) if small else st.integers(0, 2**bits - 1)
    cells = np.array(data.draw(st.lists(elems, min_size=4, max_size=4)), dt)
    vals = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), dt)
    wals = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), dt)
    olds = np.zeros(n, dt)
    want_cells = [int(c) for c in cells]
    want_olds = []
    for i in range(n):  # one CTA: lanes in increasing order, warp 0 then warp 1
        k = i % 4
        want_olds.append(want_cells[k])
        want_cells[k] = apply(op, ty, want_cells[k], int(vals[i]), int(wals[i]))
    launch(atomic_kernel(op, ty, space), "atom_test", 1, n, [cells, vals, wals, olds])
    assert [int(c) for c in cells] == want_cells
    assert [int(o) for o in olds] == want_olds


def test_atom_add_f32_accumulates_in_thread_order():
    cells = np.zeros(4, np.float32)
    vals = np.linspace(0.1, 6.4, 64).astype(np.float32)
    olds = np.zeros(64, np.float32)
    src = atomic_kernel("add", "f32", "global").replace("ld.global.b32 %r4", "ld.global.f32 %r4")
    launch(src, "atom_test", 1, 64, [cells, vals, vals.copy(), olds])
    want = np.zeros(4, np.float32)
    for i in range(64):
        want[i % 4] = np.float32(want[i % 4] + vals[i])
    assert np.array_equal(cells, want)


runner = CliRunner()


def test_cli_workloads_lists_the_registry():
    res = runner.invoke(app, ["workloads"])
    assert res.exit_code == 0 and "bfs" in res.output and "blackscholes" in res.output


def test_cli_trace_writes_a_valid_checked_trace(tmp_path):
    out = tmp_path / "bfs.h5"
    res = runner.invoke(app, ["trace", "bfs", "--size", "tiny", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "bfs (tiny)" in res.output and "thread instructions" in res.output
    tr = Trace.load(out)
    validate(tr)
    assert tr.attrs["workload"] == "bfs" and tr.attrs["size"] == "tiny"


def test_cli_trace_ptx_file_and_errors(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(HEAD + """
.visible .entry fill(.param .u64 out, .param .u32 v)
{
 .reg .b32 %r<3>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r2, [v];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r2;
 ret;
}
""")
    out = tmp_path / "k.h5"
    res = runner.invoke(app, ["trace", str(ptx), "--grid", "1", "--block", "64", "--arg", "buf:uint32:64", "--arg", "uint32:7", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert Trace.load(out).n_threads == 64
    res = runner.invoke(app, ["trace", str(ptx), "--grid", "1", "--block", "64", "--arg", "buf:uint32:16", "--arg", "uint32:7"])
    assert res.exit_code == 2 and "outside every buffer" in res.output
    res = runner.invoke(app, ["trace", "no-such-workload"])
    assert res.exit_code == 2 and "unknown workload" in res.output
