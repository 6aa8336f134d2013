"""Dynamic analyses: the compiler statistics that need executions, not just the CFG.

They sit downstream of the emulator and the trace (ir -> emu -> trace -> sim -> dynamic): the
analyses in :mod:`simt_fast.ir` read PTX only, while these replay traces (and, for Fig. 15 of Wu et
al., run the emulator and the timing core on structurized kernels).

* :mod:`.expansion` -- dynamic code expansion under IPDOM reconvergence, and STRUCT vs IPDOM
  (Wu, Diamos, Li, Yalamanchili, "Characterization and transformation of unstructured control
  flow in bulk synchronous GPU applications", IJHPCA 2012).
* :mod:`.scalarize` -- dynamic scalarization statistics (Lee, Krashinsky, Grover, Keckler,
  Asanović, "Convergence and scalarization for data-parallel architectures", CGO 2013).
"""
