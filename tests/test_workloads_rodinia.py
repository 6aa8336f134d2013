"""The Rodinia and Parboil workloads' whole host programs, through the emulator.

Each of these workloads carries the original benchmark's host program (``Workload.program``): its
loop of kernel launches with the host's work between them.  Run at tiny size with every launch
emulated, the final result must equal a numpy reference of the whole algorithm, and the launch the
workload's trace is (``spec.meta["launch"]``) must be the same kernel, geometry and inputs as the
program's launch at that index.
"""

from __future__ import annotations

import numpy as np
import pytest

import simt_fast.workloads as workloads
from simt_fast.emu import launch, load_kernel

PROGRAMS = [n for n in workloads.names() if workloads.get(n).program is not None]
FLOAT_TOLERANCE = (1e-5, 1e-6)  # a float input the program computed on the emulator, the spec in numpy


def test_the_rodinia_and_parboil_workloads_carry_their_host_programs():
    assert {"nw", "hotspot", "pathfinder", "srad", "backprop", "lud", "gaussian", "kmeans", "streamcluster", "lbm",
            "stencil", "particlefilter"} <= set(PROGRAMS)


def same_inputs(wl, spec, args) -> None:
    """The program's arguments at the traced launch against the spec's (outputs the spec only
    pre-fills with one sentinel value are not inputs of the launch)."""
    assert len(args) == len(spec.args)
    for i, (got, want) in enumerate(zip(args, spec.args)):
        name = spec.arg_names[i]
        if i in spec.outputs:
            want = spec._output_before[i]
            if np.unique(want).size == 1 and not np.array_equal(got, want, equal_nan=True):
                continue
        assert type(got) is type(want), f"{wl.name}: argument {name} is a {type(got)}, the spec's a {type(want)}"
        if np.issubdtype(np.asarray(want).dtype, np.floating):
            rtol, atol = wl.tolerance.get(name, FLOAT_TOLERANCE)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=max(rtol, FLOAT_TOLERANCE[0]), atol=max(atol, FLOAT_TOLERANCE[1]),
                                       err_msg=f"{wl.name}: argument {name}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{wl.name}: argument {name}")


@pytest.mark.parametrize("name", PROGRAMS)
def test_host_program_matches_numpy_and_contains_the_traced_launch(name):
    wl = workloads.get(name)
    spec = wl.launch_spec("tiny")
    traced = spec.meta["launch"]
    kernels, seen = {}, []

    def emulate(kernel, grid, block, args):
        if len(seen) == traced:
            assert (kernel, grid, block) == (wl.kernel, spec.grid, spec.block)
            same_inputs(wl, spec, [a.copy() if isinstance(a, np.ndarray) else a for a in args])
        seen.append(kernel)
        if kernel not in kernels:
            kernels[kernel] = load_kernel(wl.ptx_path, kernel)
        launch(kernels[kernel], kernel, grid, block, args, trace=False)

    done = wl.run_program(emulate, "tiny")  # raises if the final result differs from numpy
    assert len(done) == len(seen) > traced
    assert wl.kernel in seen


def test_a_wrong_launch_fails_the_program_check():
    """The program's final check sees a kernel launch that computes nothing."""
    wl = workloads.get("pathfinder")
    with pytest.raises(AssertionError, match="pathfinder: final path costs"):
        wl.run_program(lambda kernel, grid, block, args: None, "tiny")


# --- hand-worked cases of the whole-algorithm references --------------------------------------------

def test_nw_scores_by_hand():
    from simt_fast.workloads.nw import alignment_scores

    ref = np.zeros((3, 3), np.int32)
    ref[1:, 1:] = [[5, -1], [-1, 5]]  # two letters that match themselves
    # row 1: max(0 + 5, -10 - 10, -10 - 10) = 5; then max(-10 - 1, 5 - 10, -20 - 10) = -5
    # row 2: max(-10 - 1, -20 - 10, 5 - 10) = -5; then max(5 + 5, -5 - 10, -5 - 10) = 10
    np.testing.assert_array_equal(alignment_scores(ref, 10), [[0, -10, -20], [-10, 5, -5], [-20, -5, 10]])


def test_pathfinder_costs_by_hand():
    from simt_fast.workloads.pathfinder import advance

    # from [3 1 4]: row [1 5 9] -> 1 + min(3, 1) = 2, 5 + min(3, 1, 4) = 6, 9 + min(1, 4) = 10
    np.testing.assert_array_equal(advance(np.array([3, 1, 4]), np.array([[1, 5, 9]])), [2, 6, 10])


def test_lud_reference_factors_the_matrix():
    from simt_fast.workloads.lud import inputs, lu_packed

    a = inputs("tiny", np.random.default_rng(0)).astype(np.float64)
    m = lu_packed(a)
    lower, upper = np.tril(m, -1) + np.eye(len(m)), np.triu(m)
    np.testing.assert_allclose(lower @ upper, a, rtol=1e-12, atol=1e-12)


def test_tpacf_bin_edges():
    from simt_fast.workloads.tpacf import NBINS, bins

    edges = np.linspace(1.0, -1.0, NBINS + 1).astype(np.float32)
    one = np.array([[1.0, 0.0, 0.0]], np.float32)
    points = np.array([[1, 0, 0], [edges[3], np.sqrt(1 - edges[3] ** 2), 0], [-1, 0, 0]], np.float32)
    # bin k holds edges[k + 1] <= dot < edges[k]: a dot product equal to edge 3 is in bin 2; 1 (edge 0)
    # is in bin 0 and -1 (the last edge) in the last bin
    np.testing.assert_array_equal(bins(one, points, edges)[0], [0, 2, NBINS - 1])


def test_particlefilter_resamples_the_first_cdf_entry_that_reaches_u():
    from simt_fast.workloads.particlefilter import resample

    x, y = np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0])
    cdf, u = np.array([0.2, 0.2, 1.0]), np.array([0.1, 0.2, 0.5, 1.5])
    np.testing.assert_array_equal(resample(x, y, cdf, u)[0], [10.0, 10.0, 30.0, 30.0])


def test_hotspot_chip_at_ambient_without_power_stays():
    from simt_fast.workloads.hotspot import AMBIENT, steps

    temp = np.full((5, 7), AMBIENT, np.float32)
    np.testing.assert_array_equal(steps(temp, np.zeros_like(temp), 3), temp)
