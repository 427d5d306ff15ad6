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

A ``.npy`` file holding a dictionary (MDM's ``results.npy``: ``motion`` ``(N, J, 3,
T)`` with the samples' ``lengths``, their ``text`` and counts) is read the same way:
``key`` names its array, and where it has ``lengths`` (one per clip, each from 2 to
``T``), clip ``n`` is its first ``lengths[n]`` frames (the rest is padding). Such a
file is unpickled with only NumPy arrays, numbers, strings, lists, tuples and
dictionaries allowed: any other object in it is refused, never built. Positions are
returned as float64 ``(N, T, J, 3)`` with the layout and dtype to write them back in;
the file's other entries (other ``.npz`` arrays, the dictionary's other keys) are
written back unchanged.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
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
        The name of the positions' array in an ``.npz`` file or a dictionary, None for
        a plain ``.npy`` array.
    lengths : ndarray (N,) of int, or None
        Each clip's frame count where the file pads its clips to one length (a
        dictionary's ``lengths``), else None (every clip has ``T`` frames).
    others : dict or None
        The file's other entries (other ``.npz`` arrays, or the dictionary's other
        keys), written back with the results; None for a plain ``.npy`` array.
    dictionary : bool
        Whether the file is a ``.npy`` dictionary (written back as one).
    """

    positions: np.ndarray
    layout: str
    dtype: np.dtype
    key: str | None = None
    lengths: np.ndarray | None = None
    others: dict[str, Any] | None = None
    dictionary: bool = False

    def clip(self, n: int) -> np.ndarray:
        """Clip ``n`` ``(T_n, J, 3)``: its frames without the file's padding."""
        frames = self.positions.shape[1] if self.lengths is None else int(self.lengths[n])
        return self.positions[n, :frames]


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


#: What a pickled ``.npy`` dictionary may build: NumPy arrays, their dtypes and scalars
#: (the module of the reconstructors moved in NumPy 2; files name either).
_RECONSTRUCT = np.ndarray((0,)).__reduce__()[0]
_SCALAR = np.float64(0.0).__reduce__()[0]
_UNPICKLE_ALLOWED = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype,
                     **{(module, name): made for module in ("numpy.core.multiarray",
                                                           "numpy._core.multiarray")
                        for name, made in (("_reconstruct", _RECONSTRUCT),
                                           ("scalar", _SCALAR))}}


class _ArraysOnly(pickle.Unpickler):
    """An unpickler that builds NumPy arrays and Python's plain containers and values,
    and refuses every other class or function a pickle names."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _UNPICKLE_ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"{module}.{name} is not an array") from None


def _pick(entries: dict[str, Any], key: str | None, name: str | Path) -> str:
    """The entry of ``entries`` that holds the positions: ``key``, else the only one,
    else the first of ``NPZ_KEYS``."""
    names = list(entries)
    if key is None:
        key = names[0] if len(names) == 1 else next((k for k in NPZ_KEYS if k in names), None)
    if key not in names:
        raise InvalidInputError(f"key must name an array of {name} ({', '.join(names) or 'none'})"
                                f", got {key!r}", argument="key")
    return key


def _pickled_dictionary(buffer: io.BytesIO, shape: tuple[int, ...],
                        name: str | Path) -> dict[str, Any]:
    """The dictionary a ``.npy`` file of one pickled object of ``shape`` holds (``buffer``
    read past its header), built by :class:`_ArraysOnly`."""
    try:
        held = _ArraysOnly(buffer).load()
    except (pickle.UnpicklingError, AttributeError, EOFError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"path must hold an array of positions or a dictionary of "
                                f"arrays, got an object that is not one in {name} ({exc})",
                                argument="path") from None
    value = held.item() if isinstance(held, np.ndarray) and held.size == 1 else held
    if shape != () or not isinstance(value, dict) or not all(isinstance(k, str)
                                                             for k in value):
        raise InvalidInputError(f"path must hold an array of positions or a dictionary of "
                                f"arrays, got an array of objects of shape {shape} in {name}",
                                argument="path")
    return value


def _load(path: str | Path, key: str | None
          ) -> tuple[np.ndarray, str | None, dict[str, Any] | None]:
    """The positions' array of ``path``, its ``key`` and the file's other entries."""
    name, data = read_bytes(path)
    suffix = Path(str(path)).suffix.lower()
    try:
        if suffix == ".npz":
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                entries = {k: archive[k] for k in archive.files}
            key = _pick(entries, key, name)
            return np.asarray(entries.pop(key)), key, entries
        if suffix != ".npy":
            raise InvalidInputError(f"path must end in .npy or .npz, got {name}",
                                    argument="path")
        buffer = io.BytesIO(data)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(
                           np.lib.format.read_magic(buffer))
        if read_header is not None:
            shape, _, dtype = read_header(buffer)
            if dtype.hasobject:
                entries = _pickled_dictionary(buffer, shape, name)
                key = _pick(entries, key, name)
                return np.asarray(entries.pop(key)), key, entries
        if key is not None:
            raise InvalidInputError(f"key names an array of an .npz file or a dictionary; "
                                    f"{name} holds one array, got key={key!r}", argument="key")
        return np.load(io.BytesIO(data), allow_pickle=False), None, None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"path must be a NumPy array file of positions, got {name} "
                                f"({exc})", argument="path") from None


def _clip_lengths(others: dict[str, Any] | None, clips: int, frames: int,
                  path: str | Path) -> np.ndarray | None:
    """A dictionary's ``lengths`` ``(N,)`` (each clip's frames), checked; None without."""
    if others is None or "lengths" not in others:
        return None
    lengths = np.asarray(others["lengths"])
    if lengths.dtype.kind not in "iu" or lengths.shape != (clips,) or \
            np.any(lengths < 2) or np.any(lengths > frames):
        raise InvalidInputError(f"lengths in {path} must be {clips} frame counts from 2 to "
                                f"{frames}, got {lengths!r}", argument="lengths")
    return lengths.astype(np.int64)


def read_positions(path: str | Path, *, joints: int | None = None, layout: str | None = None,
                   key: str | None = None) -> PositionFile:
    """Read joint positions from ``path`` (``.npy`` or ``.npz``).

    ``joints`` (the skeleton's joint count) settles which axis holds the joints;
    ``layout`` (one of :data:`LAYOUTS`) overrides the guess; ``key`` names an ``.npz``
    array. Raises :class:`~limbik.errors.InvalidInputError` naming the argument for an
    array of another shape or dtype, NaN or inf, or fewer than 2 frames.
    """
    array, key, others = _load(path, key)
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
    lengths = _clip_lengths(others if array.ndim == 4 else None, data.shape[0], data.shape[1],
                            path)
    counts = np.full(data.shape[0], data.shape[1]) if lengths is None else lengths
    valid = np.arange(data.shape[1])[None, :] < counts[:, None]  # (N, T): padding left out
    if not np.all(np.isfinite(data[valid])):
        raise NonFiniteInputError(f"positions must be finite, got NaN or inf in {path}",
                                  argument="positions")
    return PositionFile(np.ascontiguousarray(data), layout, array.dtype, key, lengths, others,
                        dictionary=others is not None and Path(str(path)).suffix.lower()
                        == ".npy")


def write_positions(path: str | Path, positions: Any, like: PositionFile) -> None:
    """Write ``positions (N, T, J, 3)`` to ``path`` in the layout, dtype and array name of
    ``like``, with its other entries (an ``.npz`` file's other arrays; a dictionary's
    other keys, written as a ``.npy`` dictionary where ``path`` is ``.npy``), atomically."""
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

    entries: dict[str, Any] = {**(like.others or {}), like.key or NPZ_KEYS[0]: out}

    def save(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            if suffix == ".npz":
                np.savez(handle, **entries)
            elif like.dictionary:
                np.save(handle, np.array(entries, dtype=object), allow_pickle=True)
            else:
                np.save(handle, out, allow_pickle=False)

    atomic_save(path, save)
