"""Numbers behind the report: per-panel pivots of a results DataFrame, harmonic means, distributions.

Kept free of matplotlib so tests can check every number against numpy directly.

A *panel* is one combination of the config fields that vary in the results other than the
mechanism (e.g. ``simd_width=8``): ElTantawy et al. 2014 and Jin 2012 compare mechanisms per machine, so
each figure draws one panel per machine configuration, with traces (workloads) on the x axis.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..results import CONFIG_COLUMNS
from ..sim.config import MECHANISMS
from ..sim.hws import estimate_from_hist

# Fields never used to split panels: they identify the series (series_label), or only affect guards.
_NOT_PANEL = ("mechanism", "hws", "hws_sync_sms", "hws_squeeze", "seed", "max_cycles", "no_progress_cycles")


def harmonic_mean(values) -> float:
    """Harmonic mean of positive values (NaN if none): the mean ElTantawy et al. 2014 uses for speedups."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v <= 0):
        return float("nan")
    return float(v.size / np.sum(1.0 / v))


def panel_fields(df) -> list:
    """Config fields with more than one value in ``df`` (besides the mechanism): one panel per combination."""
    return [c for c in CONFIG_COLUMNS if c not in _NOT_PANEL and c in df.columns and df[c].nunique() > 1]


def panels(df, exclude: tuple = ()) -> list:
    """``[(title, sub-DataFrame)]`` per combination of the varying fields (title "" if none vary)."""
    fields = [f for f in panel_fields(df) if f not in exclude]
    if not fields:
        return [("", df)]
    out = []
    for key, sub in df.groupby(fields, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        out.append((", ".join(f"{f}={_fmt(v)}" for f, v in zip(fields, key)), sub))
    return out


def _fmt(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "on" if v else "off"
    return str(v)


def mechanisms_in_order(df) -> list:
    """Mechanisms in registry order (the DESIGN table order), unknown names last."""
    present = list(dict.fromkeys(df["mechanism"]))
    return [m for m in MECHANISMS if m in present] + [m for m in present if m not in MECHANISMS]


SYNC_SUFFIX = " (SMs synced)"  # hws_sync_sms: the thesis simulator's all-SM warp-size synchronisation
NO_SQUEEZE_SUFFIX = " (no squeeze)"  # hws_squeeze = false: HWS without the lane-aware squeeze


def series_label(row) -> str:
    if not row.get("hws", False):
        return str(row["mechanism"])
    return (f"{row['mechanism']}&HWS" + (SYNC_SUFFIX if row.get("hws_sync_sms", False) else "")
            + ("" if row.get("hws_squeeze", True) else NO_SQUEEZE_SUFFIX))


def pivot(df, value: str, mean: str = "harmonic"):
    """traces x mechanism table of ``value`` (mean over duplicates), plus a final mean row.

    ``mean`` is ``"harmonic"`` (speedups, ElTantawy et al. 2014) or ``"arithmetic"`` (utilisations, fractions).
    Columns are series labels (``mp``, ``sps&HWS``...), rows trace names then ``HM``/``AM``.
    """
    import pandas as pd

    d = df.copy()
    d["series"] = [series_label(r) for _, r in d.iterrows()]
    order = []
    present = set(d["series"])
    for m in mechanisms_in_order(d):
        for s in (m, f"{m}&HWS", f"{m}&HWS{SYNC_SUFFIX}", f"{m}&HWS{NO_SQUEEZE_SUFFIX}",
                  f"{m}&HWS{SYNC_SUFFIX}{NO_SQUEEZE_SUFFIX}"):
            if s in present:
                order.append(s)
    table = d.pivot_table(index="trace", columns="series", values=value, aggfunc="mean", sort=True)
    table = table.reindex(columns=order)
    if mean == "harmonic":
        summary = {c: harmonic_mean(table[c]) for c in table.columns}
        label = "HM"
    else:
        summary = {c: float(np.nanmean(table[c])) if table[c].notna().any() else float("nan") for c in table.columns}
        label = "AM"
    table = pd.concat([table, pd.DataFrame([summary], index=[label])])
    table.index.name = "trace"
    return table


def sectors_per_request(df) -> np.ndarray:
    """32-byte sectors per warp-level global/local memory request (NaN for runs without any: perfect
    memory or a trace without addresses; docs/memory.md)."""
    if "mem_requests" not in df.columns:
        return np.full(len(df), np.nan)
    req = df["mem_requests"].to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(req > 0, df["mem_sectors"].to_numpy(np.float64) / req, np.nan)


def idle_fraction(df) -> np.ndarray:
    """Idle SM-cycles over all SM-cycles (idle_cycles counts SM-cycles with nothing to issue)."""
    denom = df["cycles"].to_numpy(np.float64) * df["n_sms"].to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, df["idle_cycles"].to_numpy(np.float64) / denom, np.nan)


def occupancy_bins(hist: np.ndarray, n_bins: int = 8) -> tuple:
    """Jin 2012 Fig. 1.1: fraction of issued warp instructions by active threads, in equal bins.

    ``hist[k]`` counts warp instructions issued with k active threads (k = 0..warp_size).
    Returns ``(labels, fractions)``: bins of ``warp_size / n_bins`` threads ("1-4", ..., "29-32").
    """
    hist = np.asarray(hist, dtype=np.float64)
    w = hist.size - 1
    total = hist[1:].sum()
    n_bins = max(1, min(n_bins, w))
    edges = np.linspace(0, w, n_bins + 1).round().astype(int)
    labels, fractions = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        labels.append(f"{lo + 1}-{hi}" if hi > lo + 1 else f"{hi}")
        fractions.append(hist[lo + 1: hi + 1].sum() / total if total else np.nan)
    return labels, np.array(fractions)


def quarter_fractions(hist: np.ndarray) -> np.ndarray:
    """Fraction of issued warp instructions with k = 1..q active quarter-warps."""
    hist = np.asarray(hist, dtype=np.float64)
    total = hist[1:].sum()
    return hist[1:] / total if total else np.full(hist.size - 1, np.nan)


def hws_comparison(df) -> Optional["object"]:
    """Jin 2012 Fig. 6.3: per trace and mechanism, Eq. 6.1's estimate next to the measured HWS speedup.

    The measured speedup pairs each ``hws=false`` row with the ``hws=true`` row of the same trace
    and other config; the estimate comes from the ``hws=false`` row's quarter-warp histogram
    (``simt_fast.sim.hws.estimate_from_hist``). Returns None when the results have no such pairs
    and no quarter-warp data.
    """
    import pandas as pd

    if "quarter_hist" not in df.columns or "hws" not in df.columns:
        return None
    plain = df[~df["hws"].astype(bool)]
    keys = ["trace_id"] + [c for c in CONFIG_COLUMNS if c != "hws"]
    hws_rows = df[df["hws"].astype(bool)][keys + ["cycles"]].rename(columns={"cycles": "hws_cycles"})
    merged = plain.merge(hws_rows, on=keys, how="left")
    rows = []
    for _, r in merged.iterrows():
        q = np.asarray(r["quarter_hist"])
        if q.size < 3:  # one quarter per warp: nothing to scale
            continue
        estimate = np.nan
        if q[1:].sum() > 0 and q[0] == 0:
            estimate = estimate_from_hist(q)
        measured = r["cycles"] / r["hws_cycles"] if np.isfinite(r.get("hws_cycles", np.nan)) and r["hws_cycles"] else np.nan
        rows.append({"trace": r["trace"], "mechanism": r["mechanism"], "warp_size": r["warp_size"],
                     "simd_width": r["simd_width"], "estimate": estimate, "measured": measured,
                     "quarters": quarter_fractions(q)})
    if not rows:
        return None
    return pd.DataFrame(rows)
