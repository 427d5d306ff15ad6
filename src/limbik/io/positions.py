"""Joint-position files as motion-generation codebases write them (NumPy ``.npy``/``.npz``).

Layouts read (``J`` joints, ``T`` frames, ``N`` clips):

- ``(T, J, 3)``: one clip (HumanML3D's ``new_joints/*.npy``);
- ``(N, J, 3, T)``: a batch as MDM writes its samples (``motion`` in its results);
- ``(N, T, J, 3)``: a batch, frames before joints.

A 4-dimensional array is ``(N, J, 3, T)`` where its third axis has length 3 and its
second ``J``, and ``(N, T, J, 3)`` where its last has length 3 and its third ``J``; an
array that fits both (``T == 3`` and ``J == 3`` cases) or neither is refused unless the
layout is named. ``.npz`` files name their array: the one array in the file, else
``key`` (default: the first of ``motion``, ``positions``, ``joints`` that it holds).
Pickled objects are never loaded. Positions are returned as float64 ``(N, T, J, 3)``
with the layout and dtype to write them back in.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from limbik._runtime.atomic import atomic_save
from limbik._runtime.reading import read_bytes
from limbik.errors import InvalidInputError, NonFiniteInputError

__all__ = ["LAYOUTS", "PositionFile", "read_positions", "write_positions"]

#: The layouts of position arrays, by name.
LAYOUTS = ("TJ3", "NJ3T", "NTJ3")
#: Array names an ``.npz`` file is searched for, in order, when ``key`` is not given.
NPZ_KEYS = ("motion", "positions", "joints")


@dataclasses.dataclass(frozen=True)
class PositionFile:
    """Positions read from a file, and how to write results back in kind.

    Attributes
    ----------
    positions : ndarray (N, T, J, 3), float64
        Every clip of the file (N = 1 for a ``(T, J, 3)`` file).
    layout : str
        One of :data:`LAYOUTS`: the file's own axis order.
    dtype : numpy dtype
        The file's dtype (results are written in it).
    key : str or None
        The ``.npz`` array name, None for ``.npy``.
    """

    positions: np.ndarray
    layout: str
    dtype: np.dtype
    key: str | None = None


def _guess_layout(shape: tuple[int, ...], joints: int | None) -> str | None:
    if len(shape) == 3:
        return "TJ3" if shape[-1] == 3 else None
    if len(shape) != 4:
        return None
    fits = []
    if shape[2] == 3 and (joints is None or shape[1] == joints):
        fits.append("NJ3T")
    if shape[3] == 3 and (joints is None or shape[2] == joints):
        fits.append("NTJ3")
    return fits[0] if len(fits) == 1 else None


def _load(path: str | Path, key: str | None) -> tuple[np.ndarray, str | None]:
    name, data = read_bytes(path)
    suffix = Path(str(path)).suffix.lower()
    try:
        if suffix == ".npz":
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                names = list(archive.files)
                if key is None:
                    key = names[0] if len(names) == 1 else next(
                        (k for k in NPZ_KEYS if k in names), None)
                if key not in names:
                    raise InvalidInputError(
                        f"key must name an array of {name} ({', '.join(names) or 'none'}), "
                        f"got {key!r}", argument="key")
                return np.asarray(archive[key]), key
        if suffix != ".npy":
            raise InvalidInputError(f"path must end in .npy or .npz, got {name}",
                                    argument="path")
        if key is not None:
            raise InvalidInputError(f"key names an array of an .npz file; {name} is .npy, "
                                    f"got key={key!r}", argument="key")
        return np.load(io.BytesIO(data), allow_pickle=False), None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"path must be a NumPy array file of positions, got {name} "
                                f"({exc})", argument="path") from None


def read_positions(path: str | Path, *, joints: int | None = None, layout: str | None = None,
                   key: str | None = None) -> PositionFile:
    """Read joint positions from ``path`` (``.npy`` or ``.npz``).

    ``joints`` (the skeleton's joint count) settles which axis holds the joints;
    ``layout`` (one of :data:`LAYOUTS`) overrides the guess; ``key`` names an ``.npz``
    array. Raises :class:`~limbik.errors.InvalidInputError` naming the argument for an
    array of another shape or dtype, NaN or inf, or fewer than 2 frames.
    """
    array, key = _load(path, key)
    if array.dtype.kind not in "fiu":
        raise InvalidInputError(f"path must hold a numeric array, got dtype {array.dtype} in "
                                f"{path}", argument="path")
    if layout is None:
        layout = _guess_layout(array.shape, joints)
        if layout is None:
            raise InvalidInputError(
                f"positions must have shape (T, J, 3), (N, J, 3, T) or (N, T, J, 3)"
                f"{'' if joints is None else f' with J = {joints}'}, got {array.shape} "
                f"(name the layout where it is ambiguous)", argument="layout")
    elif layout not in LAYOUTS:
        raise InvalidInputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}",
                                argument="layout")
    dims = {"TJ3": 3, "NJ3T": 4, "NTJ3": 4}[layout]
    if array.ndim != dims:
        raise InvalidInputError(f"layout {layout} needs a {dims}-dimensional array, got shape "
                                f"{array.shape}", argument="layout")
    data = array.astype(np.float64)
    if layout == "TJ3":
        data = data[None]
    elif layout == "NJ3T":
        data = np.transpose(data, (0, 3, 1, 2))
    if data.shape[-1] != 3 or (joints is not None and data.shape[2] != joints):
        raise InvalidInputError(f"positions must have {joints or 'J'} joints of 3 coordinates "
                                f"in layout {layout}, got shape {array.shape}",
                                argument="positions")
    if data.shape[1] < 2:
        raise InvalidInputError(f"positions must hold at least 2 frames, got {data.shape[1]}",
                                argument="positions")
    if not np.all(np.isfinite(data)):
        raise NonFiniteInputError(f"positions must be finite, got NaN or inf in {path}",
                                  argument="positions")
    return PositionFile(np.ascontiguousarray(data), layout, array.dtype, key)


def write_positions(path: str | Path, positions: Any, like: PositionFile) -> None:
    """Write ``positions (N, T, J, 3)`` to ``path`` in the layout, dtype and (``.npz``)
    array name of ``like``, atomically."""
    data = np.asarray(positions, dtype=np.float64)
    if data.ndim != 4 or data.shape[-1] != 3:
        raise InvalidInputError(f"positions must have shape (N, T, J, 3), got {data.shape}",
                                argument="positions")
    if like.layout == "TJ3":
        if data.shape[0] != 1:
            raise InvalidInputError(f"positions must hold one clip for a (T, J, 3) file, got "
                                    f"{data.shape[0]}", argument="positions")
        out = data[0]
    elif like.layout == "NJ3T":
        out = np.transpose(data, (0, 2, 3, 1))
    else:
        out = data
    out = np.ascontiguousarray(out.astype(like.dtype))
    suffix = Path(str(path)).suffix.lower()
    if suffix not in (".npy", ".npz"):
        raise InvalidInputError(f"path must end in .npy or .npz, got {path}", argument="path")

    def save(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            if suffix == ".npz":
                arrays: dict[str, Any] = {like.key or NPZ_KEYS[0]: out}
                np.savez(handle, **arrays)
            else:
                np.save(handle, out, allow_pickle=False)

    atomic_save(path, save)
