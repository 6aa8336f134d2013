"""Sweep files (TOML): what to simulate, validated completely before any work starts.

A sweep file names its traces and a grid of SimConfig values::

    base = "gt200"                        # optional preset name or config file
    baseline = "sps"                      # or {mechanism = "sps", hws = false}: speedups are over it
    size = "tiny"                         # default size of the workloads below
    traces = ["traces/*.h5"]              # trace files or globs, relative to this file
    workloads = ["bfs", {name = "nn", size = "default", seed = 1}]   # or "all"

    [config]                              # fixed overrides of the base config
    perfect_memory = true

    [grid]                                # cartesian product of these values
    mechanism = ["sps", "mp", "mimd"]
    simd_width = [8, 32]

    [[exclude]]                           # a point matching every key of a rule is dropped
    mechanism = "mimd"
    simd_width = 8

A sweep file may also ask for per-trace analyses (``analyses = ["structurize", "scalarize"]``,
:mod:`.analyses`), stored with the results. A *suite* file lists study files instead
(``studies = ["thesis.toml", "multipath.toml"]``); :func:`load_sweeps` returns one spec per study,
and one ``simt-fast sweep`` runs them all into one results file.

Every problem is reported as one sentence naming the file, line and key (tomllib keeps no
positions, so :func:`_line_of` finds the key's line in the text): unknown keys get "did you
mean", values are type-checked per field, every combination is built into a SimConfig (so an
invalid combination is named before any point runs), and mechanisms the timing core does not
implement yet are refused rather than silently dropped.
"""

from __future__ import annotations

import glob
import itertools
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .._text import decode_utf8, did_you_mean
from .. import workloads as builtin_workloads
from ..sim.config import FIELD_TYPES, MECHANISMS, ConfigError, SimConfig, coerce, from_dict, load_config

TOP_KEYS = ("name", "description", "base", "baseline", "size", "seed", "traces", "workloads", "config", "grid",
            "exclude", "analyses")
SUITE_KEYS = ("name", "description", "studies")
WORKLOAD_KEYS = ("name", "size", "seed")
# Exclude rules may also match on the trace's display name (a workload name or a file stem).
EXCLUDE_EXTRA_KEYS = ("trace",)


class SweepError(ConfigError):
    """A sweep file that cannot be run; ``str(err)`` names the file, line and key at fault."""


@dataclass(frozen=True)
class TraceSource:
    """One trace of a sweep: a trace file, or a workload traced on demand by the emulator."""

    name: str  # display name in results ("bfs", "bfs/default", or the file stem)
    path: Optional[Path] = None
    workload: Optional[str] = None
    size: str = "default"
    seed: int = 0


@dataclass
class SweepSpec:
    path: str
    text: str
    traces: list  # [TraceSource]
    base: Optional[str] = None
    fixed: dict = field(default_factory=dict)  # [config] overrides (coerced)
    grid: dict = field(default_factory=dict)  # field -> list of coerced values, in file order
    exclude: list = field(default_factory=list)  # [dict field -> list of values]
    baseline: dict = field(default_factory=dict)  # field -> value
    configs: list = field(default_factory=list)  # [SimConfig] after exclude rules, per trace below
    excluded_by_trace: dict = field(default_factory=dict)  # trace name -> set of config indices excluded
    name: str = ""  # the study's name in results files (the file's `name`, else its stem)
    description: str = ""
    analyses: list = field(default_factory=list)  # per-trace analyses to store with the results

    def configs_for(self, trace_name: str) -> list:
        drop = self.excluded_by_trace.get(trace_name, set())
        return [c for i, c in enumerate(self.configs) if i not in drop]

    @property
    def n_points(self) -> int:
        return sum(len(self.configs_for(t.name)) for t in self.traces)


# ---------------------------------------------------------------------------------------------
# Locating keys in the text (for messages)
# ---------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _line_of(text: str, section: Optional[str], key: Optional[str] = None, occurrence: int = 0) -> Optional[int]:
    """1-based line of ``key`` in table ``section`` (None = top level); of the header if no key.

    ``occurrence`` picks the n-th ``[[section]]`` of an array of tables.
    """
    current, seen = None, -1
    key_re = re.compile(r"^\s*(?:%s|\"%s\"|'%s')\s*=" % ((re.escape(key),) * 3)) if key else None
    inline_re = re.compile(r"(?:\b|\")%s(?:\"|\b)\s*=" % re.escape(key)) if key else None
    for n, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            current = m.group(1).strip()
            if current == section:
                seen += 1
                if key is None and seen == occurrence:
                    return n
            continue
        if key_re is None:
            continue
        if current == section and (section is None or seen == occurrence) and key_re.match(line):
            return n
    if key and section is None:  # keys inside inline tables (workloads = [{name = ...}])
        for n, line in enumerate(text.splitlines(), 1):
            if inline_re.search(line):
                return n
    return None


_closest = did_you_mean


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


class _Ctx:
    def __init__(self, path: str, text: str):
        self.path, self.text = path, text

    def fail(self, message: str, section: Optional[str] = None, key: Optional[str] = None, occurrence: int = 0):
        line = _line_of(self.text, section, key, occurrence)
        if line is None and section is not None:  # an inline table (baseline = {...}) or the header
            line = _line_of(self.text, None, section) or _line_of(self.text, section, None, occurrence)
        where = f"{self.path}:{line}" if line else self.path
        raise SweepError(f"{where}: {message}")


def read_sweep_text(path) -> str:
    """A sweep or suite file's text; a missing file or bytes that are not UTF-8 are one SweepError."""
    p = Path(path)
    if not p.is_file():
        raise SweepError(f"sweep file {path} does not exist")
    try:
        return decode_utf8(p.read_bytes(), str(path), "a sweep file (TOML text)")
    except ValueError as e:
        raise SweepError(str(e)) from None


def load_sweep(path, *, mechanisms_available: Optional[list] = None) -> SweepSpec:
    """Parse and fully validate a sweep file (raises SweepError naming file, line and key)."""
    p = Path(path)
    text = read_sweep_text(p)
    return parse_sweep(text, str(path), base_dir=p.resolve().parent, mechanisms_available=mechanisms_available)


def load_sweeps(path, *, mechanisms_available: Optional[list] = None) -> list:
    """The studies of a sweep file: ``[spec]`` for a sweep file, one spec per listed study for a suite.

    A suite's studies are sweep files named relative to the suite; their names must differ (they
    label the studies in the results file)."""
    p = Path(path)
    text = read_sweep_text(p)
    ctx = _Ctx(str(path), text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML ({e})") from None
    if "studies" not in data:
        return [parse_sweep(text, str(path), base_dir=p.resolve().parent, mechanisms_available=mechanisms_available)]
    for key in data:
        if key not in SUITE_KEYS:
            ctx.fail(f"key '{key}' does not belong in a suite file, which lists study files only (keys: "
                     f"{', '.join(SUITE_KEYS)}); put it in a study", None, key)
    studies = data["studies"]
    if not isinstance(studies, list) or not studies or not all(isinstance(s, str) for s in studies):
        ctx.fail("'studies' must be a non-empty list of sweep file paths (relative to the suite file)", None,
                 "studies")
    specs, names = [], {}
    for entry in studies:
        sub = p.resolve().parent / entry
        if not sub.is_file():
            ctx.fail(f"study file '{entry}' does not exist (paths are relative to the suite file)", None, "studies")
        spec = load_sweep(sub, mechanisms_available=mechanisms_available)
        if spec.name in names:
            ctx.fail(f"studies '{names[spec.name]}' and '{entry}' have the same name '{spec.name}'; names label "
                     f"the studies in the results file, so they must differ", None, "studies")
        names[spec.name] = entry
        specs.append(spec)
    return specs


def parse_sweep(text: str, name: str = "<sweep>", base_dir: Optional[Path] = None,
                mechanisms_available: Optional[list] = None) -> SweepSpec:
    ctx = _Ctx(name, text)
    base_dir = Path(base_dir or ".")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{name}: not valid TOML ({e})") from None

    for key in data:
        if key not in TOP_KEYS:
            hint = _closest(key, TOP_KEYS)
            if key in FIELD_TYPES:
                hint = f"; config fields go under [config] (fixed) or [grid] (lists)"
            if key == "studies":
                hint = "; a suite file lists studies and nothing else"
            ctx.fail(f"unknown top-level key '{key}'{hint}", None, key)
    study_name = data.get("name", Path(name).stem)
    if not isinstance(study_name, str) or not study_name.strip():
        ctx.fail("'name' must be a non-empty string", None, "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        ctx.fail("'description' must be a string", None, "description")
    analyses = _analyses(ctx, data.get("analyses", []))

    # ---- base config and fixed overrides
    base = data.get("base")
    if base is not None and not isinstance(base, str):
        ctx.fail("'base' must be a preset name or a config file path", None, "base")
    if base and not Path(base).is_absolute() and (base_dir / base).is_file():
        base = str(base_dir / base)
    fixed = {}
    cfg_table = data.get("config", {})
    if not isinstance(cfg_table, dict):
        ctx.fail("'config' must be a table of config fields", None, "config")
    for key, value in cfg_table.items():
        fixed[key] = _field_value(ctx, "config", key, value)
    try:
        base_config = load_config(base, fixed, overrides_source="[config]")
    except ConfigError as e:
        ctx.fail(f"base config: {e}", None, "base")

    # ---- grid
    grid = {}
    grid_table = data.get("grid", {})
    if not isinstance(grid_table, dict):
        ctx.fail("'grid' must be a table of config fields, each with a list of values", None, "grid")
    for key, values in grid_table.items():
        if not isinstance(values, list):
            values = [values]
        if not values:
            ctx.fail(f"[grid] key '{key}' has an empty list of values", "grid", key)
        coerced = [_field_value(ctx, "grid", key, v) for v in values]
        if len(set(coerced)) != len(coerced):
            ctx.fail(f"[grid] key '{key}' lists a value twice", "grid", key)
        grid[key] = coerced
        if key in fixed:
            ctx.fail(f"'{key}' is set both in [config] and in [grid]; keep one", "grid", key)

    # ---- mechanisms must be implemented by this build's timing core
    if mechanisms_available is None:
        from ..sim import registry

        mechanisms_available = registry.names()
    for mech in grid.get("mechanism", [base_config.mechanism]):
        if mech not in mechanisms_available:
            section, key = ("grid", "mechanism") if "mechanism" in grid else ("config", "mechanism")
            ctx.fail(f"mechanism '{mech}' is not implemented by this simt-fast's timing core "
                     f"(implemented: {', '.join(mechanisms_available)})", section, key)

    # ---- baseline
    baseline_raw = data.get("baseline")
    baseline = {}
    if isinstance(baseline_raw, str):
        baseline = {"mechanism": _field_value(ctx, None, "mechanism", baseline_raw, shown="baseline")}
    elif isinstance(baseline_raw, dict):
        for key, value in baseline_raw.items():
            baseline[key] = _field_value(ctx, "baseline", key, value)
    elif baseline_raw is not None:
        ctx.fail("'baseline' must be a mechanism name or a table of config fields", None, "baseline")
    for key, value in baseline.items():
        available = grid.get(key, [getattr(base_config, key)])
        if value not in available:
            ctx.fail(f"baseline {key} = {value!r} is not among the sweep's values ({', '.join(map(repr, available))}), "
                     f"so no speedup could be computed", None, "baseline")

    # ---- traces and workloads
    traces = _trace_sources(ctx, data, base_dir)

    # ---- exclude rules
    rules = data.get("exclude", [])
    if isinstance(rules, dict):
        rules = [rules]
    if not isinstance(rules, list):
        ctx.fail("'exclude' must be an array of tables ([[exclude]])", None, "exclude")
    exclude = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict) or not rule:
            ctx.fail("each [[exclude]] rule must be a non-empty table", "exclude", None, i)
        parsed = {}
        for key, value in rule.items():
            values = value if isinstance(value, list) else [value]
            if key in EXCLUDE_EXTRA_KEYS:
                parsed[key] = [str(v) for v in values]
            else:
                parsed[key] = [_field_value(ctx, "exclude", key, v, occurrence=i, extra=EXCLUDE_EXTRA_KEYS)
                               for v in values]
        exclude.append(parsed)

    # ---- every combination must be a valid SimConfig (named before any work)
    keys = list(grid)
    configs = []
    base_values = base_config.to_dict()
    global_rules = [r for r in exclude if not any(k in EXCLUDE_EXTRA_KEYS for k in r)]
    for combo in itertools.product(*(grid[k] for k in keys)):
        changes = dict(zip(keys, combo))
        values = {**base_values, **changes}
        if any(all(values[k] in vs for k, vs in rule.items()) for rule in global_rules):
            continue  # excluded for every trace: never built, so it may be an invalid combination
        try:
            configs.append(base_config.replace(**changes))
        except ConfigError as e:
            shown = ", ".join(f"{k}={v!r}" for k, v in changes.items())
            ctx.fail(f"grid point ({shown}) is not a valid config: {e}; add an [[exclude]] rule for it", "grid",
                     keys[0] if keys else None)
    spec = SweepSpec(path=name, text=text, traces=traces, base=base, fixed=fixed, grid=grid, exclude=exclude,
                     baseline=baseline, configs=configs, name=study_name, description=description, analyses=analyses)
    for t in traces:
        drop = set()
        for i, cfg in enumerate(configs):
            values = {**cfg.to_dict(), "trace": t.name}
            if any(all(values[k] in vs for k, vs in rule.items()) for rule in exclude):
                drop.add(i)
        spec.excluded_by_trace[t.name] = drop
    if spec.n_points == 0:
        ctx.fail("the sweep has no points (no traces, or every point excluded)", None, None)
    return spec


def _analyses(ctx: _Ctx, value) -> list:
    from .analyses import ANALYSES

    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.fail(f"'analyses' must be a list of analysis names ({', '.join(ANALYSES)})", None, "analyses")
    for v in value:
        if v not in ANALYSES:
            ctx.fail(f"analysis '{v}' does not exist{_closest(v, ANALYSES)} (analyses: {', '.join(ANALYSES)})", None,
                     "analyses")
    return list(dict.fromkeys(value))


def _field_value(ctx: _Ctx, section: Optional[str], key: str, value: Any, occurrence: int = 0, shown: str = "",
                 extra: tuple = ()) -> Any:
    if key not in FIELD_TYPES:
        where = f"[{section}] key" if section else "key"
        ctx.fail(f"{where} '{key}' is not a config field{_closest(key, tuple(FIELD_TYPES) + extra)}", section, key,
                 occurrence)
    try:
        value = coerce(key, value, source="sweep")
        if key == "mechanism":

            if value not in MECHANISMS:
                raise ConfigError(f"'{value}' is not a mechanism{_closest(value, MECHANISMS)} "
                                  f"(mechanisms: {', '.join(MECHANISMS)})")
        else:
            SimConfig(**{key: value})  # the field's own range checks
    except ConfigError as e:
        msg = str(e).removeprefix("sweep: ")
        label = shown or (f"[{section}] {key}" if section else key)
        ctx.fail(f"{label}: {msg}", section, shown or key, occurrence)
    return value


def _trace_sources(ctx: _Ctx, data: dict, base_dir: Path) -> list:
    out = []
    default_size = data.get("size", "default")
    default_seed = data.get("seed", 0)
    if not isinstance(default_size, str):
        ctx.fail("'size' must be a workload size name such as \"tiny\" or \"default\"", None, "size")
    if not isinstance(default_seed, int) or isinstance(default_seed, bool):
        ctx.fail("'seed' must be an integer", None, "seed")
    traces = data.get("traces", [])
    if isinstance(traces, str):
        traces = [traces]
    if not isinstance(traces, list) or not all(isinstance(t, str) for t in traces):
        ctx.fail("'traces' must be a list of trace file paths or globs", None, "traces")
    for pattern in traces:
        full = pattern if Path(pattern).is_absolute() else str(base_dir / pattern)
        matches = sorted(glob.glob(full, recursive=True)) if glob.has_magic(pattern) else (
            [full] if Path(full).exists() else [])
        if not matches:
            ctx.fail(f"trace '{pattern}' matches no file (relative paths are relative to the sweep file)", None,
                     "traces")
        for m in matches:
            mp = Path(m)
            if mp.is_dir():
                ctx.fail(f"trace '{pattern}' is a directory; name .h5 trace files or a glob", None, "traces")
            out.append(TraceSource(name=mp.stem, path=mp.resolve()))

    workloads = data.get("workloads", [])
    if workloads == "all" or workloads == ["all"]:
        workloads = list(builtin_workloads.names())
    if not isinstance(workloads, list):
        ctx.fail("'workloads' must be a list of names or {name, size, seed} tables, or \"all\"", None, "workloads")
    if workloads:
        known = list(builtin_workloads.names())
    for entry in workloads:
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict):
            ctx.fail("each workload must be a name or a {name, size, seed} table", None, "workloads")
        for key in entry:
            if key not in WORKLOAD_KEYS:
                ctx.fail(f"workload key '{key}' is unknown{_closest(key, WORKLOAD_KEYS)} (keys: "
                         f"{', '.join(WORKLOAD_KEYS)})", None, key)
        wname = entry.get("name")
        if wname not in known:
            ctx.fail(f"workload '{wname}' does not exist{_closest(str(wname), known)} (workloads: "
                     f"{', '.join(known)})", None, "workloads")
        size = entry.get("size", default_size)
        sizes = builtin_workloads.get(wname).sizes
        if size not in sizes:
            ctx.fail(f"workload '{wname}' has no size '{size}' (sizes: {', '.join(sizes)})", None, "workloads")
        seed = entry.get("seed", default_seed)
        if not isinstance(seed, int) or isinstance(seed, bool):
            ctx.fail(f"workload '{wname}': seed must be an integer", None, "workloads")
        label = wname if size == default_size and seed == default_seed else f"{wname}/{size}/s{seed}"
        out.append(TraceSource(name=label, workload=wname, size=size, seed=int(seed)))
    names = [t.name for t in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        ctx.fail(f"trace name '{dup}' appears twice (two traces with the same file stem or workload)", None,
                 "traces" if "traces" in data else "workloads")
    return out


def canonical_config(config: SimConfig) -> str:
    """The config as canonical JSON (sorted keys, no spaces): what point ids hash."""
    return json.dumps(config.to_dict(), sort_keys=True, separators=(",", ":"))
