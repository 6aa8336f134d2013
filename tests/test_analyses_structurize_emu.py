"""The structurized workloads still compute the right answer: structurize the PTX, print it, run it
on the functional emulator and check the outputs against each workload's numpy reference."""

import pytest

from simt_fast import workloads
from simt_fast.emu import launch
from simt_fast.ir import parse_ptx
from simt_fast.ir.ptx_printer import print_module
from simt_fast.ir.structurize import structurize


@pytest.mark.parametrize("predicated", [False, True], ids=["stubs", "predicated"])
@pytest.mark.parametrize("name", ["shortcircuit", "inlinedreturn", "statemachine", "raytrace", "multientry"])
def test_structurized_workload_matches_reference(name, predicated):
    w = workloads.get(name)
    module, stats = structurize(parse_ptx(w.ptx_path), predicated_flags=predicated)
    assert stats.cuts + stats.forward_copies > 0  # these workloads are unstructured
    spec = w.launch_spec(size="tiny", seed=0)
    run = launch(print_module(module), w.kernel, spec.grid, spec.block, spec.args, spec.shared_bytes, trace=True)
    w.check(spec)  # raises with a clear message if any output differs
    # the trace runs on the structured CFG: every thread path is a path of the new kernel
    assert run.trace is not None and run.thread_insts > 0
