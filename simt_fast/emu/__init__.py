"""PTX functional emulator (numba) -> per-thread block-path traces (docs/emu.md).

    from simt_fast.emu import launch
    out = np.zeros(n, np.float32)
    run = launch("saxpy.ptx", "saxpy", grid=4, block=256, args=[np.float32(2), x, out, np.int32(n)])
    run.trace          # simt_fast.trace.Trace: CFG of the inlined kernel + every thread's block path
    run.thread_insts   # dynamic thread instructions

Pipeline: :func:`simt_fast.ir.inline.inline_calls` -> :func:`simt_fast.ir.cfg.build_cfg` ->
:func:`simt_fast.emu.decode.decode` (flat tables, rejects anything unsupported) ->
:func:`simt_fast.emu.machine.run` (numba interpreter, CTA batches) -> TraceWriter, all driven by
:func:`simt_fast.emu.host.launch` (the host side: memory, arguments, batches, faults).
"""

from .errors import EmuError
from .host import Kernel, Launch, launch, load_kernel
from .texture import Texture

__all__ = ["launch", "Launch", "EmuError", "load_kernel", "Kernel", "Texture"]
