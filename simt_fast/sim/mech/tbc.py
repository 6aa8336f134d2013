"""`tbc`: thread block compaction with a CTA-wide reconvergence stack (Fung & Aamodt, HPCA 2011).

Runs on the formation kernel (``simt_fast.sim.formation``); rules in
``simt_fast.sim.reference.tbc`` and docs/formation.md.
"""

from ..formation import TBC as CODE  # noqa: F401

NAME = "tbc"
SOURCE = "Fung and Aamodt, Thread Block Compaction for Efficient SIMT Control Flow, HPCA 2011"
SUMMARY = "thread block compaction: CTA-wide stack, lane-aware compaction at divergent branches"
