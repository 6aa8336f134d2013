"""``hws_squeeze = false``: HWS issues the active quarters as they are (no squeeze before issue or
before the DWF pool), the switch that measures the squeeze's own share of the speedup."""

from __future__ import annotations

import pytest

from simt_fast.sim import reference, simulate
from simt_fast.sim.config import ConfigError, SimConfig, check_config
from simt_fast.trace.synth import synthetic


@pytest.mark.parametrize("mechanism", ["sps", "dwf", "en-dwf"])
def test_kernel_matches_reference_without_the_squeeze(mechanism):
    differs = False
    for seed in range(3):
        trace = synthetic(10, 64, seed=seed, warp_size=16, block=(32, 1, 1), divergence=0.35)
        base = SimConfig(mechanism=mechanism, warp_size=16, simd_width=4, n_sms=2, hws=True, lat_global=40)
        off = base.replace(hws_squeeze=False)
        fast, ref = simulate(trace, off).to_dict(), reference.simulate(trace, off).to_dict()
        assert fast == ref
        differs |= fast != simulate(trace, base).to_dict()
    assert differs  # the squeeze changes something on divergent traces


def test_hws_squeeze_off_needs_hws():
    with pytest.raises(ConfigError, match="hws_squeeze"):
        check_config(SimConfig(mechanism="sps", hws_squeeze=False))
