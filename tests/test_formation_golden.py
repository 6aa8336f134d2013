"""Hand-worked golden runs: DWF merging (and a lane conflict), en-DWF where DWF conflicts (Jin 2012,
Fig. 4.5 inside a run), TBC compaction and restoration, PDOM&HWS issuing a 0011 warp in 2 cycles."""

from __future__ import annotations

import pytest

from simt_fast.sim import simulate
from simt_fast.sim.config import SimConfig
from simt_fast.sim.reference.formation import slot_checksum
from simt_fast.sim.hws import quarter_mask, squeeze_mask
from simt_fast.sim.reference import simulate as core_simulate  # the IPDOM-family model (sps)
from simt_fast.sim.reference import simulate as reference

from sim_helpers import tiny_trace as tiny


def issues(events):
    return [(e["cycle"], e["pc"][0], e["checksum"]) for e in events]


def expect(*rows):
    """(cycle, block, slots) rows -> the form ``issues`` returns."""
    return [(c, b, slot_checksum(s)) for c, b, s in rows]


def both(trace, cfg):
    """Run kernel and reference; they must agree; return the kernel's stats and events."""
    ev, ref_ev = [], []
    s = simulate(trace, cfg, events=ev)
    r = reference(trace, cfg, events=ref_ev)
    assert s.to_dict() == r.to_dict()
    assert ref_ev == ev
    return s, ev


# Two warps of 4 (SIMD 4): A branches to B or C, both reach D. Warp 0 sends slots 0,1 to B and 2,3
# to C; warp 1 the other way round, so the diverged halves of the two warps complement each other.
DIAMOND = dict(blocks=[["bra"], ["alu"], ["alu"], ["alu"]], succ=[[1, 2], [3], [3], [4]],
               paths=[[0, 1, 3, 4]] * 2 + [[0, 2, 3, 4]] * 4 + [[0, 1, 3, 4]] * 2, block=(8, 1, 1))


def test_dwf_merges_two_diverged_warps_at_a_common_pc_and_counts_a_lane_conflict():
    trace = tiny(**DIAMOND)
    cfg = SimConfig(mechanism="dwf", warp_size=4, simd_width=4, issue_policy="majority", lat_alu=1, lat_branch=1)
    s, ev = both(trace, cfg)
    # cycle 0: warp 0 runs A: {0,1} wait at B (warp 0 keeps them), {2,3} open a warp at C.
    # cycle 1: warp 1 runs A: {6,7} join warp 0 at B (slots 2,3 free), {4,5} join at C: 2 merges.
    # cycle 2: B and C hold 4 threads each; the majority tie goes to the lower PC, B. Warp 0 moves to D.
    # cycle 3: C's warp reaches D, where warp 0 (full, same slots) is still forming: 4 lane conflicts,
    #          so it stays a warp of its own; D then issues twice.
    assert issues(ev) == expect((0, 0, [0, 1, 2, 3]), (1, 0, [4, 5, 6, 7]), (2, 1, [0, 1, 6, 7]),
                                (3, 2, [4, 5, 2, 3]), (4, 3, [0, 1, 6, 7]), (5, 3, [4, 5, 2, 3]))
    assert (s.merges, s.lane_conflicts, s.warp_insts, s.thread_insts) == (2, 4, 6, 24)
    # the per-warp IPDOM stack needs 8 warp instructions for the same work
    assert core_simulate(trace, cfg.replace(mechanism="sps", issue_policy="lrr")).warp_insts == 8


# Fig. 4.5's situation inside a run: two warps of 8 on SIMD 4 (two quarters). Both warps send
# quarter 0 (slots 0-3) to B and quarter 1 to C, so their halves collide slot for slot.
FIG_4_5 = dict(blocks=[["bra"], ["alu"], ["alu"]], succ=[[1, 2], [3], [3]],
               paths=([[0, 1, 3]] * 4 + [[0, 2, 3]] * 4) * 2, block=(16, 1, 1))


def test_en_dwf_merges_where_dwf_has_lane_conflicts():
    trace = tiny(**FIG_4_5)
    base = SimConfig(warp_size=8, simd_width=4, issue_policy="majority", lat_alu=1, lat_branch=1)
    dwf, dwf_ev = both(trace, base.replace(mechanism="dwf"))
    assert (dwf.merges, dwf.lane_conflicts, dwf.warp_insts) == (0, 8, 6)
    en, en_ev = both(trace, base.replace(mechanism="en-dwf"))
    # warp 1's B threads 8-11 conflict in slots 0-3 and move to the holes of quarter 1 (Appendix B
    # steps 2-3); its C threads 12-15 move from quarter 1 to quarter 0: two full warps instead of four
    assert issues(en_ev) == expect((0, 0, list(range(8))), (2, 0, list(range(8, 16))),
                                   (4, 1, [0, 1, 2, 3, 8, 9, 10, 11]), (6, 2, [12, 13, 14, 15, 4, 5, 6, 7]))
    assert (en.merges, en.lane_conflicts, en.warp_insts) == (2, 0, 4)
    assert en.cycles < dwf.cycles


def test_en_dwf_with_hws_squeezes_the_male_then_issues_only_active_quarters():
    # one warp of 8 on SIMD 4; A sends slots {0, 5} to B: after the squeeze both sit in quarter 0
    # (lanes 0 and 1), so B issues in 1 cycle instead of 2
    trace = tiny(blocks=[["bra"], ["alu", "alu"], ["alu"]], succ=[[1, 2], [3], [3]],
                 paths=[[0, 1, 3] if t in (0, 5) else [0, 2, 3] for t in range(8)], block=(8, 1, 1))
    cfg = SimConfig(mechanism="en-dwf", warp_size=8, simd_width=4, hws=True, issue_policy="majority", lat_alu=1,
                    lat_branch=1)
    s, ev = both(trace, cfg)
    b_rows = [(c, blk, chk) for c, blk, chk in issues(ev) if blk == 1]
    squeezed = [0, 5, -1, -1, -1, -1, -1, -1]
    assert [chk for _, _, chk in b_rows] == [slot_checksum(squeezed)] * 2
    assert b_rows[1][0] - b_rows[0][0] == 1  # one active quarter: one SIMD cycle per instruction
    assert s.quarter_hist[1] >= 2


def test_tbc_compacts_at_a_divergent_branch_and_restores_the_warps_at_the_ipdom():
    d = dict(DIAMOND, blocks=[["alu", "bra"], ["alu"], ["alu"], ["alu"]])
    trace = tiny(**d)
    cfg = SimConfig(mechanism="tbc", warp_size=4, simd_width=4, lat_alu=1, lat_branch=1)
    s, ev = both(trace, cfg)
    # A: both warps run it; at the branch the CTA synchronises (cycle 3) and compacts lane-aware:
    # C gets threads 4,5 (slots 0,1 of warp 1) and 2,3 (slots 2,3 of warp 0) in ONE warp, B gets
    # 0,1,6,7. C (the newer entry) runs first, then B; at D (the IPDOM) the original warps return
    # (round robin resumes after warp slot 0, which issued C and B, so slot 1's warp goes first).
    assert issues(ev) == expect((0, 0, [0, 1, 2, 3]), (1, 0, [4, 5, 6, 7]), (2, 0, [0, 1, 2, 3]),
                                (3, 0, [4, 5, 6, 7]), (4, 2, [4, 5, 2, 3]), (5, 1, [0, 1, 6, 7]),
                                (6, 3, [4, 5, 6, 7]), (7, 3, [0, 1, 2, 3]))
    assert (s.warp_insts, s.max_stack_depth, s.thread_insts) == (8, 3, 32)  # root + B + C


def test_pdom_hws_issues_a_0011_warp_in_two_cycles():
    # one warp of 32 on SIMD 8: B gets threads 0-7 (quarter 0), 12-15 (quarter 1, lanes 4-7) and
    # 16-19 (quarter 2, lanes 0-3). Squeezed, 16-19 fill quarter 1's holes: quarter mask 0011.
    on_b = set(range(8)) | set(range(12, 20))
    trace = tiny(blocks=[["bra"], ["alu", "alu", "alu"], ["alu"]], succ=[[1, 2], [3], [3]],
                 paths=[[0, 1, 3] if t in on_b else [0, 2, 3] for t in range(32)])
    b_mask = sum(1 << t for t in on_b)
    assert quarter_mask(b_mask, 32, 8) == 0b0111
    assert quarter_mask(squeeze_mask(b_mask, 32, 8), 32, 8) == 0b0011
    cfg = SimConfig(mechanism="sps", warp_size=32, simd_width=8, hws=True, lat_alu=1, lat_branch=1)
    for run in sim_runs():
        ev = []
        s = run(trace, cfg, events=ev)
        b_cycles = [e["cycle"] for e in ev if e["kind"] == "issue" and e["pc"][0] == 1]
        assert [b - a for a, b in zip(b_cycles, b_cycles[1:])] == [2, 2]  # 2 cycles, not 4
        assert s.quarter_hist[2] >= 3
        ev = []
        plain = run(trace, cfg.replace(hws=False), events=ev)
        b_cycles = [e["cycle"] for e in ev if e["kind"] == "issue" and e["pc"][0] == 1]
        assert [b - a for a, b in zip(b_cycles, b_cycles[1:])] == [4, 4]
        assert s.cycles < plain.cycles


def sim_runs():
    """The PDOM&HWS models available: the reference always; the timing core once it takes hws."""
    runs = [reference]
    try:
        from simt_fast.sim import simulate
        from simt_fast.sim.config import ConfigError

        simulate(tiny(blocks=[["alu"]], succ=[[1]], paths=[[0, 1]]),
                 SimConfig(mechanism="sps", warp_size=4, simd_width=2, hws=True))
        runs.append(simulate)
    except ConfigError:
        pass
    return runs


@pytest.mark.parametrize("mech", ["dwf", "en-dwf", "tbc"])
def test_a_converged_kernel_runs_like_pdom(mech):
    # no divergence: every mechanism issues exactly the static warps' instructions
    trace = tiny(blocks=[["alu", "alu"], ["alu"]], succ=[[1], [2]], paths=[[0, 1, 2]] * 8, block=(8, 1, 1))
    cfg = SimConfig(mechanism=mech, warp_size=4, simd_width=4, issue_policy="majority" if "dwf" in mech else "lrr")
    s, _ = both(trace, cfg)
    sps = core_simulate(trace, cfg.replace(mechanism="sps", issue_policy="lrr"))
    assert (s.warp_insts, s.thread_insts) == (sps.warp_insts, sps.thread_insts) == (6, 24)
