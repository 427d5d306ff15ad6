"""limbik's hooks into Numba's on-disk cache: locked saves, and a stamp over every kernel.

**Locked saves.** Numba saves a compiled kernel by reading the function's cache index,
picking the first free data-file number, writing the index back and then the data file.
Two processes that compile different signatures of one kernel at the same time (the
demo's workers, ``limbik footplant --jobs``, Dask workers on one machine, ``limbik
compile``) can both read the index before either writes it: one entry is lost, or both
pick the same data file, and one entry then names the other process's machine code.
Importing this module makes every save hold an exclusive lock on ``<index file>.lock``,
so saves of one kernel follow one another; loads need none (Numba replaces files whole).

**A stamp over every kernel source.** Numba keeps a cached kernel while the source file
of its own function is unchanged, but a kernel also holds the compiled helpers it calls
from other files: after an edit there, it would load the old machine code. The index of
every limbik kernel therefore also records a digest of every limbik module with compiled
code and of the limbik modules they import from (:func:`kernel_sources_stamp`), so an
edit to any of them compiles limbik's kernels again. An installed package never changes,
so its cache stays valid.

Importing this module (every kernel module does, before it compiles) also has Numba
import its NumPy implementations without their SciPy probe: see
:mod:`limbik._numba_blas_probe`.

Both hooks wrap private parts of ``numba.core.caching`` (``IndexDataCacheFile.save``,
``Cache.__init__`` and its ``_cache_file._source_stamp``). Where a Numba release lacks
them, or the lock file cannot be made (a read-only folder), the cache works as Numba's own.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from numba.core import caching

from limbik import _numba_blas_probe

__all__ = ["exclusive", "kernel_sources_stamp"]

_PACKAGE = Path(__file__).resolve().parent


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


#: Words that mark a module with compiled code.
_COMPILED_CODE = (b"njit", b"register_jitable", b"@jit", b"overload", b"intrinsic", b"cfunc")

#: ``from limbik.a import b, c`` (also in parentheses over lines) and
#: ``import limbik.a.b`` at the start of a line.
_LIMBIK_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(?P<module>limbik(?:\.\w+)*)[ \t]+import[ \t]+"
    rb"(?:\((?P<listed>[^)]*)\)|(?P<names>[\w \t,]*))"
    rb"|import[ \t]+(?P<plain>limbik(?:\.\w+)+))", re.MULTILINE)


def _package_files() -> dict[str, bytes]:
    """Every ``.py`` file of the package by its path relative to it (``a/b.py``), with
    its bytes; symbolic links to folders are followed."""
    files = {}
    for folder, _, names in os.walk(_PACKAGE, followlinks=True):
        for name in names:
            if name.endswith(".py"):
                path = Path(folder, name)
                try:
                    files[path.relative_to(_PACKAGE).as_posix()] = path.read_bytes()
                except OSError:  # pragma: no cover - a file removed meanwhile
                    continue
    return files


def _imported_files(text: bytes, files: dict[str, bytes]) -> set[str]:
    """The package files that ``text`` imports from (modules, and submodules named in a
    ``from ... import``)."""
    found = set()
    for match in _LIMBIK_IMPORT.finditer(text):
        module = (match["module"] or match["plain"]).decode().split(".")[1:]
        listed = (match["listed"] or match["names"] or b"").decode()
        names = [n.split()[0] for n in listed.replace("\n", ",").split(",")
                 if n.split() and not n.split()[0].startswith("#")]
        for parts in [module, *([*module, name] for name in names)]:
            stem = "/".join(parts)
            for candidate in (f"{stem}.py", f"{stem}/__init__.py" if stem else "__init__.py"):
                if candidate in files:
                    found.add(candidate)
    return found


@functools.cache
def kernel_sources_stamp() -> str:
    """A digest of every limbik module with compiled code, and of the limbik modules
    those import from (compile options, constants), by path and text."""
    files = _package_files()
    chosen = {path for path, text in files.items()
              if any(word in text for word in _COMPILED_CODE)}
    for path in list(chosen):
        chosen |= _imported_files(files[path], files)
    digest = hashlib.sha256()
    for path in sorted(chosen):
        digest.update(path.encode() + b"\0" + files[path] + b"\0")
    return digest.hexdigest()


def _install_stamp() -> None:
    cache_class = getattr(caching, "Cache", None)
    init = getattr(cache_class, "__init__", None)
    if init is None or getattr(init, "limbik_stamped", False):
        return

    def stamped_init(self: Any, py_func: Any) -> None:
        init(self, py_func)
        if not str(getattr(py_func, "__module__", "")).startswith("limbik."):
            return
        cache_file = getattr(self, "_cache_file", None)
        stamp = getattr(cache_file, "_source_stamp", None)
        if stamp is not None:
            cache_file._source_stamp = (stamp, kernel_sources_stamp())  # type: ignore[union-attr]

    stamped_init.limbik_stamped = True  # type: ignore[attr-defined]
    stamped_init.__doc__ = init.__doc__
    setattr(cache_class, "__init__", stamped_init)  # noqa: B010 (a private class of Numba)


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
_install_stamp()
_numba_blas_probe.install()
