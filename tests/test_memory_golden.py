"""Hand-worked memory-model cases (docs/memory.md): coalescing, bank conflicts, constant accesses,
and a few warps through L1, L2 and DRAM whose hits, misses, queueing and evictions are derived by
hand below. Each case runs on the numba model and on the plain-Python reference."""

import pytest
from memory_helpers import AT, C, G, L, LD, S, ST, UNLOADED, Access, run_numba, run_reference

from simt_fast.sim import memory
from simt_fast.sim.config import LOCAL_BASE, SimConfig

X = 1 << 40  # the emulator's first global address (256-byte aligned, as cudaMalloc's)
MODELS = [run_numba, run_reference]
# caches off, unlimited bandwidth: one request's counts in isolation
PLAIN = SimConfig(l1_bytes=0, l2_bytes=0, dram_bytes_per_cycle=0, **UNLOADED)


def one(run, space, addrs, nbytes=4, kind=LD, config=PLAIN, resident=None):
    ready, stats, _ = run(config, [Access(0, 0, 0, space, kind, nbytes, addrs, resident)], 1, 1, 1024)
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
    _, s = one(run, L, [8] * 32, resident=list(range(64, 96)))
    assert (s["mem_sectors"], s["mem_lines"]) == (4, 1)
    # offset 4 * 1024 lands a stride further; the 8-byte access spans two words whose interleaved
    # addresses are a stride (1024 threads: one CTA of 1024 threads, one SM) apart: two sectors
    _, s = one(run, L, [0], nbytes=8)
    assert s["mem_sectors"] == 2


@pytest.mark.parametrize("run", MODELS)
def test_local_layout_formula(run):
    """The documented address of offset o of the thread with index i in the CTA in slot c of SM m:
    the machine holds CTAs of 96 threads (whole warps: 96), 3 per SM, on 4 SMs = 1152 threads side
    by side per word, ordered by CTA slot across the SMs (slot 0 of SMs 0..3, then slot 1, ...) and
    by index in the CTA. A 1-byte load there fills exactly that byte's sector, in that line, of an
    empty L1 (each model's cache contents)."""
    m, c, i, o = 2, 1, 70, 13
    thread = 96 * (m + 4 * c) + i
    expected = LOCAL_BASE + ((o // 4) * 1152 + thread) * 4 + o % 4
    config = PLAIN.replace(l1_bytes=128, l1_assoc=1)  # one line
    _, s, model = run(config, [Access(m, 0, 0, L, LD, 1, [o], [c * 96 + i])], 4, 1, 96, 3)
    l1 = model.cache_contents("l1", m) if run is run_reference else memory.cache_contents(model, "l1", m)
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
                 dram_bytes_per_cycle=16, dram_partitions=2, dram_interleave_bytes=256, lsu_sectors_per_cycle=2,
                 **UNLOADED)
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
    at = Access(0, 0, 0, G, AT, 4, [B + 4 * i for i in range(32)])  # 32 words of one line: 4 sectors
    ready, s, _ = run(cfg, [at, Access(0, 0, 500, G, AT, 4, [B])], 1, 1, 8)
    # one transaction per sector, one per LSU cycle (0..3): four L2 misses, ready 3 + 100
    assert (s["l1_hits"], s["l1_misses"], s["l2_misses"], s["l2_hits"]) == (0, 0, 4, 1)
    assert ready == [103, 550] and s["dram_bytes"] == 4 * 32 and s["mem_sectors"] == 5
    # without an L2 an atomic reads and writes its sector in DRAM
    _, s, _ = run(cfg.replace(l2_bytes=0), [at], 1, 1, 8)
    assert s["dram_bytes"] == 4 * 64


@pytest.mark.parametrize("run", MODELS)
def test_atomics_on_one_word_serialise(run):
    """32 lanes' atomics on one word (GPGPU-Sim's atomic coalescing: lanes whose bytes overlap never
    share a transaction): 32 transactions through the LSU, one per cycle 0..31. The first misses the
    L2 (data at 0 + 100); transactions 1..31 find the sector in flight and wait for it: ready 100, 31
    L2 hits, one DRAM read. In shared memory: 32 passes, 31 replays, ready 31 + lat_shared."""
    cfg = HIER.replace(dram_bytes_per_cycle=0)
    ready, s, _ = run(cfg, [Access(0, 0, 0, G, AT, 4, [B + 8] * 32)], 1, 1, 8)
    assert (s["mem_requests"], s["mem_sectors"], s["mem_lines"]) == (1, 32, 1)
    assert (s["l2_misses"], s["l2_hits"], s["dram_bytes"]) == (1, 31, 32) and ready == [100]
    ready, s = one(run, S, [12] * 32, kind=AT)
    assert (s["shared_passes"], s["shared_replays"]) == (32, 31) and ready == 31 + PLAIN.lat_shared
    # a load of one word broadcasts: one pass, one sector
    assert one(run, S, [12] * 32)[1]["shared_passes"] == 1 and one(run, G, [X + 8] * 32)[1]["mem_sectors"] == 1
    # atomics on distinct words share transactions and passes (pairs of lanes on a word: 2 each)
    assert one(run, G, [X + 4 * (i // 2) for i in range(32)], kind=AT)[1]["mem_sectors"] == 2 * 2
    assert one(run, S, [4 * (i // 2) for i in range(32)], kind=AT)[1]["shared_passes"] == 2


# ---- the loaded machine: slices, interconnect ports, miss-status holding registers ------------------
# No L1 unless said, an L2 that holds every line, one slice serving one 32-byte sector per cycle,
# lat_l2 50, the LSU taking a whole line (4 sectors) per cycle. A warming load at cycle 0 puts lines
# 0..3 of B in the L2 (the slice serves its 16 sectors at 0..15); the accesses below start at 1000.
LOADED = HIER.replace(l1_bytes=0, l2_bytes=4096, l2_assoc=8, lsu_sectors_per_cycle=4, dram_bytes_per_cycle=0,
                      l2_slices=1, l2_slice_bytes_per_cycle=32)
FOUR_LINES = [B + 4 * i for i in range(128)]  # lines 32..35 (sectors 128..143): the LSU takes one per cycle


def warmed(accesses, sm=0):
    return [Access(sm, 0, 0, G, LD, 4, FOUR_LINES)] + accesses


@pytest.mark.parametrize("run", MODELS)
@pytest.mark.parametrize("slices, expected, waited", [
    # one slice: SM k's sector i (0..15) reaches it at 1000 + i // 4, but it serves the 16k before it
    # first (SM order is issue order): at 1000 + 16k + i; ready = the last + 50. Waits: 16k + i - i // 4,
    # 1,920 over the four SMs, and 96 for the warming load (sector i served at i, arrived at i // 4)
    (1, [1065, 1081, 1097, 1113], 1920 + 96),
    # two slices (256-byte interleave: lines 32, 33 on slice 0, 34, 35 on slice 1): each serves 8
    # sectors per SM; slice 1's first arrive at 1002. SM k: slice 0 at 1000 + 8k + j (j 0..7), slice 1
    # at 1002 + 8k + j -> 1059, 1067, 1075, 1083; waits 128k + 48 per SM and 48 for the warming load
    (2, [1059, 1067, 1075, 1083], 960 + 48),
])
def test_a_slice_saturated_by_sms_streaming_the_same_lines(run, slices, expected, waited):
    streams = [Access(k, k, 1000, G, LD, 4, FOUR_LINES) for k in range(4)]
    ready, s, _ = run(LOADED.replace(l2_slices=slices), warmed(streams), 4, 4, 8)
    assert ready[1:] == expected
    assert s["l2_hits"] == 64 and s["slice_wait_cycles"] == waited
    # without the slice's limit every SM's last sector is taken at 1003: ready 1053
    assert run(LOADED.replace(l2_slice_bytes_per_cycle=0), warmed(streams), 4, 4, 8)[0][1:] == [1053] * 4


@pytest.mark.parametrize("run", MODELS)
def test_interconnect_ports(run):
    """One SM, ports of 20 bytes per cycle, 40-byte flits: every packet of this load (an 8-byte read
    request, a 40-byte reply) is one flit, two cycles on a port. The SM's request port sends sector i
    (taken at 1000 + i // 4) at 1000 + 2i; the slice's request port and the SM's reply port keep the
    same pace, so nothing else waits: the last sector is sent at 1030, ready 1030 + 50."""
    cfg = LOADED.replace(l2_slice_bytes_per_cycle=0, icnt_bytes_per_cycle=20, icnt_flit_bytes=40)
    ready, s, _ = run(cfg, warmed([Access(0, 1, 1000, G, LD, 4, FOUR_LINES)]), 1, 2, 8)
    assert ready[1] == 1080
    assert s["icnt_wait_cycles"] == 2 * sum(2 * i - i // 4 for i in range(16))  # (the warming load waited as long)
    # a store carries its sector: 8 + 32 bytes, one 40-byte flit (2 cycles: the second store is sent
    # at 1002); with 24-byte flits two (48 bytes, 2.4 cycles: sent at 1003). Their acks are 8 bytes.
    stores = [Access(0, 1, 1000, G, ST, 4, [B + 32 * k], writes_reg=False) for k in range(2)]
    assert run(cfg, warmed(stores), 1, 2, 8)[0][1:] == [1050, 1052]
    assert run(cfg.replace(icnt_flit_bytes=24), warmed(stores), 1, 2, 8)[0][1:] == [1050, 1053]


@pytest.mark.parametrize("run", MODELS)
def test_miss_status_holding_registers(run):
    """An L1 (lat_l1 10) before the loaded L2. Two registers: a warp's line of 4 sectors at cycle
    1000 gets registers for sectors 0, 1 (L2 hits, ready 1050); sector 2 stalls the LSU until the
    first frees at 1050 (ready 1100), sector 3 takes the second at 1050. The LSU is busy until
    1001 + 50: a load of another line at 1001 starts at 1051."""
    cfg = LOADED.replace(l1_bytes=1024, l1_assoc=8, lat_l1=10, l2_slice_bytes_per_cycle=0, l1_mshrs=2)
    line, other = [B + 4 * i for i in range(32)], [B + 128 + 4 * i for i in range(32)]
    ready, s, _ = run(cfg, warmed([Access(0, 1, 1000, G, LD, 4, line), Access(0, 2, 1001, G, LD, 4, other)], 1),
                      2, 3, 8)
    # `other`: its sectors at 1051 find both registers busy until 1100: 1100 + 50; the LSU then
    # takes the next sector at 1100 (registers free at 1150)
    assert ready[1:] == [1100, 1200]
    warming = run(cfg, warmed([], 1), 2, 3, 8)[1]["mshr_stall_cycles"]  # (SM 1's own registers)
    assert s["mshr_stall_cycles"] - warming == 50 + 49 + 50


@pytest.mark.parametrize("run", MODELS)
def test_merging_in_flight_and_a_full_register(run):
    """Two warps load the same sector at 1000 and 1005. The second finds it in flight (data at 1050)
    and merges: an L1 hit, ready 1050, no register, no request. When a register holds only its miss
    (l1_mshr_merge 1), the second stalls the LSU until 1050 and then hits: ready 1060."""
    cfg = LOADED.replace(l1_bytes=1024, l1_assoc=8, lat_l1=10, l2_slice_bytes_per_cycle=0)
    two = [Access(0, 1, 1000, G, LD, 4, [B]), Access(0, 2, 1005, G, LD, 4, [B])]
    ready, s, _ = run(cfg, warmed(two, 1), 2, 3, 8)
    assert ready[1:] == [1050, 1050] and s["l1_hits"] == 1 and s["l2_hits"] == 1
    ready, s, _ = run(cfg.replace(l1_mshr_merge=1), warmed(two, 1), 2, 3, 8)
    assert ready[1:] == [1050, 1060] and s["l1_hits"] == 1 and s["mshr_stall_cycles"] == 45


@pytest.mark.parametrize("run", MODELS)
def test_a_full_l2_register_stalls_its_slice(run):
    """Cold sector, DRAM latency 100 (data reaches the L2 at 100 - 50 = 50 after the miss): four SMs
    request it at cycle 0, a fifth SM requests another sector (already in the L2) on the same slice.
    The slice serves one request per cycle: SM 0 misses at 0 (ready 100), SMs 1, 2 merge at 1, 2
    (l2_mshr_merge 3: the miss and two merges), SM 3 at 3 finds the register full: the slice stalls
    until the data arrives at 50, serves it then (a hit, ready 100) and SM 4's hit behind it at 51:
    ready 101 instead of 4 + 50. Waits at the slice: 1, 2, 3 + 47 for SMs 1..3, 51 for SM 4."""
    cfg = LOADED.replace(l2_mshr_merge=3)
    warm = Access(4, 4, 0, G, LD, 4, [B + 128])
    reqs = [Access(k, k, 1000, G, LD, 4, [B]) for k in range(4)] + [Access(4, 4, 1000, G, LD, 4, [B + 128])]
    ready, s, _ = run(cfg, [warm] + reqs, 5, 5, 8)
    assert ready[1:] == [1100, 1100, 1100, 1100, 1101]
    assert s["slice_wait_cycles"] == 1 + 2 + 50 + 51 and (s["l2_misses"], s["l2_hits"]) == (2, 4)
    assert run(cfg.replace(l2_mshr_merge=0), [warm] + reqs, 5, 5, 8)[0][1:] == [1100, 1100, 1100, 1100, 1054]


@pytest.mark.parametrize("run", MODELS)
def test_an_l1_is_faster_than_the_l2_when_the_l2_is_the_bottleneck(run):
    """A warp reads lines 32..35 (16 sectors) at 1000, 1004, 1008, 1012 (each when the LSU frees).
    Without an L1 every read is 16 sectors for the one slice, served one per cycle: 1065, 1081, 1097,
    1113. With an L1 (lat_l1 10) the first read misses (1065) and the others find its sectors in
    flight and merge: ready with the data, 1065; after it, a fifth read at 1100 hits: 1103 + 10."""
    reads = [Access(0, 1, 1000 + 4 * k, G, LD, 4, FOUR_LINES) for k in range(4)]
    assert run(LOADED, warmed(reads, 1), 2, 2, 8)[0][1:] == [1065, 1081, 1097, 1113]
    cfg = LOADED.replace(l1_bytes=1024, l1_assoc=8, lat_l1=10)
    ready, s, _ = run(cfg, warmed(reads + [Access(0, 1, 1100, G, LD, 4, FOUR_LINES)], 1), 2, 2, 8)
    assert ready[1:] == [1065, 1065, 1065, 1065, 1113]
    assert (s["l1_hits"], s["l1_misses"]) == (4 * 16, 16 + 16)  # (16: SM 1's warming load)


@pytest.mark.parametrize("run", MODELS)
@pytest.mark.parametrize("tpc", [256, 250])  # 4,096 threads = 16 CTAs of 256; 4,000 = 16 CTAs of 250
def test_a_warps_local_frame_uses_the_same_sets_at_any_launch_size(run, tpc):
    """Fermi's L1 (16 KB, 4 ways, 32 sets), one SM holding 6 CTAs of 256 threads (250 round up to 8
    warps): local memory interleaves 256 x 6 x 1 = 1,536 threads per word whatever the launch's size.
    Word w of the warp's frame is line L0 + 48w: sets s0, s0 + 16, s0, ...: four lines in each of two
    sets, which four ways hold. Reading words 0..7 twice: 32 misses, then 32 hits."""
    cfg = SimConfig(l2_bytes=0, dram_bytes_per_cycle=0, **UNLOADED)
    reads = [Access(0, 0, 1000 * (k + 1), L, LD, 4, [4 * (k % 8)] * 32, list(range(32))) for k in range(16)]
    _, s, model = run(cfg, reads, 1, 1, tpc, 6)
    assert (s["l1_misses"], s["l1_hits"]) == (32, 32)
    sets = model.cache_contents("l1", 0) if run is run_reference else memory.cache_contents(model, "l1", 0)
    assert sorted(len(lines) for lines in sets if lines) == [4, 4]
