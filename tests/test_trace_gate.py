"""Damaged traces never become numbers: every simulation and sweep passes `require_valid` first.

A corrupted trace is refused by `simulate`, `run` and `sweep` in one sentence (the same checks as
`simt-fast validate`); a file edited after it was written is refused unless the user asks for it;
and the property tests corrupt one field of a valid trace at random: the result is a one-sentence
refusal, or exactly the numbers the undamaged (or, when explicitly allowed, the corrupted but
valid) trace gives -- never a traceback, a hang or other numbers.
"""

import dataclasses
import importlib
import json
import re

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from hypothesis_budget import examples
from trace_helpers import tiny_trace
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.sim import SimulationError, simulate
from simt_fast.sim import reference
from simt_fast.sim.config import SimConfig
from simt_fast.sim.reference import ReferenceError_
from simt_fast.sweep import SweepError, load_sweep, plan
from simt_fast.trace import Trace, TraceError, synthetic
from simt_fast.trace.validate import require_valid

validate_module = importlib.import_module("simt_fast.trace.validate")  # the package re-exports the function
CFG = SimConfig(mechanism="sps", warp_size=4, simd_width=4)


def one_sentence(msg: str) -> str:
    assert "\n" not in msg and ". " not in msg and "Traceback" not in msg, msg
    return msg


def refused(trace, pattern: str) -> str:
    with pytest.raises(TraceError, match=pattern) as info:
        simulate(trace, CFG)
    return one_sentence(str(info.value))


# ---- the corruptions of the issue, each one sentence --------------------------------------------------


@pytest.mark.parametrize("change, pattern", [
    (dict(op_class=np.array([0, 6, 2, 0, 200], np.uint8)), r"instruction 4 has op_class 200, not one of 0\.\.9"),
    (dict(dst_reg=np.array([0, -1, -7, 2, -1], np.int16)), r"instruction 2 has a 'dst_reg' outside -1\.\.32767"),
    (dict(succ_idx=np.array([1, 2, 99, 3, 4], np.int32)), r"'succ_idx' entry 2 is block 99, outside 0\.\.4"),
    (dict(succ_idx=np.array([1, 2, -1, 3, 4], np.int32)), r"'succ_idx' entry 2 is block -1, outside 0\.\.4"),
    (dict(ipdom=np.array([1, 3, 3, 4, -1], np.int32)),
     r"'ipdom' of block 0 is 1 but the CFG's immediate post-dominator of block 0 is 3"),
    (dict(has_barrier=np.array([True, True, True, True, False])),
     r"'has_barrier' of block 0 is True but the block does not end with a barrier instruction"),
    (dict(path_ptr=np.array([0, 4, 8, 12, 99], np.int64)), r"'path_ptr' ends at 99 but there are 16 values"),
    (dict(path_ptr=np.array([0, 1, 5, 9, 13], np.int64),
          path=np.array([4, 0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4], np.uint16)),
     r"thread 0 \(CTA 0, thread 0\) has a path of 1 blocks; every path runs from entry 0 to exit 4"),
    (dict(path=np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 3, 7], np.uint16)),
     r"thread 3 \(CTA 0, thread 3\) ends at block 7 instead of the exit block 4"),
    (dict(block_start=np.array([0, 2, 2, 4, 5, 5], np.int32)),
     r"block 1 has no instructions, but the timing core needs one in every block except the virtual exit"),
])
def test_simulate_refuses_a_damaged_trace(change, pattern):
    msg = refused(tiny_trace(**change), pattern)
    assert msg.startswith("trace of kernel 'ifelse': ")


def test_a_path_of_only_the_exit_is_refused():
    """A thread that never ran the entry block cannot come from an emulation: DESIGN §3 says every path
    starts at the entry, so ``[exit]`` alone is damage, not an empty thread."""
    t = tiny_trace(path_ptr=np.array([0, 1, 5, 9, 13], np.int64),
                   path=np.array([4, 0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4], np.uint16))
    with pytest.raises(TraceError, match="every path runs from entry 0"):
        validate_module.validate(t)


def test_run_refuses_in_one_line(tmp_path):
    p = tmp_path / "bad.h5"
    tiny_trace(op_class=np.array([0, 6, 2, 0, 200], np.uint8)).save(p)
    r = CliRunner().invoke(app, ["run", str(p), "-m", "sps"])
    assert r.exit_code == 2
    assert r.output.splitlines() == [f"error: {p}: instruction 4 has op_class 200, not one of 0..9 (OpClass)"]


# ---- stored digest -----------------------------------------------------------------------------------


def _edited(tmp_path):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    with h5py.File(p, "a") as f:  # a valid trace still, but not the one that was written
        f["instr/op_class"][3] = 1  # ALU -> SFU
    return p


def test_run_refuses_a_file_edited_after_writing_unless_allowed(tmp_path):
    p = _edited(tmp_path)
    r = CliRunner().invoke(app, ["run", str(p), "-m", "sps", "--json"])
    assert r.exit_code == 2
    (line,) = r.output.splitlines()
    assert line.startswith(f"error: {p}: the stored digest ") and line.endswith(
        "so the file was modified after it was written; re-generate it, or allow it explicitly (--allow-digest-mismatch)")
    r = CliRunner().invoke(app, ["run", str(p), "-m", "sps", "--json", "--allow-digest-mismatch"])
    assert r.exit_code == 0, r.output
    edited = Trace.load(p, allow_digest_mismatch=True)
    assert json.loads(r.stdout)["results"][0]["stats"] == simulate(edited, SimConfig()).to_dict()


def test_sweep_refuses_damaged_and_edited_traces_before_any_point(tmp_path):
    (tmp_path / "traces").mkdir()
    tiny_trace().save(tmp_path / "traces" / "good.h5")
    sweep = tmp_path / "s.toml"
    sweep.write_text('traces = ["traces/*.h5"]\n[grid]\nmechanism = ["sps", "mp"]\n')
    assert len(plan(load_sweep(sweep), tmp_path / "cache")) == 2

    bad = tmp_path / "traces" / "bad.h5"
    tiny_trace(dst_reg=np.array([0, -1, -7, 2, -1], np.int16)).save(bad)
    with pytest.raises(SweepError, match=rf"^{re.escape(str(bad))}: instruction 2 has a 'dst_reg' outside -1\.\.32767"):
        plan(load_sweep(sweep), tmp_path / "cache")
    bad.unlink()

    edited = _edited(tmp_path / "traces")
    with pytest.raises(SweepError, match="modified after it was written"):
        plan(load_sweep(sweep), tmp_path / "cache")
    points = plan(load_sweep(sweep), tmp_path / "cache", allow_digest_mismatch=True)
    assert {p.trace for p in points} == {"good", "t"}
    out = tmp_path / "r.h5"
    r = CliRunner().invoke(app, ["sweep", str(sweep), "-o", str(out), "-j", "1", "-q", "--cache-dir",
                                 str(tmp_path / "cache")])
    assert r.exit_code == 2 and "modified after it was written" in r.output and not out.exists()
    r = CliRunner().invoke(app, ["sweep", str(sweep), "-o", str(out), "-j", "1", "-q", "--cache-dir",
                                 str(tmp_path / "cache"), "--allow-digest-mismatch"])
    assert r.exit_code == 0, r.output
    assert edited.exists()


# ---- validated once per trace object -------------------------------------------------------------------


def test_a_trace_is_validated_once_until_it_changes(monkeypatch):
    calls = []
    check = validate_module._check_trace
    monkeypatch.setattr(validate_module, "_check_trace", lambda t, name: (calls.append(name), check(t, name)))
    t = synthetic(12, 64, seed=3)
    for mech in ("sps", "mp", "sps", "mimd"):
        simulate(t, SimConfig(mechanism=mech))
    assert len(calls) == 1
    t.path = t.path.copy()  # a new array: checked again
    require_valid(t)
    assert len(calls) == 2
    t.op_class[0] = 200  # an in-place edit of a CFG/instruction array is seen too
    with pytest.raises(TraceError, match="op_class 200"):
        simulate(t, SimConfig())
    assert len(calls) == 3
    u = dataclasses.replace(t, op_class=np.where(t.op_class == 200, 0, t.op_class).astype(np.uint8))
    require_valid(u)
    require_valid(u)
    assert len(calls) == 4


# ---- property: random single-field corruptions ------------------------------------------------------------

INT_DATASETS = ("cfg/block_start", "cfg/succ_ptr", "cfg/succ_idx", "cfg/ipdom", "instr/op_class", "instr/dst_reg",
                "instr/src_reg", "threads/path_ptr", "threads/path")
OTHER_FIELDS = ("cfg/has_barrier", "cfg/label", "instr/text", "@grid", "@block", "@kernel", "@digest", "@schema")
SPECIAL = (-(2**31), -7, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 99, 200, 255, 32767, 65535, 2**31 - 1)
PROPERTY = examples(40, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def clean_file(tmp_path_factory):
    """A small divergent trace with a loop and a barrier-free CFG, and its stats under each mechanism."""
    d = tmp_path_factory.mktemp("gate")
    t = synthetic(9, 24, seed=11, warp_size=4, block=(8, 1, 1), divergence=0.4, loop_prob=0.2, max_path_len=24)
    p = d / "clean.h5"
    t.save(p)
    stats = {m: simulate(t, SimConfig(mechanism=m, warp_size=4, simd_width=4)).to_dict() for m in ("sps", "dwf")}
    return p, p.read_bytes(), stats


@st.composite
def corruptions(draw):
    field = draw(st.sampled_from(INT_DATASETS + OTHER_FIELDS))
    if field.startswith("@"):
        value = {
            "@grid": st.lists(st.integers(0, 5), min_size=3, max_size=3),
            "@block": st.lists(st.integers(0, 9), min_size=3, max_size=3),
            "@kernel": st.sampled_from(["", "other", "synthetic", "\x1b[2J"]),
            "@digest": st.sampled_from(["", "0" * 64, "garbage"]),
            "@schema": st.sampled_from(["simt-fast/trace/1", "simt-fast/trace/1.4", "simt-fast/trace/2", "x"]),
        }[field]
        return field, None, draw(value)
    return field, draw(st.integers(0, 10**6)), draw(st.one_of(st.sampled_from(SPECIAL), st.integers(-10**6, 10**6),
                                                             st.text(max_size=8)))


def _corrupt(path, field, index, value) -> bool:
    """Apply one corruption in place (like a hex editor or a careless h5py session); False if impossible."""
    with h5py.File(path, "a") as f:
        if field.startswith("@"):
            f.attrs[field[1:]] = np.asarray(value, np.int64) if isinstance(value, list) else value
            return True
        ds = f[field]
        flat = ds[()].reshape(-1)
        if flat.size == 0:
            return False
        i = index % flat.size
        if ds.dtype.kind == "b":
            flat[i] = not flat[i]
        elif ds.dtype.kind in "iu":
            if isinstance(value, str):
                return False
            info = np.iinfo(ds.dtype)
            flat[i] = min(max(int(value), info.min), info.max)
        else:  # strings
            flat[i] = str(value)
        ds[...] = flat.reshape(ds.shape)
    return True


def _run(path, mech, *extra):
    return CliRunner().invoke(app, ["run", str(path), "-m", mech, "--set", "warp_size=4", "--set", "simd_width=4",
                                    "--json", *extra])


def _is_refusal(result) -> bool:
    if result.exit_code != 2:
        return False
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    one_sentence(lines[0])
    return True


@PROPERTY
@given(corruption=corruptions(), mech=st.sampled_from(["sps", "dwf"]))
def test_corrupted_file_is_refused_or_gives_the_undamaged_stats(tmp_path_factory, clean_file, corruption, mech):
    """The issue's must-show: `run` on a randomly corrupted trace file (its digest kept) either refuses
    it in one sentence or prints exactly the undamaged trace's stats."""
    clean, data, stats = clean_file
    p = tmp_path_factory.mktemp("c") / "t.h5"
    p.write_bytes(data)
    if not _corrupt(p, *corruption):
        return
    r = _run(p, mech)
    if _is_refusal(r):
        return
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.stdout)["results"][0]["stats"] == stats[mech]


@PROPERTY
@given(corruption=corruptions(), mech=st.sampled_from(["sps", "dwf"]))
def test_allowed_corruption_is_refused_or_simulated_as_the_reference_does(tmp_path_factory, clean_file, corruption,
                                                                          mech):
    """With the digest check waived, what the gate accepts is a valid trace, and the numba kernels give
    the plain-Python reference model's numbers on it (they never read out of bounds)."""
    clean, data, stats = clean_file
    p = tmp_path_factory.mktemp("c") / "t.h5"
    p.write_bytes(data)
    if not _corrupt(p, *corruption):
        return
    r = _run(p, mech, "--allow-digest-mismatch")
    if _is_refusal(r):
        return
    assert r.exit_code == 0, (r.output, r.exception)
    trace = Trace.load(p, allow_digest_mismatch=True)
    validate_module.validate(trace)
    cfg = SimConfig(mechanism=mech, warp_size=4, simd_width=4)
    try:
        expected = reference.simulate(trace, cfg).to_dict()
    except ReferenceError_:
        pytest.fail("the kernel finished a run the reference model finds deadlocked")
    assert json.loads(r.stdout)["results"][0]["stats"] == expected


def test_kernel_errors_on_valid_corruptions_are_sentences_too():
    """A valid trace can still deadlock (a barrier some threads cannot reach): that is a SimulationError
    sentence, which `run` prints like any refusal."""
    t = tiny_trace(op_class=np.array([0, 6, 7, 0, 8], np.uint8), has_barrier=np.array([False, True, False, False, False]))
    with pytest.raises(SimulationError, match="deadlocked"):
        simulate(t, CFG)
