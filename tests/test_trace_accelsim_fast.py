"""The compiled Accel-Sim importer against the plain-Python reference (simt_fast.trace.accelsim_reference).

Differential, on hypothesis-drawn traces: the random SIMT machine's traces, re-spaced and re-spelled
in every way the format allows (tabs, CRs, blank and comment lines inside warps, 0x prefixes, signs,
leading zeros); memory lines with arbitrary addresses in every address mode; and damaged traces —
both importers must give the same trace (digest, attributes, summary) or the same one-sentence error.
Chunk boundaries, store growth and CTA batches are forced small, so lines straddle chunks.
"""

import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from simt_fast.trace import TraceError, accelsim, accelsim_reference, accelsim_scan, accelsim_text
from simt_fast.trace.accelsim_text import LineStore

import accelsim_helpers as ah
from accelsim_helpers import line


def outcome(load, path):
    """What an importer makes of a file: the trace's content and attributes, or its error."""
    try:
        t = load(path)
    except TraceError as e:
        return "error", str(e)
    return "trace", t.digest(), sorted(t.attrs.items()), t.label, t.text, t.mem_bytes.tolist(), t.mem_kind.tolist()


def assert_same(path, chunk=None):
    """Both importers agree; ``chunk``: read that many bytes at a time, from a store of one line,
    write five trace lines' worth of CTAs per batch, and recover the paths in three parts of the
    file on three threads (merged in file order)."""
    with pytest.MonkeyPatch.context() as m:
        if chunk is not None:
            m.setattr(accelsim_text, "READ_CHUNK", chunk)
            m.setattr(accelsim_scan, "LineStore", lambda: LineStore(rows=1, nbytes=1))
            m.setattr(accelsim, "BATCH_ROWS", 5)
            m.setattr(accelsim, "RECOVER_WORKERS", 3)
        fast = outcome(accelsim.load, path)
    assert fast == outcome(accelsim_reference.load, path)
    return fast


# ---------------------------------------------------------------------------------------------
# Valid traces, spelled every way the format allows
# ---------------------------------------------------------------------------------------------

def _respell_number(tok: str, rng: random.Random) -> str:
    if tok.startswith(("0x", "0X")) or (not tok.lstrip("+-").isdigit() and re.fullmatch(r"[0-9a-fA-F]+", tok)):
        digits = tok[2:] if tok.startswith(("0x", "0X")) else tok
        return rng.choice(["0x", "0X", ""]) + rng.choice([digits.upper(), digits.lower(), "00" + digits])
    if tok.isdigit():
        return rng.choice(["+" + tok, "0" + tok, tok])
    return tok


def respell(text: str, rng: random.Random) -> str:
    """The same trace with the freedom the format leaves: spacing, hex case and prefixes, signs and
    leading zeros of the fields after the opcode's registers, blank, comment and unknown key lines."""
    o = 1 if "-enable lineinfo = 1" in text else 0
    out, inside = [], False
    for raw in text.split("\n"):
        tokens = raw.split()
        inside = (inside or raw.startswith("#BEGIN_TB")) and not raw.startswith("#END_TB")
        if len(tokens) >= 6 and inside and not tokens[0].startswith("#") and rng.random() < 0.5:
            k = o + 2
            k += 1 + int(tokens[k])  # the static part (register counts, registers, opcode) stays as it is
            k += 2 + int(tokens[k + 1])
            for i in [o, o + 1] + list(range(k, len(tokens))):  # PC, mask, width, addresses, immediate
                if rng.random() < 0.5:
                    tokens[i] = _respell_number(tokens[i], rng)
            raw = "".join(t + rng.choice([" ", "  ", "\t", " \x0b"]) for t in tokens)
            raw = rng.choice(["", " ", "\t"]) + raw + rng.choice(["", "\r", " "])
        out.append(raw)
        if rng.random() < 0.05 and (inside or not tokens or tokens[0].startswith("#")):
            out.append(rng.choice(["", "   ", "# a comment"] + (["cluster id = 0,0,0"] if inside else [])))
    return "\n".join(out)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(["merge", "split"]), guarded=st.booleans(),
       drop_empty=st.booleans(), stated=st.booleans(), spelled=st.booleans(),
       chunk=st.sampled_from([None, 7, 64, 300]), xz=st.booleans())
def test_machine_traces_import_alike(tmp_path_factory, seed, mode, guarded, drop_empty, stated, spelled, chunk, xz):
    """``drop_empty``: lines no guard was true on left out, as a tracer might; the recovery then
    meets jumps the lines do not carry (rule 3's direct landings), or traces no paths explain.
    ``stated``: BRA lines name their targets (immediates), which the recovery takes."""
    text = ah.machine_trace(seed, mode, guarded, drop_empty, stated).text
    if spelled:
        text = respell(text, random.Random(seed))
    path = ah.write(tmp_path_factory.mktemp("as") / ("k.traceg.xz" if xz else "k.traceg"), text)
    got = assert_same(path, chunk)
    assert got[0] == "trace" or drop_empty, got


def test_the_scanner_takes_most_lines_itself(tmp_path, monkeypatch):
    """Not every line through the reader: only the header, the first line at each PC, and odd ones."""
    fed = []
    original = accelsim_text.LineReader.feed
    monkeypatch.setattr(accelsim_text.LineReader, "feed", lambda self, n, t: (fed.append(n), original(self, n, t)))
    loop = [line(0x00, 0xF, "S2R", ["R0"], [])]
    for alive in (0xF, 0xF, 0x7, 0x1):  # a loop of a load and a branch back, ending lane by lane
        loop += [line(0x10, alive, "LDG.E", ["R1"], ["R2"], (4, 1, "0x7f5c1b000000", 4)), line(0x20, alive, "BRA", [], [])]
    loop += [line(0x30, 0xF, "EXIT", [], [])]
    text = ah.trace_text({(c, 0, 0): [loop] for c in range(3)}, grid=(3, 1, 1), block=(4, 1, 1))
    k = accelsim_scan.scan_kernel(ah.write(tmp_path / "k.traceg", text))
    assert len(fed) == text[:text.index("#BEGIN_TB")].count("\n") + 1 + len(k.instrs)
    assert k.n_lines == 3 * len(loop) and len(k.instrs) == 4


# ---------------------------------------------------------------------------------------------
# Addresses in every mode, and numbers at the edges
# ---------------------------------------------------------------------------------------------

_EDGES = [0, 1, 2**32, 2**47 - 4, 2**62 - 8, 2**62, 2**63 - 8, 2**63, 2**64 - 16, 2**64 - 2]


@st.composite
def memory_line(draw):
    """(mask, opcode, registers, mem fields, immediate) of a memory line: any mask, addresses in any
    mode, sometimes out of the address space."""
    mask = draw(st.sampled_from([0, 1, 0xF, 0xFFFFFFFF, 0x80000001]) | st.integers(0, 2**32 - 1))
    n = bin(mask).count("1")
    base = draw(st.sampled_from(_EDGES) | st.integers(0, 2**48))
    mode = draw(st.sampled_from([0, 1, 2]))
    if mode == 0:
        addrs = [f"{draw(st.sampled_from(_EDGES) | st.integers(0, 2**64 - 1)):#x}" for _ in range(n)]
    elif mode == 1:
        addrs = [f"{base:#x}", draw(st.sampled_from([0, 4, -4, 32768, 2**41, -(2**20)]) | st.integers(-2**50, 2**50))]
    else:
        small = draw(st.booleans())
        bound = 2**15 if small else 2**45
        addrs = [f"{base:#x}"] + [draw(st.integers(-bound, bound)) for _ in range(max(n - 1, 0))]
    opcode = draw(st.sampled_from(["LDG.E", "STS", "LDL.64", "UTMALDG.2D"]))
    return mask, opcode, ["R2"] if opcode.startswith("LD") else [], (4, mode, *addrs), draw(
        st.sampled_from([None, 0, -3, 17]))


def second_time(lines: list) -> str:
    """A one-warp trace that runs ``lines`` (mask, opcode, dst, mem, imm) twice around a loop: first
    with plain addresses, so that the reader has seen every PC, then as given, which the scanner
    reads (it hands the reader only the first line at each PC)."""
    full, n = 0xFFFFFFFF, len(lines)
    body = [line(0x00, full, "S2R", ["R0"], [])]
    for i, (mask, opcode, dst, mem, imm) in enumerate(lines):
        body.append(line(0x10 * (i + 1), full, opcode, dst, ["R4"], (4, 1, "0x1000", 4), imm=imm))
    body.append(line(0x10 * (n + 1), full, "BRA", [], []))
    for i, (mask, opcode, dst, mem, imm) in enumerate(lines):
        body.append(line(0x10 * (i + 1), mask, opcode, dst, ["R4"], mem, imm=imm))
    body += [line(0x10 * (n + 1), 0, "BRA", [], []), line(0x10 * (n + 2), full, "EXIT", [], [])]
    return ah.trace_text({(0, 0, 0): [body]}, block=(32, 1, 1))


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(memory_line(), min_size=1, max_size=5))
def test_memory_lines_import_alike(tmp_path_factory, lines):
    assert_same(ah.write(tmp_path_factory.mktemp("as") / "k.traceg", second_time(lines)))


@pytest.mark.parametrize("mem, mask", [
    ((4, 1, "0x4", -8), 0x3),  # the second thread at -4: out of the address space
    ((4, 1, "0x4", -8), 0x1),  # one thread: in
    ((4, 1, "0x0", 0), 0xFFFFFFFF),
    ((4, 1, f"{2**64 - 2:#x}", 0), 0xF),  # the last address there is
    ((4, 1, f"{2**64 - 3:#x}", 1), 0x3),
    ((4, 1, f"{2**64 - 3:#x}", 1), 0x7),
    ((4, 2, "0x8", -4, -4), 0x7),
    ((4, 2, "0x8", -4, -8), 0x7),
    ((4, 2, f"{2**62 - 4:#x}", 4, 4), 0x7),  # past the scanner's own limit: the reader takes it
    ((4, 2, "0x0", 2**45, -(2**45)), 0x7),
    ((4, 0, f"{2**64 - 1:#x}"), 0x1),
    ((4, 0, f"{2**63:#x}", f"{2**64 - 2:#x}"), 0x3),
    ((4, 2, "0x20", 32767, -32768, 32768), 0xF),
])
def test_addresses_at_the_edges_import_alike(tmp_path, mem, mask):
    got = assert_same(ah.write(tmp_path / "k.traceg", second_time([(mask, "LDG.E", ["R2"], mem, None)])))
    assert got[0] == "trace" or "leave the 64-bit address space" in got[1], got


# ---------------------------------------------------------------------------------------------
# Damaged traces: the same sentence from both
# ---------------------------------------------------------------------------------------------

_BAD_TOKENS = ["zz", "-1", "0x", "1_0", "+5", "ffffffffffffffffff", "é", "#", "=", "0,0", "99999999999999999999", "1.5"]


def damage(text: str, rng: random.Random) -> str:
    """One to three edits, mostly of body lines: a line deleted, repeated or swapped with the next, a
    field replaced by nonsense, a mask or PC replaced by another plausible one, or the end cut off."""
    lines = text.split("\n")
    body = text[:text.index("#BEGIN_TB")].count("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(body if rng.random() < 0.8 and body < len(lines) else 0, len(lines))
        tokens = lines[i].split()
        what = rng.random()
        if what < 0.1:
            del lines[i]
        elif what < 0.2:
            lines.insert(i, lines[i])
        elif what < 0.3 and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif what < 0.5 and len(tokens) >= 6 and re.fullmatch("[0-9a-f]+", tokens[2 if len(tokens[0]) < 4 else 1]):
            k = 2 if len(tokens[0]) < 4 else 1  # the mask (after the PC, and a line number of at most 3 digits)
            tokens[k] = f"{int(tokens[k], 16) ^ (1 << rng.randrange(8)):08x}"
            lines[i] = " ".join(tokens)
        elif what < 0.6 and len(tokens) >= 6:  # another PC
            k = 1 if len(tokens[0]) < 4 else 0
            tokens[k] = f"{rng.randrange(0, 0x200, 0x10):04x}"
            lines[i] = " ".join(tokens)
        elif what < 0.95 and tokens:
            k = rng.randrange(len(tokens))
            tokens[k] = rng.choice(_BAD_TOKENS + [tokens[rng.randrange(len(tokens))], str(rng.randint(0, 40))])
            lines[i] = " ".join(tokens)
        else:
            lines = lines[:i]
    return "\n".join(lines)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.booleans())
def test_damaged_traces_fail_alike(tmp_path_factory, seed, cut):
    rng = random.Random(seed)
    text = damage(ah.machine_trace(seed, rng.choice(["merge", "split"]), rng.random() < 0.3).text, rng)
    if cut:  # a file cut inside a line: the last line has no newline
        text = text[:rng.randrange(len(text) + 1)]
    got = assert_same(ah.write(tmp_path_factory.mktemp("as") / "k.traceg", text))
    if got[0] == "error":
        assert got[1].startswith(str(tmp_path_factory.getbasetemp())) and "\n" not in got[1]


def test_a_jump_the_lines_do_not_carry_lands_directly(tmp_path):
    """Rule 3's direct landing: in warp 0, BRA 0x10 sends lanes 0-15 to 0x30 while lanes 16-31 run
    0x20 (so 0x30 is the branch's target, not its next executed PC); warp 1's four threads all
    jump, but its line at 0x30 is missing (a tracer that drops lines no guard was true on), so
    they are first seen at 0x40 and land there straight from the branch, which they did execute."""
    full = 0xFFFFFFFF
    warp0 = [line(0x00, full, "S2R", ["R0"], []), line(0x10, 0xFFFF, "BRA", [], []),
             line(0x20, 0xFFFF0000, "NOP", [], []), line(0x30, full, "NOP", [], []), line(0x40, full, "EXIT", [], [])]
    warp1 = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "BRA", [], []), line(0x40, 0xF, "EXIT", [], [])]
    path = ah.write(tmp_path / "k.traceg", ah.trace_text({(0, 0, 0): [warp0, warp1]}, block=(36, 1, 1)))
    assert assert_same(path)[0] == "trace"
    trace = accelsim.load(path)
    pcs = [int(x[2:x.index("*/")], 16) for x in trace.text]
    steps = [[pc for b in trace.thread_path(i) for pc in pcs[trace.block_start[b]:trace.block_start[b + 1]]]
             for i in (0, 16, 32)]
    assert steps == [[0x00, 0x10, 0x30, 0x40], [0x00, 0x10, 0x20, 0x30, 0x40], [0x00, 0x10, 0x40]]
    # executed with a false guard: the BRA by lanes 16-31; every other instruction ran in its mask
    assert trace.attrs["predicated_off_thread_insts"] == 16



def _landing_on_a_guarded_branch(bra_imm, version=4) -> str:
    """@P BRA 0x30 (lanes 0-15 jump) lands on @Q BRA 0x50, which lanes 16-31 take and lanes 0-15
    pass with Q false (the warp reconverged at 0x30 runs it once, mask 0xFFFF0000): lanes 0-15 are
    next seen at 0x40. ``bra_imm``: the immediate of the line at 0x10 (tracer 3: no immediates)."""
    full = 0xFFFFFFFF

    def imm(value):
        return value if version >= 4 else None

    warp = [line(0x00, full, "S2R", ["R0"], [], imm=imm(0)), line(0x10, 0x0000FFFF, "BRA", [], [], imm=imm(bra_imm)),
            line(0x20, 0xFFFF0000, "NOP", [], [], imm=imm(0)), line(0x30, 0xFFFF0000, "BRA", [], [], imm=imm(0x50)),
            line(0x40, 0x0000FFFF, "NOP", [], [], imm=imm(0)), line(0x50, full, "EXIT", [], [], imm=imm(0))]
    return ah.trace_text({(0, 0, 0): [warp]}, version=version)


def _steps(trace, threads) -> list:
    pcs = [int(x[2:x.index("*/")], 16) for x in trace.text]
    return [[pc for b in trace.thread_path(i) for pc in pcs[trace.block_start[b]:trace.block_start[b + 1]]]
            for i in threads]


@pytest.mark.parametrize("bra_imm, version, exact", [
    (0x30, 4, True),  # the target stated (tracer 4+): lanes 0-15 pass 0x30 with a false guard
    (0x30, 3, False),  # tracer 3 writes no immediate: the target is inferred
    (0, 4, False),  # 0: no target stated (traces that write none write 0)
    (0x38, 4, False),  # not an executed PC: inferred
    (0x20, 4, True),  # a wrong target the lines agree with is taken: 0x20 passed with a false guard
])
def test_a_branch_target_stated_by_the_immediate(tmp_path, bra_imm, version, exact):
    """By hand: where the jump to 0x30 went only the immediate says; without one, lanes 0-15 are
    taken to land at 0x40 (their next true-guard line), losing the predicated-off BRA at 0x30."""
    path = ah.write(tmp_path / "k.traceg", _landing_on_a_guarded_branch(bra_imm, version))
    assert assert_same(path)[0] == "trace"
    trace = accelsim.load(path)
    lane0, lane16 = _steps(trace, (0, 16))
    assert lane16 == [0x00, 0x10, 0x20, 0x30, 0x50]
    if exact:
        jump = [0x20, 0x30] if bra_imm == 0x20 else [0x30]
        assert lane0 == [0x00, 0x10, *jump, 0x40, 0x50]
        # false guards: the BRA at 0x10 (lanes 16-31), the BRA at 0x30 (lanes 0-15), 0x20 if passed
        assert trace.attrs["predicated_off_thread_insts"] == 32 + 16 * (bra_imm == 0x20)
    else:
        assert lane0 == [0x00, 0x10, 0x40, 0x50]
        assert trace.attrs["predicated_off_thread_insts"] == 16


def test_a_stated_target_the_lines_contradict_falls_back_to_inference(tmp_path):
    """A backward target stated for a jump whose threads are next seen ahead: no paths explain the
    lines with it, so the targets are inferred, by both importers alike."""
    full = 0xFFFFFFFF
    warp = [line(0x00, full, "S2R", ["R0"], [], imm=0), line(0x10, full, "NOP", [], [], imm=0),
            line(0x20, full, "BRA", [], [], imm=0x10), line(0x40, full, "EXIT", [], [], imm=0)]
    path = ah.write(tmp_path / "k.traceg", ah.trace_text({(0, 0, 0): [warp]}))
    assert assert_same(path)[0] == "trace"
    assert _steps(accelsim.load(path), (0,)) == [[0x00, 0x10, 0x20, 0x40]]

_TWO_WARPS = ah.trace_text({(0, 0, 0): [[line(0x00, 0xFFFFFFFF, "EXIT", [], [])], [line(0x00, 0xF, "EXIT", [], [])]],
                            (1, 0, 0): [[line(0x00, 0xFFFFFFFF, "EXIT", [], [])], [line(0x00, 0xF, "EXIT", [], [])]]},
                           grid=(2, 1, 1), block=(36, 1, 1))


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("\nwarp = 1\ninsts = 1\n0000 0000000f 0 EXIT 0 0 \n", "\n", 1), "warp 1 of thread block (0,0,0) has no instructions"),
    (lambda s: s.replace("warp = 1\ninsts = 1\n0000 0000000f 0 EXIT 0 0 ", "warp = 1\ninsts = 0", 1), "has no instructions"),
    (lambda s: s.replace("thread block = 1,0,0", "thread block = 0,0,0"), "appears twice"),
    (lambda s: s.replace("#END_TB", "", 1), "'#BEGIN_TB' before the previous thread block's '#END_TB'"),
    (lambda s: s.replace("#BEGIN_TB", "#BEGIN_TB\n#END_TB\n#BEGIN_TB", 1), "thread block without a 'thread block = x,y,z'"),
    (lambda s: s.replace("thread block = 1,0,0", "cluster = 1"), "'warp =' before the block's 'thread block =' line"),
    (lambda s: s.replace("thread block = 1,0,0", "thread block = 1,0,0\nthread block = 1,0,0"), "a second 'thread block ='"),
    (lambda s: s.replace("warp = 1", "warp = 0", 1), "warp 0 is not a new warp"),
    (lambda s: s.replace("warp = 1", "warp = 2", 1), "warp 2 is not a new warp"),
    (lambda s: s.replace("insts = 1", "insts = 1\ninsts = 1", 1), "'insts =' must follow a 'warp =' line"),
    (lambda s: s.replace("#END_TB\n", "#END_TB\nwarp = 3\n", 1), "is outside a thread block"),
    (lambda s: s.replace("#END_TB\n", "#END_TB\n#END_TB\n", 1), "'#END_TB' without a '#BEGIN_TB'"),
    (lambda s: s.replace("warp = 1\ninsts = 1", "warp = 1", 1), "an instruction line before the warp's"),
    (lambda s: s.replace("insts = 1\n0000 0000000f", "insts = 2\n0000 0000000f", 1), "announces 2 instructions but 1"),
    (lambda s: s.replace("thread block = 1,0,0", "thread block = 1, 0 ,0"), None),
    (lambda s: s.replace("warp = 1", "warp =1  ", 1).replace("insts = 1", " insts= 1", 1), None),
])
def test_block_structure_is_read_alike(tmp_path, edit, words):
    """Every check the scanner makes itself on '#BEGIN_TB', 'thread block =', 'warp =', 'insts =' and
    '#END_TB' lines, each broken once: the reader's sentence (or, ``None``, the same trace)."""
    got = assert_same(ah.write(tmp_path / "k.traceg", edit(_TWO_WARPS)))
    assert (got[0] == "trace") if words is None else (got[0] == "error" and words in got[1]), got


def test_error_in_a_warp_with_interleaved_lines_names_the_right_line(tmp_path):
    """A path error needs the file line of a warp's k-th line; with blank and comment lines inside
    the warp they are not consecutive, and the line is found by reading the file again."""
    lines = [line(0x00, 0xF, "S2R", ["R0"], []), line(0x10, 0xF, "NOP", [], []), line(0x20, 0x7, "EXIT", [], [])]
    text = ah.trace_text({(0, 0, 0): [lines]}, block=(4, 1, 1)).replace("0010 ", "\n# note\n\n0010 ")
    path = ah.write(tmp_path / "k.traceg", text)
    number = [s.rstrip() for s in text.splitlines()].index(lines[2].rstrip()) + 1
    with pytest.raises(TraceError, match=rf"^{re.escape(str(path))}:{number}: thread 3 .* never executes an EXIT"):
        accelsim.load(path)
    assert_same(path)
