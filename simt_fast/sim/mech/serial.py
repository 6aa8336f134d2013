"""`serial`: no reconvergence. Diverged groups become independent splits that each run to exit.

The baseline that shows what reconvergence buys: a split never merges with another, so SIMD
utilisation only falls after the first divergence. All splits are schedulable.
"""

from .mp import schedulable  # noqa: F401  (every split issues on its own)

