"""Corpus test: every shipped nvcc PTX (corpus -O0/-O3, workloads, other-flag fixtures) parses, and
every function's CFG satisfies the block conventions and exact post-dominance."""

from pathlib import Path

import numpy as np
import pytest

from simt_fast.ir import OpClass, Reg, Vector, build_cfg, flatten, parse_ptx
from simt_fast.ir import graph

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "data" / "ptx" / "corpus"
FILES = sorted(CORPUS.glob("*.ptx")) + sorted((ROOT / "data" / "ptx" / "workloads").glob("*.ptx"))
FILES += sorted((Path(__file__).parent / "data" / "ir").glob("nvcc_*.ptx"))


def test_corpus_has_both_levels_for_every_source():
    sources = sorted(p.stem for p in (ROOT / "data" / "cuda" / "corpus").glob("*.cu"))
    assert len(sources) >= 6
    for s in sources:
        assert (CORPUS / f"{s}.O0.ptx").is_file() and (CORPUS / f"{s}.O3.ptx").is_file(), s


def reach(succs, start, removed):
    seen, work = set(), [start]
    while work:
        v = work.pop()
        if v in seen or v == removed:
            continue
        seen.add(v)
        work.extend(succs[v])
    return seen


def check_cfg(func, cfg):
    instrs = func.instructions
    n = len(instrs)
    blocks = cfg.blocks
    assert cfg.entry == 0 and cfg.exit == len(blocks) - 1
    assert blocks[-1].start == blocks[-1].end == n and blocks[-1].succs == []
    # blocks partition the instructions in order
    assert blocks[0].start == 0
    for a, b in zip(blocks[:-2], blocks[1:-1]):
        assert a.end == b.start
    assert blocks[-2].end == n
    label_idx = set(func.labels.values())
    for b in blocks[:-1]:
        for i in range(b.start, b.end - 1):
            ins = instrs[i]
            # control transfers and barriers only at block ends; labels only at block starts
            assert not (ins.is_branch or ins.is_exit or ins.is_barrier), ins.text
            assert i + 1 not in label_idx
        assert b.succs, f"block {b.id} has no successor"
        if b.n_instrs and instrs[b.end - 1].is_exit:
            assert cfg.exit in b.succs
    # post-dominance, brute force on the augmented graph
    succs = [list(b.succs) for b in blocks]
    aug = [list(s) for s in succs]
    for v, e in graph.postdom_augmented_edges(len(blocks), succs, cfg.exit):
        aug[v].append(e)
    pdom = {v: {d for d in range(len(blocks)) if d == v or cfg.exit not in reach(aug, v, d)} for v in range(len(blocks))}
    for b in blocks[:-1]:
        p = int(cfg.ipdom[b.id])
        assert p in pdom[b.id] and p != b.id  # post-dominates
        assert pdom[p] == pdom[b.id] - {b.id}  # immediate
    flat = flatten(func, cfg)
    n_regs = len(flat["reg_names"])
    assert flat["op_class"].shape == (n,) and flat["src_reg"].shape == (n, 3)
    assert flat["dst_reg"].max(initial=-1) < n_regs and flat["src_reg"].max(initial=-1) < n_regs
    assert (flat["op_class"] <= max(OpClass)).all()
    assert np.array_equal(flat["block_start"][1:] >= flat["block_start"][:-1], np.ones(len(blocks), bool))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_parse_and_cfg_invariants(path):
    module = parse_ptx(path)
    assert module.version and module.target and module.address_size == 64
    assert module.kernels
    for func in module.functions.values():
        check_cfg(func, build_cfg(func))


def test_corpus_covers_the_constructs_a_parser_must_survive():
    bases, mods, pairs, spaces, local_params, calls = set(), set(), 0, set(), 0, 0
    for path in FILES:
        m = parse_ptx(path)
        for g in m.globals:
            spaces.add(g.space)
        for f in m.functions.values():
            local_params += sum(v.space == "param" for v in f.local_vars)
            for ins in f.instructions:
                bases.add(ins.base)
                mods.update(ins.modifiers)
                if ins.base == "call":
                    calls += 1
                if ins.operands and isinstance(ins.operands[0], Vector) and len(ins.operands[0].elems) == 2 and ins.base == "shfl":
                    pairs += 1
    for op in ("shfl", "vote", "atom", "bar", "call", "ld", "st", "cvt", "setp", "selp", "bra", "ret", "fma", "mul", "div"):
        assert op in bases, op
    for mod in ("global", "shared", "local", "const", "param", "f64", "u64", "nc", "v4"):
        assert mod in mods, mod
    assert pairs > 0  # shfl.sync %r|%p destinations
    assert {"const", "global"} <= spaces  # initialised module variables
    assert local_params > 0 and calls > 0  # -O0 call sequences with their own .param scopes


def test_lineinfo_loc_directives_are_recorded():
    m = parse_ptx(Path(__file__).parent / "data" / "ir" / "nvcc_lineinfo_switch_calls.ptx")
    k = m.find_kernel("dispatch")
    locs = k.directives["loc"]
    assert locs and all(len(v) == 3 and v[0] >= 1 for v in locs.values())
    assert all(0 <= i <= len(k.instructions) for i in locs)


def test_constant_initialiser_bytes():
    m = parse_ptx(CORPUS / "memory_spaces.O3.ptx")
    by_name = {g.name: g for g in m.globals}
    coeffs = by_name["coeffs"]
    assert coeffs.space == "const" and coeffs.size == 32
    assert np.frombuffer(coeffs.init, np.float32).tolist() == [0.5, 0.25, 0.125, 1.0, 2.0, 4.0, -1.0, 3.0]
    assert np.frombuffer(by_name["table"].init, np.int32).tolist() == [3, 1, 4, 1]
    assert np.frombuffer(by_name["counter"].init, np.uint64).tolist() == [42]
    assert by_name["scratch"].init is None and by_name["scratch"].size == 256
