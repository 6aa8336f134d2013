"""Golden tests from ElTantawy et al. 2014 (the multi-path IPDOM slides), worked by hand, 4-thread warps.

Masks are written as in the slides: lane 0 leftmost ("1010" = lanes 0 and 2).
PCs are (block, instruction offset); blocks A=0, B=1, C=2, D=3, the virtual exit is 4.
"""

from __future__ import annotations

from simt_fast.sim import reference, simulate
from simt_fast.sim.config import SimConfig

from sim_helpers import tiny_trace

A, B, C, D, EXIT = 0, 1, 2, 3, 4
NONE = (-1, -1)


def m(s: str) -> int:
    """Slide notation (lane 0 first) -> mask."""
    return sum(1 << i for i, ch in enumerate(s) if ch == "1")


def tables(events):
    """The sequence of (ST, RT) contents of warp 0, in slide terms."""
    out = []
    for e in events:
        if e["kind"] == "tables" and e["warp"] == 0:
            st = [(u["pc"], u["rpc"], u["mask"]) for u in e["st"]]
            rt = [(r["pc"], r["rpc"], r["rmask"], r["pending"]) for r in e["rt"]]
            out.append((st, rt))
    return out


def cfg(mech, **kw):
    return SimConfig(mechanism=mech, warp_size=4, simd_width=4, lat_alu=10, lat_branch=10, **kw)


def if_else():
    # A: if (tid even) B else C; D.  Two instructions per block (slides: "assume two
    # instructions per block"); every instruction depends on the previous one.
    return tiny_trace(blocks=[["alu", "bra"], ["alu", "bra"], ["alu", "bra"], ["alu", "exit"]],
                      succ=[[B, C], [D], [D], [EXIT]], paths=[[A, B, D, EXIT], [A, C, D, EXIT]] * 2, chain=True)


def test_if_else_split_and_reconvergence_tables_mp():
    ev = []
    simulate(if_else(), cfg("mp"), events=ev)
    assert tables(ev) == [
        ([((A, 0), NONE, m("1111"))], []),
        # divergence at the end of A: one RT entry at IPDOM(A) = D, one ST split per target
        ([((B, 0), (D, 0), m("1010")), ((C, 0), (D, 0), m("0101"))], [((D, 0), NONE, m("1111"), m("1111"))]),
        # B reaches D first: its bits leave the pending mask
        ([((C, 1), (D, 0), m("0101"))], [((D, 0), NONE, m("1111"), m("0101"))]),
        # C arrives: pending mask all zeros -> the entry moves to the ST
        ([((D, 0), NONE, m("1111"))], []),
        ([], []),
    ]


def test_if_else_sps_is_a_stack():
    ev = []
    s = simulate(if_else(), cfg("sps"), events=ev)
    seq = tables(ev)
    # the last pushed path (C) runs first; B waits until C pops at the RPC
    assert seq[1] == ([((B, 0), (D, 0), m("1010")), ((C, 0), (D, 0), m("0101"))], [((D, 0), NONE, m("1111"), m("1111"))])
    assert seq[2] == ([((B, 0), (D, 0), m("1010"))], [((D, 0), NONE, m("1111"), m("1010"))])
    assert s.max_stack_depth == 3 and s.max_splits == 1


def test_single_path_vs_multi_path_timing_diagram():
    """Slides' timing diagram: MP fills the idle cycles of one path with the other path.

    Latency L = 10 (lat_branch too), one issue per cycle. SPS: A0@0 A1@10 | C0@20 C1@30 | B0@40
    B1@50 | D0@60 D1@70, done at 80 (B waits for C's branch: the stack fetches one PC per warp);
    MP: A0@0 A1@10 | B0@20 C0@21 B1@30 C1@31 | D0@41 D1@51, done at 61. Both issue 8 warp
    instructions; MP saves one latency and one branch resolution (19 idle cycles).
    """
    sps = simulate(if_else(), cfg("sps"))
    mp = simulate(if_else(), cfg("mp"))
    dps = simulate(if_else(), cfg("dps"))
    assert (sps.cycles, mp.cycles, dps.cycles) == (80, 61, 61)
    assert sps.warp_insts == mp.warp_insts == 8
    assert sps.idle_cycles == 71 - 8 and mp.idle_cycles == 52 - 8
    assert sps.idle_cycles - mp.idle_cycles == 19
    ev = []
    simulate(if_else(), cfg("sps"), events=ev)
    assert [(e["cycle"], e["pc"]) for e in ev if e["kind"] == "issue"] == [
        (0, (A, 0)), (10, (A, 1)), (20, (C, 0)), (30, (C, 1)), (40, (B, 0)), (50, (B, 1)), (60, (D, 0)), (70, (D, 1))]
    ev = []
    simulate(if_else(), cfg("mp"), events=ev)
    assert [(e["cycle"], e["pc"]) for e in ev if e["kind"] == "issue"] == [
        (0, (A, 0)), (10, (A, 1)), (20, (B, 0)), (21, (C, 0)), (30, (B, 1)), (31, (C, 1)), (41, (D, 0)), (51, (D, 1))]
    for mech in ("sps", "mp", "dps"):
        assert simulate(if_else(), cfg(mech)).to_dict() == reference.simulate(if_else(), cfg(mech)).to_dict()


def test_serial_and_mimd_timing_worked_by_hand():
    """The if/else of the slides (L = 10, every instruction reads the previous one's register) under
    the two mechanisms without reconvergence tables.

    serial: A0@0 A1@10 | B0@20 C0@21 | B1@30 C1@31 | D0@40 D0'@41 | D1@50 D1'@51, done at 61: the
    paths overlap as under mp, but never merge again, so D runs once per path (10 warp instructions).
    mimd: every thread on its own, all ready threads of a cycle at once: A0@0 A1@10 B0,C0@20
    B1,C1@30 D0@40 D1@50 (6 instructions of each of the 4 threads), done at 60: one cycle under mp's
    61, whose C0 waits for B0's issue slot; the lower bound of docs/core.md with fixed latencies.
    """
    ev = []
    serial = simulate(if_else(), cfg("serial"), events=ev)
    assert [(e["cycle"], e["pc"], e["mask"]) for e in ev if e["kind"] == "issue"] == [
        (0, (A, 0), m("1111")), (10, (A, 1), m("1111")), (20, (B, 0), m("1010")), (21, (C, 0), m("0101")),
        (30, (B, 1), m("1010")), (31, (C, 1), m("0101")), (40, (D, 0), m("1010")), (41, (D, 0), m("0101")),
        (50, (D, 1), m("1010")), (51, (D, 1), m("0101"))]
    assert (serial.cycles, serial.warp_insts, serial.max_splits) == (61, 10, 2)
    ev = []
    mimd = simulate(if_else(), cfg("mimd"), events=ev)
    issues = [(e["cycle"], e["pc"]) for e in ev if e["kind"] == "issue"]
    assert issues == [(0, (A, 0))] * 4 + [(10, (A, 1))] * 4 + [(20, (B, 0)), (20, (C, 0))] * 2 \
        + [(30, (B, 1)), (30, (C, 1))] * 2 + [(40, (D, 0))] * 4 + [(50, (D, 1))] * 4
    assert (mimd.cycles, mimd.warp_insts, mimd.thread_insts) == (60, 24, 24)
    assert mimd.cycles < simulate(if_else(), cfg("mp")).cycles
    for mech in ("serial", "mimd"):
        assert simulate(if_else(), cfg(mech)).to_dict() == reference.simulate(if_else(), cfg(mech)).to_dict()


def test_branch_hazard_worked_by_hand():
    """``lat_branch`` is a control hazard: the threads of a unit that issued a branch issue again only
    ``lat_branch`` cycles later (the next instruction is fetched once the branch has resolved). The
    stack and the thread frontier fetch one PC per warp, so there the whole warp waits; multi-path
    splits, dual paths and DWF's warps wait each for their own branch, and another path fills the gap.

    If/else without register dependences, one issue per cycle (warp 4 = SIMD 4), lat_alu 2,
    lat_branch 10; A's branch issues at 1, so both paths may start at 11.
    sps:      A0@0 A1@1 | C0@11 C1@12 | B0@22 B1@23 | D0@33 D1@34: done at 34 + 2 = 36
              (C is on top of the stack; B waits for C's branch: one PC per warp)
    frontier: the same order and times (RPO: A, C, B, D; B and C's threads meet at D)
    mp, dps:  A0@0 A1@1 | B0@11 B1@12 C0@13 C1@14 | D0@24 D1@25: done at 27 (B's branch resolves
              while C issues; D, the reconverged split, waits for C's branch, the last to arrive)
    dwf:      as mp (majority: B and C tie at two threads, the lower PC B first; C's threads join
              the warp B's threads formed at D, which then waits for C's branch too)
    With lat_branch 1 (no hazard) every mechanism issues the 8 instructions back to back: done at 9.
    """
    trace = tiny_trace(blocks=[["alu", "bra"], ["alu", "bra"], ["alu", "bra"], ["alu", "exit"]],
                       succ=[[B, C], [D], [D], [EXIT]], paths=[[A, B, D, EXIT], [A, C, D, EXIT]] * 2)
    c = SimConfig(warp_size=4, simd_width=4, lat_alu=2, lat_branch=10)
    cycles = {m: simulate(trace, c.replace(mechanism=m)).cycles for m in ("sps", "frontier", "mp", "dps", "dwf")}
    assert cycles == {"sps": 36, "frontier": 36, "mp": 27, "dps": 27, "dwf": 27}
    issues = {}
    for m in ("sps", "mp"):
        ev = []
        simulate(trace, c.replace(mechanism=m), events=ev)
        issues[m] = [(e["cycle"], e["pc"]) for e in ev if e["kind"] == "issue"]
    assert issues["sps"] == [(0, (A, 0)), (1, (A, 1)), (11, (C, 0)), (12, (C, 1)), (22, (B, 0)), (23, (B, 1)),
                             (33, (D, 0)), (34, (D, 1))]
    assert issues["mp"] == [(0, (A, 0)), (1, (A, 1)), (11, (B, 0)), (12, (B, 1)), (13, (C, 0)), (14, (C, 1)),
                            (24, (D, 0)), (25, (D, 1))]
    for m in cycles:
        assert simulate(trace, c.replace(mechanism=m, lat_branch=1)).cycles == 9
        assert simulate(trace, c.replace(mechanism=m)).to_dict() == reference.simulate(trace, c.replace(mechanism=m)).to_dict()


def do_while_break():
    # do { A; if (cond1) { B; break; } else { C; } } while (cond2); D
    # lanes 0,2 break in the first iteration; lanes 1,3 loop once more and then break.
    # B is long, so split C_0101 comes round to B while B_1010 is still executing it.
    return tiny_trace(blocks=[["alu", "bra"], ["alu"] * 8 + ["bra"], ["alu", "bra"], ["alu", "exit"]],
                      succ=[[B, C], [D], [A, D], [EXIT]], paths=[[A, B, D, EXIT], [A, C, A, B, D, EXIT]] * 2,
                      chain=True)


def test_do_while_break_early_reconvergence_tables():
    c = SimConfig(mechanism="mp-oer", warp_size=4, simd_width=4, lat_alu=4, lat_branch=4)
    ev = []
    s = simulate(do_while_break(), c, events=ev)
    seq = tables(ev)
    assert seq[0] == ([((A, 0), NONE, m("1111"))], [])
    # divergence at A: B_1010 and C_0101, reconvergence at IPDOM(A) = D
    assert seq[1] == ([((B, 0), (D, 0), m("1010")), ((C, 0), (D, 0), m("0101"))],
                      [((D, 0), NONE, m("1111"), m("1111"))])
    # C_0101 loops back to A while B_1010 runs B
    assert seq[2] == ([((B, 2), (D, 0), m("1010")), ((A, 0), (D, 0), m("0101"))],
                      [((D, 0), NONE, m("1111"), m("1111"))])
    # step 4b: the trailing split enters B while the leading one is at (B, 4) (A's branch held the
    # trailing split up lat_branch cycles): the leading split waits in a new RT entry at its next PC
    # B_R = (B, 4); the trailing split's RPC becomes B_R
    BR = (B, 4)
    assert seq[3] == ([((B, 0), BR, m("0101"))],
                      [((D, 0), NONE, m("1111"), m("1111")), (BR, (D, 0), m("1111"), m("0101"))])
    # step 4a: B_0101 reaches B_R, the pending mask is all zeros, the entry moves to the ST
    assert seq[4] == ([(BR, (D, 0), m("1111"))], [((D, 0), NONE, m("1111"), m("1111"))])
    assert seq[5] == ([((D, 0), NONE, m("1111"))], [])
    assert s.early_reconvergences == 1
    # without OER the two B splits each execute B separately (B twice: 9 + 9 warp instructions)
    mp = simulate(do_while_break(), c.replace(mechanism="mp"))
    assert mp.warp_insts - s.warp_insts == 9 - 4  # the merged split shares B[4:]
    assert mp.expanded_insts == 9 and s.expanded_insts == 4
    assert s.simd_util > mp.simd_util
    assert s.to_dict() == reference.simulate(do_while_break(), c).to_dict()


def test_divergent_loop_with_break_keeps_tables_bounded():
    """State-machine shape: H branches to X or Y, both of which either loop back to H or leave to
    E = IPDOM(H). Splits re-merge in H every iteration (mp-oer) and diverge again; a divergence
    whose IPDOM is the split's own RPC must not nest another RT entry (it used to, once per
    iteration, until the table overflowed on the statemachine workload)."""
    H, X, Y, E = 0, 1, 2, 3
    rng = __import__("numpy").random.default_rng(4)
    paths = []
    for _ in range(8):
        p = [H]
        for it in range(12):
            p.append(X if rng.random() < 0.5 else Y)
            p.append(H if it < 11 else E)
        paths.append(p + [EXIT])
    trace = tiny_trace(blocks=[["alu", "alu", "alu", "bra"], ["alu", "bra"], ["alu", "alu", "bra"], ["exit"]],
                       succ=[[X, Y], [H, E], [H, E], [EXIT]], paths=paths, chain=True)
    for mech in ("sps", "dps", "mp", "mp-oer"):
        c = SimConfig(mechanism=mech, warp_size=8, simd_width=8, lat_alu=3, lat_branch=3)
        s = simulate(trace, c)
        assert s.max_rt <= 2 and s.max_stack_depth <= 12
        assert s.thread_insts == trace.total_thread_insts()
        assert s.to_dict() == reference.simulate(trace, c).to_dict()
    assert simulate(trace, c).early_reconvergences > 0


def test_thread_frontiers_run_each_block_once_on_an_unstructured_dag():
    """Wu et al. 2012, Fig. 7 situation: seven threads of one warp take seven different paths through an
    unstructured acyclic CFG whose every branch has the exit as IPDOM. IPDOM reconvergence runs the
    shared blocks once per path that reaches them (dynamic code expansion, Fig. 7(c)); thread
    frontiers (RPO priority) merge the paths where they meet, so every block issues exactly once
    (Fig. 7(d))."""
    # B0 -> B1 | B2 ; B1 -> B2 | B3 ; B2 -> B3 | B4 ; B3 -> B4 | exit ; B4 -> exit   (a ladder)
    X = 5
    blocks = [["alu", "bra"], ["alu", "alu", "bra"], ["alu", "alu", "bra"], ["alu", "alu", "bra"], ["alu", "exit"]]
    succ = [[1, 2], [2, 3], [3, 4], [4, X], [X]]
    paths = [[0, 1, 2, 3, 4, X], [0, 1, 2, 3, X], [0, 1, 2, 4, X], [0, 1, 3, 4, X], [0, 1, 3, X],
             [0, 2, 3, 4, X], [0, 2, 4, X]]
    trace = tiny_trace(blocks=blocks, succ=succ, paths=paths, chain=True)
    assert list(trace.ipdom[:5]) == [X] * 5
    c = SimConfig(mechanism="frontier", warp_size=8, simd_width=8, lat_alu=4, lat_branch=4)
    fr = simulate(trace, c)
    sps = simulate(trace, c.replace(mechanism="sps"))
    sizes = trace.block_sizes()
    assert fr.warp_insts == int(sizes[:5].sum())  # every block exactly once
    assert fr.expanded_insts == 0
    # IPDOM: each split runs its own copy of a shared block. B2: {t0,t1,t2} and {t5,t6} (2 copies);
    # B3: {t0,t1}, {t3,t4}, {t5} (3); B4: {t2}, {t6}, {t0}, {t3}, {t5} (5). One copy of each is not
    # expansion: dynamic code expansion = (2-1)*3 + (3-1)*3 + (5-1)*2 = 17 instructions
    assert sps.warp_insts == fr.warp_insts + 17
    # expanded_insts only remembers blocks since the live threads were last together, and here the
    # short paths exit first (docs/core.md), so it sees part of that expansion
    assert 0 < sps.expanded_insts <= 17
    assert fr.simd_util > sps.simd_util and fr.cycles < sps.cycles
    for m in ("frontier", "sps", "mp"):
        assert simulate(trace, c.replace(mechanism=m)).to_dict() == reference.simulate(trace, c.replace(mechanism=m)).to_dict()


def test_frontier_barrier_after_a_loop_whose_body_is_numbered_after_the_exit():
    """RPO visits the loop body first, so the body's blocks get *higher* numbers than the loop exit X
    (which ends in bar.sync). Thread 0 leaves the loop at once and waits at X's barrier, the
    highest-priority PC; the warp must go on with thread 1 in the body (a barrier waiter is not part
    of the frontier), else the barrier could never be released."""
    A, H, BODY, X, E, EX = 0, 1, 2, 3, 4, 5
    trace = tiny_trace(blocks=[["alu"], ["alu", "bra"], ["alu", "bra"], ["alu", "bar"], ["alu", "exit"]],
                       succ=[[H], [BODY, X], [H], [E], [EX]],
                       paths=[[A, H, X, E, EX], [A, H, BODY, H, X, E, EX]], barrier=[X], chain=True)
    from simt_fast.sim import rpo_priority

    prio = rpo_priority(trace.n_blocks, trace.succ_ptr, trace.succ_idx)
    assert prio[X] < prio[BODY]
    c = SimConfig(mechanism="frontier", warp_size=4, simd_width=4, lat_alu=2)
    s = simulate(trace, c)
    assert s.thread_insts == trace.total_thread_insts() and s.barrier_wait_cycles > 0
    assert s.to_dict() == reference.simulate(trace, c).to_dict()
