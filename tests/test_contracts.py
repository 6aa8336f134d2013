"""Contract-level checks of the shared data models (config, stats)."""

import pytest

from simt_fast.sim.config import ConfigError, SimConfig, from_dict, load_config
from simt_fast.sim.stats import SCALAR_STATS, Stats


def test_default_config_is_valid_for_every_mechanism():
    from simt_fast.sim.config import MECHANISMS

    for m in MECHANISMS:
        assert SimConfig(mechanism=m).mechanism == m


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
