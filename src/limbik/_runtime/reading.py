"""Reading the files the caller names: a path checked at the boundary, and errors that
name it (:class:`~limbik.errors.UnreadableFileError`, also the matching ``OSError``)."""

from __future__ import annotations

import os
from pathlib import Path

from limbik.errors import InvalidInputError, UnreadableFileError

__all__ = ["as_path", "read_bytes"]


def as_path(path: object, argument: str = "path") -> Path:
    """``path`` (a ``str`` or path-like) as a Path, or an :class:`InvalidInputError`
    naming ``argument``."""
    if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
        raise InvalidInputError(f"{argument} must be a file path (str or Path), got "
                                f"{type(path).__name__}", argument=argument)
    text = os.fspath(path)
    if not isinstance(text, str) or "\0" in text:  # no file system takes a NUL byte
        raise InvalidInputError(f"{argument} must be a file path without NUL bytes, got "
                                f"{text!r}"[:300], argument=argument)
    return Path(path)


def read_bytes(path: object, argument: str = "path") -> tuple[Path, bytes]:
    """The bytes of the file at ``path``, or an error naming ``argument``:
    :class:`InvalidInputError` for a value that is no path, else
    :class:`UnreadableFileError`."""
    p = as_path(path, argument)
    try:
        return p, p.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UnreadableFileError.of(exc, f"{argument}: cannot read {str(p)!r}: {reason}",
                                     str(p), argument) from None
