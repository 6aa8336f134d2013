"""Shared fixtures of the trace tests: a hand-built trace small enough to check by eye."""

import numpy as np

from simt_fast.trace import Trace


def tiny_trace(**kw) -> Trace:
    """A hand-built if/else kernel: 0 -> {1, 2} -> 3 -> exit 4; four threads, one per branch side."""
    t = Trace(
        kernel="ifelse",
        grid=(1, 1, 1),
        block=(4, 1, 1),
        source_sha256="ab" * 32,
        block_start=np.array([0, 2, 3, 4, 5, 5], np.int32),
        succ_ptr=np.array([0, 2, 3, 4, 5, 5], np.int32),
        succ_idx=np.array([1, 2, 3, 3, 4], np.int32),
        ipdom=np.array([3, 3, 3, 4, -1], np.int32),
        label=["", "$L1", "$L2", "$L3", "<exit>"],
        has_barrier=np.zeros(5, np.bool_),
        op_class=np.array([0, 6, 2, 0, 8], np.uint8),
        dst_reg=np.array([0, -1, 1, 2, -1], np.int16),
        src_reg=np.array([[-1, -1, -1], [0, -1, -1], [0, -1, -1], [1, -1, -1], [-1, -1, -1]], np.int16),
        text=["setp.lt.s32 %p0, %r1, 2;", "@%p0 bra $L2;", "ld.global.u32 %r2, [%rd1];", "add.s32 %r3, %r2, 1;", "ret;"],
        path_ptr=np.array([0, 4, 8, 12, 16], np.int64),
        path=np.array([0, 1, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 2, 3, 4], np.uint16),
    )
    for k, v in kw.items():
        setattr(t, k, v)
    return t
