"""Accel-Sim trace text at compiled speed: a numba scanner over the raw bytes, chunk by chunk.

:func:`scan_kernel` reads a ``.traceg`` / ``.traceg.xz`` READ_CHUNK bytes at a time (memory: one
chunk plus the store of :mod:`simt_fast.trace.accelsim_text`) and gives each chunk to
:func:`_scan`, which walks the lines with the state of the plain-Python
:class:`~simt_fast.trace.accelsim_text.LineReader` and stores what they say in its
:class:`~simt_fast.trace.accelsim_text.LineStore`. The scanner only takes a line it can prove
well formed and whose meaning is plain (ASCII; numbers without sign or ``_`` where a sign is not
expected; addresses below 2**62; a PC whose opcode and registers it has seen); it hands every
other line back, unchanged state and all, to ``LineReader.feed`` — the header, the first line at
each PC, and every malformed line, so errors are the reader's sentences. The differential tests
(tests/test_trace_accelsim_fast.py) compare both readers on random and damaged traces.
"""

from __future__ import annotations

import hashlib
from contextlib import closing
from pathlib import Path

import numpy as np

from .._jit import announce_compile, helper, hot_helper, jit
from .accelsim_text import (BODY, BYTE0, COUNT, CTA, CTA_WITHOUT_ID, CUR_BYTE0, CUR_FIRST_NO, CUR_LAST_NO, CUR_MASK0,
                            CUR_ROW0, CUR_SLOT0, DONE, EXPECTED, FIRST_NO, HASH_EMPTY, K_LIST, K_NONE, K_STRIDE,
                            LAST_NO, LINE_NO, MASK0, MASK_INSTS, MAX_LINE_BYTES, N_BYTES, N_LINES, N_MASKS, N_SLOTS,
                            NEW_MASK, NEW_SLOT, NO_CTA, PHASE, PREV_ADDR, PREV_MASK, PREV_SLOT, ROW0, SLOT0, WARP,
                            WARP_NO, LineReader, LineStore, Progress, ScannedKernel, chunks, read_ahead, scanned)

# what _scan returns
CHUNK_END, DEFER, FULL, ACCEPT = range(4)
GEO_LINEINFO, GEO_GX, GEO_GY, GEO_GZ, GEO_WPC = range(5)

_HEX = np.full(256, -1, np.int64)
for _c in b"0123456789":
    _HEX[_c] = _c - 48
for _c in b"abcdef":
    _HEX[_c] = _c - 87
    _HEX[_c - 32] = _c - 87
_BEGIN_TB = np.frombuffer(b"#BEGIN_TB", np.uint8).copy()
_END_TB = np.frombuffer(b"#END_TB", np.uint8).copy()
_THREAD = np.frombuffer(b"thread", np.uint8).copy()
_BLOCK = np.frombuffer(b"block", np.uint8).copy()
_WARP = np.frombuffer(b"warp", np.uint8).copy()
_INSTS = np.frombuffer(b"insts", np.uint8).copy()
_ADDR_LIMIT = 1 << 62  # larger addresses (and sums that could overflow) are left to the reader
_DELTA_LIMIT = 1 << 40


@hot_helper
def _is_space(c):
    # str.split()'s ASCII whitespace: \t \n \v \f \r, the separators \x1c-\x1f, and space
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


@hot_helper
def _skip(buf, i, e):
    while i < e and _is_space(buf[i]):
        i += 1
    return i


@hot_helper
def _token_end(buf, i, e):
    while i < e and not _is_space(buf[i]):
        i += 1
    return i


@hot_helper
def popcount32(x):
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@hot_helper
def _hex(buf, i, j):
    """(ok, value) of ``[0x]hexdigits`` in buf[i:j]; not ok from 2**63 up."""
    if j - i >= 2 and buf[i] == 48 and (buf[i + 1] | 32) == 120:
        i += 2
    if i >= j:
        return False, 0
    v = 0
    while i < j:
        d = _HEX[buf[i]]
        if d < 0 or v >= (1 << 59):
            return False, 0
        v = (v << 4) | d
        i += 1
    return True, v


@hot_helper
def _decimal(buf, i, j, signed):
    """(ok, value) of ``[+-]digits`` (sign only when ``signed``) in buf[i:j]; at most 18 digits."""
    neg = False
    if signed and i < j and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    if i >= j or j - i > 18:
        return False, 0
    v = 0
    while i < j:
        c = buf[i]
        if c < 48 or c > 57:
            return False, 0
        v = v * 10 + (c - 48)
        i += 1
    return True, -v if neg else v


@hot_helper
def _equals(buf, i, j, word):
    if j - i != len(word):
        return False
    for k in range(len(word)):
        if buf[i + k] != word[k]:
            return False
    return True


@hot_helper
def _starts(buf, i, e, word):
    return e - i >= len(word) and _equals(buf, i, i + len(word), word)


@hot_helper
def _whole_number(buf, i, e):
    """(ok, value) of a value field that is only a non-negative decimal, spaces around allowed."""
    i = _skip(buf, i, e)
    j = _token_end(buf, i, e)
    if _skip(buf, j, e) != e:
        return False, 0
    return _decimal(buf, i, j, False)


@hot_helper
def _slot_of(hash_pc, hash_slot, pc):
    size = len(hash_pc)
    b = ((pc >> 3) ^ (pc >> 20)) & (size - 1)  # accelsim_text.pc_hash
    while hash_pc[b] != HASH_EMPTY:
        if hash_pc[b] == pc:
            return hash_slot[b]
        b = (b + 1) & (size - 1)
    return -1


@hot_helper
def _put_varint(out, pos, z):
    """LEB128 bytes of ``z`` (int64 bits, read as unsigned) at out[pos:]; returns the next position."""
    while z < 0 or z >= 0x80:
        out[pos] = (z & 0x7F) | 0x80
        pos += 1
        z = (z >> 7) & 0x01FFFFFFFFFFFFFF
    out[pos] = z
    return pos + 1


@hot_helper
def _zigzag(d):
    return (d << 1) ^ (d >> 63)


@helper
def _close_warp(st, warp_info, wpc):
    key = st[CTA] * wpc + st[WARP]
    warp_info[key, DONE] = st[COUNT] + 1
    warp_info[key, ROW0] = st[CUR_ROW0]
    warp_info[key, SLOT0] = st[CUR_SLOT0]
    warp_info[key, MASK0] = st[CUR_MASK0]
    warp_info[key, BYTE0] = st[CUR_BYTE0]
    warp_info[key, FIRST_NO] = st[CUR_FIRST_NO]
    warp_info[key, LAST_NO] = st[CUR_LAST_NO]
    st[WARP] = -1


@helper
def _structure_line(buf, t0, e, number, st, geo, cta_seen, warp_info):
    """A line that is not an instruction: ACCEPT (state updated) or DEFER (state untouched)."""
    wpc = geo[GEO_WPC]
    if _starts(buf, t0, e, _BEGIN_TB):
        if st[CTA] != NO_CTA or st[WARP] >= 0:
            return DEFER
        st[CTA] = CTA_WITHOUT_ID
        return ACCEPT
    if _starts(buf, t0, e, _END_TB):
        if st[CTA] < 0 or (st[WARP] >= 0 and st[COUNT] != st[EXPECTED]):
            return DEFER
        for w in range(wpc):  # every warp of the block has lines, the one closing now included
            if (st[COUNT] if w == st[WARP] else warp_info[st[CTA] * wpc + w, DONE] - 1) <= 0:
                return DEFER
        if st[WARP] >= 0:
            _close_warp(st, warp_info, wpc)
        st[CTA] = NO_CTA
        return ACCEPT
    if buf[t0] == 35:  # '#': a comment
        return ACCEPT
    if st[CTA] == NO_CTA:
        return DEFER
    eq = t0
    while eq < e and buf[eq] != 61:
        eq += 1
    if eq == e:
        return DEFER  # neither keyword nor a complete instruction line
    a0 = _skip(buf, t0, eq)
    a1 = _token_end(buf, a0, eq)
    b0 = _skip(buf, a1, eq)
    b1 = _token_end(buf, b0, eq)
    one_word = b0 == eq
    if not one_word and _skip(buf, b1, eq) == eq and _equals(buf, a0, a1, _THREAD) and _equals(buf, b0, b1, _BLOCK):
        if st[CTA] != CTA_WITHOUT_ID:
            return DEFER
        lin = 0
        scale = 1
        i = eq + 1
        for d in range(3):  # x,y,z: decimals separated by commas, spaces around allowed
            i = _skip(buf, i, e)
            j = i
            while j < e and 48 <= buf[j] <= 57:
                j += 1
            ok, v = _decimal(buf, i, j, False)
            if not ok or v >= geo[GEO_GX + d]:
                return DEFER
            lin += scale * v
            scale *= geo[GEO_GX + d]
            i = _skip(buf, j, e)
            if d < 2:
                if i >= e or buf[i] != 44:  # ','
                    return DEFER
                i += 1
        if i != e:
            return DEFER
        if cta_seen[lin]:
            return DEFER
        cta_seen[lin] = 1
        st[CTA] = lin
        return ACCEPT
    if one_word and _equals(buf, a0, a1, _WARP):
        if st[WARP] >= 0 and st[COUNT] != st[EXPECTED]:
            return DEFER
        if st[CTA] < 0:
            return DEFER
        ok, w = _whole_number(buf, eq + 1, e)
        if not ok or w >= wpc or w == st[WARP] or warp_info[st[CTA] * wpc + w, DONE] != 0:
            return DEFER
        if st[WARP] >= 0:
            _close_warp(st, warp_info, wpc)
        st[WARP] = w
        st[EXPECTED] = -1
        st[WARP_NO] = number
        st[COUNT] = 0
        st[CUR_ROW0] = st[N_LINES]
        st[CUR_SLOT0] = st[N_SLOTS]
        st[CUR_MASK0] = st[N_MASKS]
        st[CUR_BYTE0] = st[N_BYTES]
        st[PREV_ADDR] = 0
        return ACCEPT
    if one_word and _equals(buf, a0, a1, _INSTS):
        if st[WARP] < 0 or st[EXPECTED] >= 0:
            return DEFER
        ok, n = _whole_number(buf, eq + 1, e)
        if not ok:
            return DEFER
        st[EXPECTED] = n
        return ACCEPT
    return ACCEPT  # another 'key = value' line of a block (cluster id, ...)


@helper
def _instruction_line(buf, s, e, number, st, geo, hash_pc, hash_slot, static_bytes, static_ptr, slot_tma, slot_width,
                      row_flags, slots, masks, addr_bytes):
    """An instruction line: ACCEPT (stored), DEFER (untouched) or FULL (no room)."""
    row = st[N_LINES]
    if (row + 1 > len(row_flags) or st[N_SLOTS] + 1 > len(slots) or st[N_MASKS] + 1 > len(masks)
            or st[N_BYTES] + MAX_LINE_BYTES > len(addr_bytes)):
        return FULL
    i = _skip(buf, s, e)
    if geo[GEO_LINEINFO]:
        i = _skip(buf, _token_end(buf, i, e), e)
    j = _token_end(buf, i, e)
    ok, pc = _hex(buf, i, j)
    if not ok:
        return DEFER
    i = _skip(buf, j, e)
    j = _token_end(buf, i, e)
    ok, mask = _hex(buf, i, j)
    if not ok or mask > 0xFFFFFFFF:
        return DEFER
    slot = _slot_of(hash_pc, hash_slot, pc)
    if slot < 0:
        return DEFER  # first line at this PC: the reader decodes its opcode and registers
    i = _skip(buf, j, e)
    q, q_end = static_ptr[slot], static_ptr[slot + 1]
    while q < q_end:  # the static tokens, as the reader stored them (joined by one space)
        qz = q
        while qz < q_end and static_bytes[qz] != 32:
            qz += 1
        j = _token_end(buf, i, e)
        if j - i != qz - q:
            return DEFER
        for k in range(qz - q):
            if buf[i + k] != static_bytes[q + k]:
                return DEFER
        i = _skip(buf, j, e)
        q = qz + 1
    j = _token_end(buf, i, e)
    ok, width = _decimal(buf, i, j, False)
    if not ok:
        return DEFER
    i = _skip(buf, j, e)
    n = popcount32(mask)
    kind = K_NONE
    pos = st[N_BYTES]  # addresses are written ahead and kept only if the whole line is taken
    prev = st[PREV_ADDR]
    bulk = width > 0 and slot_tma[slot] != 0  # a bulk copy's transfer list: nothing after the width is read
    if width > 0 and not bulk:
        j = _token_end(buf, i, e)
        ok, mode = _decimal(buf, i, j, False)
        if not ok:
            return DEFER
        i = _skip(buf, j, e)
        kind = K_LIST
        if mode == 0:  # one address per thread of the mask
            for k in range(n):
                j = _token_end(buf, i, e)
                ok, a = _hex(buf, i, j)
                if not ok:
                    return DEFER
                pos = _put_varint(addr_bytes, pos, _zigzag(a - prev))
                prev = a
                i = _skip(buf, j, e)
        elif mode == 1:  # base, stride
            j = _token_end(buf, i, e)
            ok, base = _hex(buf, i, j)
            i = _skip(buf, j, e)
            j = _token_end(buf, i, e)
            ok2, stride = _decimal(buf, i, j, True)
            i = _skip(buf, j, e)
            if not ok or not ok2:
                return DEFER
            if n > 0:
                if base >= _ADDR_LIMIT or abs(stride) >= _DELTA_LIMIT or base + (n - 1) * stride < 0:
                    return DEFER  # out of the address space, or too large to be sure: the reader says
                pos = _put_varint(addr_bytes, pos, _zigzag(base - prev))
                pos = _put_varint(addr_bytes, pos, _zigzag(stride))
                prev = base
                kind = K_STRIDE
        elif mode == 2:  # base, then the delta to each next thread of the mask
            j = _token_end(buf, i, e)
            ok, a = _hex(buf, i, j)
            i = _skip(buf, j, e)
            if not ok or (n > 1 and a >= _ADDR_LIMIT):
                return DEFER
            if n > 0:
                pos = _put_varint(addr_bytes, pos, _zigzag(a - prev))
                prev = a
            for k in range(n - 1):
                j = _token_end(buf, i, e)
                ok, d = _decimal(buf, i, j, True)
                if not ok or abs(d) >= _DELTA_LIMIT:
                    return DEFER
                a += d
                if a < 0 or a >= _ADDR_LIMIT:
                    return DEFER
                pos = _put_varint(addr_bytes, pos, _zigzag(d))
                prev = a
                i = _skip(buf, j, e)
        else:
            return DEFER
    if not bulk and i < e:  # at most one more field: the immediate
        j = _token_end(buf, i, e)
        ok, _ = _decimal(buf, i, j, True)
        if not ok or _skip(buf, j, e) != e:
            return DEFER
    flags = kind
    if st[COUNT] == 0 or slot != st[PREV_SLOT] + 1:
        flags |= NEW_SLOT
        slots[st[N_SLOTS]] = slot
        st[N_SLOTS] += 1
    if st[COUNT] == 0 or mask != st[PREV_MASK]:
        flags |= NEW_MASK
        masks[st[N_MASKS]] = mask
        st[N_MASKS] += 1
    row_flags[row] = flags
    st[PREV_SLOT] = slot
    st[PREV_MASK] = mask
    st[PREV_ADDR] = prev
    st[N_BYTES] = pos
    st[N_LINES] = row + 1
    st[MASK_INSTS] += n
    st[COUNT] += 1
    if st[COUNT] == 1:
        st[CUR_FIRST_NO] = number
    st[CUR_LAST_NO] = number
    if width > 0 and not bulk and slot_width[slot] == 0:
        slot_width[slot] = width
    return ACCEPT


@jit(_nrt=False)
def _scan(buf, pos, end, st, geo, cta_seen, warp_info, hash_pc, hash_slot, static_bytes, static_ptr, slot_tma,
          slot_width, row_flags, slots, masks, addr_bytes):
    """Take the complete lines of buf[pos:end] one by one; returns (status, position): CHUNK_END at
    the first incomplete line, or DEFER / FULL at the line to hand to the reader / to retry."""
    while pos < end:
        e = pos
        high = 0
        while e < end and buf[e] != 10:
            high |= buf[e]
            e += 1
        if e == end:
            return CHUNK_END, pos
        if st[PHASE] != BODY or high >= 128:
            return DEFER, pos
        number = st[LINE_NO] + 1
        t0 = _skip(buf, pos, e)
        if t0 < e:
            in_warp = st[WARP] >= 0 and st[EXPECTED] >= 0 and buf[t0] != 35  # '#'
            r = DEFER
            if in_warp:  # any line taken as an instruction has six fields or more
                r = _instruction_line(buf, pos, e, number, st, geo, hash_pc, hash_slot, static_bytes, static_ptr,
                                      slot_tma, slot_width, row_flags, slots, masks, addr_bytes)
                if r == DEFER:
                    n_tokens = 0
                    i = t0
                    while i < e and n_tokens < 6:
                        i = _skip(buf, _token_end(buf, i, e), e)
                        n_tokens += 1
                    if n_tokens < 6:  # the reader does not call it an instruction line either
                        r = _structure_line(buf, t0, e, number, st, geo, cta_seen, warp_info)
            else:
                r = _structure_line(buf, t0, e, number, st, geo, cta_seen, warp_info)
            if r != ACCEPT:
                return r, pos
        st[LINE_NO] = number
        pos = e + 1
    return CHUNK_END, pos


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def _scan_bytes(data: bytes, reader: LineReader) -> int:
    """Take every complete line of ``data``; returns where the incomplete tail starts."""
    buf = np.frombuffer(data, np.uint8)
    store, st, h = reader.store, reader.st, reader.header
    pos = 0
    while True:
        geo = np.array([h.lineinfo, *(h.grid or (1, 1, 1)), h.warps_per_cta if h.block else 1], np.int64)
        status, pos = _scan(buf, pos, len(buf), st, geo, store.cta_seen, store.warp_info, store.hash_pc,
                            store.hash_slot, store.static_bytes, store.static_ptr, store.slot_tma, store.slot_width,
                            store.row_flags, store.slots, store.masks, store.addr_bytes)
        if status == CHUNK_END:
            return pos
        if status == FULL:
            store.grow(st)
            continue
        end = data.index(b"\n", pos)
        reader.feed(int(st[LINE_NO]) + 1, data[pos:end].decode("utf-8", "replace"))
        pos = end + 1


def scan_kernel(path, progress: Progress = None) -> ScannedKernel:
    """Read one ``.traceg`` / ``.traceg.xz``; malformed lines raise the reader's TraceError."""
    path = Path(path)
    reader = LineReader(str(path), LineStore())
    digest = hashlib.sha256()
    announce_compile(_scan, "the Accel-Sim trace importer", 15)  # its kernels compile together: 15 s cold
    tail = b""
    with closing(read_ahead(chunks(path, progress, digest))) as text:  # (a malformed line stops the reading thread)
        for chunk in text:
            data = tail + chunk
            tail = data[_scan_bytes(data, reader):]
    if tail:
        _scan_bytes(tail + b"\n", reader)
    return scanned(path, reader, digest.hexdigest())
