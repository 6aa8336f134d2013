"""Integer instruction semantics vs Python integer arithmetic (hypothesis, edge-biased operands).

Each test runs the instruction under the emulator on a whole array of operands (one thread per
element, tests/emu_harness.py) and compares every result with an independent Python model.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emu_harness import run_one
from hypothesis_budget import examples

BITS = {"s16": 16, "u16": 16, "b16": 16, "s32": 32, "u32": 32, "b32": 32, "s64": 64, "u64": 64, "b64": 64}
EDGES = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
         0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFE, 31, 32, 33, 63, 64, 65]
u64s = st.one_of(st.sampled_from(EDGES), st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(-300, 300).map(lambda v: v & (2**64 - 1)))
vectors = st.lists(st.tuples(u64s, u64s, u64s), min_size=1, max_size=128)
SETTINGS = examples(12)


def mask(bits):
    return (1 << bits) - 1


def signed(v, bits):
    v &= mask(bits)
    return v - (1 << bits) if v >> (bits - 1) else v


def val(v, ty):
    bits = BITS[ty]
    return signed(v, bits) if ty[0] == "s" else v & mask(bits)


def tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def check(instr, types, ref, data, nsrc=2):
    a, b, c = zip(*data)
    out = run_one(instr, types, a=a, b=b, c=c if nsrc > 2 else None)
    bits = BITS.get(types["d"], 1) if types["d"] != "pred" else 1
    for k, (x, y, z) in enumerate(data):
        want = ref(x, y, z) & mask(bits)
        got = int(out["d"][k])
        assert got == want, f"{instr} a={x:#x} b={y:#x} c={z:#x}: got {got:#x}, want {want:#x}"


BINARY = {
    "add": lambda x, y, t: val(x, t) + val(y, t),
    "sub": lambda x, y, t: val(x, t) - val(y, t),
    "mul.lo": lambda x, y, t: val(x, t) * val(y, t),
    "mul.hi": lambda x, y, t: (val(x, t) * val(y, t)) >> BITS[t],
    "min": lambda x, y, t: min(val(x, t), val(y, t)),
    "max": lambda x, y, t: max(val(x, t), val(y, t)),
    # PTX leaves x/0 unspecified; the emulator returns all ones (docs/emu.md)
    "div": lambda x, y, t: -1 if val(y, t) == 0 else tdiv(val(x, t), val(y, t)),
    "rem": lambda x, y, t: val(x, t) if val(y, t) == 0 else val(x, t) - tdiv(val(x, t), val(y, t)) * val(y, t),
}


@pytest.mark.parametrize("ty", ["s32", "u32", "s64", "u64", "s16", "u16"])
@pytest.mark.parametrize("op", sorted(BINARY))
@SETTINGS
@given(data=vectors)
def test_binary_integer_ops(op, ty, data):
    f = BINARY[op]
    check(f"{op}.{ty} %d, %a, %b;", {"d": ty, "a": ty, "b": ty}, lambda x, y, z: f(x, y, ty), data)


@pytest.mark.parametrize("ty", ["s32", "u32", "s16"])
@SETTINGS
@given(data=vectors)
def test_mul_wide(ty, data):
    wide = ty[0] + str(2 * BITS[ty])
    check(f"mul.wide.{ty} %d, %a, %b;", {"d": wide, "a": ty, "b": ty}, lambda x, y, z: val(x, ty) * val(y, ty), data)


@pytest.mark.parametrize("form", ["lo", "hi", "wide"])
@pytest.mark.parametrize("ty", ["s32", "u32", "u64", "s64"])
@SETTINGS
@given(data=vectors)
def test_mad(form, ty, data):
    if form == "wide" and ty.endswith("64"):
        pytest.skip("no 128-bit mad.wide")
    bits = BITS[ty]
    dty = ty[0] + str(2 * bits) if form == "wide" else ty

    def ref(x, y, z):
        p = val(x, ty) * val(y, ty)
        if form == "hi":
            p >>= bits
        return p + val(z, dty)

    check(f"mad.{form}.{ty} %d, %a, %b, %c;", {"d": dty, "a": ty, "b": ty, "c": dty}, ref, data, nsrc=3)


@SETTINGS
@given(data=vectors)
def test_add_sat_s32_clamps(data):
    check("add.sat.s32 %d, %a, %b;", {"d": "s32", "a": "s32", "b": "s32"},
          lambda x, y, z: max(-(2**31), min(2**31 - 1, val(x, "s32") + val(y, "s32"))), data)


@SETTINGS
@given(data=vectors)
def test_carry_chain_add_cc_addc_is_64_bit_addition(data):
    # a 64-bit add done as two 32-bit halves through the carry flag
    instr = ("mov.b64 {%al, %ah}, %a;\n mov.b64 {%bl, %bh}, %b;\n add.cc.u32 %dl, %al, %bl;\n"
             " addc.u32 %dh, %ah, %bh;\n mov.b64 %d, {%dl, %dh};")
    types = {"d": "u64", "a": "u64", "b": "u64", "al": "u32", "ah": "u32", "bl": "u32", "bh": "u32", "dl": "u32", "dh": "u32"}
    check(instr, types, lambda x, y, z: x + y, data)
    instr = instr.replace("add.cc", "sub.cc").replace("addc", "subc")
    check(instr, types, lambda x, y, z: x - y, data)


@pytest.mark.parametrize("op,ref", [("and", lambda x, y: x & y), ("or", lambda x, y: x | y), ("xor", lambda x, y: x ^ y)])
@pytest.mark.parametrize("ty", ["b32", "b64", "b16"])
@SETTINGS
@given(data=vectors)
def test_logic(op, ref, ty, data):
    check(f"{op}.{ty} %d, %a, %b;", {"d": ty, "a": ty, "b": ty}, lambda x, y, z: ref(x, y), data)


@pytest.mark.parametrize("ty", ["b32", "b64"])
@SETTINGS
@given(data=vectors)
def test_not_cnot_popc_clz_brev(ty, data):
    bits = BITS[ty]
    check(f"not.{ty} %d, %a;", {"d": ty, "a": ty}, lambda x, y, z: ~x, data, nsrc=1)
    check(f"cnot.{ty} %d, %a;", {"d": ty, "a": ty}, lambda x, y, z: int((x & mask(bits)) == 0), data, nsrc=1)
    check(f"popc.{ty} %d, %a;", {"d": "u32", "a": ty}, lambda x, y, z: bin(x & mask(bits)).count("1"), data, nsrc=1)
    check(f"clz.{ty} %d, %a;", {"d": "u32", "a": ty}, lambda x, y, z: bits - (x & mask(bits)).bit_length(), data, nsrc=1)
    check(f"brev.{ty} %d, %a;", {"d": ty, "a": ty},
          lambda x, y, z: int(format(x & mask(bits), f"0{bits}b")[::-1], 2), data, nsrc=1)


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
@SETTINGS
@given(data=vectors)
def test_bfind(ty, data):
    bits = BITS[ty]

    def ref(x, y, z):
        v = val(x, ty)
        if v < 0:
            v = ~v
        return v.bit_length() - 1 if v else 0xFFFFFFFF

    check(f"bfind.{ty} %d, %a;", {"d": "u32", "a": ty}, ref, data, nsrc=1)


@pytest.mark.parametrize("ty", ["b32", "u32", "s32", "b64", "u64", "s64", "b16", "s16"])
@SETTINGS
@given(data=vectors)
def test_shifts_including_amounts_at_least_the_width(ty, data):
    bits = BITS[ty]
    data = [(x, y % 80, z) for x, y, z in data]
    check(f"shl.{ty if ty[0] == 'b' else 'b' + str(bits)} %d, %a, %b;", {"d": ty, "a": ty, "b": "u32"},
          lambda x, y, z: (x << y) if y < bits else 0, data)
    if ty[0] != "b":
        check(f"shr.{ty} %d, %a, %b;", {"d": ty, "a": ty, "b": "u32"},
              lambda x, y, z: val(x, ty) >> min(y, bits), data)


CMPS = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y, "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
}
UCMPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@pytest.mark.parametrize("ty", ["s32", "u32", "s64", "u64", "s16", "b32"])
@pytest.mark.parametrize("cmp", sorted(CMPS) + sorted(UCMPS))
@examples(6)
@given(data=vectors)
def test_setp_both_destinations(cmp, ty, data):
    if ty[0] == "b" and cmp not in ("eq", "ne"):
        pytest.skip("b types only compare eq/ne")
    if cmp in UCMPS:
        f = CMPS[UCMPS[cmp]]
        key = lambda v: v & mask(BITS[ty])  # noqa: E731 - lo/ls/hi/hs are unsigned comparisons
    else:
        f = CMPS[cmp]
        key = lambda v: val(v, ty if ty[0] != "b" else "u" + ty[1:])  # noqa: E731
    a, b, _ = zip(*data)
    out = run_one(f"setp.{cmp}.{ty} %d|%q, %a, %b;", {"d": "pred", "q": "pred", "a": ty, "b": ty}, a=a, b=b)
    for k, (x, y, _) in enumerate(data):
        want = int(f(key(x), key(y)))
        assert int(out["d"][k]) == want and int(out["q"][k]) == 1 - want, (cmp, ty, x, y)


@pytest.mark.parametrize("bop", ["and", "or", "xor"])
@SETTINGS
@given(data=vectors)
def test_setp_with_boolean_predicate(bop, data):
    f = {"and": lambda p, c: p & c, "or": lambda p, c: p | c, "xor": lambda p, c: p ^ c}[bop]
    a, b, c = zip(*data)
    c = [v & 1 for v in c]
    out = run_one(f"setp.lt.{bop}.s32 %d|%q, %a, %b, %c;", {"d": "pred", "q": "pred", "a": "s32", "b": "s32", "c": "pred"}, a=a, b=b, c=c)
    for k, (x, y, _) in enumerate(data):
        t = int(val(x, "s32") < val(y, "s32"))
        assert int(out["d"][k]) == f(t, c[k]) and int(out["q"][k]) == f(1 - t, c[k])


@SETTINGS
@given(data=vectors)
def test_selp_slct(data):
    check("selp.b32 %d, %a, %b, %c;", {"d": "b32", "a": "b32", "b": "b32", "c": "pred"},
          lambda x, y, z: x if (z & mask(64)) else y, [(x, y, z & 1) for x, y, z in data], nsrc=3)
    check("slct.b32.s32 %d, %a, %b, %c;", {"d": "b32", "a": "b32", "b": "b32", "c": "s32"},
          lambda x, y, z: x if val(z, "s32") >= 0 else y, data, nsrc=3)


@SETTINGS
@given(data=vectors)
def test_abs_neg_integer_wrap(data):
    for ty in ("s32", "s64", "s16"):
        check(f"abs.{ty} %d, %a;", {"d": ty, "a": ty}, lambda x, y, z: abs(val(x, ty)), data, nsrc=1)
        check(f"neg.{ty} %d, %a;", {"d": ty, "a": ty}, lambda x, y, z: -val(x, ty), data, nsrc=1)


def _bfe_ref(x, pos, ln, ty):
    bits = BITS[ty]
    pos &= 0xFF
    ln &= 0xFF
    v = x & mask(bits)
    if ty[0] == "u":
        if ln == 0 or pos >= bits:
            return 0
        return (v >> pos) & mask(min(ln, bits))
    msb = min(pos + ln - 1, bits - 1)
    sbit = 0 if ln == 0 else (v >> msb) & 1
    r = 0
    for k in range(bits):
        bit = (v >> (pos + k)) & 1 if (k < ln and pos + k <= bits - 1) else sbit
        r |= bit << k
    return r


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
@SETTINGS
@given(data=vectors)
def test_bfe_bfi(ty, data):
    data = [(x, y % 70, z % 70) for x, y, z in data]
    a, b, c = zip(*data)
    out = run_one(f"bfe.{ty} %d, %a, %b, %c;", {"d": ty, "a": ty, "b": "u32", "c": "u32"}, a=a, b=b, c=c)
    for k, (x, pos, ln) in enumerate(data):
        assert int(out["d"][k]) == _bfe_ref(x, pos, ln, ty), (x, pos, ln)
    bty = "b" + ty[1:]
    bits = BITS[ty]
    out = run_one(f"bfi.{bty} %d, %a, %b, %c, %e;", {"d": bty, "a": bty, "b": bty, "c": "u32", "e": "u32"}, a=a, b=a[::-1], c=b, e=c)
    for k, (x, pos, ln) in enumerate(data):
        base = a[::-1][k] & mask(bits)
        r = base
        for j in range(ln):
            if pos + j >= bits:
                break
            r = (r & ~(1 << (pos + j))) | (((x >> j) & 1) << (pos + j))
        assert int(out["d"][k]) == r & mask(bits)


@SETTINGS
@given(data=vectors)
def test_prmt_default_mode(data):
    def ref(x, y, z):
        pool = (x & 0xFFFFFFFF) | ((y & 0xFFFFFFFF) << 32)
        r = 0
        for k in range(4):
            sel = (z >> (4 * k)) & 0xF
            byte = (pool >> (8 * (sel & 7))) & 0xFF
            if sel & 8:
                byte = 0xFF if byte & 0x80 else 0
            r |= byte << (8 * k)
        return r

    check("prmt.b32 %d, %a, %b, %c;", {"d": "b32", "a": "b32", "b": "b32", "c": "b32"}, ref, data, nsrc=3)


@SETTINGS
@given(data=vectors)
def test_shf_funnel_shifts(data):
    for mode in ("l.wrap", "r.wrap", "l.clamp", "r.clamp"):
        def ref(x, y, z, mode=mode):
            n = (z & 31) if "wrap" in mode else min(z & 0xFFFFFFFF, 32)
            pair = (x & 0xFFFFFFFF) | ((y & 0xFFFFFFFF) << 32)
            return ((pair << n) >> 32) if mode[0] == "l" else (pair >> n)

        check(f"shf.{mode}.b32 %d, %a, %b, %c;", {"d": "b32", "a": "b32", "b": "b32", "c": "u32"}, ref,
              [(x, y, z % 70) for x, y, z in data], nsrc=3)


INT_TYPES = ["u16", "s16", "u32", "s32", "u64", "s64"]


@pytest.mark.parametrize("src", INT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
@examples(5)
@given(data=vectors)
def test_cvt_integer_to_integer_plain_and_saturating(dst, src, data):
    dbits = BITS[dst]
    check(f"cvt.{dst}.{src} %d, %a;", {"d": dst, "a": src}, lambda x, y, z: val(x, src), data, nsrc=1)
    lo, hi = (-(2 ** (dbits - 1)), 2 ** (dbits - 1) - 1) if dst[0] == "s" else (0, 2**dbits - 1)
    check(f"cvt.sat.{dst}.{src} %d, %a;", {"d": dst, "a": src}, lambda x, y, z: max(lo, min(hi, val(x, src))), data, nsrc=1)
