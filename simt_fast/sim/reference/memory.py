"""Plain-Python reference of the memory model (docs/memory.md): the rules written for reading, with
Python sets, ordered dicts and exact fractions, sharing no code with ``simt_fast.sim.memory``.

:class:`MemoryModel` is the twin of ``memory.allocate`` + ``memory.access``; :func:`profile` the twin
of ``memory.profile``. Tests compare them on random access streams and on traces.
"""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from math import ceil

from ...ir.model import OpClass
from ...trace.model import MEM_ATOMIC, MEM_LOAD, MEM_STORE, Trace
from ..config import LINE_BYTES, LOCAL_BASE, SECTOR_BYTES, SimConfig

SECTORS_PER_LINE = LINE_BYTES // SECTOR_BYTES
MEMORY_CLASSES = (OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST)


def no_access(a) -> bool:
    """An inactive lane or a false guard: None, -1 (the int64 view) or the trace's 2**64 - 1."""
    return a is None or a < 0 or a >= 1 << 63


@dataclass
class Line:
    valid: set = field(default_factory=set)  # sector indices 0..3 holding data
    dirty: set = field(default_factory=set)
    arrives: dict = field(default_factory=dict)  # sector index -> cycle its data arrives


class SectorCache:
    """Set-associative, LRU, 128-byte lines of four 32-byte sectors; each set an OrderedDict from
    line number to :class:`Line`, least recently used first."""

    def __init__(self, size: int, assoc: int):
        self.n_sets = size // (LINE_BYTES * assoc)
        self.assoc = assoc
        self.sets = [OrderedDict() for _ in range(self.n_sets)]

    def _set(self, line: int) -> OrderedDict:
        return self.sets[line % self.n_sets]

    def line_of(self, sector: int):
        return self._set(sector // SECTORS_PER_LINE).get(sector // SECTORS_PER_LINE)

    def holds(self, sector: int) -> bool:
        line = self.line_of(sector)
        return line is not None and sector % SECTORS_PER_LINE in line.valid

    def use(self, sector: int) -> None:
        self._set(sector // SECTORS_PER_LINE).move_to_end(sector // SECTORS_PER_LINE)

    def fill(self, sector: int, arrives: int, dirty: bool):
        """Put ``sector`` in; returns (evicted line number, its dirty sector indices) or None."""
        number, idx = divmod(sector, SECTORS_PER_LINE)
        lines = self._set(number)
        evicted = None
        if number not in lines:
            if len(lines) == self.assoc:
                old, old_line = lines.popitem(last=False)
                evicted = (old, sorted(old_line.dirty))
            lines[number] = Line()
        line = lines[number]
        line.valid.add(idx)
        if dirty:
            line.dirty.add(idx)
        else:
            line.dirty.discard(idx)
        line.arrives[idx] = arrives
        lines.move_to_end(number)
        return evicted

    def contents(self) -> list:
        """Per set, least recently used first: (line, valid mask, dirty mask)."""
        return [[(n, sum(1 << i for i in ln.valid), sum(1 << i for i in ln.dirty)) for n, ln in s.items()]
                for s in self.sets]


class MemoryModel:
    """The memory system of one run: per-SM load/store units, constant ports and L1s, the L2, DRAM."""

    def __init__(self, config: SimConfig, n_sms: int, n_warps: int, n_threads: int):
        self.cfg = config
        self.n_threads = n_threads
        self.lsu_free = [0] * n_sms
        self.const_free = [0] * n_sms
        self.l1 = [SectorCache(config.l1_bytes, config.l1_assoc) for _ in range(n_sms)] if config.l1_bytes else None
        self.l2 = SectorCache(config.l2_bytes, config.l2_assoc) if config.l2_bytes else None
        self.partition_free = [Fraction(0)] * config.dram_partitions
        self.waits = defaultdict(list)  # per warp (any key): (issue, ready) of results it waits for
        self.count = Counter()

    # ---- counters ------------------------------------------------------------------------------
    def stats(self) -> dict:
        """The results-file memory stats (and the extra counts the numba model keeps)."""
        out = {k: self.count[k] for k in (
            "mem_requests", "mem_sectors", "shared_requests", "shared_replays", "l1_hits", "l1_misses",
            "l2_hits", "l2_misses", "dram_bytes", "mem_lines", "const_requests", "const_accesses",
            "shared_passes")}
        out["mem_stall_cycles"] = sum(union_length(w) for w in self.waits.values())
        return out

    # ---- DRAM ----------------------------------------------------------------------------------
    def dram(self, sector: int, t: int) -> int:
        """Move one sector to or from DRAM arriving at cycle ``t``; the whole cycles it queued."""
        self.count["dram_bytes"] += SECTOR_BYTES
        cfg = self.cfg
        if cfg.dram_bytes_per_cycle == 0:
            return 0
        p = (sector * SECTOR_BYTES // cfg.dram_interleave_bytes) % cfg.dram_partitions
        per_partition = Fraction(cfg.dram_bytes_per_cycle, cfg.dram_partitions)  # bytes per cycle
        start = max(Fraction(t), self.partition_free[p])
        self.partition_free[p] = start + SECTOR_BYTES / per_partition
        return ceil(start - t)

    # ---- the levels ----------------------------------------------------------------------------
    def below_l1(self, sector: int, t: int, kind: int) -> int:
        cfg = self.cfg
        if self.l2 is None:
            ready = t + cfg.lat_global + self.dram(sector, t)
            if kind == MEM_ATOMIC:
                self.dram(sector, t)  # read-modify-write: the write follows the read
            return ready
        l2 = self.l2
        idx = sector % SECTORS_PER_LINE
        if l2.holds(sector):
            self.count["l2_hits"] += 1
            l2.use(sector)
            line = l2.line_of(sector)
            if kind in (MEM_STORE, MEM_ATOMIC):
                line.dirty.add(idx)
            if kind == MEM_STORE:
                return t + cfg.lat_l2
            return max(t + cfg.lat_l2, line.arrives[idx])
        self.count["l2_misses"] += 1
        if kind == MEM_STORE and cfg.l2_write_miss == "allocate":
            ready = t + cfg.lat_l2
            evicted = l2.fill(sector, ready, dirty=True)
        else:
            if kind == MEM_STORE:
                self.dram(sector, t)  # "fetch": the write goes on to DRAM, then the sector is read in
            ready = t + cfg.lat_global + self.dram(sector, t)
            evicted = l2.fill(sector, ready, dirty=kind == MEM_ATOMIC)
        if evicted:
            number, dirty = evicted
            for i in dirty:
                self.dram(number * SECTORS_PER_LINE + i, t)
        return ready

    def sector(self, sm: int, sector: int, t: int, space: int, kind: int) -> int:
        cfg = self.cfg
        if kind == MEM_ATOMIC or self.l1 is None:
            return self.below_l1(sector, t, kind)
        l1 = self.l1[sm]
        idx = sector % SECTORS_PER_LINE
        present = l1.holds(sector)
        if kind == MEM_LOAD:
            if present:
                self.count["l1_hits"] += 1
                l1.use(sector)
                return max(t + cfg.lat_l1, l1.line_of(sector).arrives[idx])
            self.count["l1_misses"] += 1
            ready = self.below_l1(sector, t, MEM_LOAD)
            evicted = l1.fill(sector, ready, dirty=False)
            if evicted:
                number, dirty = evicted
                for i in dirty:
                    self.below_l1(number * SECTORS_PER_LINE + i, t, MEM_STORE)
            return ready
        if present:
            self.count["l1_hits"] += 1
            line = l1.line_of(sector)
            if cfg.l1_write_policy == "write-through":
                l1.use(sector)
            elif space == OpClass.MEM_LOCAL:
                l1.use(sector)
                line.dirty.add(idx)
                return t + cfg.lat_l1  # write-back: the store stops in the L1
            else:
                line.valid.discard(idx)  # global write-evict
                line.dirty.discard(idx)
        else:
            self.count["l1_misses"] += 1
        return self.below_l1(sector, t, MEM_STORE)

    # ---- one warp-level instruction ------------------------------------------------------------
    def sectors_of(self, addrs, thread_ids, nbytes: int, local: bool) -> set:
        out = set()
        for lane, a in enumerate(addrs):
            if no_access(a):
                continue
            for b in range(a, a + max(nbytes, 1)):
                if local:  # consecutive 32-bit words of one frame offset belong to consecutive threads
                    b = LOCAL_BASE + ((b // 4) * self.n_threads + thread_ids[lane]) * 4 + b % 4
                out.add(b // SECTOR_BYTES)
        return out

    def shared_passes(self, addrs, nbytes: int) -> list:
        """Passes of each lane group that accesses memory."""
        cfg = self.cfg
        out = []
        for g0 in range(0, len(addrs), cfg.shared_bank_group):
            words = {b // 4 for a in addrs[g0:g0 + cfg.shared_bank_group] if not no_access(a)
                     for b in range(a, a + max(nbytes, 1))}
            if words:
                out.append(max(Counter(w % cfg.shared_banks for w in words).values()))
        return out

    def access(self, sm, warp, now, space, kind, nbytes, writes_reg, addrs, thread_ids) -> int:
        """Twin of ``simt_fast.sim.memory.access``: ``addrs``/``thread_ids`` list the warp's lanes."""
        cfg = self.cfg
        if space == OpClass.MEM_SHARED:
            passes = self.shared_passes(addrs, nbytes)
            if not passes:
                return now + cfg.lat_alu
            self.count["shared_requests"] += 1
            self.count["shared_passes"] += sum(passes)
            self.count["shared_replays"] += sum(p - 1 for p in passes)
            start = max(now, self.lsu_free[sm])
            self.lsu_free[sm] = start + sum(passes)
            ready = start + sum(passes) - 1 + cfg.lat_shared
        elif space == OpClass.MEM_CONST:
            distinct = {a for a in addrs if not no_access(a)}
            if not distinct:
                return now + cfg.lat_alu
            self.count["const_requests"] += 1
            self.count["const_accesses"] += len(distinct)
            start = max(now, self.const_free[sm])
            self.const_free[sm] = start + len(distinct)
            ready = start + len(distinct) - 1 + cfg.lat_const
        else:
            sectors = self.sectors_of(addrs, thread_ids, nbytes, space == OpClass.MEM_LOCAL)
            if not sectors:
                return now + cfg.lat_alu
            self.count["mem_requests"] += 1
            self.count["mem_sectors"] += len(sectors)
            by_line = {}
            for s in sorted(sectors):
                by_line.setdefault(s // SECTORS_PER_LINE, []).append(s)
            self.count["mem_lines"] += len(by_line)
            cycle = max(now, self.lsu_free[sm])  # the LSU: one line per cycle, a few of its sectors
            ready = 0
            for number in sorted(by_line):
                group = by_line[number]
                for k, s in enumerate(group):
                    ready = max(ready, self.sector(sm, s, cycle + k // cfg.lsu_sectors_per_cycle, space, kind))
                cycle += ceil(len(group) / cfg.lsu_sectors_per_cycle)
            self.lsu_free[sm] = cycle
        if writes_reg:
            self.waits[warp].append((now, ready))
        return ready

    def cache_contents(self, level: str, index: int = 0) -> list:
        cache = self.l1[index] if level == "l1" else self.l2
        return cache.contents()


def union_length(intervals) -> int:
    """Cycles covered by the union of half-open [issue, ready) intervals."""
    total = 0
    end = None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def profile(trace: Trace, config: SimConfig) -> dict:
    """Twin of ``simt_fast.sim.memory.profile``: fixed warps, the n-th execution of an instruction by
    a warp's threads is one access, accesses in program order, warps one after another (CTA c on SM
    c % n_sms). Returns the counts (``MemoryProfile`` field names) and per-instruction dicts."""
    model = MemoryModel(config, config.n_sms, 1, trace.n_threads)
    W, tpc = config.warp_size, trace.threads_per_cta
    mem_instrs = {i for i, c in enumerate(trace.op_class) if c in MEMORY_CLASSES}
    kinds = trace.mem_kind if trace.mem_kind is not None else [MEM_LOAD] * trace.n_instrs
    widths = trace.mem_bytes if trace.mem_bytes is not None else [4] * trace.n_instrs
    inst_requests, inst_units = Counter(), Counter()
    unit = {OpClass.MEM_SHARED: "shared_passes", OpClass.MEM_CONST: "const_accesses"}
    for cta in range(trace.n_ctas):
        for t0 in range(cta * tpc, (cta + 1) * tpc, W):
            t1 = min(t0 + W, (cta + 1) * tpc)
            groups = {}  # (instr, occurrence) -> {lane: (position, address)}
            for t in range(t0, t1):
                seen = Counter()
                addrs = trace.mem_addr[trace.mem_ptr[t]:trace.mem_ptr[t + 1]]
                k = 0
                for b in trace.thread_path(t):
                    for i in range(trace.block_start[b], trace.block_start[b + 1]):
                        if i in mem_instrs:
                            groups.setdefault((i, seen[i]), {})[t - t0] = (k, int(addrs[k]))
                            seen[i] += 1
                            k += 1
            order = sorted(groups, key=lambda g: (min(p for p, _ in groups[g].values()), g[0]))
            for instr, occurrence in order:
                lanes = groups[(instr, occurrence)]
                addrs = [lanes[lane][1] if lane in lanes else None for lane in range(t1 - t0)]
                space = int(trace.op_class[instr])
                key = unit.get(space, "mem_sectors")
                before = model.count[key]
                model.access(cta % config.n_sms, 0, 0, space, int(kinds[instr]), int(widths[instr]),
                             trace.dst_reg[instr] >= 0, addrs, list(range(t0, t1)))
                if model.count[key] > before:
                    inst_requests[instr] += 1
                    inst_units[instr] += model.count[key] - before
    out = model.stats()
    del out["mem_stall_cycles"]
    out["inst_requests"] = dict(inst_requests)
    out["inst_units"] = dict(inst_units)
    return out


class TraceMemory:
    """The reference cycle loops' side of the model: each thread's next ``/mem`` entry (a cursor per
    thread, advanced as the thread issues memory instructions, so it shares nothing with the
    kernels' per-step offsets) and the :class:`MemoryModel` the accesses go to. ``on`` is False
    under ``perfect_memory`` and for traces without per-instruction addresses (fixed latencies)."""

    def __init__(self, trace: Trace, config: SimConfig, n_sms: int):
        self.on = not config.perfect_memory and trace.has_mem
        if not self.on:
            return
        self.model = MemoryModel(config, n_sms, 0, trace.n_threads)
        self.cursor = [int(x) for x in trace.mem_ptr[:-1]]
        self.addr = [int(a) for a in trace.mem_addr]
        self.space = [int(c) if int(c) in MEMORY_CLASSES else -1 for c in trace.op_class]
        n = trace.n_instrs
        self.kind = [int(k) for k in trace.mem_kind] if trace.mem_kind is not None else [MEM_LOAD] * n
        self.nbytes = [int(b) for b in trace.mem_bytes] if trace.mem_bytes is not None else [4] * n

    def is_access(self, instr: int) -> bool:
        return self.on and self.space[instr] >= 0

    def access(self, sm: int, warp, now: int, instr: int, lanes: list, writes_reg: bool) -> int:
        """``lanes``: the issuing warp's thread per lane, None for an inactive lane or a hole.
        Each thread's next address is taken; returns the cycle the result is ready."""
        addrs, tids = [], []
        for t in lanes:
            if t is None:
                addrs.append(None)
                tids.append(0)
            else:
                addrs.append(self.addr[self.cursor[t]])
                self.cursor[t] += 1
                tids.append(t)
        return self.model.access(sm, warp, now, self.space[instr], self.kind[instr], self.nbytes[instr], writes_reg,
                                 addrs, tids)

    def stats(self) -> dict:
        """The results-file memory stats (nothing without the model)."""
        if not self.on:
            return {}
        got = self.model.stats()
        return {k: got[k] for k in ("mem_requests", "mem_sectors", "shared_requests", "shared_replays", "l1_hits",
                                    "l1_misses", "l2_hits", "l2_misses", "dram_bytes", "mem_stall_cycles")}
