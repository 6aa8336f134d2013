"""The one place numba flags are set (STUMPY's config.py idea).

Every hot kernel in the project is decorated with :func:`jit` so that on-disk caching
(`cache=True`) keeps CLI start-up and CI fast, and so that `NUMBA_DISABLE_JIT=1` turns
every kernel back into plain Python for coverage and debugging.

Cache correctness: numba keys a cached kernel on the source file of the decorated function
only, but our kernels inline @jit helpers from other modules (the timing core compiles in the
mechanism modules, the emulator's interpreter compiles in `alu.py` and `fp.py`). An edit to a
helper would leave stale machine code in the cache. So the cache lives in a directory named
after a digest of the whole package's source: any source change selects a fresh directory;
directories no process has used for a week are removed. The base directory is `$NUMBA_CACHE_DIR` when the user
set it, else `$XDG_CACHE_HOME/simt-fast/numba` (`~/.cache/simt-fast/numba`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

import numba

JIT_OPTIONS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

_PACKAGE_DIR = Path(__file__).resolve().parent


# Orchestration-only parts of the package: they never define or inline numba code, so editing
# them keeps the cache valid. Everything else is hashed (mechanism modules use helper decorators
# built on `jit`, so "imports _jit" is not a reliable test of holding numba code).
_NO_KERNELS = ("commands", "report", "sweep", "workloads", "cli.py", "results.py", "warm.py", "_storage.py", "_text.py")


def source_digest() -> str:
    """A short digest of every package module that may hold or inline numba code."""
    h = hashlib.sha1()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(_PACKAGE_DIR)
        if rel.parts[0] in _NO_KERNELS:
            continue
        h.update(str(rel).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _cache_base() -> Path:
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user) / "simt-fast"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "simt-fast" / "numba"


def _select_cache_dir() -> None:
    base = _cache_base()
    target = base / source_digest()
    try:
        target.mkdir(parents=True, exist_ok=True)
        os.utime(target)  # mark it in use, so that pruning below spares it
        week_ago = time.time() - 7 * 24 * 3600
        for old in base.iterdir():  # machine code of other source versions, unused for a week
            if old.is_dir() and old != target and old.stat().st_mtime < week_ago:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return  # unwritable home: numba falls back to its own locators (next to the sources)
    numba.config.CACHE_DIR = str(target)


_select_cache_dir()


from numba.core import types as _nbtypes


def _one_signature(dispatcher):
    if not hasattr(dispatcher, "get_call_template"):
        return dispatcher  # NUMBA_DISABLE_JIT: a plain Python function
    original = dispatcher.get_call_template

    def get_call_template(args, kws):
        return original(tuple(_nbtypes.unliteral(a) for a in args),
                        {k: _nbtypes.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def jit(*args, **overrides):
    """`numba.njit` with the project's flags; usable as `@jit` or `@jit(boundscheck=True)`."""
    options = {**JIT_OPTIONS, **overrides}
    if len(args) == 1 and callable(args[0]) and not overrides:
        return _one_signature(numba.njit(**options)(args[0]))
    deco = numba.njit(*args, **options)
    return lambda f: _one_signature(deco(f))


# The cycle loops and their helpers never allocate, so they are compiled without the numba runtime
# (NRT): a call then passes arrays without incref/decref of each (measured: ~25 ns per array per
# call, a 30-array call 750 ns vs 4 ns). Their state is allocated in Python. A helper is called only
# from numba code, so it gets no CPython wrapper (whose argument unboxing is code LLVM would compile
# for nothing: measured ~15% of the core's cold compile); a cycle loop is called from Python.
helper = jit(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
# A helper on the hot path (every issue, visit or block end), whose call would cost more than its
# body: LLVM inlines it into its callers (`forceinline`). Numba still types it once; inlining at
# numba-IR level instead re-types its body at every call site (the cold compile was 3x). Measured
# on the stress trace (bench_sim.py): calls instead of these inlines cost 30-50% of throughput.
hot_helper = jit(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True, forceinline=True)
cycle_loop = jit(_nrt=False)


_announced: set = set()
announce = True  # `simt-fast warm` turns the line off: its progress bar says the same


def has_machine_code(dispatcher, args=None) -> bool:
    """Whether ``dispatcher`` already has machine code (for the types of ``args`` when given: a kernel
    may have several builds), in this process or in the on-disk cache (its first call then only
    loads it). Unknown numba internals count as yes: better silent than wrong."""
    try:
        if args is None:
            return bool(dispatcher.signatures) or os.path.exists(dispatcher._cache._cache_file._index_path)
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        if sig in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        return cache._index_key(sig, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
    except AttributeError:
        return True


@contextlib.contextmanager
def _compile_lock(dispatcher):
    """Hold a file lock beside ``dispatcher``'s cache index: one process of the machine compiles it
    at a time (none where file locks or the index are unavailable)."""
    try:
        import fcntl

        handle = open(dispatcher._cache._cache_file._index_path + ".lock", "a")
    except (ImportError, AttributeError, OSError):
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def ensure_compiled(dispatcher, what: str, seconds: int, args) -> None:
    """Give ``dispatcher`` machine code for the types of ``args`` before they are passed to it: loaded
    from the on-disk cache when this machine has built it, else compiled here, once per machine — a
    process that needs a build another process is compiling waits for it and then loads it (two
    sweep workers, two shells), so the first-compile line prints once."""
    if has_machine_code(dispatcher, args):
        return
    with _compile_lock(dispatcher):
        if has_machine_code(dispatcher, args):
            return  # built by another process while this one waited
        announce_compile(dispatcher, what, seconds, args)
        dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))


def announce_compile(dispatcher, what: str, seconds: int, args=None) -> None:
    """One line on stderr before ``dispatcher`` compiles for the first time on this machine (for the
    types of ``args`` when given), so a first run is never minutes of silence (``simt-fast warm``
    compiles everything ahead)."""
    if not announce or (dispatcher, what) in _announced or has_machine_code(dispatcher, args):
        return
    _announced.add((dispatcher, what))
    print(f"simt-fast: compiling {what} (first run only, about {seconds} s of CPU; "
          f"`simt-fast warm` compiles every kernel ahead)", file=sys.stderr, flush=True)


def _prefetch_intrinsic():
    """``prefetch(array, index)``: ask the host CPU to bring ``array[index]``'s cache line in (LLVM's
    ``llvm.prefetch``, for a read, into every cache level); no effect on any result, never faults
    (an index past the array is harmless). A no-op in plain Python (``NUMBA_DISABLE_JIT``)."""
    if numba.config.DISABLE_JIT:
        def prefetch(array, index):
            return None
        return prefetch
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, array, index):
        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = builder.gep(ary.data, [args[1]])
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return _nbtypes.void(array, index), codegen

    return prefetch


prefetch = _prefetch_intrinsic()
