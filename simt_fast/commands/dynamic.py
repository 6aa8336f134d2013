"""Trace-based analyses: `simt-fast scalarize`, `simt-fast expansion`, `simt-fast struct-vs-ipdom`.

* ``scalarize TRACE.h5 [--ptx FILE.ptx]`` -- Lee et al. 2013 Figs. 5-6: static scalar share and registers per
  warp, dynamic issued instructions (scalar / statically converged / dynamically converged / diverged),
  thread operations, register reads/writes, memory addresses and data accesses per warp size, each
  against the unscalarized baseline (docs/analyses_dynamic.md defines every count).
* ``expansion TRACE.h5`` -- Wu et al. 2012 Table 3: upper limit of dynamic code expansion next to the exact
  count of the sps timing core.
* ``struct-vs-ipdom WORKLOAD`` -- Wu et al. 2012 Fig. 15: the structurized kernel run on the same inputs
  (outputs must be identical) and both traces simulated under sps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ._errors import fail, user_errors
from ._files import ALLOW_DIGEST_MISMATCH, write_text


def _warp_sizes(text: str) -> tuple:
    try:
        ws = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        fail(f"--warp-sizes expects comma-separated integers (got '{text}')")
    bad = [w for w in ws if not 1 <= w <= 64]
    if not ws or bad:
        fail(f"--warp-sizes must be between 1 and 64 (got '{text}')")
    return ws


def _ptx_for(trace, ptx: Optional[Path]):
    if ptx is not None:
        if not ptx.is_file():
            raise FileNotFoundError(f"PTX file not found: {ptx}")
        return ptx
    name = trace.attrs.get("workload")
    if name:
        from ..workloads import get

        return get(str(name)).ptx_path
    fail(f"trace '{trace.kernel}' does not name its workload: pass --ptx FILE.ptx (the PTX it was recorded from)")


def register(app: typer.Typer) -> None:
    @app.command("scalarize")
    def scalarize_cmd(
        trace_file: Path = typer.Argument(..., help="Trace file (HDF5) recorded by `simt-fast trace` or the emulator."),
        ptx: Optional[Path] = typer.Option(None, "--ptx", help="The PTX the trace was recorded from (default: the trace's workload)."),
        kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel name (default: the trace's)."),
        warp_sizes: str = typer.Option("4,8,16,32", "--warp-sizes", help="Comma-separated warp sizes."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Static and dynamic scalarization statistics of a trace (Lee et al. 2013 §4.2, Figs. 5-6)."""
        scalarize_report(trace_file, ptx, kernel, warp_sizes, as_json, allow_digest_mismatch=allow_digest_mismatch)

    @app.command("expansion")
    def expansion_cmd(
        trace_file: Path = typer.Argument(..., help="Trace file (HDF5)."),
        warp_size: int = typer.Option(32, "--warp-size", "-w", help="Threads per warp."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Dynamic code expansion under IPDOM (Wu et al. 2012 Table 3): upper limit and exact sps count."""
        from ..dynamic.expansion import expansion
        from ..trace.model import Trace

        with user_errors(ValueError):
            trace = Trace.load(trace_file, allow_digest_mismatch=allow_digest_mismatch)
            res = expansion(trace, warp_size, _config_for(trace, warp_size))
        d = res.to_dict()
        if as_json:
            typer.echo(json.dumps(d, indent=2))
            return
        typer.echo(f"{d['kernel']} (warp {warp_size}): {len(d['expansion_branches'])} expansion-prone branches "
                   f"({', '.join(d['expansion_branches']) or 'none'})")
        typer.echo(f"  control-tree interacting edges: {', '.join(d['interacting_edges']) or 'none (structured)'}")
        typer.echo(f"  upper limit of dynamic expansion: {d['upper_limit']} warp instructions "
                   f"({d['upper_limit_pct']:.2f}% of {d['warp_insts']})")
        typer.echo(f"  exact re-executed instructions (sps core): {d['expanded_insts']} ({d['expanded_pct']:.2f}%)")

    @app.command("struct-vs-ipdom")
    def struct_vs_ipdom_cmd(
        workload: str = typer.Argument(..., help="Built-in workload name (see `simt-fast workloads`)."),
        size: str = typer.Option("tiny", "--size", help="tiny or default."),
        seed: int = typer.Option(0, "--seed", help="Input generator seed."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ):
        """Structurize a workload's kernel, check its outputs match, and compare both under sps (Wu et al. 2012 Fig. 15)."""
        from ..dynamic.expansion import struct_vs_ipdom
        from ..ir.structurize import StructurizeError

        with user_errors(KeyError, ValueError, StructurizeError, AssertionError):
            r = struct_vs_ipdom(workload, size, seed)
        if as_json:
            typer.echo(json.dumps(r, indent=2))
            return
        typer.echo(f"{workload} ({size}): outputs identical after structurization; "
                   f"code {r['structurize']['old_code_size']} -> {r['structurize']['new_code_size']} instructions")
        cols = ("static_insts", "thread_insts", "warp_insts", "simd_util", "cycles", "expanded_insts")
        typer.echo(f"  {'':8}" + "".join(f"{c:>15}" for c in cols))
        for name in ("IPDOM", "STRUCT"):
            row = r[name]
            typer.echo(f"  {name:8}" + "".join(f"{row[c]:>15.3f}" if isinstance(row[c], float) else f"{row[c]:>15}"
                                               for c in cols))


def scalarize_report(trace_file: Path, ptx: Optional[Path], kernel: Optional[str], warp_sizes: str,
                     as_json: bool, output: Optional[Path] = None, allow_digest_mismatch: bool = False) -> None:
    """`scalarize` (and `analyze TRACE.h5`): compute, then print tables or JSON (to ``output`` if given)."""
    from ..dynamic.scalarize import scalarize_trace
    from ..trace.model import Trace

    ws = _warp_sizes(warp_sizes)
    with user_errors():
        trace = Trace.load(trace_file, allow_digest_mismatch=allow_digest_mismatch)
        report = scalarize_trace(trace, _ptx_for(trace, ptx), kernel, ws)
    if as_json or output is not None:
        text = json.dumps(report, indent=2) + "\n"
        if output is not None:
            write_text(output, text)
        else:
            typer.echo(text, nl=False)
        return
    _print_scalarize(report)


def _config_for(trace, warp_size):
    from ..sim.config import SimConfig

    # enough warp slots for one CTA of narrow warps (the statistic does not depend on occupancy)
    wpc = -(-trace.threads_per_cta // warp_size)
    return SimConfig(warp_size=warp_size, max_warps_per_sm=max(48, wpc))


def _print_scalarize(report: dict) -> None:
    s = report["static"]
    typer.echo(f"{report['kernel']}: {s['scalar_instructions']}/{s['instructions']} static instructions scalar "
               f"({s['scalar_pct']:.1f}%), {s['scalar_registers']} scalar + {s['private_registers']} private registers")
    for w, r in s["registers_per_warp"].items():
        typer.echo(f"  warp {w:>2}: {r['scalarized']} registers per warp vs {r['baseline']} ({r['saving_pct']:.1f}% fewer)")
    d = report["dynamic"]
    base = d["baseline"]
    keys = ("issued", "thread_ops", "reg_reads", "reg_writes", "mem_addresses", "mem_data")
    typer.echo(f"{'':10}" + "".join(f"{k:>15}" for k in keys))
    typer.echo(f"{'baseline':10}" + "".join(f"{base[k]:>15}" for k in keys))
    for w, c in d["warp_sizes"].items():
        typer.echo(f"{'warp ' + str(w):10}" + "".join(f"{c[k]:>9} {-c['saving_pct'][k]:>+4.0f}%" for k in keys))
    typer.echo("issued by source (scalar / static converged / dynamic converged / diverged):")
    for w, c in d["warp_sizes"].items():
        typer.echo(f"  warp {w:>2}: {c['issued_scalar']} / {c['issued_static_converged']} / "
                   f"{c['issued_dynamic_converged']} / {c['issued_diverged']} (diverged thread instructions "
                   f"{c['diverged_threads']})")
