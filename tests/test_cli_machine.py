"""One machine story: SimConfig()'s defaults are the single-sm preset, `config list/show` print the presets
with their sources, `run` names its machine, says how the kernel fills it, explains its columns, and
its mistakes name their real source (--set, -m)."""

from __future__ import annotations

import json
import tomllib

import pytest
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.sim import simulate
from simt_fast.sim.config import DEFAULT_PRESET, SimConfig, load_config, presets, read_config_file
from simt_fast.trace.synth import synthetic

runner = CliRunner()


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    """3 CTAs of 64 threads (2 warps each), divergent."""
    path = tmp_path_factory.mktemp("machine") / "t.h5"
    trace = synthetic(12, None, seed=5, warp_size=32, block=(64, 1, 1), grid=(3, 1, 1), divergence=0.3)
    trace.save(path)
    return path, trace


def test_the_defaults_are_the_single_sm_preset():
    assert DEFAULT_PRESET == "single-sm" and load_config(DEFAULT_PRESET) == SimConfig() == load_config(None)
    _, data = read_config_file(DEFAULT_PRESET)
    listed = {k for name in presets() if name != DEFAULT_PRESET for k in read_config_file(name)[1]}
    assert listed <= set(data), f"single-sm.toml leaves out {sorted(listed - set(data))}, which other presets cite"


def test_config_list_names_every_preset_with_its_file_and_source():
    res = runner.invoke(app, ["config", "list"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("single-sm  1 SM, warp 32, SIMD 32, memory model (L1 16 KiB, L2 768 KiB)")
    assert "(the default" in lines[0]
    for name, path in presets().items():
        assert any(line.startswith(f"{name} ") and f"{path.name}]" in line for line in lines), name
    assert "gt200      28 SMs, warp 32, SIMD 8, perfect memory" in res.output
    assert "Jin 2012 (hybrid warp size thesis), Table 5.1" in res.output  # the first sentence of gt200's source


def test_config_show_is_a_config_file_that_loads_back(tmp_path):
    res = runner.invoke(app, ["config", "show", "gt200", "--set", "simd_width=16"])
    assert res.exit_code == 0, res.output
    text = res.output
    assert text.startswith("# gt200: ") and "simd_width = 16  # --set" in text
    assert "lat_l1 = 30  # not in the file: the default (single-sm)" in text and "n_sms = 28\n" in text
    data = tomllib.loads(text)
    assert data["source"] == read_config_file("gt200")[1]["source"]
    (tmp_path / "my.toml").write_text(text)
    assert load_config(str(tmp_path / "my.toml")) == load_config("gt200").replace(simd_width=16)
    default = runner.invoke(app, ["config", "show"]).output
    assert default.startswith("# single-sm: ") and "  # not in the file" not in default.split("seed")[0].split("hws")[0]


@pytest.mark.parametrize("args, message", [
    (["-c", "gt200", "--set", "simd_widht=8"], "error: --set: unknown config field 'simd_widht'; did you mean simd_width?"),
    (["-c", "gt200", "--set", "perfect_memory=nope"], "error: --set: config field 'perfect_memory' must be bool (got 'nope')"),
    (["-c", "fermi", "--set", "n_sms=0"], "error: --set: config field 'n_sms' must be between 1 and 1024 (got 0)"),
    (["--set", "simd_width", "8"], "error: --set takes KEY=VALUE as one word: --set simd_width=8"),
    (["--set", "simd_width", "-m", "sps"], "error: --set takes KEY=VALUE as one word: --set simd_width=VALUE"),
    (["-m", "mpoer"], "error: -m: no mechanism named 'mpoer'; did you mean 'mp-oer'? (mechanisms: serial, sps, dps, mp, "
                      "mp-oer, dwf, en-dwf, tbc, stackless, frontier, mimd)"),
    (["-m", "sps,dfw"], "error: -m: no mechanism named 'dfw'; did you mean 'dwf'? (mechanisms: serial, sps, dps, mp, "
                        "mp-oer, dwf, en-dwf, tbc, stackless, frontier, mimd)"),
    (["-c", "gt20"], "error: no config file or preset named 'gt20'; did you mean 'gt200'? (presets: fermi, gt200, "
                     "modern, single-sm)"),
])
def test_mistakes_name_their_real_source(trace_file, args, message):
    res = runner.invoke(app, ["run", str(trace_file[0]), *args])
    assert res.exit_code == 2 and res.output.splitlines() == [message]


def test_a_bad_preset_file_is_named_and_config_show_checks_sets(tmp_path, trace_file):
    bad = tmp_path / "bad.toml"
    bad.write_text('source = "x"\nsimd_width = 0\n')
    res = runner.invoke(app, ["run", str(trace_file[0]), "-c", str(bad), "--set", "n_sms=2"])
    assert res.exit_code == 2 and res.output == f"error: {bad}: config field 'simd_width' must be between 1 and 64 (got 0)\n"
    res = runner.invoke(app, ["config", "show", "gt200", "--set", "lat_l2", "9"])
    assert res.exit_code == 2 and res.output == "error: --set takes KEY=VALUE as one word: --set lat_l2=9\n"


def test_comma_lists_and_the_machine_in_json(trace_file):
    path, trace = trace_file
    res = runner.invoke(app, ["run", str(path), "-m", "sps,mp-oer", "-m", "dwf", "-c", "gt200", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [r["mechanism"] for r in out["results"]] == ["sps", "mp-oer", "dwf"] and out["machine"] == "gt200"
    assert json.loads(runner.invoke(app, ["run", str(path), "--json"]).stdout)["machine"] == "single-sm (the default)"


def test_the_table_names_its_machine_explains_its_columns_and_the_fill(trace_file):
    path, trace = trace_file
    res = runner.invoke(app, ["run", str(path), "-m", "sps"])
    assert res.exit_code == 0, res.output
    assert not res.output.startswith("\n")  # no blank first line, on stdout or stderr
    lines = res.stdout.splitlines()  # (stderr has the note that this trace has no addresses)
    assert lines[0].strip() == "t.h5: kernel synthetic, 192 threads; machine single-sm (the default): warp 32, SIMD 32, 1 SM"
    assert lines[-3].startswith("speedup = cycles of sps / cycles; idle = SM-cycles with warps but no SIMD unit busy; "
                                "splits = most splits of one warp at once; expanded = ")
    # hand-worked: 3 CTAs of 2 warps on one SM that holds min(8 CTAs, 48 warps / 2) = 8: all three at once
    assert lines[-2] == "3 CTAs of 64 threads on 1 SM: at most 3 CTAs / 6 warps resident per SM (an SM holds up to 8 such CTAs, 48 warps)"
    s = simulate(trace, SimConfig())  # six warps cannot hide a 24-cycle latency: the SM is idle most of the time
    assert lines[-1] == (f"note: the SMs that run CTAs had no SIMD unit busy in most of their cycles "
                         f"(sps {s.idle_cycles / s.cycles:.0%}): the machine is under-filled (a larger grid fills it), "
                         f"so cycles measure latency more than SIMD efficiency")
    assert "early reconv" not in res.output and "merges" not in res.output.split("speedup =")[0]

    res = runner.invoke(app, ["run", str(path), "-m", "sps,mp-oer,dwf", "-c", "gt200"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[-2] == ("3 CTAs of 64 threads on 28 SMs: at most 1 CTA / 2 warps resident per SM "
                         "(an SM holds up to 8 such CTAs, 32 warps)")
    assert lines[-1].startswith("note: 25 of 28 SMs run no CTA")
    assert "the machine is under-filled (a larger grid, or --set n_sms=3, fills it)" in lines[-1]
    header = next(line for line in lines if "mechanism" in line)
    assert [h.strip() for h in header.strip("┃ ").split("┃")][-4:] == ["early reconv", "merges", "lane conflicts", "speedup"]
    gt200 = load_config("gt200")
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]] for line in lines if line.startswith("│")}
    oer, dwf = simulate(trace, gt200.replace(mechanism="mp-oer")), simulate(trace, gt200.replace(mechanism="dwf"))
    assert rows["mp-oer"][-4:-1] == [f"{oer.early_reconvergences:,}", "-", "-"]
    assert rows["dwf"][-4:-1] == ["-", f"{dwf.merges:,}", f"{dwf.lane_conflicts:,}"] and dwf.merges > 0
    assert rows["sps"][-4:-1] == ["-", "-", "-"]


def test_a_full_machine_that_waits_is_latency_bound(trace_file):
    path, trace = trace_file  # one SM that holds one CTA: full, and idle while its two warps wait
    res = runner.invoke(app, ["run", str(path), "-m", "sps", "--set", "max_ctas_per_sm=1"])
    s = simulate(trace, SimConfig(max_ctas_per_sm=1))
    share = s.idle_cycles / s.cycles
    assert share > 0.5
    assert res.stdout.splitlines()[-2:] == [
        "3 CTAs of 64 threads on 1 SM: at most 1 CTA / 2 warps resident per SM (an SM holds up to 1 such CTA, 48 warps)",
        f"note: the SMs that run CTAs had no SIMD unit busy in most of their cycles (sps {share:.0%}): every SM is "
        f"full, so the kernel is latency-bound and cycles measure latency more than SIMD efficiency"]


def test_run_help_explains_every_column_and_the_default_machine():
    text = " ".join(runner.invoke(app, ["run", "--help"], env={"COLUMNS": "2000"}).output.split())
    for words in ("single-sm preset", "config list", "idle = SM-cycles", "splits = most splits", "expanded = instructions",
                  "early reconv = ", "merges = ", "lane conflicts = ", "-m sps,mp-oer,dwf"):
        assert words in text, words
