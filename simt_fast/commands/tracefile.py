"""`simt-fast validate`, `simt-fast trace-info`, `simt-fast synth`: trace files from the shell."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ._errors import user_errors
from ._files import ALLOW_DIGEST_MISMATCH, check_output


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate_cmd(
        files: List[Path] = typer.Argument(..., help="Trace files (.h5) to check."),
    ):
        """Check every invariant of trace files; print one line per file, exit 2 on the first bad one."""
        from ..trace.validate import notes, validate_file

        for path in files:
            with user_errors():
                trace = validate_file(path)
            typer.echo(
                f"{path}: ok (kernel {trace.kernel}, {trace.n_threads} threads, "
                f"{trace.n_blocks} blocks, {trace.n_instrs} instructions)"
            )
            for note in notes(trace):
                typer.echo(f"{path}: note: {note}")

    @app.command("trace-info")
    def trace_info_cmd(
        file: Path = typer.Argument(..., help="Trace file (.h5)."),
        blocks: bool = typer.Option(False, "--blocks", help="Also list every block: label, size, successors, ipdom, visits."),
        warp_size: int = typer.Option(32, "--warp-size", min=1, help="Warp size for the divergent-warp count."),
        allow_digest_mismatch: bool = ALLOW_DIGEST_MISMATCH,
    ):
        """Print a trace's header, sizes and per-thread path-length statistics."""
        import numpy as np

        from ..ir.model import OpClass
        from ..trace import Trace
        from ..trace.io import read_header

        with user_errors():
            header = read_header(file)
            trace = Trace.load(file, allow_digest_mismatch=allow_digest_mismatch)
        lengths = np.diff(trace.path_ptr)
        insts = _thread_insts(trace)
        out = [f"{file}"]
        for key in ("schema", "kernel", "grid", "block", "source_sha256", "simt_fast_version", "created"):
            if key in header:
                value = header[key]
                if key in ("grid", "block"):
                    value = " x ".join(str(v) for v in value)
                out.append(f"  {key:<18} {value if value != '' else '-'}")
        extra = {k: v for k, v in trace.attrs.items()}
        for key, value in extra.items():
            out.append(f"  {key:<18} {value}")
        n_edges = len(trace.succ_idx)
        out.append(f"  {'blocks':<18} {trace.n_blocks} ({n_edges} edges, {int(trace.has_barrier.sum())} with a barrier)")
        out.append(f"  {'instructions':<18} {trace.n_instrs}")
        mix = np.bincount(trace.op_class, minlength=len(OpClass))
        out.append("  " + f"{'op classes':<18} " + ", ".join(f"{c.name} {mix[c]}" for c in OpClass if mix[c]))
        out.append(f"  {'threads':<18} {trace.n_threads} ({trace.n_ctas} CTAs x {trace.threads_per_cta})")
        out.append(f"  {'path steps':<18} {len(trace.path)} ({header['path_dtype']})")
        if trace.n_threads:
            out.append(
                f"  {'path length':<18} min {lengths.min()}, mean {lengths.mean():.1f}, "
                f"median {np.median(lengths):g}, max {lengths.max()} blocks"
            )
            out.append(
                f"  {'thread insts':<18} total {int(insts.sum())}, min {insts.min()}, mean {insts.mean():.1f}, max {insts.max()}"
            )
            distinct, divergent, n_warps = _path_sharing(trace, warp_size)
            out.append(f"  {'distinct paths':<18} {distinct}")
            out.append(f"  {'divergent warps':<18} {divergent} of {n_warps} ({warp_size}-thread warps whose threads' paths differ)")
        mem = "no" if trace.mem_ptr is None else f"{trace.n_mem_entries} entries ({trace.mem_format or 'older untagged layout'})"
        out.append(f"  {'memory addresses':<18} {mem}")
        out.append(f"  {'digest':<18} {trace.digest()}")
        if blocks:
            visits = np.bincount(trace.path.astype(np.int64), minlength=trace.n_blocks)
            out.append(f"  {'block':>7} {'label':<16} {'instrs':>6} {'ipdom':>6} {'visits':>10}  successors")
            sizes = trace.block_sizes()
            for b in range(trace.n_blocks):
                succ = trace.succ_idx[trace.succ_ptr[b]:trace.succ_ptr[b + 1]]
                bar = "  bar" if trace.has_barrier[b] else ""
                out.append(
                    f"  {b:>7} {trace.label[b][:16]:<16} {sizes[b]:>6} {trace.ipdom[b]:>6} {visits[b]:>10}  "
                    f"{' '.join(str(s) for s in succ)}{bar}"
                )
        typer.echo("\n".join(out))

    @app.command("synth")
    def synth_cmd(
        out: Path = typer.Argument(..., help="Output trace file (.h5)."),
        n_blocks: int = typer.Option(16, "--blocks", help="CFG blocks, including the virtual exit."),
        n_threads: int = typer.Option(256, "--threads", help="Threads (a multiple of the CTA size)."),
        cta: Optional[int] = typer.Option(None, "--cta", help="Threads per CTA (default min(threads, 256))."),
        seed: int = typer.Option(0, "--seed"),
        warp_size: int = typer.Option(32, "--warp-size", min=1, help="Threads that share branch outcomes."),
        divergence: float = typer.Option(0.2, "--divergence", help="Mean chance a thread leaves its warp's outcome."),
        loop_prob: float = typer.Option(0.15, "--loop-prob"),
        exit_prob: float = typer.Option(0.06, "--exit-prob"),
        max_path_len: int = typer.Option(256, "--max-path-len"),
        mem: bool = typer.Option(False, "--mem", help="Also write /mem (the address of every memory instruction executed) and mem_bytes/mem_kind."),
        structured: bool = typer.Option(False, "--structured", help="Structured regions only (no unstructured edges)."),
        force: bool = typer.Option(False, "--force", help="Replace an existing output file that is not a trace."),
    ):
        """Write a random valid trace (random CFG with loops/early exits, warp-correlated paths)."""
        from ..trace import synthetic

        check_output(out, "trace file", writes="trace", force=force)
        with user_errors(ValueError):
            trace = synthetic(
                n_blocks, n_threads, seed, warp_size=warp_size, block=None if cta is None else (cta, 1, 1),
                divergence=divergence, loop_prob=loop_prob, exit_prob=exit_prob, max_path_len=max_path_len,
                with_mem=mem, structured=structured,
            )
            trace.save(out)
        typer.echo(f"{out}: wrote {trace.n_threads} threads, {trace.n_blocks} blocks, {len(trace.path)} path steps")


def _thread_insts(trace):
    import numpy as np

    per_step = trace.block_sizes()[trace.path.astype(np.int64)]
    cum = np.concatenate(([0], np.cumsum(per_step)))
    return cum[trace.path_ptr[1:]] - cum[trace.path_ptr[:-1]]


def _path_sharing(trace, warp_size: int) -> tuple:
    """(distinct thread paths, warps whose threads do not all share one path, number of warps)."""
    paths = [trace.thread_path(t).tobytes() for t in range(trace.n_threads)]
    per_cta = trace.threads_per_cta
    divergent = n_warps = 0
    for cta_start in range(0, trace.n_threads, per_cta):
        for w in range(cta_start, cta_start + per_cta, warp_size):
            n_warps += 1
            warp = paths[w : min(w + warp_size, cta_start + per_cta)]
            divergent += any(p != warp[0] for p in warp)
    return len(set(paths)), divergent, n_warps
