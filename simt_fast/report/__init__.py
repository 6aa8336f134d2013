"""Reports: paper-style figures (PNG) and a Markdown + HTML summary of a results file.

``write_report(results_h5, out_dir)`` draws each figure only when the results hold what it needs:

* "Published vs simt-fast": the claims of ``data/published/*.toml`` whose study is in the
  results, measured (:mod:`.published`), with ``paper_<paper>_<figure>.png`` redrawing the papers'
  figures from the results;
* per study recorded in the file (file names prefixed ``<study>_`` when there are several):
* ``speedup.png`` — speedup of every mechanism over the baseline, per workload, with the
  harmonic mean (the multi-path IPDOM paper's presentation); one panel per machine configuration;
* ``simd_util.png`` — SIMD utilisation per workload and mechanism;
* ``idle.png`` — idle SM-cycles as a fraction of all SM-cycles;
* ``occupancy_w<W>.png`` — warp-occupancy distribution (issued warp instructions by active
  threads, Fig. 1.1 of the hybrid-warp-size thesis) of the baseline mechanism;
* ``quarters.png`` — quarter-warp distributions with Eq. 6.1's estimated HWS speedup next to the
  measured one (the thesis' Figs. 6.2/6.3) when the sweep has ``simd_width < warp_size``.

The numbers are computed in :mod:`.tables` (tested against numpy); this module only draws.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from .. import results
from . import published as published_mod
from . import tables
from .published import load_published

__all__ = ["write_report", "claims", "tables", "published_mod"]

MAIN_FIGURE = "speedup.png"


@dataclass
class Section:
    """One titled block of summary.md / index.html: text, a bullet list, tables, a figure."""

    title: str
    level: int = 2  # heading level (2 = ##)
    paragraphs: list = field(default_factory=list)
    bullets: list = field(default_factory=list)
    tables: list = field(default_factory=list)  # [(caption, DataFrame, number format or "" for text)]
    figure: Optional[str] = None


def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    return plt


def _series_colors(names: list) -> dict:
    """One colour per series name, the same in every panel of a figure (a mechanism keeps its
    colour when a panel shows only some of them). Beyond ten series, tab20's dark shades come
    first so neighbouring series stay distinguishable."""
    plt = _plt()
    if len(names) <= 10:
        cmap = plt.get_cmap("tab10")
        return {n: cmap(i) for i, n in enumerate(names)}
    cmap = plt.get_cmap("tab20")
    order = list(range(0, 20, 2)) + list(range(1, 20, 2))
    return {n: cmap(order[i % 20]) for i, n in enumerate(names)}


PUBLISHED_LABEL = "published (paper)"


def _grouped_bars(ax, table, ylabel: str, reference: Optional[float] = None, colors: Optional[dict] = None,
                  markers: Optional[dict] = None):
    """Bars of a traces x series table: one group per row (trace, then the mean row). ``markers``
    maps a series to the paper's value of its mean, drawn as a diamond over the mean row's bar."""
    n_rows, n_cols = table.shape
    width = 0.8 / max(n_cols, 1)
    x = np.arange(n_rows)
    colors = colors or _series_colors(list(table.columns))
    for j, col in enumerate(table.columns):
        vals = table[col].to_numpy(np.float64)
        ax.bar(x - 0.4 + width * (j + 0.5), np.nan_to_num(vals, nan=0.0), width, label=col, color=colors[col],
               edgecolor="black", linewidth=0.3)
        if markers and col in markers:
            ax.plot([x[-1] - 0.4 + width * (j + 0.5)], [markers[col]], marker="D", color="black", markersize=5,
                    linestyle="none", label=PUBLISHED_LABEL)
    ax.set_xticks(x)
    ax.set_xticklabels(table.index, rotation=45, ha="right", fontsize=8)
    if n_rows > 1:  # separate the mean group from the workloads
        ax.axvline(n_rows - 1.5, color="grey", linewidth=0.6, linestyle=":")
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.6)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", linewidth=0.3, alpha=0.6)


def _panel_figure(panel_tables: list, ylabel: str, title: str, path: Path, reference=None,
                  log_if_wide: bool = False, markers: Optional[dict] = None) -> Path:
    plt = _plt()
    n = len(panel_tables)
    bars = max(t.shape[0] * max(t.shape[1], 1) for _, t in panel_tables)
    panel_width = min(14.0, max(5.0, 0.09 * bars + 1.5))
    cols = 2 if n > 1 and panel_width <= 7 else 1  # wide panels (many workloads) stack vertically
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(panel_width * cols, 3.2 * rows + 0.9), squeeze=False)
    values = np.concatenate([t.to_numpy(np.float64).ravel() for _, t in panel_tables])
    values = values[np.isfinite(values) & (values > 0)]
    # Ratios spanning more than ~4x either way read better on a log axis (outliers like mimd
    # would otherwise flatten every other bar).
    log = log_if_wide and values.size and (values.max() / max(values.min(), 1e-12) > 16)
    series = list(dict.fromkeys(c for _, t in panel_tables for c in t.columns))
    colors = _series_colors(series)
    for ax, (ptitle, table) in zip(axes.flat, panel_tables):
        _grouped_bars(ax, table, ylabel, reference, colors, markers)
        if log:
            ax.set_yscale("log", base=2)
            ax.yaxis.set_major_formatter(_plt().FuncFormatter(lambda v, _: f"{v:g}"))
        if ptitle:
            ax.set_title(ptitle, fontsize=9)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    by_label = {}
    for ax in list(axes.flat)[:n]:  # every series once, in first-seen order, whichever panel has it
        for h, lab in zip(*ax.get_legend_handles_labels()):
            by_label.setdefault(lab, h)
    labels = [lab for lab in series + [PUBLISHED_LABEL] if lab in by_label]
    handles = [by_label[lab] for lab in labels]
    # Title on top, the shared legend under it, panels below (nothing overlaps).
    head = 0.9 / fig.get_figheight()
    fig.tight_layout(rect=(0, 0, 1, 1 - head))
    fig.suptitle(title, fontsize=10, y=1 - 0.15 / fig.get_figheight())
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1 - 0.4 / fig.get_figheight()),
               ncol=min(len(labels), 8), fontsize=8, frameon=False)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


MEAN_ROWS = ("HM", "AM", "GM")


def _cells(row, fmt: str) -> list:
    """A table row's cells as text: numbers in ``fmt`` ("–" when missing), or as they are when ``fmt`` is ""."""
    if fmt:
        return ["–" if not np.isfinite(v) else format(v, fmt) for v in row.to_numpy(np.float64)]
    return [str(v) for v in row]


def _md_table(table, fmt: str) -> str:
    """A Markdown table; ``fmt`` formats numeric cells ("" = the cells are text already; CLAIMS = a
    claims frame, printed as :func:`claims_display` says)."""
    if fmt == CLAIMS:
        head, body = list(CLAIM_HEADERS), claims_display(table)
    else:
        head = [table.index.name or ""] + [str(c) for c in table.columns]
        body = [[f"**{idx}**" if idx in MEAN_ROWS else str(idx)] + _cells(row, fmt) for idx, row in table.iterrows()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in body]
    return "\n".join(lines)


RATIO_CLASSES = {"within 10%": "near", "within 25%": "off", "beyond 25%": "far", "not measured": "none"}


def _html_table(table, fmt: str) -> str:
    """An HTML table with one header row: the row labels (workloads, points) left-aligned in the first
    column, numbers right-aligned; a claims frame has text claims left-aligned and its ratio cells
    coloured by how far the measured value is from the paper's (published.band)."""
    esc = html.escape
    if fmt == CLAIMS:
        head = "".join(f'<th class="{"num" if h in ("published", "simt-fast", "ratio") else "text"}">{esc(h)}</th>'
                       for h in CLAIM_HEADERS)
        rows = []
        for cells, r in zip(claims_display(table), table.itertuples()):
            band = published_mod.band(r.measured, r.published)
            tds = [f'<td class="text">{esc(c)}</td>' for c in cells[:2]]
            tds += [f'<td class="num">{esc(c)}</td>' for c in cells[2:4]]
            tds.append(f'<td class="num ratio {RATIO_CLASSES[band]}" title="{esc(band)}">{esc(cells[4])}</td>')
            tds.append(f'<td class="text note">{esc(cells[5])}</td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        legend = ('<p class="legend">ratio of simt-fast to the paper: <span class="ratio near">within 10%</span> '
                  '<span class="ratio off">within 25%</span> <span class="ratio far">more than 25% apart</span></p>')
        return f'<table class="claims"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>{legend}'
    head = f'<th class="text">{esc(table.index.name or "")}</th>' + "".join(
        f'<th class="num">{esc(str(c))}</th>' for c in table.columns)
    rows = [f'<tr{" class=mean" if idx in MEAN_ROWS else ""}><th class="text" scope="row">{esc(str(idx))}</th>'
            + "".join(f'<td class="num">{esc(c)}</td>' for c in _cells(row, fmt)) + "</tr>" for idx, row in table.iterrows()]
    return f'<table class="results"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def claims(results_path, published=None):
    """The report's *Published vs simt-fast* table of ``results_path`` as a pandas DataFrame: a row per
    claim of the claim files (``published``, default ``data/published``) whose study is in the
    results, with the columns ``paper``, ``claim``, ``where``, ``what``, ``workloads``,
    ``published``, ``measured``, ``ratio`` and ``note`` (:func:`.published.frame`). The report
    prints these rows (the same code computes both)."""
    df = results.load(results_path, hist=True)
    return published_mod.frame(_claim_rows(load_published(published), df, results_path))


def _claim_rows(claims_, df, results_path) -> list:
    studies = {s["name"]: s for s in results.studies(results_path)}
    return published_mod.table(claims_, df, studies, results.analyses(results_path))


def write_report(results_path, out_dir, baseline: Optional[str] = None, published=None) -> list:
    """Write the figures and summary.md / index.html into ``out_dir``; returns the files written.

    The report opens with "Published vs simt-fast" (every claim of the claim files in
    ``published``, default ``data/published``, whose study is in the results), then one block of
    figures per study recorded in the file (a file without study records is one study)."""

    base = {"mechanism": baseline} if baseline else None
    df = results.load(results_path, hist=True, baseline=base)
    out_dir = Path(out_dir)
    if df.empty:
        return []
    claims_ = load_published(published)
    studies = results.studies(results_path)
    analyses = results.analyses(results_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    written, sections = [], []
    by_name = {s["name"]: s for s in studies}
    w, sec = _published_sections(claims_, _claim_rows(claims_, df, results_path), df, by_name, analyses, out_dir)
    written += w
    sections += sec
    if not studies:
        groups = [("", "", df, df.attrs.get("baseline", {}) or {})]
    else:  # load() gave each study its rows, with the speedups over its baseline
        groups = [(s["name"], s.get("description", ""), df[df["study"] == s["name"]], df.attrs["baselines"][s["name"]])
                  for s in studies if (df["study"] == s["name"]).any()]
    for name, description, sub, fields in groups:
        prefix = f"{name}_" if len(groups) > 1 else ""
        heading = f"Study '{name}'" + (f": {description}" if description else "") if name else ""
        # Eq. 6.1 is about HWS: with several studies, only those that ran hws get its figure.
        quarters = not name or len(groups) == 1 or bool(sub["hws"].astype(bool).any())
        w, sec = _study_sections(sub, fields, out_dir, prefix, heading, quarters)
        written += w
        sections += sec
    written += _write_summaries(df, results_path, sections, out_dir, studies)
    return written


def _published_sections(claims, rows: list, df, studies: dict, analyses: dict, out_dir: Path) -> tuple:
    """"Published vs simt-fast": per paper, its claims (``rows``) with the measured values, then its figures."""
    if not rows:
        return [], []
    written = []
    sections = [Section("Published vs simt-fast", 2, [
        "Every claim of the papers that these results measure: the paper's value, the value simt-fast "
        "measured on its counterpart workloads, their ratio, and where they are more than 10% apart what "
        "explains it (the notes live with the claims in data/published/; docs/fidelity.md discusses them). "
        "AM, HM and GM are the arithmetic, harmonic and geometric means over the workloads. The same table as a "
        "DataFrame: simt_fast.report.claims(results_path)."])]
    table = published_mod.frame(rows)
    for paper in claims.papers:
        tab = table[table["paper"] == paper.id]
        if tab.empty:
            continue
        figs, problems = [], []
        for fig in claims.figures:
            if fig.paper.id != paper.id:
                continue
            missing = []
            t = published_mod.figure_table(fig, df, studies, analyses, missing)
            problems += [f"{fig.where}, {m}" for m in missing]
            if t is None:
                continue
            path = out_dir / f"paper_{paper.id}_{fig.id}.png"
            # the paper's own mean of a series, when a claim states it
            markers = {label: c.value for label, sel in fig.series for c in claims.claims
                       if c.paper.id == paper.id and c.selection == sel and c.aggregate == fig.aggregate}
            _panel_figure([("", t)], fig.ylabel or fig.series[0][1].metric, f"{fig.title} ({fig.where})", path,
                          reference=1.0 if _is_ratio(fig) else None, log_if_wide=True, markers=markers)
            written.append(path)
            figs.append((fig, t, path))
        unmeasured = [f"{u.where}: {u.what} ({u.value}) — {u.why}" for u in claims.unmeasured
                      if u.paper.id == paper.id]
        sections.append(Section(paper.title, 3, [paper.citation, paper.benchmark_map], [], [("", tab, CLAIMS)]))
        if unmeasured:
            sections.append(Section("Not measured", 4, [], unmeasured))
        if problems:
            sections.append(Section("Figure series not drawn", 4, [], problems))
        for fig, t, path in figs:
            sections.append(Section(f"{fig.title} ({fig.where})", 4, [], [], [("", t, ".3f")], path.name))
    return written, sections


def _is_ratio(fig) -> bool:
    return all(sel.metric == "speedup" or sel.metric.startswith("ratio:") or sel.metric == "hws_estimate"
               for _, sel in fig.series)


def _fmt_value(v: float) -> str:
    if not np.isfinite(v):
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.3f}"


CLAIMS = "claims"  # the number format of a Section table that is a claims frame (published.frame)
CLAIM_HEADERS = ("claim", "workloads", "published", "simt-fast", "ratio", "note")


def claims_display(frame) -> list:
    """The cells the report prints for a claims frame: a list of rows of text, in CLAIM_HEADERS order."""
    return [[f"{r.where}: {r.what}", r.workloads, _fmt_value(r.published), _fmt_value(r.measured), _fmt_value(r.ratio),
             r.note] for r in frame.itertuples()]


def _study_sections(df, baseline_fields: dict, out_dir: Path, prefix: str, heading: str,
                    quarters: bool = True) -> tuple:
    """The generic figures of one study: speedup, SIMD utilisation, idle cycles, occupancy and (when
    ``quarters``) the quarter-warp distribution with Eq. 6.1's estimate."""
    written, sections = [], []
    level = 2
    if heading:
        sections.append(Section(heading, 2))
        level = 3

    # ---- speedup over the baseline (per benchmark + harmonic mean, as the multi-path IPDOM paper shows it)
    if baseline_fields and np.isfinite(df["speedup"]).any():
        fixed = tuple(baseline_fields)
        pts = [(t, tables.pivot(sub, "speedup", "harmonic")) for t, sub in tables.panels(df, exclude=fixed)]
        bl = ", ".join(f"{k}={tables._fmt(v)}" for k, v in baseline_fields.items())
        fig = _panel_figure(pts, "speedup", f"Speedup over {bl} (HM = harmonic mean)",
                            out_dir / f"{prefix}{MAIN_FIGURE}", reference=1.0, log_if_wide=True)
        written.append(fig)
        sections.append(Section(f"Speedup over {bl}", level, [
            "Baseline cycles / cycles for the same workload and machine; HM is the harmonic mean over workloads."],
            [], [(t, tab, ".3f") for t, tab in pts], fig.name))
    # ---- SIMD utilisation
    pts = [(t, tables.pivot(sub, "simd_util", "arithmetic")) for t, sub in tables.panels(df)]
    fig = _panel_figure(pts, "SIMD utilisation", "SIMD utilisation (thread_insts / (warp_insts x warp_size))",
                        out_dir / f"{prefix}simd_util.png")
    written.append(fig)
    sections.append(Section("SIMD utilisation", level, [
        "Useful thread operations per issued lane slot; AM is the arithmetic mean."], [],
        [(t, tab, ".3f") for t, tab in pts], fig.name))
    # ---- idle cycles
    d = df.copy()
    d["idle_fraction"] = tables.idle_fraction(d)
    if np.nanmax(d["idle_fraction"].to_numpy(np.float64), initial=0.0) > 0:
        pts = [(t, tables.pivot(sub, "idle_fraction", "arithmetic")) for t, sub in tables.panels(d)]
        fig = _panel_figure(pts, "idle SM-cycles / SM-cycles", "Idle cycles (no warp ready to issue)",
                            out_dir / f"{prefix}idle.png")
        written.append(fig)
        sections.append(Section("Idle cycles", level, [
            "Fraction of SM-cycles in which an SM with unfinished warps issued nothing."], [],
            [(t, tab, ".3f") for t, tab in pts], fig.name))
    # ---- memory coalescing (docs/memory.md): a table, only for runs that modelled memory
    d["sectors_per_request"] = tables.sectors_per_request(d)
    if np.isfinite(d["sectors_per_request"].to_numpy(np.float64)).any():
        pts = [(t, tables.pivot(sub, "sectors_per_request", "arithmetic")) for t, sub in tables.panels(d)]
        sections.append(Section("Sectors per memory request", level, [
            "32-byte sectors touched per warp-level global/local memory instruction (mem_sectors / mem_requests): "
            "4 for a fully coalesced 32-bit warp load, up to 32 when every lane touches its own sector. Regrouped "
            "warps (dwf) hold threads that are no longer consecutive, so their loads coalesce less; AM is the "
            "arithmetic mean. Blank: perfect memory, or a trace without addresses."], [],
            [(t, tab, ".2f") for t, tab in pts]))
    # ---- warp occupancy (hybrid-warp-size thesis, Fig. 1.1)
    occ = _occupancy_figures(df, baseline_fields, out_dir, prefix)
    for path, caption in occ:
        written.append(path)
        sections.append(Section(f"Warp occupancy ({caption})", level, [
            "Issued warp instructions by number of active threads (as Fig. 1.1 of Jin's hybrid-warp-size "
            "thesis)."], figure=path.name))
    # ---- quarter warps and Eq. 6.1
    q = _quarter_figure(df, out_dir, baseline_fields, prefix) if quarters else None
    if q is not None:
        path, table = q
        written.append(path)
        sections.append(Section("Quarter-warp distribution and HWS estimate", level, [
            "Issued warp instructions by active quarter-warps (SIMD-width groups) without HWS; Eq. 6.1's estimated "
            "HWS speedup from that distribution next to the measured HWS speedup where the sweep ran hws=true "
            "(Figs. 6.2, 6.3 of Jin's hybrid-warp-size thesis)."], [], [("", table, ".3f")], path.name))
    return written, sections


def _occupancy_figures(df, baseline_fields: dict, out_dir: Path, prefix: str = "") -> list:
    plt = _plt()
    mech = baseline_fields.get("mechanism") or tables.mechanisms_in_order(df)[0]
    d = df[(df["mechanism"] == mech) & ~df["hws"].astype(bool)] if "hws" in df.columns else df[df["mechanism"] == mech]
    out = []
    for w, sub in d.groupby("warp_size"):
        # One row per trace: the first in config order (occupancy hardly depends on latencies/SIMD width).
        sub = sub.sort_values([c for c in ("simd_width", "point_id") if c in sub.columns]).drop_duplicates("trace")
        traces = sorted(sub["trace"])
        fracs, labels = [], None
        for t in traces:
            labels, f = tables.occupancy_bins(sub[sub["trace"] == t]["occupancy_hist"].iloc[0])
            fracs.append(f)
        fracs = np.array(fracs)
        fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(traces) + 3), 3.6))
        bottom = np.zeros(len(traces))
        cmap = plt.get_cmap("viridis", len(labels))
        for j, lab in enumerate(labels):
            ax.bar(traces, np.nan_to_num(fracs[:, j]), bottom=bottom, label=lab, color=cmap(j), edgecolor="black",
                   linewidth=0.2)
            bottom += np.nan_to_num(fracs[:, j])
        ax.set_ylabel("fraction of warp instructions")
        ax.set_ylim(0, 1)
        ax.set_title(f"Warp occupancy under {mech}, warp size {w} (active threads)", fontsize=9)
        ax.legend(title="active", fontsize=7, title_fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
        ax.tick_params(axis="x", rotation=45, labelsize=8)
        fig.tight_layout()
        path = out_dir / f"{prefix}occupancy_w{w}.png"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        out.append((path, f"{mech}, warp size {w}"))
    return out


def _quarter_figure(df, out_dir: Path, baseline_fields: dict, prefix: str = ""):
    comp = tables.hws_comparison(df)
    if comp is None or comp.empty:
        return None
    # The thesis' Fig. 6.3 shows what HWS adds to the baseline (PDOM) machine: keep the mechanisms
    # that were measured with hws=true, else the baseline mechanism's estimate alone.
    measured = comp[np.isfinite(comp["measured"].to_numpy(np.float64))]
    if not measured.empty:
        comp = comp[comp["mechanism"].isin(set(measured["mechanism"]))]
    else:
        comp = comp[comp["mechanism"] == (baseline_fields.get("mechanism") or "sps")]
    if comp.empty:
        return None
    plt = _plt()
    comp = comp.sort_values(["mechanism", "warp_size", "simd_width", "trace"])
    # Left: distribution by active quarters (one bar per trace, the first machine config);
    # right: estimate vs measured.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 3.8))
    first = comp.drop_duplicates("trace")
    q = max(len(x) for x in first["quarters"])
    cmap = plt.get_cmap("viridis", q)
    bottom = np.zeros(len(first))
    labels_x = [f"{t}\n{m} w{w}/s{s}" for t, m, w, s in zip(first["trace"], first["mechanism"], first["warp_size"],
                                                             first["simd_width"])]
    for k in range(q):
        vals = np.array([x[k] if k < len(x) else 0.0 for x in first["quarters"]])
        ax1.bar(range(len(first)), np.nan_to_num(vals), bottom=bottom, color=cmap(k), label=f"{k + 1}",
                edgecolor="black", linewidth=0.2)
        bottom += np.nan_to_num(vals)
    ax1.set_xticks(range(len(first)))
    ax1.set_xticklabels(labels_x, rotation=45, ha="right", fontsize=7)
    ax1.set_ylabel("fraction of warp instructions")
    ax1.set_title("Active quarter-warps (no HWS)", fontsize=9)
    # beside the axes: the stacked bars fill them to 1.0, so a legend inside always covers one
    ax1.legend(title="quarters", fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    x = np.arange(len(comp))
    have_measured = np.isfinite(comp["measured"].to_numpy(np.float64)).any()
    shift = 0.2 if have_measured else 0.0
    ax2.bar(x - shift, np.nan_to_num(comp["estimate"].to_numpy(np.float64)), 0.4, label="estimated (Eq. 6.1)")
    if have_measured:
        ax2.bar(x + shift, np.nan_to_num(comp["measured"].to_numpy(np.float64)), 0.4, label="measured (hws=true)")
    ax2.axhline(1.0, color="black", linewidth=0.6)
    ax2.set_xticks(x)
    ax2.set_xticklabels([f"{t}\n{m} s{s}" for t, m, s in zip(comp["trace"], comp["mechanism"], comp["simd_width"])],
                        rotation=45, ha="right", fontsize=7)
    ax2.set_ylabel("HWS speedup")
    ax2.set_title("HWS speedup: Eq. 6.1 estimate vs measured" if have_measured else
                  "HWS speedup estimated by Eq. 6.1 (sweep hws = [false, true] to measure it)", fontsize=9)
    ax2.set_ylim(0, ax2.get_ylim()[1] * 1.2)  # headroom for the legend above the tallest bar
    ax2.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path = out_dir / f"{prefix}quarters.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    table = comp[["trace", "mechanism", "warp_size", "simd_width", "estimate", "measured"]].copy()
    table.index = [f"{t} ({m}, w{w}/s{s})" for t, m, w, s in zip(table["trace"], table["mechanism"],
                                                                  table["warp_size"], table["simd_width"])]
    table.index.name = "point"
    return path, table[["estimate", "measured"]]


def _write_summaries(df, results_path, sections, out_dir: Path, studies: list) -> list:
    info = [
        f"- results: `{results_path}` ({df['point_id'].nunique()} points, schema {df.attrs.get('schema', '?')}, "
        f"simt-fast {df.attrs.get('simt_fast_version', '?')})",
        f"- traces: {', '.join(sorted(df['trace'].unique()))}",
        f"- mechanisms: {', '.join(tables.mechanisms_in_order(df))}",
    ]
    if studies:
        info.append("- studies: " + "; ".join(f"{s['name']} ({len(s.get('points', []))} points)" for s in studies))
    varying = tables.panel_fields(df) if not studies else []
    if varying:
        info.append("- machine parameters swept: " + "; ".join(
            f"{f} = {', '.join(tables._fmt(v) for v in sorted(df[f].unique()))}" for f in varying))
    md = ["# simt-fast report", ""] + info + [""]
    items = "".join("<li>" + re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(i[2:])) + "</li>" for i in info)
    body = [f"<h1>simt-fast report</h1><ul>{items}</ul>"]
    for sec in sections:
        title, fig = sec.title, sec.figure
        md += ["#" * sec.level + f" {title}", ""]
        for p in sec.paragraphs:
            md += [p, ""]
        if sec.bullets:
            md += [f"- {b}" for b in sec.bullets] + [""]
        body.append(f"<h{sec.level}>{html.escape(title)}</h{sec.level}>"
                    + "".join(f"<p>{html.escape(p)}</p>" for p in sec.paragraphs))
        if sec.bullets:
            body.append("<ul>" + "".join(f"<li>{html.escape(b)}</li>" for b in sec.bullets) + "</ul>")
        if fig:
            md += [f"![{title}]({fig})", ""]
            body.append(f'<img src="{html.escape(fig)}" alt="{html.escape(title)}" style="max-width:100%">')
        for caption, tab, fmt in sec.tables:
            if caption:
                md += [f"**{caption}**", ""]
                body.append(f"<h3>{html.escape(caption)}</h3>")
            md += [_md_table(tab, fmt), ""]
            body.append(_html_table(tab, fmt))
    md_path = out_dir / "summary.md"
    md_path.write_text("\n".join(md) + "\n")
    html_path = out_dir / "index.html"
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.35}"
             "table{border-collapse:collapse;margin:0.5em 0}"
             "th,td{padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top}"
             "thead th{border-bottom:2px solid #888;font-weight:bold}"
             "tbody th{font-weight:normal}tr.mean th,tr.mean td{font-weight:bold;border-top:1px solid #888}"
             ".text{text-align:left}.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
             "table.claims td.note{font-size:0.9em;color:#444}table.claims td:nth-child(2){min-width:10em}"
             ".ratio.near{background:#dcefdc}.ratio.off{background:#fbeec1}.ratio.far{background:#f6cfcc}"
             ".ratio.none{color:#888}p.legend{font-size:0.85em;color:#444}"
             "p.legend span{padding:1px 6px;margin-right:4px}")
    html_path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>simt-fast report</title>"
                         f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
    return [md_path, html_path]
