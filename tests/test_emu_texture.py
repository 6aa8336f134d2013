"""Textures (issue 20): simt_fast.emu.Texture objects where a kernel takes a cudaTextureObject_t, and
.texref variables bound through symbols=. The kernels are nvcc's (data/cuda/corpus/textures.cu);
expected values are CUDA's point-sampling rules, worked out per coordinate below."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simt_fast.emu import EmuError, Texture, launch, load_kernel
from simt_fast.ir import PTXError
from simt_fast.trace.model import NO_ACCESS

PTX = Path(__file__).resolve().parents[1] / "data" / "ptx" / "corpus" / "textures.O3.ptx"
HEAD = ".version 6.0\n.target sm_50\n.address_size 64\n"


def point_index(x: float, n: int, mode: str, normalized: bool):
    """CUDA point sampling in one dimension: the texel index, or None for the border (reads 0)."""
    if normalized:
        if mode == "wrap":
            x = x - math.floor(x)
        elif mode == "mirror":
            x = abs(x) % 2.0
            x = 2.0 - x if x > 1.0 else x
        x *= n
    i = math.floor(x)
    if mode == "border":
        return i if 0 <= i < n else None
    return min(max(i, 0), n - 1)


def run(kernel, tex, coords, out_dtype, out_shape=()):
    n = len(coords)
    out = np.zeros((n,) + out_shape, out_dtype)
    r = launch(PTX, kernel, (n + 31) // 32, 32, [tex, coords, out, np.int32(n)])
    return out, r.trace


def test_fetch1d_integer_coordinates_read_zero_outside():
    data = np.arange(10, dtype=np.float32) * 1.5
    idx = np.array([-2, -1, 0, 1, 5, 9, 10, 11, 1000, -1000] * 4, np.int32)
    out, tr = run("fetch1d", Texture(data), idx, np.float32)
    want = np.where((idx >= 0) & (idx < 10), data[np.clip(idx, 0, 9)], 0)
    assert np.array_equal(out, want)
    # /mem: the fetch is one global access at the texel's device address, NO_ACCESS outside
    tex_i = np.flatnonzero(np.char.startswith(np.array(tr.text), "tex."))[0]
    assert tr.mem_bytes[tex_i] == 4 and tr.mem_kind[tex_i] == 1
    # per thread: 4 ld.param, then (threads with i < n) ld.global idx, tex, st.global
    n = len(idx)
    assert np.all(np.diff(tr.mem_ptr)[:n] == 7) and np.all(np.diff(tr.mem_ptr)[n:] == 4)
    tex_entries = tr.mem_addr[:7 * n].reshape(n, 7)[:, 5]
    inside = (idx >= 0) & (idx < 10)
    assert np.all(tex_entries[~inside] == NO_ACCESS)
    base = int(tex_entries[list(idx).index(0)])
    assert base % 256 == 0 and np.array_equal(tex_entries[inside] - np.uint64(base), 4 * idx[inside].astype(np.uint64))


@pytest.mark.parametrize("mode, normalized", [("clamp", False), ("border", False), ("clamp", True), ("border", True),
                                              ("wrap", True), ("mirror", True)])
def test_sample1d_address_modes(mode, normalized):
    data = np.array([10, 20, 30, 40], np.float32)
    if normalized:
        xs = [-1.3, -0.6, -0.1, 0.0, 0.1, 0.24, 0.25, 0.5, 0.99, 1.0, 1.1, 1.6, 2.3, 3.9]
    else:
        xs = [-5.0, -0.5, 0.0, 0.49, 0.5, 1.99, 2.0, 3.5, 3.99, 4.0, 7.0]
    x = np.array(xs, np.float32)
    out, _ = run("sample1d", Texture(data, address=mode, normalized=normalized), x, np.float32)
    want = [0.0 if (i := point_index(float(v), 4, mode, normalized)) is None else float(data[i]) for v in x]
    assert out.tolist() == want, list(zip(xs, out.tolist(), want))


def test_hand_worked_samples():
    data = np.array([10, 20, 30, 40], np.float32)
    x = np.array([-0.5, 3.99, 4.0], np.float32)
    assert run("sample1d", Texture(data), x, np.float32)[0].tolist() == [10, 40, 40]  # clamp
    assert run("sample1d", Texture(data, address="border"), x, np.float32)[0].tolist() == [10 * 0, 40, 0]
    x = np.array([1.1, -0.1, 0.3], np.float32)  # wrap: 0.1*4 -> 0; 0.9*4 -> 3; 0.3*4 -> 1
    assert run("sample1d", Texture(data, address="wrap", normalized=True), x, np.float32)[0].tolist() == [10, 40, 20]


def test_signed_16_bit_texels_are_sign_extended():
    data = np.array([-3, 7, -32768, 32767], np.int16)
    out, _ = run("sample1d_short", Texture(data), np.array([0.5, 1.5, 2.5, 3.5, 9.0], np.float32), np.int32)
    assert out.tolist() == [-3, 7, -32768, 32767, 32767]


def test_2d_integer_and_uchar_textures():
    h, w = 3, 5
    img = (np.arange(h * w, dtype=np.int32) * 7 - 20).reshape(h, w)
    rng = np.random.default_rng(2)
    xy = np.stack([rng.uniform(-2, w + 2, 64), rng.uniform(-2, h + 2, 64)], 1).astype(np.float32)
    out, _ = run("sample2d_int", Texture(img), xy, np.int32)
    want = [img[point_index(float(y), h, "clamp", False), point_index(float(x), w, "clamp", False)] for x, y in xy]
    assert out.tolist() == want
    u8 = (np.arange(h * w) * 17 % 256).astype(np.uint8).reshape(h, w)
    out, _ = run("sample2d_uchar", Texture(u8, address="border"), xy, np.uint32)
    want = []
    for x, y in xy:
        i, j = point_index(float(x), w, "border", False), point_index(float(y), h, "border", False)
        want.append(0 if i is None or j is None else int(u8[j, i]))
    assert out.tolist() == want


def test_four_channel_float_texture():
    h, w = 4, 6
    img = np.random.default_rng(3).standard_normal((h, w, 4)).astype(np.float32)
    xy = np.array([[0.5, 0.5], [5.9, 3.9], [2.2, 1.7], [-1, 9]], np.float32)
    out, tr = run("sample2d_float4", Texture(img, channels=4), xy, np.float32, (4,))
    want = [img[point_index(float(y), h, "clamp", False), point_index(float(x), w, "clamp", False)] for x, y in xy]
    assert np.array_equal(out, np.array(want))
    tex_i = np.flatnonzero(np.char.startswith(np.array(tr.text), "tex."))[0]
    assert tr.mem_bytes[tex_i] == 16  # one float4 texel


def test_3d_texture():
    d, h, w = 3, 4, 5
    vol = np.arange(d * h * w, dtype=np.float32).reshape(d, h, w)
    xyz = np.array([[0.5, 0.5, 0.5, 0], [4.5, 3.5, 2.5, 0], [2.1, 1.9, 1.2, 0], [-3, 10, 1.5, 0]], np.float32)
    out, _ = run("sample3d", Texture(vol), xyz, np.float32)
    want = [vol[point_index(float(z), d, "clamp", False), point_index(float(y), h, "clamp", False),
                point_index(float(x), w, "clamp", False)] for x, y, z, _ in xyz]
    assert out.tolist() == want


TEXREF = HEAD + """
.global .texref tr;
.visible .entry k(.param .u64 out)
{
 .reg .f32 %f<5>;
 .reg .b32 %r<3>;
 .reg .b64 %rd<4>;
 mov.u32 %r1, %tid.x;
 tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tr, {%r1}];
 ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.f32 [%rd3], %f1;
 ret;
}
"""


def test_texref_bound_through_symbols():
    data = np.linspace(0, 1, 8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    launch(TEXREF, "k", 1, 8, [out], symbols={"tr": Texture(data)})
    assert np.array_equal(out, data)
    with pytest.raises(EmuError, match=r"used texture handle 0x0, which is none of the launch's 0 texture object\(s\) \(an unbound \.texref"):
        launch(TEXREF, "k", 1, 8, [out])
    with pytest.raises(EmuError, match=r"'tr' is a \.texref; bind it to a simt_fast\.emu\.Texture"):
        launch(TEXREF, "k", 1, 8, [out], symbols={"tr": data})


def test_refused_in_one_sentence():
    data = np.zeros(4, np.float32)
    with pytest.raises(EmuError, match="linear filtering|filter 'linear' is not supported"):
        Texture(data, filter="linear")
    with pytest.raises(EmuError, match=r"wrap and mirror addressing need normalized=True"):
        Texture(data, address="wrap")
    with pytest.raises(EmuError, match=r"element type float64 is not supported"):
        Texture(data.astype(np.float64))
    with pytest.raises(EmuError, match=r"argument 3 \(fetch1d_param_3, \.u32\) is not a 64-bit parameter, so it cannot take a texture"):
        launch(PTX, "fetch1d", 1, 1, [Texture(data), np.zeros(1, np.int32), np.zeros(1, np.float32), Texture(data)])
    for body, pattern in [
        ("tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];", "tld4 \\(texture gather\\) is not supported"),
        ("tex.a2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1, %f1, %f2, %f2}];", "tex.a2d is not supported"),
    ]:
        src = HEAD + (".visible .entry k(.param .u64 t)\n{\n .reg .f32 %f<5>;\n .reg .b32 %r<3>;\n .reg .b64 %rd<3>;\n"
                      f" ld.param.u64 %rd1, [t];\n {body}\n ret;\n}}\n")
        with pytest.raises(PTXError, match=pattern):
            load_kernel(src, "k")
