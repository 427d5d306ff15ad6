"""Atomic file output: write to a temporary file beside the target, then rename.

Promises (tested in tests/test_atomic_write.py):

- the destination holds either its old content or the complete new content, never
  a part, whatever happens during the write (an exception, SIGINT, SIGTERM);
- no temporary file is left behind after an exception, SIGINT or SIGTERM (on the
  main thread, where Python can handle signals; SIGKILL cannot be handled);
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
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any

from limbik.errors import UnwritableFileError

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class _Interrupted(BaseException):
    """Raised inside a write by SIGINT/SIGTERM so the temporary file is removed first."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _Guard:
    """The writer's signal handler: raises :class:`_Interrupted`, or defers it to the end
    of a critical section (between creating the temporary file and knowing its name)."""

    def __init__(self) -> None:
        self.critical = False
        self.pending: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.critical:
            self.pending = signum
            return
        raise _Interrupted(signum)

    @contextlib.contextmanager
    def deferring(self) -> Iterator[None]:
        self.critical = True
        try:
            yield
        finally:
            self.critical = False
        if self.pending is not None:
            raise _Interrupted(self.pending)


def _install_handlers(guard: _Guard) -> dict[int, _Handler]:
    """Route SIGINT/SIGTERM to :class:`_Interrupted` (main thread only); old handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, _Handler] = {}
    for signum in _SIGNALS:
        handler = signal.getsignal(signum)
        if handler is signal.SIG_IGN or handler is None:
            continue  # ignored (or set from C): leave it so
        previous[signum] = handler
        signal.signal(signum, guard)
    return previous


def _redeliver(signum: int, previous: _Handler) -> None:
    """Do what the signal would have done without the writer's handler."""
    if callable(previous):
        previous(signum, None)  # e.g. the default SIGINT handler raises KeyboardInterrupt
        raise InterruptedError(f"write interrupted by signal {signum}")
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # default action: the process ends with this signal
    raise InterruptedError(f"write interrupted by signal {signum}")  # pragma: no cover


def _destination(path: str | Path) -> Path:
    """The file to replace: ``path``, or the file its symlink chain points to."""
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    return target


def _create_temporary(path: str | Path, target: Path, suffix: str) -> tuple[int, str]:
    """A new file beside ``target`` (fd, path) with the mode the result should get;
    errors name the caller's ``path``."""
    directory = target.parent if str(target.parent) else Path(".")
    try:
        keep = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        keep = None
    stem = target.stem if suffix else target.name
    for _ in range(100):
        tmp = str(directory / f".{stem}.{secrets.token_hex(4)}{suffix or '.tmp'}")
        try:
            # a new file gets 0666 less the umask from the kernel; an existing one's
            # private mode is applied before any byte is written
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600 if keep is not None else 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _renamed(exc, tmp, path) from None
        if keep is not None:
            os.chmod(tmp, keep)
        return fd, tmp
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
    """Yield ``(fd, tmp_path)``; on success rename ``tmp_path`` over ``path``'s file."""
    target = _destination(path)
    guard = _Guard()
    previous = _install_handlers(guard)
    previous_handlers = dict(previous)
    tmp: str | None = None
    try:
        with guard.deferring():
            fd, tmp = _create_temporary(path, target, suffix)
        yield fd, tmp
        os.replace(tmp, target)
        tmp = None
    except BaseException as exc:
        signum = exc.signum if isinstance(exc, _Interrupted) else None
        while True:  # a second signal during the clean-up restarts it
            try:
                _remove(tmp)
                _restore(previous)
                break
            except _Interrupted as again:
                signum = again.signum
        if signum is not None:
            _redeliver(signum, previous_handlers.get(signum, signal.SIG_DFL))
        if isinstance(exc, OSError):
            raise _renamed(exc, tmp, path) from exc
        raise
    finally:
        try:
            _restore(previous)
        except _Interrupted as late:  # caught by the writer's handler as it was put back
            _restore(previous)
            _redeliver(late.signum, previous_handlers.get(late.signum, signal.SIG_DFL))


def _remove(tmp: str | None) -> None:
    if tmp is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _restore(previous: dict[int, _Handler]) -> None:
    """Put the old handlers back, with SIGINT/SIGTERM blocked meanwhile.

    Without the block, a signal that Python's C-level handler caught just before
    ``signal.signal`` put back ``SIG_DFL`` is dropped: Python runs the *current* handler
    for a caught signal, and skips it when that is ``SIG_DFL``. Blocked, the signal waits
    in the kernel and is delivered to the restored handler when the block is lifted.
    """
    if not previous:
        return
    mask = getattr(signal, "pthread_sigmask", None)  # POSIX only
    blocked = mask(signal.SIG_BLOCK, _SIGNALS) if mask is not None else None
    try:
        for signum in list(previous):
            signal.signal(signum, previous[signum])
            del previous[signum]  # only once it is back: an interruption retries it
    finally:
        if mask is not None and blocked is not None:
            mask(signal.SIG_SETMASK, blocked)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; on success rename it to ``path``.

    If the body raises (or SIGINT/SIGTERM arrives), the temporary file is removed
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
