"""The built-in benchmark kernels (Jin 2012 §5.3, the ElTantawy et al. 2014 / Wu et al. 2012 control-flow examples, and Rodinia and Parboil programs measured by Lee et al. 2013 and Wu et al. 2012).

Each workload is a package ``simt_fast/workloads/<name>/`` holding ``kernel.cu`` (the CUDA
source; its PTX, built by ``scripts/build_ptx.py`` at -O3 for compute_75, is committed under
``data/ptx/workloads/<name>.ptx``) and ``__init__.py`` with a deterministic input generator and
an independent numpy reference of the algorithm.  The package's ``WORKLOAD`` object is what the
registry serves::

    wl = simt_fast.workloads.get("bfs")
    spec = wl.launch_spec("tiny", seed=0)
    simt_fast.emu.launch(wl.ptx_path, wl.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes)
    wl.check(spec)              # AssertionError naming the buffer and first differing index

Workloads written from a Rodinia or Parboil program also carry the original's whole host program
(``Workload.program``): the loop of kernel launches with its host-side steps between them, from the
inputs to the final result, which ``run_program`` runs through any launcher and checks against a
numpy reference of the whole algorithm.  Their trace is one launch of that loop (of the
workload's ``kernel``): ``spec.meta["launch"]`` is its index in the program's launch sequence.

``LaunchSpec.args`` follows the kernel's ``.param`` list: a numpy array is a device buffer
(written back in place by the emulator), a numpy scalar is a by-value parameter whose dtype is
the parameter's PTX type (``np.int32`` for ``.u32/.s32``, ``np.uint64`` for ``.u64``...).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

import numpy as np

__all__ = ["LaunchSpec", "Workload", "names", "get", "SIZES"]

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parents[1]
PTX_DIR = ROOT / "data" / "ptx" / "workloads"
SIZES = ("tiny", "default")


@dataclass
class LaunchSpec:
    """One kernel launch: geometry, arguments (in ``.param`` order) and which args are outputs.

    ``arg_names`` names every argument (the CUDA parameter name) for error messages;
    ``meta`` holds generator facts the reference needs but the kernel does not get (e.g. the
    BFS level being expanded, the N-Queens prefixes as column lists).
    """

    grid: tuple
    block: tuple
    args: list
    shared_bytes: int = 0
    outputs: tuple = ()
    arg_names: tuple = ()
    meta: dict = field(default_factory=dict)
    workload: str = ""
    size: str = ""
    seed: int = 0
    _input_snapshot: dict = field(default_factory=dict, repr=False)
    _output_before: dict = field(default_factory=dict, repr=False)

    @property
    def n_threads(self) -> int:
        return int(np.prod(self.grid)) * int(np.prod(self.block))

    def arg(self, name: str):
        """The argument called ``name`` (the CUDA parameter name)."""
        return self.args[self.arg_names.index(name)]


def _as_dim3(v) -> tuple:
    t = tuple(int(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
    return (t + (1, 1, 1))[:3]


@dataclass
class Workload:
    """A built-in kernel: where its source and PTX are, how to launch it, how to check it.

    ``make(size, rng) -> LaunchSpec`` builds inputs (outputs pre-filled); ``reference(spec) ->
    {arg_name: expected array}`` recomputes the outputs from the inputs with numpy (``check`` hands it
    the outputs as they were before the launch, so a buffer updated in place is read as its input);
    ``tolerance`` maps a float output's name to ``(rtol, atol)`` (integers always match exactly).

    ``program(size, rng, launch)``, where present, is the original benchmark's host program: it
    builds the same inputs as ``make`` from the same generator, calls ``launch(kernel, grid, block,
    args)`` for every kernel launch of the original's host loop (buffers are numpy arrays updated in
    place, as device memory persists between launches), does the host's work between launches, and
    raises AssertionError if the final result differs from a numpy reference of the whole algorithm.
    """

    name: str
    description: str
    kernel: str
    make: Callable
    reference: Callable
    tolerance: dict = field(default_factory=dict)
    sizes: tuple = SIZES
    features: tuple = ()
    program: Optional[Callable] = None

    @property
    def source(self) -> Path:
        return PACKAGE_DIR / self.name / "kernel.cu"

    @property
    def ptx_path(self) -> Path:
        return PTX_DIR / f"{self.name}.ptx"

    def launch_spec(self, size: str = "tiny", seed: int = 0) -> LaunchSpec:
        spec = self.make(size, self._rng(size, seed))
        spec.grid, spec.block = _as_dim3(spec.grid), _as_dim3(spec.block)
        spec.workload, spec.size, spec.seed = self.name, size, int(seed)
        if len(spec.arg_names) != len(spec.args):
            raise AssertionError(f"{self.name}: arg_names and args differ in length")
        spec._input_snapshot = {
            i: a.copy() for i, a in enumerate(spec.args) if isinstance(a, np.ndarray) and i not in spec.outputs
        }
        # an output the kernel also reads (updated in place) is an input too: the reference starts from this
        spec._output_before = {i: spec.args[i].copy() for i in spec.outputs}
        return spec

    def _rng(self, size: str, seed) -> np.random.Generator:
        if size not in self.sizes:
            raise ValueError(f"workload {self.name!r} has no size {size!r}; valid sizes: {', '.join(self.sizes)}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"workload {self.name!r}: seed must be a non-negative integer, not {seed!r}")
        return np.random.default_rng([int(seed), sum(map(ord, self.name))])

    def run_program(self, launch: Callable, size: str = "tiny", seed: int = 0) -> list:
        """Run the original's whole host program, each kernel launch through ``launch(kernel, grid,
        block, args)`` (e.g. the emulator), and check its final result (AssertionError); returns the
        launches as ``(kernel, grid, block)`` in order."""
        if self.program is None:
            raise ValueError(f"workload {self.name!r} has no host program (it is a single launch)")
        done = []

        def counted(kernel, grid, block, args):
            done.append((kernel, _as_dim3(grid), _as_dim3(block)))
            launch(kernel, _as_dim3(grid), _as_dim3(block), args)

        self.program(size, self._rng(size, seed), counted)
        return done

    def check(self, spec: LaunchSpec) -> None:
        """Raise AssertionError if an output differs from the numpy reference (or an input changed)."""
        for i, before in spec._input_snapshot.items():
            now = spec.args[i]
            if not np.array_equal(before, now):
                k = int(np.flatnonzero(before.ravel() != np.asarray(now).ravel())[0])
                raise AssertionError(
                    f"{self.name}: input buffer {spec.arg_names[i]!r} was modified by the launch "
                    f"(index {k}: was {before.ravel()[k]!r}, now {np.asarray(now).ravel()[k]!r})"
                )
        before = spec._output_before
        expected = self.reference(replace(spec, args=[before.get(i, a) for i, a in enumerate(spec.args)]) if before else spec)
        for i in spec.outputs:
            name = spec.arg_names[i]
            got = np.asarray(spec.args[i])
            want = np.asarray(expected[name])
            _compare(self.name, name, got, want, self.tolerance.get(name))


def _compare(workload: str, name: str, got: np.ndarray, want: np.ndarray, tol) -> None:
    if got.shape != want.shape:
        raise AssertionError(f"{workload}: output buffer {name!r} has shape {got.shape}, reference {want.shape}")
    g, w = got.ravel(), want.ravel()
    if np.issubdtype(want.dtype, np.floating):
        rtol, atol = tol if tol is not None else (0.0, 0.0)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        how = f" (tolerance rtol={rtol:g}, atol={atol:g})"
    else:
        bad = g != w
        how = " (integers must match exactly)"
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        idx = np.unravel_index(k, want.shape) if want.ndim > 1 else k
        raise AssertionError(
            f"{workload}: output buffer {name!r} differs from the numpy reference at index {idx}: "
            f"got {g[k]!r}, expected {w[k]!r}{how}; {int(bad.sum())} of {bad.size} elements differ"
        )


def names() -> list:
    """Names of the built-in workloads (every ``<name>/kernel.cu`` under this package), sorted."""
    return sorted(p.parent.name for p in PACKAGE_DIR.glob("*/kernel.cu"))


_CACHE: dict = {}


def get(name: str) -> Workload:
    """The workload called ``name``; ValueError listing the valid names if there is none."""
    valid = names()
    if name not in valid:
        raise ValueError(f"unknown workload {name!r}; valid workloads: {', '.join(valid)}")
    if name not in _CACHE:
        _CACHE[name] = importlib.import_module(f"{__name__}.{name}").WORKLOAD
    return _CACHE[name]


def fill(shape, dtype, value) -> np.ndarray:
    """An output buffer pre-filled with a sentinel, so an unwritten element shows up in check()."""
    return np.full(shape, value, dtype=dtype)
