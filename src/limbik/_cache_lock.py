"""Numba's on-disk cache, safe for processes that compile the same kernel at once.

Numba saves a compiled kernel by reading the function's cache index, picking the first
free data-file number, writing the index back and then the data file. Two processes that
compile different signatures of one kernel at the same time (the demo's workers,
``limbik footplant --jobs``, Dask workers on one machine, ``limbik compile``) can both
read the index before either writes it: one entry is lost, or both pick the same data
file, and one entry then names the other process's machine code. Importing this module
makes every save hold an exclusive lock on ``<index file>.lock``, so saves of one kernel
follow one another; loads need none (Numba replaces files whole).

The lock wraps ``numba.core.caching.IndexDataCacheFile.save``, a private method. Where a
Numba release lacks it, or the lock file cannot be made (a read-only folder), saves run as
Numba's own.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from numba.core import caching

__all__ = ["exclusive"]


@contextlib.contextmanager
def exclusive(path: str) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing) for the block;
    without one where the file cannot be opened or locked."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        locked = _lock(fd)
        try:
            yield
        finally:
            if locked:
                _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - Windows
    import msvcrt

    def _lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _install() -> None:
    index_file = getattr(caching, "IndexDataCacheFile", None)
    save = getattr(index_file, "save", None)
    if save is None or getattr(save, "limbik_locked", False):
        return

    def locked_save(self: Any, key: Any, data: Any) -> None:
        path = getattr(self, "_index_path", None)
        if path is None:  # pragma: no cover - another Numba layout
            save(self, key, data)
            return
        with exclusive(path + ".lock"):
            save(self, key, data)

    locked_save.limbik_locked = True  # type: ignore[attr-defined]
    locked_save.__doc__ = save.__doc__
    index_file.save = locked_save  # type: ignore[union-attr]


_install()
