"""`kernel_launch_latency` (DESIGN §4): cycles before a kernel's first CTA, added once per kernel by
`simulate` and by the reference model, with ipc derived from the sum and idle cycles untouched."""

from __future__ import annotations

import pytest

from simt_fast.sim import simulate
from simt_fast.sim import reference
from simt_fast.sim.config import ConfigError, SimConfig

from sim_helpers import tiny_trace


def diverged():
    # a warp of four threads splits at block 0 and meets again at block 3
    return tiny_trace([["alu", "bra"], ["alu", "alu"], ["sfu"], ["exit"]], [[1, 2], [3], [3], [4]],
                      [[0, 1, 3, 4], [0, 2, 3, 4], [0, 1, 3, 4], [0, 2, 3, 4]], chain=True)


@pytest.mark.parametrize("mechanism", ["sps", "mp", "dwf"])
@pytest.mark.parametrize("run", [simulate, reference.simulate], ids=["kernel", "reference"])
def test_latency_is_added_once(run, mechanism):
    tr = diverged()
    base = run(tr, SimConfig(mechanism=mechanism, warp_size=4, simd_width=4))
    later = run(tr, SimConfig(mechanism=mechanism, warp_size=4, simd_width=4, kernel_launch_latency=5000))
    assert later.cycles == base.cycles + 5000
    assert later.ipc == later.thread_insts / later.cycles
    assert later.idle_cycles == base.idle_cycles and later.warp_insts == base.warp_insts


def test_latency_range():
    assert SimConfig().kernel_launch_latency == 0
    with pytest.raises(ConfigError, match="kernel_launch_latency"):
        SimConfig(kernel_launch_latency=-1)
