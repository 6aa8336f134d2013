"""The README's *Everyday use*, as written: its commands from your own kernel (trace with --arg, run, the
sweep) and its Python block, in a fresh directory, checked against numpy and against each other."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from example_kernels import DIVERGENT_PTX as PTX, collatz_hist, collatz_steps
from simt_fast.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Everyday use"):README.index("## Documentation")]


def walkthrough() -> list:
    """The first bash block of *Everyday use*, one argv per command (continuations joined, comments dropped)."""
    block = re.search(r"```bash\n(.*?)```", SECTION, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def python_block() -> str:
    return re.search(r"```python\n(.*?)```", SECTION, re.S).group(1)  # the first one of Everyday use


def test_the_walkthrough_and_the_python_example_run_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    commands = walkthrough()
    assert [c[0] for c in commands][:1] == ["nvcc"] and commands[0][-1] == "divergent.ptx"
    shutil.copy(PTX, tmp_path / "divergent.ptx")  # the nvcc line's output, committed (test below)
    runner = CliRunner()
    ran = []
    for argv in commands[1:]:
        if argv[0] == "printf":  # printf '%s\n' LINE... > FILE
            assert argv[1] == "%s\\n" and argv[-2] == ">"
            Path(argv[-1]).write_text("".join(line + "\n" for line in argv[2:-2]))
            continue
        assert argv[0] == "simt-fast"
        if argv[1] == "report":
            continue  # figures take a while; tests/test_sweep_report.py covers the command
        res = runner.invoke(app, argv[1:] + (["--jobs", "1"] if argv[1] == "sweep" else []))
        assert res.exit_code == 0, f"{shlex.join(argv)}\n{res.output}"
        ran.append((argv, res))
    assert [a[1] for a, _ in ran] == ["trace", "trace", "run", "sweep"]

    x = np.load("collatz-out/arg0.npy")  # the README's rand:u32:2048:1:100000
    assert len(x) == 2048 and x.min() >= 1 and x.max() <= 100_000
    steps = np.load("collatz-out/arg1.npy")
    assert np.array_equal(steps, collatz_steps(x))
    assert np.array_equal(np.load("collatz-out/arg2.npy"), collatz_hist(steps, 32))
    run_argv, run_res = ran[2]
    assert "machine gt200" in run_res.stdout and "16 CTAs of 128 threads on 28 SMs: at most 1 CTA / 4 warps" in run_res.stdout
    as_json = json.loads(runner.invoke(app, run_argv[1:] + ["--json"]).stdout)
    cycles = {r["mechanism"]: r["stats"]["cycles"] for r in as_json["results"]}

    capsys.readouterr()
    namespace: dict = {}
    exec(compile(python_block(), "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert namespace["stats"].cycles == cycles["mp-oer"]  # the same machine and trace as `run ... -c gt200`
    assert printed[1] == str(cycles["dwf"])  # the Python launch is the CLI's launch
    df = namespace["df"]
    assert len(df) == 16 and set(df.mechanism) == {"sps", "mp", "mp-oer", "dwf"}
    # numeric speedups over the study's baseline (sps), one per point
    assert df.speedup.dtype == float and df.speedup.notna().all()
    assert (df[df.mechanism == "sps"].speedup == 1.0).all()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="the CUDA toolkit (nvcc) is not installed")
def test_the_committed_ptx_is_what_the_readme_nvcc_line_makes(tmp_path):
    argv = walkthrough()[0]  # nvcc ... -o divergent.ptx, run from the repository, written to tmp_path
    res = subprocess.run([*argv[:-1], str(tmp_path / argv[-1])], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "divergent.ptx").read_text() == PTX.read_text(), "stale PTX: run python scripts/build_ptx.py divergent"
