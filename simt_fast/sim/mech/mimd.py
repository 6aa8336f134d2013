"""`mimd`: every thread is its own issue unit — the ideal bound, with fixed latencies.

A thread issues whenever its operands are ready, at most once per cycle, with no SIMD-unit or
scheduler limit (one thread per lane slot, all lanes independent). Barriers, latencies and CTA
residency are the same as for every other mechanism, so with fixed latencies (perfect memory, or a
trace without addresses) its cycle count is a lower bound on every mechanism's (docs/core.md gives
the argument). With the memory model it is no bound: its one-thread accesses do not coalesce.
"""

from .mp import schedulable  # noqa: F401  (every unit issues on its own)

