"""The load/store unit of an SM, and its constant cache port (docs/memory.md).

The LSU takes one 128-byte line per cycle, up to ``lsu_sectors_per_cycle`` of its sectors (a line with
more touched sectors takes more cycles), or one shared-memory pass per cycle. Requests are served in
issue order: an instruction starts when both it has issued and the LSU has finished the previous
request, so a divergent access (32 lines for a stride-32 warp load) keeps later memory instructions
of the SM waiting. Sector ``k`` of a line that starts at cycle ``c`` is taken at ``c + k //
lsu_sectors_per_cycle``. The constant cache serves one distinct address per cycle on its own port.
"""

from __future__ import annotations

from ._jit import helper


@helper
def unit_start(sm_state, sm, field, now):
    """The cycle a request issued at ``now`` starts on the unit whose next free cycle is ``field``."""
    free = sm_state[sm, field]
    return now if now > free else free


@helper
def line_cycles(n_sectors, sectors_per_cycle):
    """Cycles the LSU spends on one line with ``n_sectors`` touched sectors."""
    return (n_sectors + sectors_per_cycle - 1) // sectors_per_cycle
