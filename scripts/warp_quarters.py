#!/usr/bin/env python
"""A workload's warp distribution by active quarter-warps under PDOM, as the thesis' Table 6.1 shows it.

From the main job's results (the thesis study's PDOM points, GT200 machine, SIMD width 8): the
share of issued warp instructions with 1, 2, 3 and 4 active quarters (threads packed, as Eq. 6.1
assumes) and Eq. 6.1's estimated HWS speedup from it; then the same weighted by the instructions'
active threads instead of counted once each, the other reading of "warp distribution".

    simt-fast sweep data/sweeps/default.toml -o results.h5
    python scripts/warp_quarters.py results.h5 [WORKLOAD ...]     # default: nqueens
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

STUDY = "thesis"


def distributions(occupancy_hist, simd_width: int):
    """(instruction shares, thread-weighted shares) by active quarters 1..4."""
    h = np.asarray(occupancy_hist, np.float64)
    quarters = -(-np.arange(h.size) // simd_width)
    n_quarters = (h.size - 1) // simd_width
    by_insts = np.bincount(quarters, weights=h, minlength=n_quarters + 1)[1:]
    by_threads = np.bincount(quarters, weights=h * np.arange(h.size), minlength=n_quarters + 1)[1:]
    return by_insts / by_insts.sum(), by_threads / by_threads.sum()


def main(argv=None) -> int:
    from simt_fast import results
    from simt_fast.sim.hws import estimate_from_hist

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("workloads", nargs="*", default=["nqueens"])
    a = ap.parse_args(argv)
    df = results.load(a.results, hist=True)
    study = next(s for s in results.studies(a.results) if s["name"] == STUDY)
    df = df[df.point_id.isin(set(study["points"])) & (df.mechanism == "sps") & ~df.hws.astype(bool)]
    print("| workload | weighted by | 1 quarter | 2 | 3 | 4 | Eq. 6.1 |\n|---|---|---:|---:|---:|---:|---:|")
    for name in a.workloads:
        rows = df[df.trace.str.split("/").str[0] == name]
        if len(rows) != 1:
            sys.exit(f"{a.results}: the thesis study has {len(rows)} PDOM points of '{name}', not one")
        row = rows.iloc[0]
        for label, dist in zip(("warp instructions", "active threads"), distributions(row.occupancy_hist, int(row.simd_width))):
            est = estimate_from_hist(np.concatenate([[0.0], dist]))
            print(f"| {name} | {label} | " + " | ".join(f"{v:.3f}" for v in dist) + f" | {est:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
