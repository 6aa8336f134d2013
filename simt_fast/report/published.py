"""Published claims (``data/published/*.toml``) and the values simt-fast measures for them.

One file per paper (docs/DESIGN.md §9 is the contract)::

    [paper]
    id = "multipath"                      # short id: claim ids are "<paper id>/<claim id>"
    title = "A Scalable Multi-Path Microarchitecture for Efficient GPU Control Flow"
    authors = "A. ElTantawy, J. W. Ma, M. O'Connor, T. M. Aamodt"
    venue = "HPCA 2014"
    [paper.benchmarks]                    # the paper's benchmark -> simt-fast workload ("" = none)
    MUM = "mummer"

    [[claim]]
    id = "mp-oer-over-sps"
    where = "slide 'Overall Performance'"
    what = "harmonic-mean speedup of MP IPDOM with opportunistic early reconvergence over SPS"
    kind = "speedup"                      # speedup | stat | analysis
    study = "multipath"                   # the study (sweep name) whose points measure it
    metric = "speedup"                    # see METRICS below
    measured = {mechanism = "mp-oer"}     # config fields of the measured points
    baseline = {mechanism = "sps"}        # ... of the points it is compared with (speedup, ratio:)
    workloads = "study"                   # or a list of simt-fast workload names
    aggregate = "hmean"                   # hmean | gmean | mean | min | max | pearson
    value = 1.32
    note = "why simt-fast differs, shown when the ratio is off by more than 10%"

    [[figure]]                            # a paper figure redrawn from the results
    id = "overall"; where = "..."; title = "..."; study = "multipath"; aggregate = "hmean"
    series = [{label = "MP-OER", metric = "speedup", measured = {...}, baseline = {...}}]

    [[unmeasured]]                        # a claim simt-fast cannot measure, and why
    where = "..."; what = "..."; value = "..."; why = "..."

Metrics, per workload: ``speedup`` (baseline cycles / measured cycles), ``ratio:STAT`` (measured
stat / baseline stat), ``STAT`` (a scalar stat of the measured points, e.g. ``simd_util``),
``occupancy_below:K`` / ``occupancy_from:K`` (share of issued warp instructions with fewer than /
at least K active threads), ``hws_estimate`` (Eq. 6.1 of the hybrid-warp-size thesis from the warp
occupancy, threads assumed packed), and for ``kind = "analysis"`` ``ANALYSIS.FIELD`` (per-trace
numbers a sweep stored, :mod:`simt_fast.sweep.analyses`). ``pearson`` correlates the metric with
``versus`` (another metric, evaluated on the baseline points) across workloads.

Every problem in a claim file is one sentence naming the file, line and key.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ..sim.config import FIELD_TYPES, ConfigError, coerce
from ..results import CONFIG_COLUMNS
from ..sim.hws import estimate_from_occupancy
from ..sim.stats import SCALAR_STATS
from ..sweep.analyses import FIELDS as ANALYSIS_FIELDS
from ..sweep.spec import _closest, _line_of

PUBLISHED_DIR = Path(__file__).resolve().parents[2] / "data" / "published"
KINDS = ("speedup", "stat", "analysis")
AGGREGATES = ("hmean", "gmean", "mean", "min", "max", "pearson")
AGGREGATE_LABELS = {"hmean": "HM", "gmean": "GM", "mean": "AM", "min": "min", "max": "max"}
DIFFERS = 0.10  # |measured / published - 1| beyond this shows the claim's note
FAR = 0.25  # beyond this a claim is far from the paper (the report colours the ratio by these bands)
CLAIM_COLUMNS = ("paper", "claim", "where", "what", "workloads", "published", "measured", "ratio", "note")
PAPER_KEYS = ("id", "title", "authors", "venue", "benchmarks")
CLAIM_KEYS = ("id", "where", "what", "kind", "study", "metric", "measured", "baseline", "workloads", "aggregate",
              "value", "versus", "nonzero", "paper_workloads", "note")
FIGURE_KEYS = ("id", "where", "title", "study", "aggregate", "workloads", "series", "ylabel", "kind")
SERIES_KEYS = ("label", "metric", "measured", "baseline", "kind")
UNMEASURED_KEYS = ("where", "what", "value", "why")


class PublishedError(ValueError):
    """A claim file that cannot be used; ``str(err)`` is one sentence naming file, line and key."""


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    authors: str
    venue: str
    benchmarks: dict

    @property
    def citation(self) -> str:
        return f"{self.authors}, \u201c{self.title}\u201d, {self.venue}"

    @property
    def benchmark_map(self) -> str:
        """The paper's benchmarks and their simt-fast counterparts, as one line of text."""
        if not self.benchmarks:
            return "The paper names no benchmarks."
        return "Benchmarks: " + ", ".join(f"{b} \u2192 {w or 'no counterpart'}" for b, w in self.benchmarks.items()) + "."


@dataclass(frozen=True)
class Selection:
    """Which points a metric reads: the study, the measured and baseline configs, the workloads."""

    kind: str
    metric: str
    study: str
    measured: tuple  # ((field, value), ...)
    baseline: tuple
    workloads: object  # "study" or a tuple of names
    versus: str = ""
    nonzero: str = ""


@dataclass(frozen=True)
class Claim:
    paper: Paper
    id: str
    where: str
    what: str
    value: float
    aggregate: str
    selection: Selection
    paper_workloads: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.paper.id}/{self.id}"


@dataclass(frozen=True)
class Figure:
    paper: Paper
    id: str
    where: str
    title: str
    aggregate: str
    series: tuple  # ((label, Selection), ...)
    ylabel: str = ""


@dataclass(frozen=True)
class Unmeasured:
    paper: Paper
    where: str
    what: str
    value: str
    why: str


@dataclass
class Published:
    papers: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    unmeasured: list = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Loading and validation
# ---------------------------------------------------------------------------------------------


class _Ctx:
    def __init__(self, path: str, text: str):
        self.path, self.text = path, text

    def fail(self, message: str, section: Optional[str] = None, key: Optional[str] = None, occurrence: int = 0):
        line = _line_of(self.text, section, key, occurrence) if key or section else None
        if line is None and section is not None:
            line = _line_of(self.text, section, None, occurrence)
        raise PublishedError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")


def load_published(path=None) -> Published:
    """Every claim file of a directory (default: the shipped ``data/published``), or one file."""
    p = Path(path) if path is not None else PUBLISHED_DIR
    if p.is_dir():
        files = sorted(p.glob("*.toml"))
    elif p.is_file():
        files = [p]
    else:
        raise PublishedError(f"claim file or directory {p} does not exist")
    out = Published()
    ids = {}
    for f in files:
        one = parse_published(f.read_text(), str(f))
        paper = one.papers[0]
        if paper.id in ids:
            raise PublishedError(f"{f}: paper id '{paper.id}' is also used by {ids[paper.id]}; ids must differ")
        ids[paper.id] = f
        for attr in ("papers", "claims", "figures", "unmeasured"):
            getattr(out, attr).extend(getattr(one, attr))
    return out


def parse_published(text: str, name: str = "<claims>") -> Published:
    ctx = _Ctx(name, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PublishedError(f"{name}: not valid TOML ({e})") from None
    for key in data:
        if key not in ("paper", "claim", "figure", "unmeasured"):
            ctx.fail(f"unknown top-level key '{key}'{_closest(key, ('paper', 'claim', 'figure', 'unmeasured'))} "
                     f"(a claim file has [paper], [[claim]], [[figure]] and [[unmeasured]])", None, key)
    paper = _paper(ctx, data.get("paper"))
    out = Published(papers=[paper])
    seen = set()
    for i, raw in enumerate(_tables(ctx, data, "claim")):
        claim = _claim(ctx, paper, raw, i)
        if claim.id in seen:
            ctx.fail(f"claim id '{claim.id}' appears twice in this file", "claim", "id", i)
        seen.add(claim.id)
        out.claims.append(claim)
    for i, raw in enumerate(_tables(ctx, data, "figure")):
        out.figures.append(_figure(ctx, paper, raw, i))
    for i, raw in enumerate(_tables(ctx, data, "unmeasured")):
        _keys(ctx, raw, UNMEASURED_KEYS, "unmeasured", i)
        vals = [_str(ctx, raw, k, "unmeasured", i) for k in UNMEASURED_KEYS]
        out.unmeasured.append(Unmeasured(paper, *vals))
    if not out.claims and not out.unmeasured:
        ctx.fail("the file has no [[claim]] and no [[unmeasured]] entry", None, None)
    return out


def _tables(ctx, data, name) -> list:
    value = data.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        ctx.fail(f"'{name}' must be an array of tables ([[{name}]])", None, name)
    return value


def _keys(ctx, raw: dict, allowed: tuple, section: str, i: int):
    for key in raw:
        if key not in allowed:
            ctx.fail(f"[[{section}]] key '{key}' is unknown{_closest(key, allowed)} (keys: {', '.join(allowed)})",
                     section, key, i)


def _str(ctx, raw: dict, key: str, section: str, i: int = 0, required: bool = True) -> str:
    value = raw.get(key, None)
    if value is None:
        if required:
            ctx.fail(f"[{section}] needs '{key}' (a string)", section, None, i)
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        ctx.fail(f"[{section}] '{key}' must be a non-empty string", section, key, i)
    return value


def _paper(ctx, raw) -> Paper:
    if not isinstance(raw, dict):
        ctx.fail("the file needs a [paper] table with id, title, authors and venue", None, "paper")
    _keys(ctx, raw, PAPER_KEYS, "paper", 0)
    bench = raw.get("benchmarks", {})
    if not isinstance(bench, dict) or not all(isinstance(v, str) for v in bench.values()):
        ctx.fail("[paper] 'benchmarks' must map the paper's benchmark names to simt-fast workload names "
                 "(\"\" when there is none)", "paper.benchmarks", None)
    return Paper(*(_str(ctx, raw, k, "paper") for k in ("id", "title", "authors", "venue")), dict(bench))


def _config(ctx, raw: dict, key: str, section: str, i: int) -> tuple:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        ctx.fail(f"'{key}' must be a table of config fields, e.g. {{mechanism = \"sps\"}}", section, key, i)
    out = []
    for k, v in value.items():
        if k not in FIELD_TYPES:
            ctx.fail(f"'{key}' names '{k}', which is not a config field{_closest(k, FIELD_TYPES)}", section, key, i)
        try:
            out.append((k, coerce(k, v, source=key)))
        except ConfigError as e:
            ctx.fail(str(e), section, key, i)
    return tuple(sorted(out))


def _check_metric(ctx, kind: str, metric: str, section: str, i: int, key: str = "metric"):
    if kind == "analysis":
        analysis, _, name = metric.partition(".")
        if analysis not in ANALYSIS_FIELDS:
            ctx.fail(f"analysis metric '{metric}' must be ANALYSIS.FIELD with an analysis among "
                     f"{', '.join(ANALYSIS_FIELDS)}", section, key, i)
        if name not in ANALYSIS_FIELDS[analysis]:
            ctx.fail(f"analysis '{analysis}' has no field '{name}'{_closest(name, ANALYSIS_FIELDS[analysis])}",
                     section, key, i)
        return
    head, _, arg = metric.partition(":")
    if head in ("occupancy_below", "occupancy_from"):
        if not arg.isdigit():
            ctx.fail(f"metric '{metric}' needs a thread count, e.g. {head}:4", section, key, i)
    elif head == "ratio":
        if arg not in SCALAR_STATS:
            ctx.fail(f"metric '{metric}' needs a scalar stat after 'ratio:'{_closest(arg, SCALAR_STATS)}", section,
                     key, i)
    elif metric not in ("speedup", "hws_estimate") and metric not in SCALAR_STATS:
        ctx.fail(f"metric '{metric}' is unknown{_closest(metric, ('speedup', 'hws_estimate') + SCALAR_STATS)} "
                 f"(speedup, ratio:STAT, STAT, occupancy_below:K, occupancy_from:K, hws_estimate, or "
                 f"ANALYSIS.FIELD with kind = \"analysis\")", section, key, i)


def _needs_baseline(metric: str) -> bool:
    return metric == "speedup" or metric.startswith("ratio:")


def _selection(ctx, raw: dict, section: str, i: int, defaults: Optional[dict] = None) -> Selection:
    defaults = defaults or {}
    kind = raw.get("kind", defaults.get("kind", "speedup"))
    if kind not in KINDS:
        ctx.fail(f"kind '{kind}' is unknown{_closest(str(kind), KINDS)} (kinds: {', '.join(KINDS)})", section, "kind",
                 i)
    metric = raw.get("metric", defaults.get("metric", "speedup" if kind == "speedup" else None))
    if not isinstance(metric, str) or not metric:
        ctx.fail(f"[[{section}]] needs 'metric' (what is measured, e.g. \"simd_util\")", section, None, i)
    _check_metric(ctx, kind, metric, section, i)
    study = raw.get("study", defaults.get("study"))
    if not isinstance(study, str) or not study:
        ctx.fail(f"[[{section}]] needs 'study': the name of the sweep whose results measure it", section, None, i)
    measured = _config(ctx, raw, "measured", section, i) if "measured" in raw else defaults.get("measured", ())
    baseline = _config(ctx, raw, "baseline", section, i) if "baseline" in raw else defaults.get("baseline", ())
    if kind != "analysis" and not measured:
        ctx.fail(f"[[{section}]] needs 'measured', the config fields of the measured points", section, None, i)
    if _needs_baseline(metric) and not baseline:
        ctx.fail(f"metric '{metric}' compares with a baseline: add 'baseline', e.g. {{mechanism = \"sps\"}}", section,
                 "metric", i)
    workloads = raw.get("workloads", defaults.get("workloads", "study"))
    if workloads != "study":
        if not isinstance(workloads, list) or not workloads or not all(isinstance(w, str) for w in workloads):
            ctx.fail("'workloads' must be \"study\" (every workload of the study) or a list of workload names",
                     section, "workloads", i)
        workloads = tuple(workloads)
    versus = raw.get("versus", "")
    if versus:
        _check_metric(ctx, "stat", versus, section, i, key="versus")
    nonzero = raw.get("nonzero", "")
    if nonzero:
        _check_metric(ctx, "analysis", nonzero, section, i, key="nonzero")
    return Selection(kind, metric, study, measured, baseline, workloads, versus, nonzero)


def _aggregate(ctx, raw, section, i, default="mean") -> str:
    agg = raw.get("aggregate", default)
    if agg not in AGGREGATES:
        ctx.fail(f"aggregate '{agg}' is unknown{_closest(str(agg), AGGREGATES)} (aggregates: {', '.join(AGGREGATES)})",
                 section, "aggregate", i)
    return agg


def _claim(ctx, paper: Paper, raw: dict, i: int) -> Claim:
    _keys(ctx, raw, CLAIM_KEYS, "claim", i)
    sel = _selection(ctx, raw, "claim", i)
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        ctx.fail("[[claim]] needs 'value', the paper's number (a finite number)", "claim",
                 "value" if "value" in raw else None, i)
    agg = _aggregate(ctx, raw, "claim", i)
    if agg == "pearson" and not sel.versus:
        ctx.fail("aggregate 'pearson' correlates two metrics: add 'versus' (e.g. \"hws_estimate\")", "claim",
                 "aggregate", i)
    if sel.versus and agg != "pearson":
        ctx.fail("'versus' only applies with aggregate = \"pearson\"", "claim", "versus", i)
    return Claim(paper, _str(ctx, raw, "id", "claim", i), _str(ctx, raw, "where", "claim", i),
                 _str(ctx, raw, "what", "claim", i), float(value), agg, sel,
                 _str(ctx, raw, "paper_workloads", "claim", i, required=False),
                 _str(ctx, raw, "note", "claim", i, required=False))


def _figure(ctx, paper: Paper, raw: dict, i: int) -> Figure:
    _keys(ctx, raw, FIGURE_KEYS, "figure", i)
    agg = _aggregate(ctx, raw, "figure", i)
    if agg == "pearson":
        ctx.fail("a figure's aggregate is a mean, min or max (not pearson)", "figure", "aggregate", i)
    series = raw.get("series")
    if not isinstance(series, list) or not series or not all(isinstance(s, dict) for s in series):
        ctx.fail("[[figure]] needs 'series', a list of {label, metric, measured, baseline} tables", "figure",
                 "series" if "series" in raw else None, i)
    defaults = {k: raw[k] for k in ("study", "kind", "workloads") if k in raw}
    out = []
    for s in series:
        for key in s:
            if key not in SERIES_KEYS:
                ctx.fail(f"a series key '{key}' is unknown{_closest(key, SERIES_KEYS)} (keys: {', '.join(SERIES_KEYS)})",
                         "figure", "series", i)
        label = s.get("label")
        if not isinstance(label, str) or not label:
            ctx.fail("every series needs a 'label'", "figure", "series", i)
        out.append((label, _selection(ctx, s, "figure", i, defaults)))
    ylabel = raw.get("ylabel", "")
    if not isinstance(ylabel, str):
        ctx.fail("'ylabel' must be a string", "figure", "ylabel", i)
    return Figure(paper, _str(ctx, raw, "id", "figure", i), _str(ctx, raw, "where", "figure", i),
                  _str(ctx, raw, "title", "figure", i), agg, tuple(out), ylabel)


# ---------------------------------------------------------------------------------------------
# Measuring: per-workload values from a results DataFrame, then the claim's aggregate
# ---------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    value: float = float("nan")
    per_workload: dict = field(default_factory=dict)  # workload -> value
    problem: str = ""  # why there is no value (e.g. the study is not in the results)


def workload_of(trace_name: str) -> str:
    """The workload a study's trace display name stands for (``bfs``, ``bfs/default/s1`` -> ``bfs``)."""
    return trace_name.split("/", 1)[0]


def _matches(df, fields: tuple):
    mask = np.ones(len(df), bool)
    for k, v in fields:
        mask &= (df[k] == v).to_numpy()
    return df[mask]


def _occupancy_share(hist, k: int, below: bool) -> float:
    h = np.asarray(hist, np.float64)
    total = h[1:].sum()
    if not total:
        return float("nan")
    part = h[1:k].sum() if below else h[k:].sum()
    return float(part / total)


def _hws_estimate(row) -> float:
    hist = np.asarray(row["occupancy_hist"])
    if hist[1:].sum() == 0:
        return float("nan")
    return float(estimate_from_occupancy(hist, int(row["simd_width"])))


def point_metric(metric: str, row, base) -> float:
    """One workload's value of ``metric`` from its measured row (and baseline row, if any)."""
    head, _, arg = metric.partition(":")
    if metric == "speedup":
        return float(base["cycles"]) / float(row["cycles"]) if row["cycles"] else float("nan")
    if head == "ratio":
        return float(row[arg]) / float(base[arg]) if base[arg] else float("nan")
    if head in ("occupancy_below", "occupancy_from"):
        return _occupancy_share(row["occupancy_hist"], int(arg), head == "occupancy_below")
    if metric == "hws_estimate":
        return _hws_estimate(row)
    return float(row[metric])


def _study_rows(df, study: dict):
    """The study's rows (``results.load`` gives a row per point and study it belongs to)."""
    if "study" in df.columns:
        return df[df["study"] == study["name"]]
    return df[df["point_id"].isin(set(study.get("points", [])))]


def _workload_traces(study: dict, workloads) -> dict:
    """workload -> display names of the study's traces for it."""
    out: dict = {}
    for name in study.get("traces", {}):
        w = workload_of(name)
        if workloads == "study" or w in workloads:
            out.setdefault(w, []).append(name)
    return out


def measure(sel: Selection, df, studies: dict, analyses: dict) -> Measurement:
    """Per-workload values of a selection (claim or figure series)."""
    study = studies.get(sel.study)
    if study is None:
        return Measurement(problem=f"study '{sel.study}' is not in these results")
    traces = _workload_traces(study, sel.workloads)
    if sel.workloads != "study":
        missing = [w for w in sel.workloads if w not in traces]
        if len(missing) == len(sel.workloads):
            return Measurement(problem=f"the study has none of the workloads {', '.join(missing)}")
    per = {}
    if sel.kind == "analysis":
        analysis, _, name = sel.metric.partition(".")
        for w, names in traces.items():
            for t in names:
                entry = analyses.get(study["traces"][t], {}).get("results", {}).get(analysis, {})
                if name in entry and (not sel.nonzero or _analysis_value(analyses, study, t, sel.nonzero)):
                    per[w] = float(entry[name])
        if not per:
            return Measurement(problem=f"no '{analysis}' analysis of these workloads in the results")
        return Measurement(per_workload=per)
    rows = _study_rows(df, study)
    measured, baseline = _matches(rows, sel.measured), _matches(rows, sel.baseline) if sel.baseline else None
    keys = dict(sel.measured) | dict(sel.baseline)
    pair_on = [c for c in _config_columns(rows) if c not in keys]
    for w, names in traces.items():
        for t in names:
            m = measured[measured["trace"] == t]
            if m.empty:
                continue
            if len(m) > 1:
                varying = [c for c in pair_on if m[c].nunique() > 1]
                return Measurement(problem=f"{len(m)} points of '{t}' match {dict(sel.measured)}; name "
                                           f"{', '.join(varying) or 'the varying field'} in 'measured'")
            row = m.iloc[0]
            base = None
            if baseline is not None:
                b = baseline[baseline["trace"] == t]
                for c in pair_on:
                    b = b[b[c] == row[c]]
                if b.empty:
                    continue
                base = b.iloc[0]
            per[w] = point_metric(sel.metric, row, base)
            if sel.versus:
                per[w] = (per[w], point_metric(sel.versus, base if base is not None else row, None))
    if not per:
        return Measurement(problem=f"no points of the study match {dict(sel.measured)}"
                                   + (f" and {dict(sel.baseline)}" if sel.baseline else ""))
    return Measurement(per_workload=per)


def _analysis_value(analyses: dict, study: dict, trace: str, metric: str) -> float:
    analysis, _, name = metric.partition(".")
    return float(analyses.get(study["traces"][trace], {}).get("results", {}).get(analysis, {}).get(name, 0.0))


def _config_columns(df) -> list:
    return [c for c in CONFIG_COLUMNS if c in df.columns]


def aggregate(values, how: str) -> float:
    """Aggregate per-workload values: hmean/gmean need positive values; pearson takes (x, y) pairs."""
    if how == "pearson":
        pairs = np.array([v for v in values if np.all(np.isfinite(v))], np.float64).reshape(-1, 2)
        if len(pairs) < 3 or np.std(pairs[:, 0]) == 0 or np.std(pairs[:, 1]) == 0:
            return float("nan")
        return float(np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1])
    v = np.asarray([x for x in values if np.isfinite(x)], np.float64)
    if v.size == 0:
        return float("nan")
    if how in ("hmean", "gmean") and np.any(v <= 0):
        return float("nan")
    if how == "hmean":
        return float(v.size / np.sum(1.0 / v))
    if how == "gmean":
        return float(np.exp(np.mean(np.log(v))))
    return float({"mean": np.mean, "min": np.min, "max": np.max}[how](v))


def measure_claim(claim: Claim, df, studies: dict, analyses: dict) -> Measurement:
    m = measure(claim.selection, df, studies, analyses)
    if not m.problem:
        m.value = aggregate(list(m.per_workload.values()), claim.aggregate)
        if claim.aggregate == "pearson":
            m.per_workload = {w: v[0] for w, v in m.per_workload.items()}
    return m


def ratio(measured: float, published: float) -> float:
    return measured / published if published and np.isfinite(measured) else float("nan")


def distance(measured: float, published: float) -> float:
    """How far apart: |measured / published - 1| (for a published 0: |measured|); NaN if not measured."""
    if not np.isfinite(measured):
        return float("nan")
    return abs(measured) if published == 0 else abs(measured / published - 1.0)


def differs(measured: float, published: float) -> bool:
    """More than 10% apart (for a published 0: measured beyond 0.1 in absolute terms)."""
    return bool(distance(measured, published) > DIFFERS)


def band(measured: float, published: float) -> str:
    """``"within 10%"``, ``"within 25%"``, ``"beyond 25%"`` or ``"not measured"``."""
    d = distance(measured, published)
    if not np.isfinite(d):
        return "not measured"
    return "within 10%" if d <= DIFFERS else "within 25%" if d <= FAR else "beyond 25%"


@dataclass
class Row:
    claim: Claim
    measurement: Measurement

    @property
    def measured(self) -> float:
        return self.measurement.value

    @property
    def ratio(self) -> float:
        return ratio(self.measured, self.claim.value)

    @property
    def differs(self) -> bool:
        return differs(self.measured, self.claim.value)

    @property
    def comment(self) -> str:
        """What the report prints in the note column."""
        if self.measurement.problem:
            return f"not measured: {self.measurement.problem}"
        if self.differs:
            return self.claim.note or "differs by more than 10%; no explanation recorded in the claim file"
        return ""


def table(published: Published, df, studies: dict, analyses: dict) -> list:
    """A :class:`Row` per claim whose study is in the results (claims of absent studies are left out)."""
    rows = []
    for claim in published.claims:
        if claim.selection.study not in studies:
            continue
        rows.append(Row(claim, measure_claim(claim, df, studies, analyses)))
    return rows


def workloads_text(row: Row) -> str:
    """Which workloads a claim's number comes from, and how they are aggregated (``all of 'thesis' (10), AM``)."""
    c, sel = row.claim, row.claim.selection
    n = len(row.measurement.per_workload)
    text = f"all of '{sel.study}' ({n})" if sel.workloads == "study" else ", ".join(sel.workloads)
    agg = AGGREGATE_LABELS.get(c.aggregate, c.aggregate) if n > 1 or sel.workloads == "study" else ""
    return text + (f", {agg}" if agg else "")


def frame(rows: list):
    """The *Published vs simt-fast* table as a DataFrame, a row per claim in claim-file order:
    ``paper`` and ``claim`` (ids), ``where``, ``what``, ``workloads`` (and their aggregate),
    ``published``, ``measured``, ``ratio`` (numbers; NaN when not measured) and ``note`` (the
    claim's explanation when more than 10% apart, or why it is not measured)."""
    import pandas as pd

    records = [{"paper": r.claim.paper.id, "claim": r.claim.id, "where": r.claim.where, "what": r.claim.what,
                "workloads": workloads_text(r), "published": float(r.claim.value), "measured": float(r.measured),
                "ratio": float(r.ratio), "note": r.comment} for r in rows]
    return pd.DataFrame(records, columns=list(CLAIM_COLUMNS))


def figure_table(fig: Figure, df, studies: dict, analyses: dict, problems: Optional[list] = None):
    """workloads x series DataFrame of a figure plus the aggregate row (None when nothing was measured).

    Series that cannot be measured are left out; ``problems`` receives why, as "label: reason"."""
    import pandas as pd

    cols = {}
    for label, sel in fig.series:
        m = measure(sel, df, studies, analyses)
        if not m.problem:
            cols[label] = m.per_workload
        elif problems is not None and sel.study in studies:
            problems.append(f"{label}: {m.problem}")
    if not cols:
        return None
    t = pd.DataFrame(cols)
    t = t.reindex(sorted(t.index))
    summary = {c: aggregate(t[c].to_numpy(np.float64), fig.aggregate) for c in t.columns}
    t = pd.concat([t, pd.DataFrame([summary], index=[AGGREGATE_LABELS[fig.aggregate]])])
    t.index.name = "workload"
    return t
