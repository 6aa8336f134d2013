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
from .machine import ctas_per_sm as cta_limit

SECTORS_PER_LINE = LINE_BYTES // SECTOR_BYTES
CONTROL_BYTES = 8  # an interconnect packet's header (GPGPU-Sim's READ_PACKET_SIZE, WRITE_PACKET_SIZE)
MEMORY_CLASSES = (OpClass.MEM_GLOBAL, OpClass.MEM_SHARED, OpClass.MEM_LOCAL, OpClass.MEM_CONST)


def no_access(a) -> bool:
    """An inactive lane or a false guard: None, -1 (the int64 view) or the trace's 2**64 - 1."""
    return a is None or a < 0 or a >= 1 << 63


@dataclass
class Line:
    valid: set = field(default_factory=set)  # sector indices 0..3 holding data
    dirty: set = field(default_factory=set)
    arrives: dict = field(default_factory=dict)  # sector index -> cycle its data arrives
    held: dict = field(default_factory=dict)  # sector index -> requests its miss-status holding register holds


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
        line.held[idx] = 1  # the miss itself
        lines.move_to_end(number)
        return evicted

    def merge(self, sector: int, limit: int) -> bool:
        """A request for ``sector`` while its data is in flight joins its miss's register if that holds
        fewer than ``limit`` requests (0: no limit)."""
        line = self.line_of(sector)
        idx = sector % SECTORS_PER_LINE
        if limit and line.held[idx] >= limit:
            return False
        line.held[idx] += 1
        return True

    def contents(self) -> list:
        """Per set, least recently used first: (line, valid mask, dirty mask)."""
        return [[(n, sum(1 << i for i in ln.valid), sum(1 << i for i in ln.dirty)) for n, ln in s.items()]
                for s in self.sets]


class Port:
    """A first-in, first-out port that moves ``rate`` bytes per cycle (0: unlimited): each transfer
    starts when it arrives or when the port has moved everything before it, whichever is later."""

    def __init__(self, rate: int):
        self.rate = rate
        self.free = Fraction(0)  # the cycle the port has moved everything so far

    def wait(self, t: int, nbytes: int) -> int:
        """Move ``nbytes`` arriving at cycle ``t``; the whole cycles they waited."""
        if not self.rate:
            return 0
        start = max(Fraction(t), self.free)
        self.free = start + Fraction(nbytes, self.rate)
        return ceil(start - t)

    def hold(self, until: int) -> None:
        """The port moves nothing before cycle ``until``."""
        if self.rate:
            self.free = max(self.free, Fraction(until))

    def room(self, t: int, queued_bytes: int) -> int:
        """The first cycle at or after ``t`` at which at most ``queued_bytes`` wait before the port."""
        if not self.rate:
            return t
        return max(t, ceil(self.free - Fraction(queued_bytes, self.rate)))


def packet_bytes(data: int, flit: int) -> int:
    """An interconnect packet: 8 control bytes and ``data``, in whole flits."""
    return ceil((CONTROL_BYTES + data) / flit) * flit


class MemoryModel:
    """The memory system of one run: per-SM load/store units, constant ports, L1s with their
    miss-status holding registers, miss queues and interconnect ports; the L2's slices and their
    ports; the L2; DRAM partitions."""

    def __init__(self, config: SimConfig, n_sms: int, n_warps: int, tpc: int, ctas_per_sm: int):
        """``tpc`` threads per CTA, of which an SM holds ``ctas_per_sm`` (they place local memory)."""
        cfg = self.cfg = config
        self.n_sms = n_sms
        cta_threads = self.cta_threads = ceil(tpc / cfg.warp_size) * cfg.warp_size  # whole warps
        self.resident = cta_threads * ctas_per_sm * n_sms  # local memory's interleave stride
        self.lsu_free = [0] * n_sms
        self.const_free = [0] * n_sms
        self.l1 = [SectorCache(cfg.l1_bytes, cfg.l1_assoc) for _ in range(n_sms)] if cfg.l1_bytes else None
        self.l2 = SectorCache(cfg.l2_bytes, cfg.l2_assoc) if cfg.l2_bytes else None
        self.partition = [Port(Fraction(cfg.dram_bytes_per_cycle, cfg.dram_partitions))
                          for _ in range(cfg.dram_partitions)]
        self.mshr = [[0] * cfg.l1_mshrs for _ in range(n_sms)]  # per SM: when each entry is free again
        self.sm_out = [Port(cfg.icnt_bytes_per_cycle) for _ in range(n_sms)]  # requests leaving an SM
        self.sm_in = [Port(cfg.icnt_bytes_per_cycle) for _ in range(n_sms)]  # replies reaching it
        self.slice_in = [Port(cfg.icnt_bytes_per_cycle) for _ in range(cfg.l2_slices)]  # requests reaching a slice
        self.slice = [Port(cfg.l2_slice_bytes_per_cycle) for _ in range(cfg.l2_slices)]  # its data port
        self.waits = defaultdict(list)  # per warp (any key): (issue, ready) of results it waits for
        self.count = Counter()

    # ---- counters ------------------------------------------------------------------------------
    def stats(self) -> dict:
        """The results-file memory stats (and the extra counts the numba model keeps)."""
        out = {k: self.count[k] for k in (
            "mem_requests", "mem_sectors", "shared_requests", "shared_replays", "l1_hits", "l1_misses",
            "l2_hits", "l2_misses", "dram_bytes", "mem_lines", "const_requests", "const_accesses",
            "shared_passes", "mshr_stall_cycles", "icnt_wait_cycles", "slice_wait_cycles")}
        out["mem_stall_cycles"] = sum(union_length(w) for w in self.waits.values())
        return out

    # ---- DRAM ----------------------------------------------------------------------------------
    def dram(self, sector: int, t: int) -> int:
        """Move one sector to or from DRAM arriving at cycle ``t``; the whole cycles it queued."""
        self.count["dram_bytes"] += SECTOR_BYTES
        p = (sector * SECTOR_BYTES // self.cfg.dram_interleave_bytes) % self.cfg.dram_partitions
        return self.partition[p].wait(t, SECTOR_BYTES)

    # ---- the L2 and its slices -----------------------------------------------------------------
    def l2_access(self, q: int, sector: int, t: int, kind: int) -> int:
        """The L2 (or DRAM without one) takes the sector at cycle ``t`` from slice ``q``'s data port;
        the cycle its data is ready (for a store: the write is done). Data reaches the L2 ``lat_l2``
        before it is back at the SM; a load or atomic before then merges with the miss that fetches
        it, or, that register full, stalls the slice until the data is there."""
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
            if kind == MEM_STORE or line.arrives[idx] <= t + cfg.lat_l2:
                return t + cfg.lat_l2
            if not l2.merge(sector, cfg.l2_mshr_merge):  # retried until the data arrives, served then
                arrives = line.arrives[idx] - cfg.lat_l2
                self.count["slice_wait_cycles"] += arrives - t
                self.slice[q].hold(arrives)
                self.slice[q].wait(arrives, SECTOR_BYTES)
            return line.arrives[idx]
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

    def below_l1(self, sm: int, sector: int, t: int, kind: int) -> int:
        """A request of SM ``sm`` for ``sector``, leaving it at cycle ``t``, through the interconnect to
        the sector's L2 slice and back; the cycle its data (a store: its acknowledgement) is back.
        Every port adds only its waiting: without contention the L2 (DRAM) latency is the whole trip."""
        cfg = self.cfg
        flit = cfg.icnt_flit_bytes
        carries_data = kind != MEM_LOAD  # a write or an atomic carries its sector to the L2
        returns_data = kind != MEM_STORE  # a load or an atomic brings it back; a write only its ack
        request = packet_bytes(SECTOR_BYTES if carries_data else 0, flit)
        reply = packet_bytes(SECTOR_BYTES if returns_data else 0, flit)
        q = (sector * SECTOR_BYTES // cfg.dram_interleave_bytes) % cfg.l2_slices
        sent = t + self.sm_out[sm].wait(t, request)
        # the SM's reply port is booked when the request leaves, in the SM's request order
        back = self.sm_in[sm].wait(sent, reply)
        arrived = sent + self.slice_in[q].wait(sent, request)
        taken = arrived + self.slice[q].wait(arrived, SECTOR_BYTES)
        self.count["icnt_wait_cycles"] += (sent - t) + (arrived - sent) + back
        self.count["slice_wait_cycles"] += taken - arrived
        return self.l2_access(q, sector, taken, kind) + back

    # ---- the SM's side -------------------------------------------------------------------------
    def leave(self, sm: int, t: int, kind: int) -> int:
        """The first cycle at or after ``t`` a request of ``kind`` finds room in the SM's miss queue
        (at most ``l1_miss_queue`` requests waiting for the interconnect; 0: unbounded)."""
        cfg = self.cfg
        if not cfg.l1_miss_queue:
            return t
        request = packet_bytes(SECTOR_BYTES if kind != MEM_LOAD else 0, cfg.icnt_flit_bytes)
        return self.sm_out[sm].room(t, cfg.l1_miss_queue * request)

    def miss(self, sm: int, sector: int, t: int) -> tuple:
        """A load that missed the L1 at cycle ``t``: (ready, cycle the LSU could take it). It needs a
        free miss-status holding register (the earliest freed, when all are busy) and room in the
        miss queue; until then the LSU stalls, and retries."""
        regs = self.mshr[sm]
        start = t
        if regs:
            e = min(range(len(regs)), key=lambda i: regs[i])
            start = max(start, regs[e])
        start = self.leave(sm, start, MEM_LOAD)
        ready = self.below_l1(sm, sector, start, MEM_LOAD)
        if regs:
            regs[e] = ready
        return ready, start

    def sector(self, sm: int, sector: int, t: int, space: int, kind: int) -> tuple:
        """One sector of a global/local access, which the LSU of ``sm`` takes at cycle ``t``:
        (ready, the cycle it was taken after any stall)."""
        cfg = self.cfg
        if kind == MEM_ATOMIC or self.l1 is None:
            start = self.leave(sm, t, kind)
            return self.below_l1(sm, sector, start, kind), start
        l1 = self.l1[sm]
        idx = sector % SECTORS_PER_LINE
        present = l1.holds(sector)
        if kind == MEM_LOAD:
            if present:
                # a hit, or a miss in flight that this request merges with (no new register); that
                # register full, the LSU stalls until the data is there, and then hits
                self.count["l1_hits"] += 1
                l1.use(sector)
                arrives = l1.line_of(sector).arrives[idx]
                if arrives <= t + cfg.lat_l1 or l1.merge(sector, cfg.l1_mshr_merge):
                    return max(t + cfg.lat_l1, arrives), t
                self.count["mshr_stall_cycles"] += arrives - t
                return arrives + cfg.lat_l1, arrives
            self.count["l1_misses"] += 1
            ready, start = self.miss(sm, sector, t)
            self.count["mshr_stall_cycles"] += start - t
            evicted = l1.fill(sector, ready, dirty=False)
            if evicted:
                number, dirty = evicted
                for i in dirty:
                    self.below_l1(sm, number * SECTORS_PER_LINE + i, start, MEM_STORE)
            return ready, start
        if present:
            self.count["l1_hits"] += 1
            line = l1.line_of(sector)
            if cfg.l1_write_policy == "write-through":
                l1.use(sector)
            elif space == OpClass.MEM_LOCAL:
                l1.use(sector)
                line.dirty.add(idx)
                return t + cfg.lat_l1, t  # write-back: the store stops in the L1
            else:
                line.valid.discard(idx)  # global write-evict
                line.dirty.discard(idx)
        else:
            self.count["l1_misses"] += 1
        start = self.leave(sm, t, MEM_STORE)
        return self.below_l1(sm, sector, start, MEM_STORE), start

    # ---- one warp-level instruction ------------------------------------------------------------
    def local_address(self, sm: int, resident: int, byte: int) -> int:
        """Local memory as GPGPU-Sim lays it out: the same 4-byte word of every thread the machine
        can hold at once, side by side, ordered by CTA slot across the SMs (slot 0 of SM 0, of SM 1,
        ..., then slot 1), each CTA's threads in order; ``resident`` = the thread's CTA slot on its SM
        x ``cta_threads`` + its index in the CTA."""
        slot, within = divmod(resident, self.cta_threads)
        thread = self.cta_threads * (sm + self.n_sms * slot) + within
        return LOCAL_BASE + ((byte // 4) * self.resident + thread) * 4 + byte % 4

    def transactions(self, sm, addrs, resident, nbytes: int, local: bool, atomic: bool) -> list:
        """The sectors the lanes touch, sorted; a (global) atomic's sector appears once per transaction:
        as often as the most lanes that touch any one of its bytes (overlapping atomics serialise)."""
        touches = defaultdict(Counter)  # sector -> byte -> lanes touching it
        for lane, a in enumerate(addrs):
            if no_access(a):
                continue
            for b in range(a, a + max(nbytes, 1)):
                if local:  # consecutive 32-bit words of one frame offset belong to consecutive threads
                    b = self.local_address(sm, resident[lane], b)
                touches[b // SECTOR_BYTES][b] += 1
        return [s for s in sorted(touches) for _ in range(max(touches[s].values()) if atomic and not local else 1)]

    def shared_passes(self, addrs, nbytes: int, atomic: bool) -> list:
        """Passes of each lane group that accesses memory: the most any bank serves, a bank serving
        each distinct word once (lanes reading one word share it), and for an atomic each word as
        often as the most lanes that touch any one of its bytes."""
        cfg = self.cfg
        out = []
        for g0 in range(0, len(addrs), cfg.shared_bank_group):
            touches = defaultdict(Counter)  # word -> byte -> lanes touching it
            for a in addrs[g0:g0 + cfg.shared_bank_group]:
                if not no_access(a):
                    for b in range(a, a + max(nbytes, 1)):
                        touches[b // 4][b] += 1
            if touches:
                per_bank = Counter()
                for word, lanes in touches.items():
                    per_bank[word % cfg.shared_banks] += max(lanes.values()) if atomic else 1
                out.append(max(per_bank.values()))
        return out

    def access(self, sm, warp, now, space, kind, nbytes, writes_reg, addrs, resident) -> int:
        """Twin of ``simt_fast.sim.memory.access``: ``addrs``/``resident`` list the warp's lanes
        (``resident``: each lane's thread's slot on the SM, for local memory)."""
        cfg = self.cfg
        atomic = kind == MEM_ATOMIC
        if space == OpClass.MEM_SHARED:
            passes = self.shared_passes(addrs, nbytes, atomic)
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
            sectors = self.transactions(sm, addrs, resident, nbytes, space == OpClass.MEM_LOCAL, atomic)
            if not sectors:
                return now + cfg.lat_alu
            self.count["mem_requests"] += 1
            self.count["mem_sectors"] += len(sectors)
            self.count["mem_lines"] += len({s // SECTORS_PER_LINE for s in sectors})
            # the LSU takes one line per cycle, a few of its sectors; an atomic one transaction per
            # cycle. A stall (no free register, a full miss queue) delays it and everything after.
            if atomic:
                groups = [[s] for s in sectors]
            else:
                by_line = {}
                for s in sectors:
                    by_line.setdefault(s // SECTORS_PER_LINE, []).append(s)
                groups = [by_line[n] for n in sorted(by_line)]
            per_cycle = 1 if atomic else cfg.lsu_sectors_per_cycle
            cycle = max(now, self.lsu_free[sm])
            stalled = 0
            ready = 0
            for group in groups:
                for k, s in enumerate(group):
                    t = cycle + k // per_cycle + stalled
                    r, taken = self.sector(sm, s, t, space, kind)
                    stalled += taken - t
                    ready = max(ready, r)
                cycle += ceil(len(group) / per_cycle)
            self.lsu_free[sm] = cycle + stalled
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
    c % n_sms, in its CTA slot (c // n_sms) % CTAs per SM). Returns the counts (``MemoryProfile`` field names) and per-instruction dicts."""
    W, tpc = config.warp_size, trace.threads_per_cta
    ctas_per_sm = cta_limit(config, tpc)
    model = MemoryModel(config, config.n_sms, 1, tpc, ctas_per_sm)
    cta_threads = model.cta_threads
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
                slot = (cta // config.n_sms) % ctas_per_sm  # the CTAs of an SM take its slots in turn
                model.access(cta % config.n_sms, 0, 0, space, int(kinds[instr]), int(widths[instr]),
                             trace.dst_reg[instr] >= 0, addrs, [slot * cta_threads + t - cta * tpc for t in range(t0, t1)])
                if model.count[key] > before:
                    inst_requests[instr] += 1
                    inst_units[instr] += model.count[key] - before
    out = model.stats()
    for timing in ("mem_stall_cycles", "mshr_stall_cycles", "icnt_wait_cycles", "slice_wait_cycles"):
        del out[timing]  # (every access issues at cycle 0: no time is measured)
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
        self.tpc = trace.threads_per_cta
        self.model = MemoryModel(config, n_sms, 0, self.tpc, cta_limit(config, self.tpc))
        self.cursor = [int(x) for x in trace.mem_ptr[:-1]]
        self.addr = [int(a) for a in trace.mem_addr]
        self.space = [int(c) if int(c) in MEMORY_CLASSES else -1 for c in trace.op_class]
        n = trace.n_instrs
        self.kind = [int(k) for k in trace.mem_kind] if trace.mem_kind is not None else [MEM_LOAD] * n
        self.nbytes = [int(b) for b in trace.mem_bytes] if trace.mem_bytes is not None else [4] * n

    def is_access(self, instr: int) -> bool:
        return self.on and self.space[instr] >= 0

    def access(self, sm: int, warp, now: int, instr: int, lanes: list, writes_reg: bool, cta_slot) -> int:
        """``lanes``: the issuing warp's thread per lane, None for an inactive lane or a hole;
        ``cta_slot(t)``: the slot of thread t's CTA on the SM. Each thread's next address is taken;
        returns the cycle the result is ready."""
        addrs, resident = [], []
        for t in lanes:
            if t is None:
                addrs.append(None)
                resident.append(0)
            else:
                addrs.append(self.addr[self.cursor[t]])
                self.cursor[t] += 1
                resident.append(cta_slot(t) * self.model.cta_threads + t % self.tpc)
        return self.model.access(sm, warp, now, self.space[instr], self.kind[instr], self.nbytes[instr], writes_reg,
                                 addrs, resident)

    def stats(self) -> dict:
        """The results-file memory stats (nothing without the model)."""
        if not self.on:
            return {}
        got = self.model.stats()
        return {k: got[k] for k in ("mem_requests", "mem_sectors", "shared_requests", "shared_replays", "l1_hits",
                                    "l1_misses", "l2_hits", "l2_misses", "dram_bytes", "mem_stall_cycles",
                                    "mshr_stall_cycles", "icnt_wait_cycles", "slice_wait_cycles")}
