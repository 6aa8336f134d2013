"""`mimd`: the ideal bound. Every thread is its own issue unit.

A thread issues whenever its operands are ready, at most once per cycle, with no SIMD-unit or
scheduler limit (one thread per lane slot, all lanes independent). Barriers, latencies and CTA
residency are the same as for every other mechanism, so its cycle count is a lower bound on every
mechanism's (docs/core.md gives the argument).
"""

from .mp import schedulable  # noqa: F401  (every unit issues on its own)

