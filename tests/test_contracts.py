"""Contract-level checks of the shared data models (config, stats)."""

from pathlib import Path

import pytest

from simt_fast.sim import reference, simulate
from simt_fast.sim.config import MECHANISMS, ConfigError, SimConfig, from_dict, load_config
from simt_fast.sim.stats import SCALAR_STATS, Stats
from simt_fast.trace.synth import synthetic


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_every_configurable_mechanism_is_simulated_documented_and_has_a_reference(mechanism):
    """A name SimConfig accepts must run in the timing core, agree with its plain-Python
    reference on a small divergent trace, and have a row in DESIGN.md's mechanism table."""
    trace = synthetic(n_blocks=10, n_threads=64, seed=3, block=(32, 1, 1), barrier_prob=0.0)
    cfg = SimConfig(mechanism=mechanism, warp_size=8, simd_width=8)
    assert simulate(trace, cfg).to_dict() == reference.simulate(trace, cfg).to_dict()
    design = (Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md").read_text()
    assert f"| `{mechanism}` |" in design


def test_config_rejects_unknown_mechanism_naming_the_field():
    with pytest.raises(ConfigError, match="mechanism"):
        SimConfig(mechanism="pdom2")


def test_config_toml_round_trip(tmp_path):
    cfg = SimConfig(mechanism="mp-oer", warp_size=16, simd_width=8, hws=True)
    p = tmp_path / "c.toml"
    p.write_text(cfg.to_toml())
    assert load_config(str(p)) == cfg


def test_config_unknown_key_is_named():
    with pytest.raises(ConfigError, match="warpsize"):
        from_dict({"warpsize": 32})


def test_set_override_coerces_strings():
    cfg = load_config(None, {"warp_size": "16", "perfect_memory": "true"})
    assert cfg.warp_size == 16 and cfg.perfect_memory is True
    with pytest.raises(ConfigError, match="warp_size"):
        load_config(None, {"warp_size": "sixteen"})


def test_stats_ratios_are_derived():
    s = Stats(cycles=10, warp_insts=4, thread_insts=64).finalize(warp_size=32)
    assert s.simd_util == 0.5 and s.ipc == 6.4
    d = s.to_dict()
    assert all(k in d for k in SCALAR_STATS)


def test_every_stat_is_named_in_design():
    """Stats are the results-file columns: each one is documented in DESIGN.md (§5)."""
    design = (Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md").read_text()
    missing = [name for name in SCALAR_STATS if f"`{name}`" not in design]
    assert not missing, missing
