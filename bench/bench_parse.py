#!/usr/bin/env python3
"""Parser + CFG analysis throughput (instructions per second) on the largest shipped PTX.

    python bench/bench_parse.py [FILE.ptx] [--repeat N]

Prints, for the file: parse rate, CFG build + analyses (idom, ipdom, control dependence, loops,
rpo) rate, flatten rate, and the end-to-end rate. Each figure is the best of N runs (CPU time),
so noise from other processes on a shared machine inflates none of them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simt_fast.ir import build_cfg, flatten, parse_ptx  # noqa: E402


def best_of(repeat: int, fn):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ptx", nargs="?", help="PTX file (default: the largest under data/ptx/)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    path = Path(args.ptx) if args.ptx else max((ROOT / "data" / "ptx").rglob("*.ptx"), key=lambda p: p.stat().st_size)
    text = path.read_text()

    t_parse, module = best_of(args.repeat, lambda: parse_ptx(text, str(path)))
    funcs = list(module.functions.values())
    n = sum(len(f.instructions) for f in funcs)

    def analyse():
        cfgs = []
        for f in funcs:
            cfg = build_cfg(f)
            cfg.idom, cfg.ipdom, cfg.control_deps, cfg.loops, cfg.rpo  # noqa: B018 (force the lazy analyses)
            cfgs.append(cfg)
        return cfgs

    t_cfg, cfgs = best_of(args.repeat, analyse)
    t_flat, _ = best_of(args.repeat, lambda: [flatten(f, c) for f, c in zip(funcs, cfgs)])
    n_blocks = sum(c.n_blocks for c in cfgs)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {len(funcs)} functions, "
          f"{n} instructions, {n_blocks} blocks, {len(text) / 1024:.0f} KiB")
    print(f"  parse             {n / t_parse:12,.0f} instr/s   ({t_parse * 1e3:7.2f} ms)")
    print(f"  cfg + analyses    {n / t_cfg:12,.0f} instr/s   ({t_cfg * 1e3:7.2f} ms)")
    print(f"  flatten           {n / t_flat:12,.0f} instr/s   ({t_flat * 1e3:7.2f} ms)")
    total = t_parse + t_cfg + t_flat
    print(f"  end to end        {n / total:12,.0f} instr/s   ({total * 1e3:7.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
