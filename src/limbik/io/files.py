"""Reading and writing a :class:`Motion` by file extension: BVH, glTF and GLB.

:func:`read_motion` and :func:`write_motion` are the one entry point the command line
uses, so every command accepts every format. Both take the file's up axis and
units (see :mod:`limbik.io.units`): a motion read with ``up="z", unit="cm"``
is Y up in metres, and writing it back with the same arguments restores the file's
frame. glTF output needs the glTF file the motion came from (``source``): the new
animation replaces the old one in a copy that keeps everything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from limbik._runtime.reading import as_path
from limbik._runtime.validation import choice
from limbik.errors import InvalidInputError
from limbik.io.bvh import read_bvh, write_bvh
from limbik.io.gltf import read_gltf, write_gltf
from limbik.io.units import UP_AXES, unit_scale
from limbik.skeleton.motion import Motion

__all__ = ["MOTION_FORMATS", "motion_format", "read_motion", "write_motion"]

#: File extensions and the format each one means.
MOTION_FORMATS = {".bvh": "bvh", ".glb": "gltf", ".gltf": "gltf"}


def motion_format(path: str | Path) -> str:
    """``"bvh"`` or ``"gltf"`` from the file's extension (case-insensitive)."""
    suffix = as_path(path).suffix.lower()
    if suffix not in MOTION_FORMATS:
        raise InvalidInputError(
            f"file must end in one of {', '.join(MOTION_FORMATS)}, got {Path(path).name!r}",
            argument="path")
    return MOTION_FORMATS[suffix]


def _gltf_only(fmt: str, **options: Any) -> None:
    given = [k for k, v in options.items() if v is not None]
    if fmt != "gltf" and given:
        raise InvalidInputError(f"{given[0]} applies to glTF files only, got a {fmt} file",
                                argument=given[0])


def read_motion(path: str | Path, *, up: str = "y", unit: str | float | None = None,
                skin: int | str | None = None, animation: int | str | None = None,
                fps: float | None = None) -> Motion:
    """The motion in a ``.bvh``, ``.glb`` or ``.gltf`` file, Y up.

    ``up`` is the file's up axis (``"y"`` or ``"z"``); ``unit`` its length unit
    (a name from :data:`~limbik.io.units.UNITS`, converted to metres, or a
    factor; default: keep the file's units). ``skin``, ``animation`` and ``fps``
    select and sample glTF content (see :func:`~limbik.io.gltf.read_gltf`).
    """
    fmt = motion_format(path)
    choice(up, "up", UP_AXES)
    scale = unit_scale(unit)
    if fmt == "gltf":
        return read_gltf(path, skin=skin, animation=animation, fps=fps, up=up, scale=scale)
    _gltf_only(fmt, skin=skin, animation=animation, fps=fps)
    return read_bvh(path, up=up, scale=scale)


def write_motion(motion: Motion, path: str | Path, *, source: str | Path | None = None,
                 up: str = "y", unit: str | float | None = None,
                 skin: int | str | None = None, animation: int | str | None = None) -> None:
    """Write ``motion`` to a ``.bvh``, ``.glb`` or ``.gltf`` file, atomically.

    ``up`` and ``unit`` give the file's frame, as for :func:`read_motion`. A glTF
    file needs ``source``, the glTF file the motion was read from, of the same
    format; ``skin`` and ``animation`` choose what it replaces there.
    """
    fmt = motion_format(path)
    choice(up, "up", UP_AXES)
    scale = unit_scale(unit)
    if fmt == "gltf":
        if source is None or motion_format(source) != "gltf":
            raise InvalidInputError(
                "source must be the glTF/GLB file the motion came from, to write "
                f"{Path(path).name!r}, got {None if source is None else Path(source).name!r}",
                argument="source")
        write_gltf(motion, path, source=source, skin=skin, animation=animation, up=up,
                   scale=scale)
        return
    write_bvh(motion, path, up=up, scale=scale)
