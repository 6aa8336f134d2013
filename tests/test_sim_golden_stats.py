"""The simulator's numbers do not move unless a change means them to (tests/golden_stats.py).

Every shipped workload (tiny) and a few synthetic traces under every mechanism on two machines,
compared exactly (every scalar stat, both histograms, or the error sentence) with the values
recorded in tests/data/golden_stats*.json. A restructuring of the kernels must pass unchanged; a
change of the machine's rules records the files again in its own commit.

These tests pin behaviour; they are no evidence of correctness: the recorded values are the
simulator's own earlier output, so they catch change, not error, and one command records them
again. The evidence that the numbers are right is elsewhere: the hand-worked goldens
(tests/test_sim_golden.py, test_formation_golden.py, test_dynamic_stackless.py, ...) and the
differential tests against the plain-Python references (docs/core.md, *Testing*).
"""

from __future__ import annotations

import json

import pytest

import golden_stats as gs
from simt_fast import workloads


def _compare(recorded: dict, trace, trace_name: str, cfgs: dict):
    diffs = []
    for cname, base in cfgs.items():
        for label in gs.MECHANISMS:
            key = f"{trace_name}/{cname}/{label}"
            got = gs.record(trace, gs.configured(base, label))
            want = recorded[key]
            if got != want:
                fields = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
                diffs.append(f"{key}: " + ", ".join(f"{f} {want.get(f)!r} -> {got.get(f)!r}" for f in fields[:4]))
    assert not diffs, f"{len(diffs)} runs changed:\n" + "\n".join(diffs[:20])


SYNTHETIC = json.loads(gs.SYNTHETIC_FILE.read_text())


@pytest.mark.parametrize("name", sorted(gs.SYNTHETIC))
def test_synthetic_golden_stats(name):
    _compare(SYNTHETIC, gs.synthetic_traces()[name], name, gs.synthetic_configs())


def test_golden_files_cover_every_mechanism_and_config():
    recorded = json.loads(gs.WORKLOAD_FILE.read_text())
    want = {f"{w}/{c}/{m}" for w in workloads.names() for c in gs.configs() for m in gs.MECHANISMS}
    assert set(recorded) == want
    assert set(SYNTHETIC) == {f"{t}/{c}/{m}" for t in gs.SYNTHETIC for c in gs.synthetic_configs()
                              for m in gs.MECHANISMS}


@pytest.fixture(scope="module")
def workload_traces():
    return gs.workload_traces()


@pytest.mark.slow
@pytest.mark.parametrize("name", workloads.names())
def test_workload_golden_stats(name, workload_traces):
    recorded = json.loads(gs.WORKLOAD_FILE.read_text())
    _compare(recorded, workload_traces[name], name, gs.configs())
