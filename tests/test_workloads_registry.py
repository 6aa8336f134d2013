"""Registry contract of the built-in workloads: names, files, launch specs, check() behaviour.

These tests need neither nvcc nor the emulator: they check what every other engineer codes
against (names(), get(), Workload, LaunchSpec) and that each committed PTX matches its source's
kernel signature.  Golden checks of the numpy references live in test_workloads_reference.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import simt_fast.ir as ir
import simt_fast.workloads as workloads

REQUIRED = {"bfs", "blackscholes", "nn", "mummer", "raytrace", "storegpu", "laplace3d", "nqueens", "aes",
            "libor", "shortcircuit", "earlyexit", "inlinedreturn", "statemachine",
            "sssp", "bvh", "hashprobe", "spmv", "mcreject",
            "nw", "hotspot", "pathfinder", "srad", "backprop", "lud", "gaussian", "kmeans", "streamcluster",
            "lbm", "stencil", "tpacf", "particlefilter"}
NAMES = workloads.names()

# by-value .param type -> numpy scalar dtypes the spec may pass for it
SCALAR_TYPES = {
    "u32": {np.int32, np.uint32}, "s32": {np.int32, np.uint32}, "b32": {np.int32, np.uint32},
    "f32": {np.float32}, "f64": {np.float64},
    "u64": {np.uint64, np.int64}, "s64": {np.uint64, np.int64}, "b64": {np.uint64, np.int64},
}


def test_every_required_workload_is_registered():
    assert REQUIRED <= set(NAMES)
    assert NAMES == sorted(NAMES)


def test_unknown_name_and_size_raise_value_error_listing_the_valid_ones():
    with pytest.raises(ValueError, match="valid workloads: .*bfs.*statemachine"):
        workloads.get("bfss")
    with pytest.raises(ValueError, match="valid sizes: tiny, default"):
        workloads.get("bfs").launch_spec("huge")


@pytest.fixture(scope="module", params=NAMES)
def workload(request):
    return workloads.get(request.param)


@pytest.fixture(scope="module")
def tiny(workload):
    return workload.launch_spec("tiny", seed=0)


def test_files_and_metadata(workload):
    assert workload.source.is_file() and workload.source.name == "kernel.cu"
    assert workload.ptx_path.is_file(), f"run: python scripts/build_ptx.py {workload.name}"
    assert workload.ptx_path.parent.name == "workloads"
    # one line that cites the paper the workload serves (authors and year, as users read them)
    assert re.search(r"\b(19|20)\d\d\b", workload.description) and "\n" not in workload.description
    assert workload.sizes[:2] == ("tiny", "default")
    assert f'extern "C" __global__ void {workload.kernel}(' in workload.source.read_text()


def test_ptx_parses_and_kernel_name_selects_one_entry(workload):
    module = ir.parse_ptx(workload.ptx_path)
    kernel = module.find_kernel(workload.kernel)
    assert kernel.is_entry and kernel.name == workload.kernel


def cuda_param_names(source: str, kernel: str) -> list:
    signature = source.split(f'extern "C" __global__ void {kernel}(', 1)[1].split(")", 1)[0]
    signature = re.sub(r"//[^\n]*", "", signature)
    return [re.findall(r"\w+", p)[-1] for p in signature.split(",")]


def test_args_match_the_kernel_params_in_count_type_and_name(workload, tiny):
    params = ir.parse_ptx(workload.ptx_path).find_kernel(workload.kernel).params
    assert len(tiny.args) == len(params), f"{workload.name}: {len(tiny.args)} args for {len(params)} .params"
    for arg, name, p in zip(tiny.args, tiny.arg_names, params):
        if isinstance(arg, np.ndarray):
            assert p.dtype in ("u64", "b64"), f"{workload.name}.{name}: buffer passed for .param .{p.dtype}"
        else:
            assert type(arg) in SCALAR_TYPES[p.dtype], f"{workload.name}.{name}: {type(arg)} for .param .{p.dtype}"
    assert list(tiny.arg_names) == cuda_param_names(workload.source.read_text(), workload.kernel)


def test_launch_spec_shape(workload, tiny):
    assert len(tiny.grid) == 3 and len(tiny.block) == 3
    assert all(isinstance(v, int) and v >= 1 for v in tiny.grid + tiny.block)
    assert tiny.outputs and all(isinstance(tiny.args[i], np.ndarray) for i in tiny.outputs)
    assert (tiny.workload, tiny.size, tiny.seed) == (workload.name, "tiny", 0)
    assert tiny.shared_bytes == 0  # every kernel sizes its shared memory statically
    threads_per_cta = int(np.prod(tiny.block))
    # whole warps, or one partial warp (nn's one-thread CTAs, Rodinia nw's and gaussian's 16 threads)
    assert threads_per_cta <= 1024 and (threads_per_cta < 32 or threads_per_cta % 32 == 0)


def test_tiny_is_small_and_default_is_larger(workload, tiny):
    assert tiny.n_threads <= 2048, f"{workload.name}: tiny launches {tiny.n_threads} threads"
    assert int(np.prod(tiny.grid)) <= 512
    default = workload.launch_spec("default", seed=0)
    assert default.n_threads >= tiny.n_threads
    in_bytes = lambda s: sum(a.nbytes for a in s.args if isinstance(a, np.ndarray))  # noqa: E731
    assert in_bytes(default) > in_bytes(tiny)


def test_launch_spec_is_deterministic_per_seed(workload, tiny):
    again = workload.launch_spec("tiny", seed=0)
    other = workload.launch_spec("tiny", seed=1)
    assert (again.grid, again.block) == (tiny.grid, tiny.block)
    differs = False
    for a, b, c in zip(tiny.args, again.args, other.args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
            differs |= a.shape != c.shape or not np.array_equal(a, c)
        else:
            assert a == b and type(a) is type(b)
    assert differs, f"{workload.name}: seed 1 gives the same inputs as seed 0"


def _written_by_reference(workload, seed=0):
    spec = workload.launch_spec("tiny", seed=seed)
    expected = workload.reference(spec)
    for i in spec.outputs:
        spec.args[i][...] = expected[spec.arg_names[i]]
    return spec


def test_check_accepts_the_reference_outputs(workload):
    workload.check(_written_by_reference(workload))


def test_check_names_workload_buffer_and_index_of_a_wrong_output(workload):
    spec = _written_by_reference(workload)
    i = spec.outputs[-1]
    out = spec.args[i].reshape(-1)
    k = out.size // 2
    out[k] = out[k] + (1 if np.issubdtype(out.dtype, np.integer) else 1.0)
    name = spec.arg_names[i]
    with pytest.raises(AssertionError, match=rf"{workload.name}: output buffer '{name}' .* index") as err:
        workload.check(spec)
    assert "got" in str(err.value) and "expected" in str(err.value)


def test_check_reports_an_unwritten_output(workload):
    spec = workload.launch_spec("tiny", seed=0)  # outputs still hold their initial fill
    if all(not spec.args[i].any() for i in spec.outputs):
        pytest.skip("outputs start at zero, which can be a correct result")
    with pytest.raises(AssertionError, match="output buffer"):
        workload.check(spec)


def test_check_reports_a_modified_input(workload):
    spec = _written_by_reference(workload)
    i = next((j for j, a in enumerate(spec.args) if isinstance(a, np.ndarray) and j not in spec.outputs), None)
    if i is None:
        pytest.skip("every buffer is an output (updated in place)")
    flat = spec.args[i].reshape(-1)
    if np.issubdtype(flat.dtype, np.integer):
        flat[0] ^= 1  # (+1 would overflow an all-ones key such as hashprobe's EMPTY)
    else:
        flat[0] = flat[0] + 1
    with pytest.raises(AssertionError, match=f"input buffer '{spec.arg_names[i]}' was modified"):
        workload.check(spec)


def test_bad_seed_is_a_value_error():
    for seed in (-1, 1.5, "3", None):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            workloads.get("aes").launch_spec("tiny", seed=seed)
    assert workloads.get("aes").launch_spec("tiny", seed=np.int64(2)).seed == 2
