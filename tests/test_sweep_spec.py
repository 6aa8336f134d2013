"""Sweep files: validation names file/line/key before any work; grid expansion; stable point ids."""

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hypothesis_budget import examples
from sweep_helpers import SWEEP, make_sweep

from simt_fast.sim.config import SimConfig
from simt_fast.sweep import SweepError, expand, load_sweep, parse_shard, parse_sweep, point_id, select_shard
from simt_fast.sweep.points import in_shard

AVAILABLE = ["serial", "sps", "dps", "mp", "mp-oer", "frontier", "mimd"]


def parse(text, tmp_path=None, **kw):
    return parse_sweep(textwrap.dedent(text), "s.toml", base_dir=tmp_path, mechanisms_available=AVAILABLE, **kw)


def test_grid_expansion_applies_exclude_rules_and_baseline(tmp_path):
    path = make_sweep(tmp_path)
    spec = load_sweep(path, mechanisms_available=AVAILABLE)
    assert [t.name for t in spec.traces] == ["syn0", "syn1"]
    assert spec.baseline == {"mechanism": "sps"}
    combos = [(c.mechanism, c.simd_width) for c in spec.configs_for("syn0")]
    # 3 x 2 product minus (mimd, 8), in grid order (first key slowest)
    assert combos == [("sps", 8), ("sps", 32), ("mp", 8), ("mp", 32), ("mimd", 32)]
    assert spec.n_points == 10
    assert all(c.warp_size == 32 for c in spec.configs)


def test_config_table_and_base_preset_are_applied(tmp_path):
    spec = parse("""
        traces = []
        workloads = ["bfs"]
        size = "tiny"
        [config]
        perfect_memory = true
        lat_alu = 8
        [grid]
        warp_size = [16, 32]
    """, tmp_path)
    assert [c.warp_size for c in spec.configs] == [16, 32]
    assert all(c.perfect_memory and c.lat_alu == 8 for c in spec.configs)
    assert spec.traces[0].workload == "bfs" and spec.traces[0].size == "tiny"


def test_exclude_rule_can_match_trace_names(tmp_path):
    text = SWEEP + '\n[[exclude]]\ntrace = "syn1"\nmechanism = "mp"\n'
    spec = load_sweep(make_sweep(tmp_path, text), mechanisms_available=AVAILABLE)
    assert len(spec.configs_for("syn0")) == 5 and len(spec.configs_for("syn1")) == 3


@pytest.mark.parametrize("text, line, fragment", [
    ("traces = ['t/*.h5']\n[grid]\nmechanism = ['sps']\nsimd_widht = [8]\n", 4, "did you mean 'simd_width'"),
    ("traces = ['t/*.h5']\n[config]\nwarpsize = 16\n", 3, "did you mean 'warp_size'"),
    ("traces = ['t/*.h5']\ngrid_ = 1\n", 2, "did you mean 'grid'"),
    ("traces = ['t/*.h5']\n[grid]\nsimd_width = ['eight']\n", 3, "must be int"),
    ("traces = ['t/*.h5']\n[grid]\nmechanism = ['sps', 'pdom']\n", 3, "'pdom' is not a mechanism"),
    ("traces = ['t/*.h5']\n[grid]\nmechanism = ['sps', 'tbc']\n", 3, "not implemented by this simt-fast's timing core"),
    ("traces = ['t/*.h5']\n[grid]\nwarp_size = [32, 128]\n", 3, "between 4 and 64"),
    ("traces = ['t/*.h5']\nbaseline = 'mp'\n[grid]\nmechanism = ['sps']\n", 2, "not among the sweep's values"),
    ("traces = ['t/*.h5']\n\n[[exclude]]\nmechanism = 'sps'\nsimdwidth = 8\n", 5, "did you mean 'simd_width'"),
    ("traces = ['nothing/*.h5']\n", 1, "matches no file"),
    ("workloads = ['bsf']\n", 1, "did you mean 'bfs'"),
    ("workloads = [{name = 'bfs', sise = 'tiny'}]\n", 1, "did you mean 'size'"),
    ("workloads = [{name = 'bfs', size = 'huge'}]\n", 1, "has no size 'huge'"),
    ("traces = ['t/*.h5']\n[grid]\nsimd_width = []\n", 3, "empty list"),
])
def test_bad_sweep_files_name_line_and_key(tmp_path, text, line, fragment):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.h5").write_bytes(b"")
    with pytest.raises(SweepError) as err:
        parse(text, tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"s.toml:{line}: "), msg
    assert fragment in msg
    assert "\n" not in msg


def test_invalid_combination_is_named_before_any_work(tmp_path):
    (tmp_path / "a.h5").write_bytes(b"")
    with pytest.raises(SweepError, match=r"grid point \(simd_width=12, hws=True\).*exclude"):
        parse("traces = ['a.h5']\n[grid]\nsimd_width = [8, 12]\nhws = [false, true]\n", tmp_path)
    # ...and an exclude rule makes the same grid valid
    spec = parse("traces = ['a.h5']\n[grid]\nsimd_width = [8, 12]\nhws = [false, true]\n"
                 "[[exclude]]\nsimd_width = 12\nhws = true\n", tmp_path)
    assert len(spec.configs_for("a")) == 3


def test_not_toml_is_one_sentence(tmp_path):
    with pytest.raises(SweepError, match="not valid TOML"):
        parse("[grid\nmechanism = 1", tmp_path)


def test_point_id_depends_on_trace_and_every_config_field():
    base = SimConfig(mechanism="mp")
    pid = point_id("d" * 64, base)
    assert len(pid) == 32 and pid == point_id("d" * 64, SimConfig(mechanism="mp"))
    assert point_id("e" * 64, base) != pid
    for name, value in [("warp_size", 16), ("lat_alu", 3), ("hws", True), ("seed", 1), ("issue_policy", "gto")]:
        assert point_id("d" * 64, base.replace(**{name: value})) != pid, name


@examples(60)
@given(st.sampled_from(AVAILABLE), st.sampled_from([4, 8, 16, 32, 64]), st.integers(1, 64), st.integers(1, 500),
       st.sampled_from(AVAILABLE), st.sampled_from([4, 8, 16, 32, 64]), st.integers(1, 64), st.integers(1, 500))
def test_point_ids_are_equal_exactly_when_configs_are(m1, w1, s1, l1, m2, w2, s2, l2):
    a = SimConfig(mechanism=m1, warp_size=w1, simd_width=s1, lat_global=l1)
    b = SimConfig(mechanism=m2, warp_size=w2, simd_width=s2, lat_global=l2)
    assert (point_id("t", a) == point_id("t", b)) == (a == b)


def _ids_here(path):
    spec = load_sweep(path)
    resolved = {t.name: (t.path, t.name * 8) for t in spec.traces}  # fixed digests: ids depend on content
    return [p.point_id for p in expand(spec, resolved)]


def test_point_ids_are_stable_across_processes(tmp_path):
    path = make_sweep(tmp_path)
    here = _ids_here(path)
    code = textwrap.dedent(f"""
        import json
        from simt_fast.sweep import expand, load_sweep
        spec = load_sweep({str(path)!r})
        resolved = {{t.name: (t.path, t.name * 8) for t in spec.traces}}
        print(json.dumps([p.point_id for p in expand(spec, resolved)]))
    """)
    env_hash = {"PYTHONHASHSEED": "12345"}  # a different str-hash seed must not matter
    import os

    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, **env_hash})
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here
    assert len(set(here)) == len(here) == 10


def test_same_trace_content_under_two_names_is_simulated_once(tmp_path):
    path = make_sweep(tmp_path)
    spec = load_sweep(path)
    resolved = {t.name: (t.path, "same-digest") for t in spec.traces}
    assert len(expand(spec, resolved)) == 5


def test_shards_partition_the_points(tmp_path):
    spec = load_sweep(make_sweep(tmp_path))
    points = expand(spec, {t.name: (t.path, t.name) for t in spec.traces})
    shards = [select_shard(points, (i, 3)) for i in range(3)]
    ids = [p.point_id for s in shards for p in s]
    assert sorted(ids) == sorted(p.point_id for p in points)
    assert all(in_shard(p.point_id, (i, 3)) for i, s in enumerate(shards) for p in s)
    assert parse_shard("2/3") == (2, 3)
    for bad in ("3/3", "a/b", "1", "-1/2"):
        with pytest.raises(SweepError, match="--shard"):
            parse_shard(bad)


def test_everything_sweep_lists_every_workload_and_only_registered_mechanisms():
    from pathlib import Path

    from simt_fast import workloads
    from simt_fast.sim import registry

    spec = load_sweep(Path(__file__).resolve().parents[1] / "data" / "sweeps" / "everything.toml")
    assert spec.name == "everything"
    assert sorted(t.workload for t in spec.traces) == sorted(workloads.names())
    assert all(t.size == "tiny" for t in spec.traces)
    mechs = spec.grid["mechanism"]
    assert set(mechs) == set(registry.names())  # the smoke sweep shows every mechanism
    assert spec.grid["simd_width"] == [8, 32] and all(c.warp_size == 32 for c in spec.configs)
    assert spec.baseline == {"mechanism": "sps", "hws": False}  # HWS variants are measured against PDOM
    hws_points = {(c.mechanism, c.simd_width) for c in spec.configs if c.hws}
    assert hws_points == {("sps", 8), ("dwf", 8), ("en-dwf", 8)}  # PDOM&HWS, DWF&HWS, en-DWF&HWS
