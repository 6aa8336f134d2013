"""`dwf`: dynamic warp formation with lane-aware merging and majority scheduling (Fung et al., MICRO 2007).

Threads move between warps, so this mechanism runs on the formation kernel
(``simt_fast.sim.formation``), not on the per-warp split tables; the rules are in its reference model
``simt_fast.sim.reference.dwf_mech`` and in docs/formation.md.
"""

from ..formation import DWF as CODE  # noqa: F401

NAME = "dwf"
SOURCE = "Fung, Sham, Yuan, Aamodt, Dynamic Warp Formation and Scheduling for Efficient GPU Control Flow, MICRO 2007"
SUMMARY = "dynamic warp formation: per-SM warp pool keyed by PC, lane-aware merging, majority scheduling"
