"""`SimConfig`: the machine and mechanism a trace is replayed on (docs/DESIGN.md §4).

Every field has a default, so ``SimConfig(mechanism="mp")`` is a complete configuration: the
defaults are the machine of the ``single-sm`` preset (``data/configs/single-sm.toml`` cites every
number; a test keeps the two equal), one SM for studying a kernel's divergence on its own. The
other presets are whole GPUs (``gt200``, ``fermi``, ``modern``); :func:`load_config` takes a
preset name or a TOML path, and ``simt-fast config list`` / ``config show NAME`` print them.
Validation happens in ``__post_init__`` and names the field at fault.
"""

from __future__ import annotations

import dataclasses
import numbers
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .._text import decode_utf8, did_you_mean
from .mechanisms import BY_NAME, HWS_NAMES, MAJORITY_NAMES, NAMES

MECHANISMS = NAMES  # (the table in sim/mechanisms.py)
ISSUE_POLICIES = ("auto", "lrr", "gto", "majority")
# L1 write policies (docs/memory.md): GPGPU-Sim's Fermi L1 (global stores evict, local stores write
# back) or a write-through L1; neither allocates on a write miss
L1_WRITE_POLICIES = ("write-evict", "write-through")
# what an L2 write miss does: "fetch" = GPGPU-Sim's Fermi write-allocate (the write goes on to DRAM
# and the sector is read in), "allocate" = the sector is allocated dirty without reading DRAM
L2_WRITE_MISS = ("fetch", "allocate")
SECTOR_BYTES = 32  # the memory model's fixed geometry: 32-byte sectors, 128-byte lines
LINE_BYTES = 128
# where the memory model lays out the interleaved local frames: above every address the emulator
# hands out (global from 2**40, generic windows at k << 56 for k <= 4), so they never alias global data
LOCAL_BASE = 8 << 56

# The range of every integer field: what the kernels can represent, with room to spare. Cycle
# counts are int64 with 2**62 as the kernels' "never" marker, and the cycle loop keys each visit
# by cycle x (n_sms + 1), so cycles stay below 2**48 and latencies below 2**24 (no GPU's latency
# is within orders of magnitude of either). Machine sizes are bounded by the state the kernels
# allocate per SM and per resident thread: a handful of times today's largest GPUs.
LATENCY_RANGE = (1, 1 << 24)
CYCLE_RANGE = (1, 1 << 48)
INT_RANGES = {
    "warp_size": (4, 64),  # lane masks are one 64-bit word
    "simd_width": (1, 64),
    "n_sms": (1, 1024),
    "n_schedulers": (1, 64),
    "max_warps_per_sm": (1, 4096),
    "max_ctas_per_sm": (1, 1024),
    "lat_alu": LATENCY_RANGE,
    "lat_sfu": LATENCY_RANGE,
    "lat_global": LATENCY_RANGE,
    "lat_shared": LATENCY_RANGE,
    "lat_local": LATENCY_RANGE,
    "lat_const": LATENCY_RANGE,
    "lat_branch": LATENCY_RANGE,
    "lat_l1": LATENCY_RANGE,
    "lat_l2": LATENCY_RANGE,
    "kernel_launch_latency": (0, 1 << 24),
    # memory model (docs/memory.md). Cache sizes: the state is an int64 record per 128-byte line, so
    # a cache costs half its size in host memory; 16 MiB per SM and 256 MiB of L2 are far past any GPU.
    "l1_bytes": (0, 1 << 24),
    "l1_assoc": (1, 64),
    "l2_bytes": (0, 1 << 28),
    "l2_assoc": (1, 64),
    "lsu_sectors_per_cycle": (1, 4),  # sectors of one 128-byte line: the LSU takes one line per cycle
    "shared_banks": (1, 64),
    "shared_bank_group": (1, 64),
    # DRAM bandwidth is counted in units of 1/dram_bytes_per_cycle cycle: with cycles below 2**48
    # the partitions' clocks stay below 2**62
    "dram_bytes_per_cycle": (0, 1 << 14),
    "dram_partitions": (1, 1024),
    "dram_interleave_bytes": (32, 1 << 20),
    "max_cycles": CYCLE_RANGE,
    "no_progress_cycles": CYCLE_RANGE,
    "seed": (-(1 << 63), (1 << 63) - 1),  # stored as int64 in results files
}


class ConfigError(ValueError):
    """A configuration value or file that is wrong; the message names the field or file."""


@dataclass(frozen=True)
class SimConfig:
    """The machine and mechanism; the defaults are the ``single-sm`` preset (data/configs/single-sm.toml)."""

    mechanism: str = "sps"
    warp_size: int = 32  # threads per warp, 4..64
    simd_width: int = 32  # SIMD lanes; a full warp issues in ceil(warp_size/simd_width) cycles
    n_sms: int = 1  # streaming multiprocessors; CTAs are spread over them
    n_schedulers: int = 1  # warp instructions issued per SM per cycle (each with its own SIMD unit)
    max_warps_per_sm: int = 48
    max_ctas_per_sm: int = 8
    # lrr (loose round robin), gto (greedy then oldest), majority (dwf/en-dwf: the PC with most
    # threads), or auto: each mechanism's own paper policy (majority for dwf/en-dwf, else lrr)
    issue_policy: str = "auto"
    lat_alu: int = 24  # result latency in cycles, per op class (GT200 read-after-write ~24)
    lat_sfu: int = 32
    lat_global: int = 400
    lat_shared: int = 32
    lat_local: int = 400
    lat_const: int = 24
    lat_branch: int = 24  # control hazard: a unit that issued a branch issues again this many cycles later
    perfect_memory: bool = False  # no memory model; memory latencies become lat_alu (Jin 2012, Table 5.1 setup)
    # ---- memory model (docs/memory.md; used when perfect_memory is off and the trace has addresses).
    # Defaults: GTX480 as GPGPU-Sim's Fermi configuration models it (the `single-sm` preset cites them).
    lat_l1: int = 30  # L1 hit; lat_global is the DRAM latency, lat_shared a shared-memory pass
    lat_l2: int = 240  # L2 hit
    l1_bytes: int = 16384  # per-SM L1 data cache (0: none); 128-byte lines of four 32-byte sectors, LRU
    l1_assoc: int = 4
    l1_write_policy: str = "write-evict"  # or "write-through"; no write-allocate either way
    l2_bytes: int = 786432  # shared L2 (0: none); write-back
    l2_assoc: int = 8
    l2_write_miss: str = "fetch"  # or "allocate"
    lsu_sectors_per_cycle: int = 2  # per SM: one 128-byte line per cycle, up to this many of its sectors
    shared_banks: int = 32  # 4-byte shared-memory banks
    shared_bank_group: int = 32  # lanes whose shared accesses are checked for conflicts together
    dram_bytes_per_cycle: int = 127  # whole GPU (0: unlimited)
    dram_partitions: int = 6  # memory partitions the bandwidth is split over
    dram_interleave_bytes: int = 256  # consecutive chunks of this size go to consecutive partitions
    hws: bool = False  # hybrid warp size (Jin 2012): squeeze + issue only active quarter-warps
    hws_sync_sms: bool = False  # reproduce the thesis simulator's all-SM warp-size synchronisation
    # hws: squeeze lane-aware before issue (PDOM&HWS) and before a DWF male meets the pool (the
    # thesis' §4.4 step 1). false: issue the active quarters as they are, which measures the squeeze's
    # own share of the speedup (the thesis' Fig. 6.1; docs/hws.md)
    hws_squeeze: bool = True
    # cycles from the launch to the kernel's first CTA, added once to `cycles` (Accel-Sim's
    # -gpgpu_kernel_launch_latency, 5000 in its tested configs); 0: the kernel starts at cycle 0
    kernel_launch_latency: int = 0
    max_cycles: int = 2_000_000_000  # guard: stop with an error past this many cycles
    no_progress_cycles: int = 1_000_000  # deadlock guard: cycles without any issue or retire
    syncwarp_blocks: str = "auto"  # stackless: "auto" (from convergence analysis) or "ipdom"
    seed: int = 0  # for any randomised tie-breaking (kept deterministic)

    def __post_init__(self):
        def bad(name, why):
            raise ConfigError(f"config field '{name}' {why} (got {getattr(self, name)!r})")

        for name, (lo, hi) in INT_RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                bad(name, "must be an integer")
            if not lo <= value <= hi:
                bad(name, f"must be between {lo} and {hi}")
            object.__setattr__(self, name, int(value))  # numpy integers become plain ints (JSON, ids)
        if self.mechanism not in MECHANISMS:
            bad("mechanism", f"must be one of {', '.join(MECHANISMS)}{did_you_mean(str(self.mechanism), MECHANISMS)}")
        if self.hws and self.warp_size % self.simd_width:
            bad("simd_width", "must divide warp_size when hws is on (quarter-warps are simd_width wide)")
        if self.issue_policy not in ISSUE_POLICIES:
            bad("issue_policy", f"must be one of {', '.join(ISSUE_POLICIES)}")
        if self.syncwarp_blocks not in ("auto", "ipdom"):
            bad("syncwarp_blocks", "must be 'auto' or 'ipdom'")
        if self.l1_write_policy not in L1_WRITE_POLICIES:
            bad("l1_write_policy", f"must be one of {', '.join(L1_WRITE_POLICIES)}")
        if self.l2_write_miss not in L2_WRITE_MISS:
            bad("l2_write_miss", f"must be one of {', '.join(L2_WRITE_MISS)}")
        for level in ("l1", "l2"):
            size, assoc = getattr(self, f"{level}_bytes"), getattr(self, f"{level}_assoc")
            if size % (LINE_BYTES * assoc):
                bad(f"{level}_bytes", f"must be 0 or whole sets: a multiple of {LINE_BYTES} x {level}_assoc "
                                      f"= {LINE_BYTES * assoc} bytes")
        if self.dram_interleave_bytes % SECTOR_BYTES:
            bad("dram_interleave_bytes", f"must be a multiple of the {SECTOR_BYTES}-byte sector")

    # ---- derived --------------------------------------------------------------------------
    @property
    def n_quarters(self) -> int:
        """Issue sub-groups per warp (the quarter-warps of Jin 2012 when warp 32 / SIMD 8)."""
        return -(-self.warp_size // self.simd_width)

    @property
    def effective_issue_policy(self) -> str:
        """The policy the scheduler runs: ``auto`` resolves to the mechanism's paper policy
        (DWF's majority scheduling for dwf/en-dwf, loose round robin for everything else), so that
        one sweep or `run` can compare stack mechanisms and DWF each as published."""
        if self.issue_policy != "auto":
            return self.issue_policy
        return "majority" if self.mechanism in MAJORITY_NAMES else "lrr"

    def latency(self, name: str) -> int:
        """Latency of an op-class field name (``global``, ``shared``…), honouring perfect_memory."""
        if self.perfect_memory and name in ("global", "shared", "local", "const"):
            return self.lat_alu
        return getattr(self, f"lat_{name}")

    # ---- (de)serialisation -------------------------------------------------------------
    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "SimConfig":
        return from_dict({**self.to_dict(), **changes})

    def to_toml(self) -> str:
        lines = []
        for k, v in self.to_dict().items():
            if isinstance(v, bool):
                lines.append(f"{k} = {'true' if v else 'false'}")
            elif isinstance(v, str):
                lines.append(f'{k} = "{v}"')
            else:
                lines.append(f"{k} = {v}")
        return "\n".join(lines) + "\n"


def check_config(config: SimConfig) -> None:
    """The combinations of mechanism and switches that no kernel runs, refused in one sentence each
    (at run time, not when a config is built: a sweep grid may name them and exclude them)."""
    m = config.mechanism
    if config.hws and m not in HWS_NAMES:
        raise ConfigError(
            f"config field 'hws' = true is defined for {', '.join(HWS_NAMES)} only, not for '{m}' "
            f"(Jin 2012 squeezes a warp's quarter-warps; see docs/hws.md)"
        )
    if config.hws_sync_sms and not config.hws:
        raise ConfigError("config field 'hws_sync_sms' = true needs hws = true")
    if not config.hws_squeeze and not config.hws:
        raise ConfigError("config field 'hws_squeeze' = false needs hws = true (without hws nothing is squeezed)")
    if m == "en-dwf" or (BY_NAME[m].family == "formation" and config.hws):
        if config.warp_size % config.simd_width and config.simd_width < config.warp_size:
            raise ConfigError(
                f"config field 'simd_width' = {config.simd_width} must divide warp_size = {config.warp_size} "
                f"for {m} (threads move between quarters of one lane)"
            )
    if m not in MAJORITY_NAMES and config.effective_issue_policy == "majority":
        # majority scheduling picks a PC in DWF's per-SM warp pool; the other mechanisms have none
        raise ConfigError(
            f"config field 'issue_policy' = 'majority' applies to {'/'.join(MAJORITY_NAMES)}, not to '{m}' "
            f"(use auto, lrr or gto)"
        )


def cta_limit(config: SimConfig, threads_per_cta: int) -> int:
    """CTAs one SM holds at once: ``max_ctas_per_sm``, fewer if their warps exceed ``max_warps_per_sm``."""
    wpc = -(-threads_per_cta // config.warp_size)
    lim = min(config.max_ctas_per_sm, config.max_warps_per_sm // wpc)
    if lim < 1:
        raise ConfigError(
            f"config field 'max_warps_per_sm' = {config.max_warps_per_sm} cannot hold one CTA of {threads_per_cta} "
            f"threads ({wpc} warps of {config.warp_size})"
        )
    return lim


FIELD_TYPES = {f.name: f.type for f in fields(SimConfig)}
_DEFAULTS = SimConfig()
DEFAULT_PRESET = "single-sm"  # the preset whose machine SimConfig()'s defaults are


def from_dict(d: dict, source: str | None = None) -> SimConfig:
    """Build a SimConfig from a mapping; unknown keys, wrong types and (with ``source``) bad values
    name the source (a file, ``--set``)."""
    kw: dict[str, Any] = {}
    for key, value in d.items():
        if key not in FIELD_TYPES:
            close = [n for n in FIELD_TYPES if n.startswith(key[:3])]
            hint = f"; did you mean {', '.join(close)}?" if close else did_you_mean(key, FIELD_TYPES)
            raise ConfigError(f"{source or 'config'}: unknown config field '{key}'{hint}")
        kw[key] = coerce(key, value, source or "config")
    try:
        return SimConfig(**kw)
    except ConfigError as e:
        if source is None:
            raise
        raise ConfigError(f"{source}: {e}") from None


def coerce(key: str, value: Any, source: str = "config") -> Any:
    """Convert ``value`` (possibly a string from ``--set key=value``) to the field's type."""
    default = getattr(_DEFAULTS, key)
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            if isinstance(value, (bool, int)) and value in (0, 1):
                return bool(value)
            raise ValueError(value)
        if isinstance(default, int):
            if isinstance(value, bool):
                raise ValueError(value)
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value)
        return str(value)
    except (TypeError, ValueError):
        kind = type(default).__name__
        raise ConfigError(f"{source}: config field '{key}' must be {kind} (got {value!r})") from None


PRESET_DIR = Path(__file__).resolve().parents[2] / "data" / "configs"


def preset_dirs() -> list[Path]:
    """Where presets are looked up: the repository's data/configs (also shipped in the package)."""
    here = Path(__file__).resolve().parent / "presets"
    return [p for p in (PRESET_DIR, here) if p.is_dir()]


def presets() -> dict[str, Path]:
    """Every preset name -> its file (the first preset directory that has it), sorted by name."""
    found: dict[str, Path] = {}
    for d in preset_dirs():
        for p in sorted(d.glob("*.toml")):
            found.setdefault(p.stem, p)
    return dict(sorted(found.items()))


def read_config_file(name_or_path: str) -> tuple[Path, dict]:
    """The file of a preset name or a TOML path, and its table as written (``source`` included).

    A file may hold its fields at top level or in a ``[config]`` table; the fields it leaves out
    are the defaults (the ``single-sm`` preset's machine)."""
    path = Path(name_or_path)
    if not path.is_file():
        path = presets().get(name_or_path)
        if path is None:
            raise ConfigError(f"no config file or preset named '{name_or_path}'{did_you_mean(name_or_path, presets())} "
                              f"(presets: {', '.join(presets())})")
    try:
        data = tomllib.loads(decode_utf8(path.read_bytes(), str(path), "a config file (TOML text)"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return path, data


def config_fields(data: dict) -> dict:
    """The config fields of a config file's table: without its ``source`` citation, ``[config]`` if it has one."""
    fields_ = {k: v for k, v in data.items() if k != "source"}  # presets carry a citation, not a field
    return fields_.get("config", fields_)


def load_config(name_or_path: str | None, overrides: dict | None = None, *,
                overrides_source: str = "overrides") -> SimConfig:
    """A preset name (``gt200``), a TOML path, or None (the defaults: the ``single-sm`` machine),
    then ``overrides`` applied. A problem in the file names the file; one in ``overrides`` names
    ``overrides_source`` (``--set`` on the command line, ``[config]`` in a sweep file)."""
    config = _DEFAULTS
    if name_or_path:
        path, data = read_config_file(name_or_path)
        config = from_dict(config_fields(data), source=str(path))
    if not overrides:
        return config
    return from_dict({**config.to_dict(), **overrides}, source=overrides_source)
