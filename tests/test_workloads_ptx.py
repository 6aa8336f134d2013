"""The committed PTX (-O3 and unoptimised) is what scripts/build_ptx.py makes from today's kernel.cu, and ptxas accepts it.

Needs the CUDA toolkit (developers only; users never run nvcc), so it is skipped without it; a
rebuild takes a few seconds per kernel, so the test is marked slow.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import simt_fast.workloads as workloads

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("ptxas") is None,
                                                  reason="the CUDA toolkit (nvcc, ptxas) is not installed")]


def _stable(ptx: str) -> str:
    """The PTX without the module hash nvcc puts in internal-linkage names (`_INTERNAL_1ecceceb_`): it
    changes from one nvcc run to the next, so the unoptimised builds, which keep such helpers as
    `.func`s, never compare equal otherwise."""
    return re.sub(r"_INTERNAL_[0-9a-f]{8}_", "_INTERNAL_", ptx)


@pytest.mark.parametrize("name", workloads.names())
def test_committed_ptx_is_up_to_date_and_assembles(name, tmp_path):
    wl = workloads.get(name)
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_ptx
    finally:
        sys.path.pop(0)
    committed = {"O3": wl.ptx_path, "O0": ROOT / "data" / "ptx" / "workloads-O0" / f"{name}.ptx"}
    for level, path in committed.items():
        fresh = tmp_path / f"{name}.{level}.ptx"
        cmd = ["nvcc", "-ptx", f"-arch={build_ptx.ARCH}", *build_ptx.LEVELS[level], "-I", str(wl.source.parent),
               str(wl.source), "-o", str(fresh)]  # the script's exact command line
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert _stable(fresh.read_text()) == _stable(path.read_text()), \
            f"stale PTX ({level}): run python scripts/build_ptx.py {name}"
    res = subprocess.run(["ptxas", "-arch=sm_75", str(wl.ptx_path), "-o", os.devnull], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
