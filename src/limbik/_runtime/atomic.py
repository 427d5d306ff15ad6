"""Atomic file output: write to a temporary file beside the target, then rename.

Promises (tested in tests/test_atomic_write.py):

- the destination holds either its old content or the complete new content, never
  a part, whatever happens during the write (the new content is flushed and fsynced
  before ``os.replace``);
- no temporary file is left behind after an exception or a ``KeyboardInterrupt`` (the
  command line turns SIGTERM into one); SIGKILL can leave a hidden temporary file;
- an existing destination keeps its permission bits; a new file gets the mode a
  plain ``open`` would give it (0666 less the umask). The process umask is never
  changed, so other threads are not affected;
- a symlink at the destination stays a symlink: the file it points to is replaced;
- errors name the caller's path, not the temporary file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from limbik.errors import UnwritableFileError


def _destination(path: str | Path) -> Path:
    """The file to replace: ``path``, or the file its symlink chain points to."""
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    return target


def _create_temporary(path: str | Path, target: Path, suffix: str, made: list[str]
                      ) -> int:
    """A new file beside ``target``, with the mode the result should get; its name is
    appended to ``made`` just before it is created, so a caller interrupted at any point
    knows what to remove. Returns the open descriptor; errors name the caller's ``path``."""
    directory = target.parent if str(target.parent) else Path(".")
    try:
        keep = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        keep = None
    stem = target.stem if suffix else target.name
    for _ in range(100):
        made.append(str(directory / f".{stem}.{secrets.token_hex(4)}{suffix or '.tmp'}"))
        try:
            # a new file gets 0666 less the umask from the kernel; an existing one's
            # private mode is applied before any byte is written
            fd = os.open(made[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600 if keep is not None else 0o666)
        except FileExistsError:  # another writer's: never ours to remove
            made.pop()
            continue
        except OSError as exc:
            raise _renamed(exc, made[-1], path) from None
        if keep is not None:
            os.chmod(made[-1], keep)
        return fd
    raise FileExistsError(f"no free temporary name beside {target}")  # pragma: no cover


def _renamed(exc: OSError, tmp: str | None, path: str | Path) -> OSError:
    """``exc`` as an :class:`~limbik.errors.UnwritableFileError` naming the caller's
    ``path`` where it named the temporary file (or none); an error about another file
    (one the writer reads) is kept as it is."""
    if isinstance(exc, UnwritableFileError) or (exc.filename not in (None, tmp)
                                                and exc.filename2 is None):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    return UnwritableFileError.of(exc, f"path: cannot write {str(path)!r}: {reason}",
                                  str(path), "path")


@contextlib.contextmanager
def _replacing(path: str | Path, suffix: str) -> Iterator[tuple[int, str]]:
    """Yield ``(fd, tmp_path)``; on success rename ``tmp_path`` over ``path``'s file.

    Whatever ends the body (an exception, or ``KeyboardInterrupt`` from Ctrl-C), the
    temporary file is removed and the destination is left as it was."""
    target = _destination(path)
    made: list[str] = []
    try:
        fd = _create_temporary(path, target, suffix, made)
        yield fd, made[-1]
        os.replace(made[-1], target)
        made.clear()
    except OSError as exc:
        raise _renamed(exc, made[-1] if made else None, path) from exc
    finally:
        for tmp in made:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; on success rename it to ``path``.

    If the body raises (or Ctrl-C arrives), the temporary file is removed
    and ``path`` is untouched, so a failure never leaves a half-written file.
    """
    with _replacing(path, "") as (fd, _tmp):
        try:
            handle = os.fdopen(fd, mode, **kwargs)
        except BaseException:
            os.close(fd)
            raise
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())


def atomic_save(path: str | Path, writer: Any) -> None:
    """Call ``writer(tmp_path)`` (e.g. a matplotlib ``savefig``), then rename atomically.

    The temporary name keeps the target's suffix so format detection still works.
    """
    suffix = Path(path).suffix or ".tmp"
    with _replacing(path, suffix) as (fd, tmp):
        os.close(fd)
        writer(tmp)
