"""The recorded stats of tests/test_sim_golden_stats.py: what they cover and how to record them again.

    PYTHONPATH=. python tests/golden_stats.py            # rewrite tests/data/golden_stats*.json

Every shipped workload (tiny size, seed 0, traced by the emulator into the sweep's workload cache)
and a few synthetic traces, under every mechanism (and hws for sps, dwf, en-dwf), on two machines.
The files hold every scalar stat and both histograms, or the one-sentence error a run ends with.
Record them again only for a change that is meant to change the numbers, and say so in the commit.
They pin behaviour (the simulator's own earlier output), they do not show it is right.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from simt_fast import workloads
from simt_fast.sim import SimulationError, simulate
from simt_fast.sim.config import ConfigError, SimConfig, load_config
from simt_fast.trace.model import Trace
from simt_fast.trace.synth import synthetic

DATA = Path(__file__).resolve().parent / "data"
WORKLOAD_FILE = DATA / "golden_stats.json"
SYNTHETIC_FILE = DATA / "golden_stats_synthetic.json"

MECHANISMS = ("serial", "sps", "dps", "mp", "mp-oer", "dwf", "en-dwf", "tbc", "stackless", "frontier", "mimd",
              "sps+hws", "dwf+hws", "en-dwf+hws")
SIZE = "tiny"
SEED = 0


def configs() -> dict:
    return {"simd8": SimConfig(simd_width=8), "gt200": load_config("gt200")}


def configured(base: SimConfig, label: str) -> SimConfig:
    name, _, extra = label.partition("+")
    return base.replace(mechanism=name, hws=extra == "hws")


def record(trace: Trace, config: SimConfig) -> dict:
    """The run's stats as a JSON-able dict, or its error sentence."""
    try:
        return simulate(trace, config).to_dict()
    except (SimulationError, ConfigError) as e:
        return {"error": f"{type(e).__name__}: {e}"}


def workload_traces() -> dict:
    """name -> Trace of every shipped workload, from the sweep's workload cache (traced on a miss)."""
    from simt_fast.sweep.spec import TraceSource
    from simt_fast.sweep.traces import resolve_traces

    sources = [TraceSource(name=n, workload=n, size=SIZE, seed=SEED) for n in workloads.names()]
    return {n: Trace.load(p) for n, (p, _) in resolve_traces(sources).items()}


# small synthetic traces: converged and divergent code, barriers, several CTAs on several SMs
SYNTHETIC = {
    "div-bar": dict(n_blocks=14, n_threads=256, seed=3, block=(64, 1, 1), divergence=0.3),
    "loops": dict(n_blocks=20, n_threads=192, seed=7, block=(96, 1, 1), divergence=0.15, loop_prob=0.3,
                  barrier_prob=0.0),
    "structured": dict(n_blocks=16, n_threads=128, seed=11, block=(32, 1, 1), divergence=0.25, structured=True),
}


def synthetic_configs() -> dict:
    return {"simd8-2sm": SimConfig(simd_width=8, n_sms=2, max_ctas_per_sm=2),
            "w16-gto": SimConfig(warp_size=16, simd_width=4, n_sms=3, n_schedulers=2, issue_policy="gto",
                                 max_ctas_per_sm=1)}


def synthetic_traces() -> dict:
    return {name: synthetic(**kw) for name, kw in SYNTHETIC.items()}


def compute(traces: dict, cfgs: dict) -> dict:
    out = {}
    for tname, trace in traces.items():
        for cname, base in cfgs.items():
            for label in MECHANISMS:
                out[f"{tname}/{cname}/{label}"] = record(trace, configured(base, label))
    return out


def main() -> None:
    DATA.mkdir(exist_ok=True)
    which = sys.argv[1:] or ["synthetic", "workloads"]
    if "synthetic" in which:
        SYNTHETIC_FILE.write_text(json.dumps(compute(synthetic_traces(), synthetic_configs()), indent=0,
                                             sort_keys=True) + "\n")
        print(f"wrote {SYNTHETIC_FILE}")
    if "workloads" in which:
        WORKLOAD_FILE.write_text(json.dumps(compute(workload_traces(), configs()), indent=0, sort_keys=True) + "\n")
        print(f"wrote {WORKLOAD_FILE}")


if __name__ == "__main__":
    main()
