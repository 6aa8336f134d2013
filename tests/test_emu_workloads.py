"""Every built-in workload, emulated at `tiny` size, matches its numpy reference; its trace is valid.

The `default` size runs in the @pytest.mark.slow test.
"""

import numpy as np
import pytest

from simt_fast import workloads
from simt_fast.emu import launch
from simt_fast.trace import validate

NAMES = [n for n in workloads.names() if workloads.get(n).ptx_path.exists()]


def _run(name, size):
    wl = workloads.get(name)
    spec = wl.launch_spec(size, seed=0)
    run = launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes)
    wl.check(spec)
    return run


@pytest.mark.parametrize("name", NAMES)
def test_workload_tiny_matches_numpy_reference(name):
    run = _run(name, "tiny")
    tr = run.trace
    validate(tr)
    assert tr.n_threads == int(np.prod(tr.grid)) * int(np.prod(tr.block))
    # thread_insts counts exactly the instructions on the recorded paths
    assert tr.total_thread_insts() == run.thread_insts
    ends = tr.path[tr.path_ptr[1:] - 1]
    assert np.all(ends == tr.exit) and np.all(tr.path[tr.path_ptr[:-1]] == 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_workload_default_matches_numpy_reference(name):
    run = _run(name, "default")
    validate(run.trace)
