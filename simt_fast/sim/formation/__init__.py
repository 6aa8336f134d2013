"""The timing kernel for the mechanisms whose threads move between warps: dwf, en-dwf, tbc
(docs/formation.md).

- `layout.py`: the state (warp records, slot arrays, pools, stacks, scoreboard), its field names
  and state codes, allocated in Python;
- `pool.py`: the warp pool and the row cache (how a warp's threads and registers are found fast);
- `dwf.py`: DWF and en-DWF — merging into forming warps, the per-CTA barrier split, majority pick;
- `tbc.py`: thread block compaction — the CTA-wide stack, lane-aware compaction;
- `loop.py`: the cycle loop, the issue and CTA dispatch.

``simt_fast.sim.simulate`` allocates the state (`allocate`) and calls ``run``.
"""

from .layout import allocate
from .loop import run

__all__ = ["allocate", "run"]
