"""`simt-fast structurize` and `simt-fast analyze` end to end."""

import json
from pathlib import Path

from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.ir import build_cfg, parse_ptx
from simt_fast.ir.control_tree import control_tree_of_cfg

ROOT = Path(__file__).resolve().parent.parent
SHORT = ROOT / "data" / "ptx" / "workloads" / "shortcircuit.ptx"
FIR = ROOT / "tests" / "data" / "analyses" / "fir.ptx"
runner = CliRunner()


def test_structurize_writes_structured_ptx_and_reports_table2(tmp_path):
    out = tmp_path / "s.ptx"
    r = runner.invoke(app, ["structurize", str(SHORT), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "forward_copies=" in r.output and "cuts=" in r.output
    m = parse_ptx(out)
    assert control_tree_of_cfg(build_cfg(m.kernels[0])).is_structured


def test_structurize_json_has_per_function_rows():
    r = runner.invoke(app, ["structurize", str(SHORT), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    row = d["functions"]["shortcircuit"]
    assert row["forward_copies"] > 0 and row["new_code_size"] > row["old_code_size"]
    assert d["total"]["forward_copies"] == row["forward_copies"]


def test_structurize_to_stdout_is_ptx():
    r = runner.invoke(app, ["structurize", str(FIR)])
    assert r.exit_code == 0
    assert ".entry _Z3firPKfS0_iPf" in r.stdout


def test_analyze_json_reports_convergence_and_tree():
    r = runner.invoke(app, ["analyze", str(FIR), "--json"])
    assert r.exit_code == 0, r.output
    k = json.loads(r.stdout)["kernels"][0]
    assert k["control_tree"]["structured"] is True
    assert k["convergence"]["summary"]["warp_sequential"] == 6
    assert k["divergent_blocks"] == [] and k["syncwarp_blocks"] == []
    sc = k["scalarization"]
    assert sc["warp_size"] == 32 and sc["scalar_registers"] > 0 and sc["warp_sequential"] == 6


def test_analyze_table_and_unstructured_kernel():
    r = runner.invoke(app, ["analyze", str(SHORT), "--tree"])
    assert r.exit_code == 0, r.output
    assert "unstructured" in r.output and "interacting edge" in r.output and "syncwarp" in r.output
    assert "control tree:" in r.output and "do_while" in r.output


def test_missing_file_and_bad_ptx_are_one_line_errors(tmp_path):
    r = runner.invoke(app, ["analyze", str(tmp_path / "nope.ptx")])
    assert r.exit_code == 2 and "not found" in r.output
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 7.5\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n  frobnicate.u32 %r1;\n}\n")
    r = runner.invoke(app, ["structurize", str(bad)])
    assert r.exit_code == 2 and "bad.ptx" in r.output and len(r.output.strip().splitlines()) == 1


def test_analyze_inline_uses_the_traced_cfg():
    path = ROOT / "data" / "ptx" / "corpus" / "switch_calls.O3.ptx"
    plain = runner.invoke(app, ["analyze", str(path), "--json"])
    inlined = runner.invoke(app, ["analyze", str(path), "--json", "--inline"])
    assert plain.exit_code == 0 and inlined.exit_code == 0, inlined.output
    n_plain = [len(k["convergence"]["blocks"]) for k in json.loads(plain.stdout)["kernels"]]
    n_inl = [len(k["convergence"]["blocks"]) for k in json.loads(inlined.stdout)["kernels"]]
    assert n_inl != n_plain  # the callees' blocks are now part of the kernel
