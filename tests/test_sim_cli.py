"""`simt-fast run`: comparison table, JSON contract, presets, one-line errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.sim import simulate
from simt_fast.sim.config import load_config
from simt_fast.trace.synth import synthetic

runner = CliRunner()


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "t.h5"
    trace = synthetic(12, None, seed=5, warp_size=32, block=(64, 1, 1), grid=(3, 1, 1), divergence=0.3)
    trace.save(path)
    return path, trace


def test_json_results_match_the_library(trace_file):
    path, trace = trace_file
    res = runner.invoke(app, ["run", str(path), "-m", "sps", "-m", "mp-oer", "--config", "gt200",
                              "--set", "n_sms=2", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [r["mechanism"] for r in out["results"]] == ["sps", "mp-oer"]
    for r in out["results"]:
        cfg = load_config("gt200", {"n_sms": 2, "mechanism": r["mechanism"]})
        assert r["config"] == cfg.to_dict()
        assert r["stats"] == simulate(trace, cfg).to_dict()


def test_table_lists_every_mechanism_with_speedup(trace_file):
    path, _ = trace_file
    res = runner.invoke(app, ["run", str(path), "-m", "sps", "-m", "mp", "-m", "mimd", "--set", "warp_size=16"])
    assert res.exit_code == 0, res.output
    for word in ("sps", "mp", "mimd", "speedup", "cycles of sps", "1.000x", "SIMD util"):
        assert word in res.output


@pytest.mark.parametrize("args, needle", [
    (["-m", "pdom2"], "'pdom2'"),
    (["-m", "tbc", "--set", "hws=true", "--set", "simd_width=8"], "hws"),
    (["--set", "warp_size=sixteen"], "warp_size"),
    (["--set", "warpsize=16"], "warpsize"),
    (["--config", "nosuchpreset"], "nosuchpreset"),
])
def test_bad_input_is_one_line_exit_2(trace_file, args, needle):
    path, _ = trace_file
    res = runner.invoke(app, ["run", str(path), *args])
    assert res.exit_code == 2
    assert needle in res.output and "Traceback" not in res.output


def test_missing_trace_file_is_one_line(tmp_path):
    res = runner.invoke(app, ["run", str(tmp_path / "nope.h5")])
    assert res.exit_code == 2 and "nope.h5" in res.output


def test_presets_cite_their_source_and_load():
    from simt_fast.sim.config import preset_dirs

    names = {p.stem for d in preset_dirs() for p in d.glob("*.toml")}
    assert {"gt200", "fermi", "modern"} <= names
    gt200 = load_config("gt200")
    assert (gt200.n_sms, gt200.warp_size, gt200.simd_width, gt200.perfect_memory, gt200.lat_alu) == (28, 32, 8, True, 24)
    for d in preset_dirs():
        for p in d.glob("*.toml"):
            assert p.read_text().startswith('source = "'), p


def test_sectors_per_request_column_and_the_perfect_coalescing_note(trace_file, tmp_path):
    path, _ = trace_file  # a trace without addresses: fixed latencies, and one line saying so
    res = runner.invoke(app, ["run", str(path), "-m", "sps", "-m", "dwf"])
    assert res.exit_code == 0, res.output
    assert "sectors/req" in res.output and res.output.count("perfect coalescing") == 1
    with_mem = tmp_path / "m.h5"
    trace = synthetic(12, None, seed=5, warp_size=32, block=(64, 1, 1), grid=(3, 1, 1), divergence=0.3, with_mem=True)
    trace.save(with_mem)
    res = runner.invoke(app, ["run", str(with_mem), "-m", "sps", "--config", "fermi", "--json"])
    assert res.exit_code == 0, res.output
    stats = json.loads(res.stdout)["results"][0]["stats"]
    assert stats == simulate(trace, load_config("fermi")).to_dict() and stats["mem_requests"] > 0
    res = runner.invoke(app, ["run", str(with_mem), "-m", "sps", "--config", "fermi"])
    s = simulate(trace, load_config("fermi"))
    assert "perfect coalescing" not in res.output and f"{s.mem_sectors / s.mem_requests:.2f}" in res.output
