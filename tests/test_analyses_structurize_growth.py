"""The structurizer's growth limit: copies stay within ``max_growth``, flags (guards, entry
dispatches) take over past it, and the result is still structured and computes the same thing.

The goto state machine of data/cuda/corpus/goto_state_machine.cu is the shape that made Forward
Copy run away (three states jumping into one another, leaving the loop from each)."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hypothesis_budget import examples
from test_analyses_structurize import random_cfgs, run_path
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.emu import launch
from simt_fast.ir import build_cfg, parse_ptx
from simt_fast.ir.control_tree import control_tree_of_cfg
from simt_fast.ir.ptx_printer import print_module
from simt_fast.ir.structurize import FlowGraph, StructurizeError, structurize

ROOT = Path(__file__).resolve().parent.parent
STATE_MACHINE = {level: ROOT / "data" / "ptx" / "corpus" / f"goto_state_machine.{level}.ptx" for level in ("O0", "O3")}


@examples(200)
@given(random_cfgs(), st.sampled_from([1.0, 1.25, 2.0, 4.0]), st.booleans(), st.randoms(use_true_random=False))
def test_copies_stay_within_the_limit_and_the_result_is_structured(g, max_growth, predicated, rnd):
    orig = [list(s) for s in g.succs]
    g2, s = structurize(FlowGraph([list(x) for x in orig], 0, g.exit), max_growth=max_growth,
                        predicated_flags=predicated)
    assert s.copied_code <= (max_growth - 1) * s.old_code_size
    copies = sum(1 for b in range(g2.n) if g2.live[b] and g2.origin[b] >= 0 and g2.origin[b] != b)
    assert copies <= s.copied_code  # every live copy was paid for (unit-size blocks)
    if max_growth == 1.0:
        assert s.forward_copies == s.backward_copies == 0
    assert g2.control_tree().is_structured
    for _ in range(5):  # original paths run the same original blocks; no flag is read unwritten
        path, b = [0], 0
        while b != g.exit and len(path) < 40:
            b = rnd.choice(orig[b])
            path.append(b)
        if b == g.exit:
            assert run_path(g2, orig, path) == path


def test_max_growth_below_one_is_refused():
    with pytest.raises(StructurizeError, match="max_growth must be at least 1"):
        structurize(FlowGraph([[1], []], 0, 1), max_growth=0.5)


@pytest.mark.parametrize("level", ["O0", "O3"])
def test_state_machine_growth_is_bounded(level):
    m = parse_ptx(STATE_MACHINE[level])
    _, unbounded = structurize(m, max_growth=1e9)
    new, s = structurize(m)
    assert unbounded.growth > 20  # what Forward Copy alone does to it
    assert s.growth < 4 and s.copied_code <= s.old_code_size
    assert s.guards + s.entry_dispatches > 0
    text = print_module(new)
    assert all(control_tree_of_cfg(build_cfg(f)).is_structured for f in parse_ptx(text).functions.values())
    assert s.new_code_size == sum(len(f.instructions) for f in new.functions.values())


@pytest.mark.parametrize("max_growth", [1.0, 2.0, 8.0])
@pytest.mark.parametrize("predicated", [False, True], ids=["stubs", "predicated"])
def test_structured_state_machine_computes_the_same_outputs(max_growth, predicated):
    """Original and structurized kernels on the emulator, same inputs: identical outputs."""
    original = STATE_MACHINE["O0"].read_text()
    module, s = structurize(parse_ptx(original), max_growth=max_growth, predicated_flags=predicated)
    rng = np.random.default_rng(5)
    n = 256
    x = rng.integers(-60, 200, n).astype(np.int32)
    outs = []
    for text in (original, print_module(module)):
        out = np.zeros(n, np.int32)
        launch(text, "goto_state_machine", (n // 64, 1, 1), (64, 1, 1), [out, x.copy(), np.int32(n), np.int32(40)], 0,
               trace=False)
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[0])
    assert len(set(outs[0].tolist())) > 10  # the inputs drive the machine through many paths


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not installed on this machine")
def test_ptxas_accepts_the_bounded_state_machine(tmp_path):
    new, _ = structurize(parse_ptx(STATE_MACHINE["O3"]))
    out = tmp_path / "s.ptx"
    out.write_text(print_module(new))
    r = subprocess.run(["ptxas", "-arch=sm_75", str(out), "-o", str(tmp_path / "s.cubin")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_cli_reports_the_growth_and_takes_the_limit(tmp_path):
    r = CliRunner().invoke(app, ["structurize", str(STATE_MACHINE["O3"]), "--json"])
    assert r.exit_code == 0, r.output
    total = json.loads(r.stdout)["total"]
    assert total["max_growth"] == 2.0 and total["growth"] < 4 and total["guards"] + total["entry_dispatches"] > 0
    r = CliRunner().invoke(app, ["structurize", str(STATE_MACHINE["O3"]), "--max-growth", "1", "-o", str(tmp_path / "s.ptx")])
    assert r.exit_code == 0, r.output
    line = r.output.strip().splitlines()[-1]
    assert "forward_copies=0 backward_copies=0" in line and "growth x" in line and "copies limited to x1)" in line
    r = CliRunner().invoke(app, ["structurize", str(STATE_MACHINE["O3"]), "--max-growth", "0.5"])
    assert r.exit_code == 2 and r.output.strip() == "error: max_growth must be at least 1 (the original code), got 0.5"
