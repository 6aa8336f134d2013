"""Hand-worked memory-model cases (docs/memory.md): coalescing, bank conflicts, constant accesses,
and a few warps through L1, L2 and DRAM whose hits, misses, queueing and evictions are derived by
hand below. Each case runs on the numba model and on the plain-Python reference."""

import pytest
from memory_helpers import AT, C, G, L, LD, S, ST, Access, run_numba, run_reference

from simt_fast.sim import memory
from simt_fast.sim.config import LOCAL_BASE, SimConfig

X = 1 << 40  # the emulator's first global address (256-byte aligned, as cudaMalloc's)
MODELS = [run_numba, run_reference]
# caches off, unlimited bandwidth: one request's counts in isolation
PLAIN = SimConfig(l1_bytes=0, l2_bytes=0, dram_bytes_per_cycle=0)


def one(run, space, addrs, nbytes=4, kind=LD, config=PLAIN, tids=None):
    ready, stats, _ = run(config, [Access(0, 0, 0, space, kind, nbytes, addrs, tids)], 1, 1, 1024)
    return ready[0], stats


@pytest.mark.parametrize("run", MODELS)
@pytest.mark.parametrize("addrs, nbytes, sectors, lines", [
    ([X + 4 * i for i in range(32)], 4, 4, 1),  # stride 1 word: 128 bytes
    ([X + 8 * i for i in range(32)], 4, 8, 2),  # stride 2 words
    ([X + 128 * i for i in range(32)], 4, 32, 32),  # stride 32 words: a line per thread
    ([X + 64] * 32, 4, 1, 1),  # broadcast
    ([X + 30], 4, 2, 1),  # bytes 30..33 straddle a sector boundary
    ([X + 126], 4, 2, 2),  # ... and a line boundary
    ([X + 16 * i for i in range(32)], 16, 16, 4),  # float4 per thread
    ([X + 4 * i if i % 2 else None for i in range(32)], 4, 4, 1),  # odd lanes only: still 4 sectors
    ([X + 4 * i if i < 8 else None for i in range(32)], 4, 1, 1),  # 8 active lanes
])
def test_coalescing(run, addrs, nbytes, sectors, lines):
    _, s = one(run, G, addrs, nbytes)
    assert (s["mem_requests"], s["mem_sectors"], s["mem_lines"]) == (1, sectors, lines)


@pytest.mark.parametrize("run", MODELS)
def test_no_access_makes_no_request(run):
    ready, s = one(run, G, [None] * 32)
    assert s["mem_requests"] == 0 and s["mem_sectors"] == 0 and ready == PLAIN.lat_alu


@pytest.mark.parametrize("run", MODELS)
def test_local_memory_interleaves_frames(run):
    # every thread reads its frame offset 8: 32 consecutive words of the interleaved region
    _, s = one(run, L, [8] * 32, tids=list(range(64, 96)))
    assert (s["mem_sectors"], s["mem_lines"]) == (4, 1)
    # offset 4 * 1024 lands 1024 * n_threads words further; the 8-byte access spans two words whose
    # interleaved addresses are n_threads words apart: two sectors for one thread
    _, s = one(run, L, [0], nbytes=8)
    assert s["mem_sectors"] == 2


@pytest.mark.parametrize("run", MODELS)
def test_local_interleave_formula(run):
    """The documented address of offset o of thread g among N threads: a 1-byte load there fills
    exactly that byte's sector, in that line, of an empty L1 (each model's cache contents)."""
    n, g, o = 1024, 70, 13
    expected = LOCAL_BASE + ((o // 4) * n + g) * 4 + o % 4
    config = PLAIN.replace(l1_bytes=128, l1_assoc=1)  # one line
    _, s, model = run(config, [Access(0, 0, 0, L, LD, 1, [o], [g])], 1, 1, n)
    l1 = model.cache_contents("l1", 0) if run is run_reference else memory.cache_contents(model, "l1", 0)
    assert s["mem_sectors"] == 1
    assert l1 == [[(expected // 128, 1 << (expected // 32) % 4, 0)]]


@pytest.mark.parametrize("run", MODELS)
@pytest.mark.parametrize("banks, group, addrs, nbytes, passes, replays", [
    (32, 32, [4 * i for i in range(32)], 4, 1, 0),  # stride 1: conflict-free
    (32, 32, [8 * i for i in range(32)], 4, 2, 1),  # stride 2: 2-way
    (32, 32, [128 * i for i in range(32)], 4, 32, 31),  # stride 32: 32-way
    (32, 32, [100] * 32, 4, 1, 0),  # broadcast
    (32, 32, [4 * (i // 2) for i in range(32)], 4, 1, 0),  # pairs share a word
    (32, 32, [8 * i for i in range(32)], 8, 2, 1),  # doubles: 64 words over 32 banks
    (32, 32, [16 * i for i in range(32)], 16, 4, 3),  # float4: 128 words
    (16, 16, [4 * i for i in range(32)], 4, 2, 0),  # GT200 half-warps: one pass each
    (16, 16, [8 * i for i in range(32)], 4, 4, 2),  # GT200 stride 2: 2-way in each half
    (32, 32, [128 * i if i < 4 else None for i in range(32)], 4, 4, 3),  # 4 active lanes, one bank
])
def test_shared_bank_conflicts(run, banks, group, addrs, nbytes, passes, replays):
    cfg = PLAIN.replace(shared_banks=banks, shared_bank_group=group)
    ready, s = one(run, S, addrs, nbytes, config=cfg)
    assert (s["shared_requests"], s["shared_passes"], s["shared_replays"]) == (1, passes, replays)
    assert ready == passes - 1 + cfg.lat_shared  # the LSU takes one pass per cycle from cycle 0


@pytest.mark.parametrize("run", MODELS)
def test_constant_serialises_distinct_addresses(run):
    ready, s = one(run, C, [0, 4, 4, 8, None, 0] + [8] * 26)
    assert (s["const_requests"], s["const_accesses"]) == (1, 3)
    assert ready == 2 + PLAIN.lat_const


@pytest.mark.parametrize("run", MODELS)
def test_lsu_serialises_lines_and_later_instructions_wait(run):
    cfg = PLAIN.replace(lsu_sectors_per_cycle=2, lat_global=100)
    stride32 = [X + 128 * i for i in range(32)]  # 32 lines: the LSU is busy for cycles 0..31
    stride1 = [X + 4096 + 4 * i for i in range(32)]  # 1 line of 4 sectors: 2 cycles at 2 per cycle
    ready, _, _ = run(cfg, [Access(0, 0, 0, G, LD, 4, stride32), Access(0, 1, 5, G, LD, 4, stride1),
                            Access(1, 2, 5, G, LD, 4, stride1)], 2, 3, 1024)
    assert ready == [31 + 100, 32 + 1 + 100, 5 + 1 + 100]  # SM 1 has its own LSU


# ---- a few warps through L1, L2 and DRAM ------------------------------------------------------------
# L1: 256 bytes, 2 ways (one set of two lines); L2: 512 bytes, 4 ways (one set of four lines);
# DRAM: 16 bytes per cycle over 2 partitions (8 each: a sector takes 4 cycles), 256-byte interleave;
# the LSU takes 2 sectors of a line per cycle. Line n = sectors 4n..4n+3; X = 4096 is line 32.
HIER = SimConfig(l1_bytes=256, l1_assoc=2, l2_bytes=512, l2_assoc=4, lat_l1=10, lat_l2=50, lat_global=100,
                 dram_bytes_per_cycle=16, dram_partitions=2, dram_interleave_bytes=256, lsu_sectors_per_cycle=2)
B = 4096
STREAM = [
    # A: 16 lanes x 4 bytes from B: sectors 128, 129 (line 32), both taken at cycle 0; both miss L1 and
    #    L2 and go to partition 0 (4096 // 256 = 16, even): 128 starts at 0 -> ready 100; 129 waits
    #    4 cycles behind it -> 104.
    Access(0, 0, 0, G, LD, 4, [B + 4 * i for i in range(16)]),
    # B: 4 lanes stride 128: lines 32..35, one per LSU cycle 1..4. Line 32 hits L1 (data arrives at
    #    100). Line 33 (partition 0, free at 8): queues 6 -> 2 + 100 + 6 = 108. Line 34 (4352 // 256 = 17:
    #    partition 1, free) -> 103, evicting line 32 (LRU) from L1. Line 35 (partition 1, free at 7):
    #    queues 3 -> 107, evicting 33. L2 now holds 32..35 (full).
    Access(0, 1, 1, G, LD, 4, [B + 128 * i for i in range(4)]),
    # C: a store to sector 128 at cycle 2; the LSU is free at 5. L1 misses (32 was evicted; no
    #    allocation on a write); the L2 hits and marks the sector dirty (write-back) -> 5 + 50.
    Access(0, 0, 2, G, ST, 4, [B + 4 * i for i in range(4)], writes_reg=False),
    # D: lines 64 and 65 (8192, 8320: partition 0) at cycles 6 and 7. Partition 0 is free at 12: 64
    #    queues 6 -> 112, 65 queues 9 -> 116. The L2 evicts 33 then 34 (clean), the L1 34 then 35.
    Access(0, 2, 6, G, LD, 4, [2 * B, 2 * B + 128]),
    # F: lines 96..99 at cycles 9..12 (LSU free at 8). 96 (partition 0, free at 20 after D): queues 11
    #    -> 120; the L2 evicts 35. 97 (partition 0, free 24): queues 14 -> 124; the L2 evicts 32, whose
    #    dirty sector 128 is written to partition 0 (busy 28..32). 98 (partition 1, free 11): 111,
    #    evicts 64. 99 (partition 1, free 15): queues 3 -> 115, evicts 65.
    Access(0, 3, 9, G, LD, 4, [3 * B + 128 * i for i in range(4)]),
]


@pytest.mark.parametrize("run", MODELS)
def test_hierarchy_golden(run):
    ready, s, model = run(HIER, STREAM, 1, 4, 1024)
    assert ready == [104, 108, 55, 116, 124]
    assert (s["mem_requests"], s["mem_sectors"]) == (5, 13)
    assert (s["l1_hits"], s["l1_misses"], s["l2_hits"], s["l2_misses"]) == (1, 12, 1, 11)
    assert s["dram_bytes"] == 11 * 32 + 32  # 11 sector reads, 1 write-back
    # warp 0 waits [0, 104), warp 1 [1, 108), warp 2 [6, 116), warp 3 [9, 124); C is a store
    assert s["mem_stall_cycles"] == 104 + 107 + 110 + 115
    l2 = model.cache_contents("l2") if run is run_reference else memory.cache_contents(model, "l2")
    l1 = model.cache_contents("l1", 0) if run is run_reference else memory.cache_contents(model, "l1", 0)
    assert l2 == [[(96, 1, 0), (97, 1, 0), (98, 1, 0), (99, 1, 0)]]
    assert l1 == [[(98, 1, 0), (99, 1, 0)]]


@pytest.mark.parametrize("run", MODELS)
def test_write_policies(run):
    """Fermi's L1 (write-evict): a global store hit evicts the sector, a local store hit stays dirty in
    L1 and is written back on eviction; write-through keeps the sector. L2 "fetch" reads the written
    sector in after writing it through; "allocate" makes it dirty without DRAM traffic."""
    cfg = HIER.replace(dram_bytes_per_cycle=0)
    load, store = Access(0, 0, 0, G, LD, 4, [B]), Access(0, 0, 1000, G, ST, 4, [B], writes_reg=False)
    again = Access(0, 0, 2000, G, LD, 4, [B])
    _, s, _ = run(cfg, [load, store, again], 1, 1, 8)
    assert (s["l1_hits"], s["l1_misses"]) == (1, 2)  # the store hit evicted the sector: the reload misses
    _, s, _ = run(cfg.replace(l1_write_policy="write-through"), [load, store, again], 1, 1, 8)
    assert (s["l1_hits"], s["l1_misses"]) == (2, 1)
    # local: a store hit stays in L1 (no L2 access); evicting the line writes the sector to the L2
    lload, lstore = Access(0, 0, 0, L, LD, 4, [0]), Access(0, 0, 1000, L, ST, 4, [0], writes_reg=False)
    evict = [Access(0, 0, 2000 + k, G, LD, 4, [B + 128 * k]) for k in range(2)]
    _, s, model = run(cfg, [lload, lstore] + evict, 1, 1, 8)
    assert (s["l1_hits"], s["l1_misses"], s["l2_misses"], s["l2_hits"]) == (1, 3, 3, 1)
    # the L2 write-back policy: a store miss under "fetch" writes through and reads the sector (64
    # bytes), under "allocate" nothing until the dirty line is evicted
    st = [Access(0, 0, 0, G, ST, 4, [B], writes_reg=False)]
    assert run(cfg.replace(l1_bytes=0), st, 1, 1, 8)[1]["dram_bytes"] == 64
    assert run(cfg.replace(l1_bytes=0, l2_write_miss="allocate"), st, 1, 1, 8)[1]["dram_bytes"] == 0
    flush = [Access(0, 0, 10 + k, G, LD, 4, [B + 128 * k]) for k in range(1, 5)]  # 4 more lines: evicts B
    assert run(cfg.replace(l1_bytes=0, l2_write_miss="allocate"), st + flush, 1, 1, 8)[1]["dram_bytes"] == 5 * 32


@pytest.mark.parametrize("run", MODELS)
def test_atomics_skip_l1_and_read_modify_write(run):
    cfg = HIER.replace(dram_bytes_per_cycle=0)
    at = Access(0, 0, 0, G, AT, 4, [B] * 32)
    ready, s, _ = run(cfg, [at, Access(0, 0, 500, G, AT, 4, [B])], 1, 1, 8)
    assert (s["l1_hits"], s["l1_misses"], s["l2_misses"], s["l2_hits"]) == (0, 0, 1, 1)
    assert ready == [100, 550] and s["dram_bytes"] == 32
    # without an L2 an atomic reads and writes its sector in DRAM
    _, s, _ = run(cfg.replace(l2_bytes=0), [at], 1, 1, 8)
    assert s["dram_bytes"] == 64
