"""Disk space for the HDF5 writers: reserve it before writing, recognise a full disk, shut up a dead file.

What a full disk does to an HDF5 file (measured with h5py 3.16 / HDF5 2.0, docs/sweeps.md "A full
disk"): once HDF5 meets ENOSPC or EFBIG (``RLIMIT_FSIZE``) in the middle of a flush, the file on
disk is inconsistent whatever the program does next. With EFBIG the superblock already records
an end of file past the real one, so the file no longer opens ("truncated"), whether it is then
closed, left open or the process exits at once; with ENOSPC a row can be visible while its
histogram rows are missing. Closing such a file makes HDF5 try the failed writes again, and
h5py's finalisers at exit then crash the interpreter (segfault).

So the writers never let HDF5 meet the failure: before each write they :func:`reserve` the disk
blocks it may use (``fallocate`` with ``FALLOC_FL_KEEP_SIZE``: the blocks belong to the file
but its size does not change, and HDF5's next truncate gives them back), and they check the
process's file-size limit, which ``fallocate`` does not. A reservation that fails raises
:class:`NoSpace` while everything written so far is flushed and consistent. Where the file
system cannot reserve (no ``fallocate``), :func:`reserve` compares the free space instead.
If HDF5 fails anyway (another process took the space between two checks), :func:`is_disk_full`
recognises the error and :func:`silence` points the file's descriptor at ``/dev/null`` so that
closing it neither writes more nor crashes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import re

try:
    import resource
except ImportError:  # pragma: no cover - not Unix
    resource = None

FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
_FALLOC_FL_KEEP_SIZE = 1


class NoSpace(OSError):
    """The disk (or the process's file-size limit) cannot take the next write."""


def _load_fallocate():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        fn = libc.fallocate
    except (OSError, AttributeError):  # not glibc/Linux: fall back to the free-space check
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fn.restype = ctypes.c_int
    return fn


_fallocate = _load_fallocate()


def file_size_limit() -> int | None:
    """The soft ``RLIMIT_FSIZE`` of this process in bytes (None: unlimited)."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def reserve(fd: int, nbytes: int) -> None:
    """Make sure the file open as ``fd`` can grow by ``nbytes`` without a write failing.

    Raises :class:`NoSpace` (errno ENOSPC, EDQUOT or EFBIG) if it cannot; nothing is written.
    """
    size = os.fstat(fd).st_size
    limit = file_size_limit()
    if limit is not None and size + nbytes > limit:
        raise NoSpace(errno.EFBIG, f"the file-size limit (ulimit -f) of {limit} bytes is reached")
    if _fallocate is not None:
        if _fallocate(fd, _FALLOC_FL_KEEP_SIZE, size, nbytes) == 0:
            return
        err = ctypes.get_errno()
        if err in FULL_ERRNOS:
            raise NoSpace(err, os.strerror(err))
        # EOPNOTSUPP / ENOSYS / EINVAL: this file system cannot reserve; check the free space.
    st = os.fstatvfs(fd)
    if st.f_bavail * st.f_frsize < nbytes:
        raise NoSpace(errno.ENOSPC, os.strerror(errno.ENOSPC))


def check_free(directory, nbytes: int) -> None:
    """Before creating a file in ``directory``: raise :class:`NoSpace` if ``nbytes`` do not fit."""
    limit = file_size_limit()
    if limit is not None and nbytes > limit:
        raise NoSpace(errno.EFBIG, f"the file-size limit (ulimit -f) of {limit} bytes is reached")
    st = os.statvfs(directory)
    if st.f_bavail * st.f_frsize < nbytes:
        raise NoSpace(errno.ENOSPC, os.strerror(errno.ENOSPC))


_ERRNO_IN_TEXT = re.compile(r"errno\s*=\s*(\d+)")


def is_disk_full(err: BaseException) -> bool:
    """Is ``err`` (an OSError, or h5py's RuntimeError carrying HDF5's message) a full disk?"""
    if isinstance(err, NoSpace):
        return True
    if isinstance(err, OSError) and err.errno in FULL_ERRNOS:
        return True
    return any(int(m) in FULL_ERRNOS for m in _ERRNO_IN_TEXT.findall(str(err)))


def describe(err: BaseException) -> str:
    """What a full-disk error says, in the operating system's words ("File too large" for the
    file-size limit), also when it is h5py's RuntimeError carrying HDF5's message."""
    if isinstance(err, NoSpace) and err.strerror:
        return err.strerror
    if isinstance(err, OSError) and err.errno in FULL_ERRNOS:  # h5py's strerror is all of HDF5's message
        return os.strerror(err.errno)
    codes = [int(m) for m in _ERRNO_IN_TEXT.findall(str(err)) if int(m) in FULL_ERRNOS]
    return os.strerror(codes[0] if codes else errno.ENOSPC)


def silence(h5file) -> None:
    """Point an open h5py file's descriptor at /dev/null, so closing it writes nothing more.

    For a file that HDF5 failed to write: its pending metadata would otherwise be written again
    at close (failing again, and crashing h5py's finalisers at exit).
    """
    if not h5file.id.valid:  # closed already (asking a closed file for its handle crashes h5py)
        return
    try:
        fd = h5file.id.get_vfd_handle()
    except Exception:  # a driver without a descriptor
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
