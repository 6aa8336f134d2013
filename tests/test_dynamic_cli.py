"""CLI: `simt-fast scalarize`, `expansion`, `struct-vs-ipdom`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.emu import launch
from simt_fast.workloads import get

runner = CliRunner()


def _trace(tmp_path, attrs):
    wl = get("shortcircuit")
    spec = wl.launch_spec("tiny")
    path = tmp_path / "sc.h5"
    launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace_path=path, attrs=attrs)
    return path, wl


def test_scalarize_and_expansion_json(tmp_path):
    path, wl = _trace(tmp_path, {"workload": "shortcircuit"})
    r = runner.invoke(app, ["scalarize", str(path), "--json", "--warp-sizes", "4,32"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert set(d["dynamic"]["warp_sizes"]) == {"4", "32"}
    r = runner.invoke(app, ["expansion", str(path), "--json", "-w", "8"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["warp_size"] == 8


def test_scalarize_needs_ptx_without_workload(tmp_path):
    path, wl = _trace(tmp_path, {})
    r = runner.invoke(app, ["scalarize", str(path)])
    assert r.exit_code == 2 and "pass --ptx" in r.output
    r = runner.invoke(app, ["scalarize", str(path), "--ptx", str(wl.ptx_path)])
    assert r.exit_code == 0 and "static instructions scalar" in r.output
    r = runner.invoke(app, ["scalarize", str(path), "--warp-sizes", "4,x"])
    assert r.exit_code == 2 and "comma-separated" in r.output


def test_struct_vs_ipdom_unknown_workload():
    r = runner.invoke(app, ["struct-vs-ipdom", "nosuchworkload"])
    assert r.exit_code == 2 and "error:" in r.output


def test_analyze_accepts_a_trace(tmp_path):
    path, wl = _trace(tmp_path, {"workload": "shortcircuit"})
    r = runner.invoke(app, ["analyze", str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["dynamic"]["baseline"]["thread_ops"] > 0
    out = tmp_path / "s.json"
    r = runner.invoke(app, ["analyze", str(path), "-o", str(out)])
    assert r.exit_code == 0 and json.loads(out.read_text())["kernel"]
