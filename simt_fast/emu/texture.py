"""Texture objects for the emulator: what ``cudaCreateTextureObject`` describes, on a numpy array.

    tex = Texture(img, address="clamp")                 # 2-D float texture, unnormalised coordinates
    launch(ptx, "k", grid, block, [tex, out, ...])      # where the kernel takes a cudaTextureObject_t
    launch(ptx, "k", grid, block, args, symbols={"texref_name": tex})   # .texref of older PTX

Sampling is point sampling (``cudaFilterModePoint``) with the element type read as is
(``cudaReadModeElementType``); the fetch itself is :mod:`simt_fast.emu.exec_texture`.
"""

from __future__ import annotations

import numpy as np

from .codes import ADDR_BORDER, ADDR_CLAMP, ADDR_MIRROR, ADDR_WRAP, KIND_F, KIND_S, KIND_U
from .errors import EmuError

ADDRESS_MODES = {"wrap": ADDR_WRAP, "clamp": ADDR_CLAMP, "mirror": ADDR_MIRROR, "border": ADDR_BORDER}
ELEMENT_KINDS = {"u": KIND_U, "i": KIND_S, "f": KIND_F}
ELEMENT_TYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "float32")


class Texture:
    """A 1-D, 2-D or 3-D texture over ``data`` (C-contiguous; its last axis holds the channels when
    ``channels`` > 1, so a 2-D float4 texture is ``data.shape == (height, width, 4)``).

    ``address``: "clamp", "border", "wrap" or "mirror" (or one per dimension, x first); as in CUDA,
    wrap and mirror need ``normalized=True`` (coordinates in [0, 1) span the texture). ``filter``
    must be "point": linear filtering is not modelled. Element types: 8/16/32-bit integers, float32.
    """

    def __init__(self, data, *, channels: int = 1, address="clamp", normalized: bool = False,
                 filter: str = "point", read_mode: str = "element"):
        if not isinstance(data, np.ndarray):
            raise EmuError(f"Texture needs a numpy array, got a {type(data).__name__}")
        if data.dtype.name not in ELEMENT_TYPES:
            raise EmuError(f"Texture element type {data.dtype.name} is not supported (use one of {', '.join(ELEMENT_TYPES)})")
        if not data.flags.c_contiguous:
            raise EmuError("Texture data must be C-contiguous (use np.ascontiguousarray)")
        if channels not in (1, 2, 4):
            raise EmuError(f"Texture channels must be 1, 2 or 4 (got {channels})")
        if channels > 1 and (data.ndim < 2 or data.shape[-1] != channels):
            raise EmuError(f"a {channels}-channel Texture needs the channels as the last axis (shape {data.shape})")
        dims = data.ndim - (1 if channels > 1 else 0)
        if not 1 <= dims <= 3:
            raise EmuError(f"Texture data must have 1 to 3 dimensions besides the channels (shape {data.shape})")
        if data.size == 0:
            raise EmuError("Texture data must not be empty")
        if filter != "point":
            raise EmuError(f"Texture filter '{filter}' is not supported by the emulator (point sampling only)")
        if read_mode != "element":
            raise EmuError(f"Texture read_mode '{read_mode}' is not supported by the emulator (element type only)")
        modes = (address,) * dims if isinstance(address, str) else tuple(address)
        if len(modes) != dims or any(m not in ADDRESS_MODES for m in modes):
            raise EmuError(f"Texture address must be one of {', '.join(ADDRESS_MODES)} or one per dimension (got {address!r})")
        if not normalized and any(m in ("wrap", "mirror") for m in modes):
            raise EmuError("wrap and mirror addressing need normalized=True coordinates (as in CUDA)")
        self.data = data
        self.channels = int(channels)
        self.dims = dims
        self.size = tuple(int(n) for n in reversed(data.shape[:dims]))  # (width, height, depth)
        self.address = modes
        self.normalized = bool(normalized)

    @property
    def texel_bytes(self) -> int:
        return self.channels * self.data.itemsize

    def descriptor(self, flat_offset: int, device_address: int) -> list:
        """The texture's row of the interpreter's descriptor table (codes.TX_* order)."""
        size = list(self.size) + [1] * (3 - self.dims)
        modes = [ADDRESS_MODES[m] for m in self.address] + [ADDR_CLAMP] * (3 - self.dims)
        return [flat_offset, device_address, *size, self.channels, self.data.itemsize,
                ELEMENT_KINDS[self.data.dtype.kind], *modes, int(self.normalized)]

    def __repr__(self) -> str:
        return (f"Texture({self.dims}-D {'x'.join(map(str, self.size))} {self.data.dtype.name}"
                f"{' x' + str(self.channels) if self.channels > 1 else ''}, address={'/'.join(self.address)}"
                f"{', normalized' if self.normalized else ''})")
