"""Every SimConfig integer field is range-checked against what the kernels represent (one sentence
naming the field, from the library, `--set` and a sweep's [config]/[grid]); values at the limits
simulate correctly."""

import tomllib

import numpy as np
import pytest
from trace_helpers import tiny_trace
from typer.testing import CliRunner

from simt_fast.cli import app
from simt_fast.sim import simulate
from simt_fast.sim.config import INT_RANGES, ConfigError, SimConfig, load_config, preset_dirs
from simt_fast.sweep import SweepError, load_sweep


@pytest.mark.parametrize("name", sorted(INT_RANGES))
def test_each_integer_field_has_a_range(name):
    lo, hi = INT_RANGES[name]
    for ok in (lo, hi):
        assert getattr(SimConfig(**{name: ok}), name) == ok
    for bad in (lo - 1, hi + 1, 99999999999999999999):
        with pytest.raises(ConfigError, match=rf"^config field '{name}' must be between {lo} and {hi} \(got {bad}\)$"):
            SimConfig(**{name: bad})
    with pytest.raises(ConfigError, match=f"config field '{name}' must be an integer"):
        SimConfig(**{name: 2.5})


def test_numpy_integers_become_plain_ints():
    c = SimConfig(n_sms=np.int64(4), lat_global=np.int32(300))
    assert type(c.n_sms) is int and type(c.lat_global) is int and c == SimConfig(n_sms=4, lat_global=300)


@pytest.mark.parametrize("value", ["99999999999999999999", "9223372036854775807", "-1", "0"])
def test_set_refuses_values_past_the_range(tmp_path, value):
    p = tmp_path / "t.h5"
    tiny_trace().save(p)
    r = CliRunner().invoke(app, ["run", str(p), "--set", f"lat_global={value}"])
    assert r.exit_code == 2
    assert r.output.splitlines() == [
        f"error: --set: config field 'lat_global' must be between 1 and {1 << 24} (got {int(value)})"]


@pytest.mark.parametrize("section, text", [
    ("config", "[config]\nlat_global = 9223372036854775807\n"),
    ("config", "[config]\nmax_cycles = 99999999999999999999\n"),
    ("grid", "[grid]\nn_sms = [1, 100000]\n"),
])
def test_sweep_file_values_past_the_range(tmp_path, section, text):
    tiny_trace().save(tmp_path / "t.h5")
    sweep = tmp_path / "s.toml"
    sweep.write_text('traces = ["t.h5"]\n' + text)
    with pytest.raises(SweepError, match=rf"^{sweep}:3: \[{section}\] \w+: config field '\w+' must be between") as e:
        load_sweep(sweep)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["gt200", "fermi", "modern"])
def test_presets_are_inside_the_ranges(name):
    """Every value a preset file names reaches the config unchanged and inside its field's range, and
    the file says where its numbers come from (a `source` line)."""
    [path] = [d / f"{name}.toml" for d in preset_dirs() if (d / f"{name}.toml").is_file()][:1]
    data = tomllib.loads(path.read_text())
    config = load_config(name)
    assert len(data.pop("source", "")) > 100
    assert data and all(getattr(config, field) == value for field, value in data.items())
    for field, (lo, hi) in INT_RANGES.items():
        assert lo <= getattr(config, field) <= hi, field


def test_the_longest_latency_still_counts_every_cycle():
    """At the limit nothing wraps: the dependent add waits the whole global latency."""
    t = tiny_trace()  # thread paths load from global memory (block 2) and use the value (block 3)
    base = simulate(t, SimConfig(warp_size=4, simd_width=4))
    longest = simulate(t, SimConfig(warp_size=4, simd_width=4, lat_global=1 << 24))
    assert longest.cycles - base.cycles == (1 << 24) - 400
    far = simulate(t, SimConfig(warp_size=4, simd_width=4, max_cycles=1 << 48, no_progress_cycles=1 << 48,
                                lat_global=1 << 24))
    assert far.to_dict() == longest.to_dict()
