"""What /mem costs in a trace file: bytes per thread instruction, on the shipped workloads.

    /work/venv/bin/python bench/bench_trace_mem.py [--sizes tiny default] [names...]

Each workload is emulated twice into a trace file (the streaming writer, gzip level 4 + shuffle),
with /mem (the default) and with ``record_mem=False``; the difference of the two file sizes is
what the addresses cost. Printed per workload: thread instructions, /mem entries (one per memory
instruction executed per thread, NO_ACCESS included), both file sizes, and the cost of /mem in
bytes per thread instruction and per entry (uncompressed an entry is 8 bytes).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simt_fast import workloads  # noqa: E402
from simt_fast.emu import launch, load_kernel  # noqa: E402
from simt_fast.trace.io import read_header  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["tiny", "default"])
    ap.add_argument("names", nargs="*", help="workloads (default: all)")
    a = ap.parse_args()
    names = a.names or workloads.names()
    print(f"{'workload':<14} {'size':<8} {'thread insts':>13} {'/mem entries':>13} {'with /mem':>11} {'without':>11} "
          f"{'B/thread inst':>13} {'B/entry':>8}")
    with tempfile.TemporaryDirectory() as d:
        for size in a.sizes:
            tot = [0, 0, 0, 0]
            for name in names:
                wl = workloads.get(name)
                kern = load_kernel(wl.ptx_path, wl.kernel)
                sizes = []
                for mem in (True, False):
                    spec = wl.launch_spec(size)
                    out = Path(d) / f"{name}-{size}-{mem}.h5"
                    run = launch(kern, None, spec.grid, spec.block, spec.args, spec.shared_bytes, trace_path=out,
                                 record_mem=mem)
                    sizes.append(os.path.getsize(out))
                    if mem:
                        tr = run.trace
                        entries = len(tr.mem_addr)
                        assert read_header(out)["mem_format"] == "per-instruction/1"
                    os.unlink(out)
                extra = sizes[0] - sizes[1]
                for k, v in enumerate((run.thread_insts, entries, sizes[0], sizes[1])):
                    tot[k] += v
                print(f"{name:<14} {size:<8} {run.thread_insts:>13} {entries:>13} {sizes[0]:>11} {sizes[1]:>11} "
                      f"{extra / run.thread_insts:>13.3f} {extra / max(entries, 1):>8.2f}")
            extra = tot[2] - tot[3]
            print(f"{'all':<14} {size:<8} {tot[0]:>13} {tot[1]:>13} {tot[2]:>11} {tot[3]:>11} "
                  f"{extra / tot[0]:>13.3f} {extra / max(tot[1], 1):>8.2f}")


if __name__ == "__main__":
    main()
