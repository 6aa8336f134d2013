"""`simt-fast validate`, `trace-info`, `synth`: output lines and exit codes."""

import h5py
import numpy as np
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.trace import Trace

from trace_helpers import tiny_trace

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_validate_ok(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    r = run("validate", p)
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{p}: ok (kernel ifelse, 4 threads, 5 blocks, 5 instructions)"


def test_validate_bad_path_exits_2_with_one_line(tmp_path):
    p = tmp_path / "bad.h5"
    tiny_trace(path=np.array([0, 1, 3, 4, 0, 2, 1, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16)).save(p)
    r = run("validate", p)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {p}: thread 1 (CTA 0, thread 1) step 1 goes from block 2 to block 1")


def test_validate_stops_at_first_bad_file(tmp_path):
    good, bad = tmp_path / "good.h5", tmp_path / "bad.txt"
    tiny_trace().save(good)
    bad.write_text("nope")
    r = run("validate", good, bad)
    assert r.exit_code == 2
    assert r.output.splitlines() == [
        f"{good}: ok (kernel ifelse, 4 threads, 5 blocks, 5 instructions)",
        f"error: {bad} is not an HDF5 file, so it cannot be a simt-fast trace",
    ]


def test_validate_schema_and_missing(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        f.attrs["schema"] = "simt-fast/trace/7"
    r = run("validate", p)
    assert r.exit_code == 2 and "uses trace schema version 7" in r.output
    r = run("validate", tmp_path / "missing.h5")
    assert r.exit_code == 2 and "missing.h5 does not exist" in r.output


def test_validate_checks_the_stored_digest(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:
        f["threads/path"][5] = 1  # still a valid path, but not what was written
    r = run("validate", p)
    assert r.exit_code == 2 and "so the file was modified after it was written" in r.output


def test_trace_info(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace(attrs={"workload": "ifelse"}).save(p)
    r = run("trace-info", p, "--blocks")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "schema             simt-fast/trace/1" in out
    assert "workload           ifelse" in out
    assert "path length        min 4, mean 4.0, median 4, max 4 blocks" in out
    # per-thread instructions: 0->1->3: 2+1+1 = 4; 0->2->3: 2+1+1 = 4
    assert "thread insts       total 16, min 4, mean 4.0, max 4" in out
    assert "distinct paths     2" in out
    assert "divergent warps    1 of 1 (32-thread warps" in out
    assert "grid               1 x 1 x 1" in out
    r = run("trace-info", p, "--warp-size", 1)
    assert "divergent warps    0 of 4 (1-thread warps" in r.output
    assert f"digest             {tiny_trace().digest()}" in out
    assert "op classes         ALU 2, MEM_GLOBAL 1, BRANCH 1, EXIT 1" in out
    assert "      1 $L1                   1      3          2  3" in out  # block 1: 1 instr, ipdom 3, 2 visits
    r = run("trace-info", tmp_path / "nope.h5")
    assert r.exit_code == 2 and r.output.startswith("error: ")


def test_synth_writes_a_valid_trace(tmp_path):
    p = tmp_path / "s.h5"
    r = run("synth", p, "--blocks", 12, "--threads", 64, "--cta", 32, "--seed", 3)
    assert r.exit_code == 0, r.output
    t = Trace.load(p)
    assert t.n_blocks == 12 and t.n_threads == 64 and t.block == (32, 1, 1)
    assert run("validate", p).exit_code == 0 and Trace.load(p).mem_ptr is None
    assert run("synth", p, "--blocks", 12, "--threads", 64, "--mem", "--structured").exit_code == 0
    assert int(np.sum(Trace.load(p).succ_idx == 11)) == 1  # structured: a single return
    info = run("trace-info", p).output
    assert Trace.load(p).mem_ptr is not None and "memory addresses" in info and "(per-instruction/1)" in info
    r = run("synth", p, "--threads", 50, "--cta", 32)
    assert r.exit_code == 2 and "not a multiple" in r.output
