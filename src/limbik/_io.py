"""Atomic file output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; on success rename it to ``path``.

    If the body raises, the temporary file is removed and ``path`` is untouched,
    so a failure never leaves a half-written file.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _usual_mode(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _usual_mode(path: str) -> None:
    """Give a temporary file the mode a plain ``open`` would (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, (stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IWGRP | stat.S_IROTH
                    | stat.S_IWOTH) & ~umask)


def atomic_save(path: str | Path, writer: Any) -> None:
    """Call ``writer(tmp_path)`` (e.g. a matplotlib ``savefig``), then rename atomically.

    The temporary name keeps the target's suffix so format detection still works.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix, dir=directory)
    os.close(fd)
    try:
        writer(tmp)
        _usual_mode(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
