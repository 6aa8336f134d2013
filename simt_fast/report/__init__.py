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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from .. import results
from . import published as published_mod
from . import tables
from .published import load_published

__all__ = ["write_report", "tables", "published_mod"]

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


def _md_table(table, fmt: str) -> str:
    """A Markdown table; ``fmt`` formats numeric cells ("" = the cells are text already)."""
    header = "| " + " | ".join([table.index.name or ""] + [str(c) for c in table.columns]) + " |"
    sep = "|" + "---|" * (len(table.columns) + 1)
    lines = [header, sep]
    for idx, row in table.iterrows():
        if fmt:
            cells = ["–" if not np.isfinite(v) else format(v, fmt) for v in row.to_numpy(np.float64)]
        else:
            cells = [str(v).replace("|", "\\|").replace("\n", " ") for v in row]
        name = f"**{idx}**" if idx in ("HM", "AM", "GM") else str(idx)
        lines.append("| " + " | ".join([name] + cells) + " |")
    return "\n".join(lines)


def _html_table(table, fmt: str) -> str:
    if not fmt:
        return table.to_html(border=0, classes="results claims", escape=True)
    return table.to_html(float_format=lambda v: format(v, fmt), na_rep="–", border=0, classes="results")


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
    claims = load_published(published)
    studies = results.studies(results_path)
    analyses = results.analyses(results_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    written, sections = [], []
    by_name = {s["name"]: s for s in studies}
    w, sec = _published_sections(claims, df, by_name, analyses, out_dir)
    written += w
    sections += sec
    if not studies:
        groups = [("", "", df, df.attrs.get("baseline", {}) or {})]
    else:
        groups = []
        for s in studies:
            sub = df[df["point_id"].isin(set(s.get("points", [])))].copy()
            if sub.empty:
                continue
            fields = dict(base) if base else dict(s.get("baseline", {}))
            sub["speedup"] = results.speedup(sub, fields)
            groups.append((s["name"], s.get("description", ""), sub, fields))
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


def _published_sections(claims, df, studies: dict, analyses: dict, out_dir: Path) -> tuple:
    """"Published vs simt-fast": per paper, its claims with the measured values, then its figures."""
    rows = published_mod.table(claims, df, studies, analyses)
    if not rows:
        return [], []
    written = []
    sections = [Section("Published vs simt-fast", 2, [
        "Every claim of the papers that these results measure: the paper's value, the value simt-fast "
        "measured on its counterpart workloads, their ratio, and where they are more than 10% apart what "
        "explains it (the notes live with the claims in data/published/; docs/fidelity.md discusses them). "
        "AM, HM and GM are the arithmetic, harmonic and geometric means over the workloads."])]
    for paper in claims.papers:
        mine = [r for r in rows if r.claim.paper.id == paper.id]
        if not mine:
            continue
        tab = _claims_frame(mine)
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
        sections.append(Section(paper.title, 3, [paper.citation, paper.benchmark_map], [], [("", tab, "")]))
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


def _claims_frame(rows: list):
    import pandas as pd

    records = []
    for r in rows:
        c = r.claim
        sel = c.selection
        wl = f"all of '{sel.study}' ({len(r.measurement.per_workload)})" if sel.workloads == "study" else \
            ", ".join(sel.workloads)
        agg = published_mod.AGGREGATE_LABELS.get(c.aggregate, c.aggregate) if len(r.measurement.per_workload) > 1 \
            or sel.workloads == "study" else ""
        records.append({"claim": f"{c.where}: {c.what}", "workloads": wl + (f", {agg}" if agg else ""),
                        "published": _fmt_value(c.value), "simt-fast": _fmt_value(r.measured),
                        "ratio": _fmt_value(r.ratio), "note": r.comment})
    t = pd.DataFrame(records).set_index("claim")
    return t


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
        fig = _panel_figure(pts, f"speedup over {bl}", f"Speedup over {bl} (HM = harmonic mean)",
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
        f"- results: `{results_path}` ({len(df)} points, schema {df.attrs.get('schema', '?')}, "
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
    body = [f"<h1>simt-fast report</h1><ul>{''.join('<li>' + html.escape(i[2:]) + '</li>' for i in info)}</ul>"]
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
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto}table.results{border-collapse:collapse}"
             "table.results td,table.results th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}"
             "table.claims td{text-align:left;vertical-align:top}")
    html_path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>simt-fast report</title>"
                         f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
    return [md_path, html_path]
