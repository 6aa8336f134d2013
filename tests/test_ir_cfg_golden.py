"""Golden CFG tests on small hand-written PTX (tests/data/ir/), numba test_flow_control.py style.

Each docstring draws the CFG; block ids are in source order and the last id is the virtual exit.
Successor order: taken target first, then the fall-through.
"""

from pathlib import Path

import numpy as np
import pytest

from simt_fast.ir import build_cfg, flatten, parse_ptx

DATA = Path(__file__).parent / "data" / "ir"


def cfg_of(name):
    module = parse_ptx(DATA / name)
    (kernel,) = module.kernels
    return kernel, build_cfg(kernel)


def shape(cfg):
    return [list(b.succs) for b in cfg.blocks], [int(x) for x in cfg.ipdom]


def test_if_else():
    """
        0 (tid<16?)
       / \\
      2   1        2 = THEN, 1 = else (fall-through)
       \\ /
        3 (JOIN: ret)
        |
        4 exit
    """
    k, cfg = cfg_of("ifelse.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[2, 1], [3], [3], [4], []]
    assert ipdom == [3, 3, 3, 4, -1]
    assert [b.label for b in cfg.blocks] == ["", "", "$THEN", "$JOIN", "<exit>"]
    assert [b.n_instrs for b in cfg.blocks] == [3, 2, 1, 3, 0]
    assert list(cfg.idom) == [0, 0, 0, 0, 3]
    assert cfg.loops == []
    # THEN and else are control dependent on the branch; JOIN on nothing
    assert cfg.control_deps == [[], [0], [0], [], []]
    assert cfg.control_dep_edges[2] == [(0, 2)] and cfg.control_dep_edges[1] == [(0, 1)]


def test_nested_loops():
    """
        0
        |
        1 <----+      outer header
        |      |
        2 <-+  |      inner header and latch (self loop)
        |   |  |
        2 --+  |
        |      |
        3 -----+      outer latch
        |
        4 (ret) -> 5 exit
    """
    k, cfg = cfg_of("nested_loops.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[1], [2], [2, 3], [1, 4], [5], []]
    assert ipdom == [1, 2, 3, 4, 5, -1]
    assert cfg.back_edges == [(2, 2), (3, 1)]
    loops = {L.header: L for L in cfg.loops}
    assert set(loops) == {1, 2}
    assert loops[1].body == frozenset({1, 2, 3}) and loops[1].latches == (3,) and loops[1].parent == -1
    assert loops[2].body == frozenset({2}) and loops[2].latches == (2,) and loops[2].parent == 1
    assert loops[1].exits == ((3, 4),) and loops[2].exits == ((2, 3),)
    assert [int(b) for b in cfg.rpo] == [0, 1, 2, 3, 4, 5]
    # the inner loop body depends on itself (loop-carried) and on the outer latch
    assert cfg.control_deps[2] == [2, 3]
    assert cfg.iterated_control_deps[2] == [2, 3]


def test_loop_with_two_exits():
    """
        0
        |
        1 <------+   header: i >= n ? -> DONE
       / \\       |
      5   2      |   2: a[i]==0 ? -> FOUND
      ^  / \\     |
      | 4   3 ---+   3: latch
      | |
      +-+            4: FOUND falls into DONE (5)
        5 -> 6 exit
    """
    k, cfg = cfg_of("loop_two_exits.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[1], [5, 2], [4, 3], [1], [5], [6], []]
    assert ipdom == [1, 5, 5, 1, 5, 6, -1]
    (loop,) = cfg.loops
    assert loop.header == 1 and loop.body == frozenset({1, 2, 3}) and loop.latches == (3,)
    assert loop.exits == ((1, 5), (2, 4))
    assert cfg.control_deps[4] == [2]
    assert cfg.control_deps[3] == [2]
    assert cfg.control_deps[2] == [1]
    assert cfg.control_deps[1] == [2]  # the header runs again only if the latch edge 2->3 is taken
    assert cfg.iterated_control_deps[4] == [1, 2]


def test_short_circuit():
    """(a && b) || (c && d)

        0 (a?) --!a--> 2
        |              ^
        1 (b?) --!b----+      1 -b-> 4
        2 (c?) --!c--> 5
        3 (d?) --!d--> 5,  d falls through to 4
        4 THEN -> 6      5 ELSE -> 6      6 ret -> 7 exit
    """
    k, cfg = cfg_of("short_circuit.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[2, 1], [4, 2], [5, 3], [5, 4], [6], [6], [7], []]
    assert ipdom == [6, 6, 6, 6, 6, 6, 7, -1]
    assert cfg.control_deps == [[], [0], [0, 1], [2], [1, 3], [2, 3], [], []]
    assert cfg.iterated_control_deps[4] == [0, 1, 2, 3]
    assert cfg.loops == []


def test_early_return_in_loop():
    """
        0
        |
        1 <-----+   loads a[0]; == 0 -> EARLY (4)
       / \\      |
      4   2 ----+   latch: i < 8 -> 1, else 3
      |   |
      |   3         st; ret
       \\ /
        5 exit
    """
    k, cfg = cfg_of("early_return.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[1], [4, 2], [1, 3], [5], [5], []]
    assert ipdom == [1, 5, 5, 5, 5, -1]
    (loop,) = cfg.loops
    assert loop.header == 1 and loop.body == frozenset({1, 2}) and loop.exits == ((1, 4), (2, 3))


def test_brx_idx_switch():
    """
        0 --(idx>2)--> 5 DEFAULT
        |
        1 brx.idx [CASE0, CASE1, CASE2, CASE1]
       /|\\
      2 3 4   (CASE0..2) --> 6 JOIN <-- 5
                             |
                             7 exit
    """
    k, cfg = cfg_of("switch_brx.ptx")
    assert k.jump_tables == {"$TABLE": ["$CASE0", "$CASE1", "$CASE2", "$CASE1"]}
    assert "$TABLE" not in k.labels  # a jump-table label does not start a block
    succs, ipdom = shape(cfg)
    assert succs == [[5, 1], [2, 3, 4], [6], [6], [6], [6], [7], []]
    assert ipdom == [6, 6, 6, 6, 6, 6, 7, -1]
    assert cfg.control_deps[3] == [1] and cfg.control_deps[1] == [0] and cfg.control_deps[5] == [0]


def test_loop_without_exit_postdominators():
    """
        0 --tid==0--> 2 SPIN (self loop, no exit)
        |             |
        1 (st; ret)   +- pseudo edge (post-dominance only)
        |             |
        3 exit <------+

    The exitless loop gets a pseudo edge to the exit (numba's rule), so every block has an IPDOM.
    """
    k, cfg = cfg_of("infinite_loop.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[2, 1], [3], [2], []]
    assert ipdom == [3, 3, 3, -1]
    (loop,) = cfg.loops
    assert loop.header == 2 and loop.exits == ()


def test_barriers_guarded_ret_and_label_at_end():
    """
        0  ... bar.sync          (barrier ends the block)
        1  ... @%p1 ret  -> exit, 2
        2  st; @%p1 bra END  -> exit (END is at the end of the body), 3
        3  $A/$B: barrier.sync -> falls off the end -> exit
        4  exit
    """
    k, cfg = cfg_of("barrier.ptx")
    succs, ipdom = shape(cfg)
    assert succs == [[1], [4, 2], [4, 3], [4], []]
    assert ipdom == [1, 4, 4, 4, -1]
    assert cfg.blocks[3].labels == ("$A", "$B") and cfg.blocks[3].label == "$A"
    assert list(cfg.has_barrier) == [True, False, False, True, False]
    assert [b.n_instrs for b in cfg.blocks] == [6, 4, 2, 1, 0]


def test_flatten_arrays_match_cfg():
    k, cfg = cfg_of("loop_two_exits.ptx")
    flat = flatten(k, cfg)
    assert flat["block_start"].dtype == np.int32 and list(flat["block_start"]) == [0, 3, 5, 8, 10, 11, 12, 12]
    assert list(flat["succ_ptr"]) == [0, 1, 3, 5, 6, 7, 8, 8]
    assert list(flat["succ_idx"]) == [1, 5, 2, 4, 3, 1, 5, 6]
    assert list(flat["ipdom"]) == [1, 5, 5, 1, 5, 6, -1]
    assert flat["label"] == ["", "$LOOP", "", "", "$FOUND", "$DONE", "<exit>"]
    assert flat["reg_names"][:3] == ["%p0", "%p1", "%p2"]
    ids = flat["reg_ids"]
    # ld.param.u64 %rd1, [param]: dst %rd1, no register sources
    assert flat["dst_reg"][0] == ids["%rd1"] and list(flat["src_reg"][0]) == [-1, -1, -1]
    # setp.ge.u32 %p1, %r1, %r3
    assert flat["dst_reg"][3] == ids["%p1"] and list(flat["src_reg"][3]) == [ids["%r1"], ids["%r3"], -1]
    # @%p1 bra $DONE: guard is a source
    assert flat["dst_reg"][4] == -1 and list(flat["src_reg"][4]) == [ids["%p1"], -1, -1]
    # st.global.u32 [%rd1], 1: the address base is a source, no destination
    assert flat["dst_reg"][10] == -1 and list(flat["src_reg"][10]) == [ids["%rd1"], -1, -1]
    from simt_fast.ir import OpClass

    assert flat["op_class"][0] == OpClass.MEM_CONST
    assert flat["op_class"][5] == OpClass.MEM_GLOBAL
    assert flat["op_class"][4] == OpClass.BRANCH
    assert flat["op_class"][11] == OpClass.EXIT
    assert flat["text"][3] == "setp.ge.u32 \t%p1, %r1, %r3"  # the statement as written, without ';'
    assert len(flat["text"]) == 12


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.ptx") if not p.name.startswith("bad_")))
def test_every_fixture_ipdom_is_immediate_postdominator(name):
    module = parse_ptx(DATA / name)
    for k in module.kernels:
        cfg = build_cfg(k)
        for b in cfg.blocks[:-1]:
            p = int(cfg.ipdom[b.id])
            assert p != b.id and cfg.postdominates(p, b.id)


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="ptxas (CUDA toolkit) not installed")
def test_hand_written_fixtures_are_valid_ptx(tmp_path):
    """The golden fixtures are real PTX: ptxas assembles every one of them."""
    import subprocess

    for p in sorted(DATA.glob("*.ptx")):
        if p.name.startswith(("nvcc_", "bad_")):
            continue
        res = subprocess.run(["ptxas", "-arch=sm_75", str(p), "-o", str(tmp_path / "x.cubin")], capture_output=True, text=True)
        assert res.returncode == 0, f"{p.name}: {res.stderr}"


def test_empty_body_entry_falls_to_exit():
    """An empty kernel body: entry block (no instructions) -> virtual exit, never a self-loop."""
    from simt_fast.ir import build_cfg, parse_ptx

    m = parse_ptx(".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n}\n")
    cfg = build_cfg(m.find_kernel())
    assert [b.succs for b in cfg.blocks] == [[1], []] and cfg.ipdom[0] == 1
