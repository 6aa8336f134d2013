"""`en-dwf`: DWF whose merge moves a conflicting thread to a free quarter of its lane (seed 003 §4.4, App. B).

Runs on the formation kernel (``simt_fast.sim.formation``); rules in
``simt_fast.sim.reference.dwf_mech`` and docs/formation.md.
"""

from ..formation import EN_DWF as CODE  # noqa: F401

NAME = "en-dwf"
SOURCE = "Jin, Hybrid Warp Size Mechanism (MSc thesis, 2012), §4.4 and Appendix B"
SUMMARY = "enhanced DWF: a lane conflict moves the thread to another quarter of its lane"
