"""The limbik exception tree.

Every error limbik raises on purpose is a :class:`LimbikError`, and each also derives
from one built-in exception: errors about the caller's values and parse errors from
:class:`ValueError`, files that cannot be read or written from :class:`OSError` (and
its ``FileNotFoundError``, ``IsADirectoryError`` or ``PermissionError``), a failed
compilation from :class:`RuntimeError`. Code that does not know limbik can catch those.

Messages name the argument, what was expected and what was received, e.g.
``target must have shape (..., 3), got (4,)``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BVHParseError",
    "DetectionError",
    "GltfError",
    "InvalidInputError",
    "KernelCompileError",
    "LimbikError",
    "NonFiniteInputError",
    "ParseError",
    "TerrainError",
    "URDFError",
    "UnreadableFileError",
    "UnwritableFileError",
]


class LimbikError(Exception):
    """Base class of every error limbik raises on purpose."""


class InvalidInputError(LimbikError, ValueError):
    """An argument has the wrong shape, type or value.

    Attributes
    ----------
    argument : str or None
        The name of the offending argument, where there is one.
    """

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument


class NonFiniteInputError(InvalidInputError):
    """An argument holds NaN or infinity."""


class KernelCompileError(LimbikError, RuntimeError):
    """Compiling kernels ahead of use (``limbik compile``) failed in a worker process."""


class ParseError(LimbikError, ValueError):
    """A file could not be parsed.

    Attributes
    ----------
    path : str
        The file (or ``"<string>"``).
    line : int
        1-based line number where the problem was found (0 when unknown).
    expected : str
        What the parser expected there.
    """

    def __init__(self, path: str | Path, line: int, expected: str, got: str = "") -> None:
        self.path = str(path)
        self.line = int(line)
        self.expected = expected
        self.got = got
        where = f"{self.path}:{self.line}" if self.line else self.path
        message = f"{where}: expected {expected}"
        if got:
            message += f", got {got}"
        super().__init__(message)


class BVHParseError(ParseError):
    """A BVH file is malformed."""


class GltfError(ParseError):
    """A glTF/GLB file is malformed, uses something limbik does not read, or does not
    hold the skin or animation asked for (the message lists what it holds)."""


class URDFError(ParseError):
    """A URDF file is malformed, or does not hold the requested chain."""


class DetectionError(LimbikError, ValueError):
    """Limbs could not be found in a skeleton.

    Attributes
    ----------
    names : list of str
        The joint names that were searched.
    """

    def __init__(self, message: str, names: list[str] | None = None) -> None:
        self.names = list(names or [])
        if self.names:
            message += f"; joints are: {', '.join(self.names)}"
        super().__init__(message)


class TerrainError(InvalidInputError):
    """A terrain could not be built from the given data."""


class _FileError(LimbikError, OSError):
    """A file the caller named cannot be read or written: an :class:`OSError` with the
    ``errno`` and ``filename`` of the failed access, and the ``argument`` that named it.
    """

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument

    def __str__(self) -> str:  # the message, not OSError's "[Errno 2] ..."
        return str(self.args[0]) if self.args else ""

    @classmethod
    def of(cls, exc: OSError, message: str, path: str, argument: str) -> _FileError:
        """This error (its :class:`FileNotFoundError`, :class:`IsADirectoryError` or
        :class:`PermissionError` subclass where ``exc`` is one) for the failed ``exc``."""
        kind = next((sub for sub in cls.__subclasses__() if isinstance(exc, sub.__bases__[1])),
                    cls)
        error = kind(message, argument=argument)
        error.errno, error.strerror, error.filename = exc.errno, exc.strerror, path
        return error


class UnreadableFileError(_FileError):
    """A file to read is missing, a folder, or not readable. Also an :class:`OSError`
    with the ``errno`` and ``filename`` of the failed read; a missing file is also a
    :class:`FileNotFoundError`, a folder an :class:`IsADirectoryError` and a file
    without read permission a :class:`PermissionError`, as reading it directly would
    raise."""


class _MissingFileError(UnreadableFileError, FileNotFoundError):
    pass


class _FolderNotFileError(UnreadableFileError, IsADirectoryError):
    pass


class _NoPermissionError(UnreadableFileError, PermissionError):
    pass


class UnwritableFileError(_FileError):
    """A file to write cannot be written: its folder is missing, the path is a folder, or
    the folder is not writable (the file then is as it was: writes are atomic). Also an
    :class:`OSError` with the ``errno`` and ``filename`` of the failed write, and the
    matching :class:`FileNotFoundError`, :class:`IsADirectoryError` or
    :class:`PermissionError`."""


class _NoFolderError(UnwritableFileError, FileNotFoundError):
    pass


class _FolderNotFileWriteError(UnwritableFileError, IsADirectoryError):
    pass


class _NoWritePermissionError(UnwritableFileError, PermissionError):
    pass
