"""simt-fast: a JIT-accelerated, trace-driven simulator of GPU SIMT control-flow divergence.

Pipeline (see docs/DESIGN.md): PTX -> kernel IR + CFG analyses -> functional emulator ->
trace (HDF5) -> per-cycle timing core under a divergence mechanism -> stats -> sweeps/results.
"""

__version__ = "0.1.0"
