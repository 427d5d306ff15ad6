"""Up axis and length units: move a :class:`Motion` between a file's frame and limbik's.

limbik works Y up. A Z-up file (Blender, Unreal, 3ds Max) maps to it as Blender's
glTF exporter does: a file point ``(x, y, z)`` is limbik's ``(x, z, -y)``, a
rotation by −90° about X. Rotations are conjugated by the same map, which on a
quaternion ``(x, y, z, w)`` is ``(x, z, -y, w)``. Both are exact: components are
only swapped and negated.

Lengths are multiplied by ``scale`` on the way in (file units → working units,
e.g. ``unit_scale("cm") = 0.01`` for centimetre files worked on in metres) and
divided by it on the way out, so a round trip returns each value to within one
rounding (exactly when ``scale`` is a power of two, or 1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray, as_float, choice
from limbik.errors import InvalidInputError
from limbik.skeleton.motion import Motion
from limbik.skeleton.skeleton import Skeleton

__all__ = ["UNITS", "UP_AXES", "export_axes", "import_axes", "import_height_field",
           "unit_scale"]

#: Metres per unit, for the unit names the readers and the command line accept.
UNITS = {"m": 1.0, "dm": 0.1, "cm": 0.01, "mm": 0.001, "km": 1000.0, "in": 0.0254,
         "ft": 0.3048, "yd": 0.9144}
#: The up axes a file may use.
UP_AXES = ("y", "z")


def unit_scale(unit: str | float | None, *, working: str = "m") -> float:
    """Working units per file unit: ``unit`` is a name from :data:`UNITS` or a factor.

    ``None`` means the file's own units (1.0). ``unit_scale("cm") == 0.01`` (to metres).
    """
    if unit is None:
        return 1.0
    if isinstance(unit, str):
        key = unit.strip().lower()
        if key not in UNITS:
            try:
                value = float(key)
            except ValueError:
                raise InvalidInputError(
                    f"unit must be one of {', '.join(UNITS)} or a positive number, got "
                    f"{unit!r}", argument="unit") from None
            return _factor(value)
        base = choice(working, "working", tuple(UNITS))
        return UNITS[key] / UNITS[base]
    return _factor(unit)


#: The range of a unit given as a factor: nanometres to a million kilometres per unit
#: (beyond it lengths underflow to zero or overflow once squared).
UNIT_RANGE = (1e-9, 1e9)


def _factor(value: Any) -> float:
    """A unit given as a number of metres, within :data:`UNIT_RANGE`."""
    out = as_float(value, "unit", minimum=0.0, exclusive=True, maximum=UNIT_RANGE[1])
    if out < UNIT_RANGE[0]:
        raise InvalidInputError(f"unit must be >= {UNIT_RANGE[0]:g}, got {out:g}",
                                argument="unit")
    return out


def _points_z_to_y(p: FloatArray) -> FloatArray:
    return np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1)


def _points_y_to_z(p: FloatArray) -> FloatArray:
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)


def _quats_z_to_y(q: FloatArray) -> FloatArray:
    return np.stack([q[..., 0], q[..., 2], -q[..., 1], q[..., 3]], axis=-1)


def _quats_y_to_z(q: FloatArray) -> FloatArray:
    return np.stack([q[..., 0], -q[..., 2], q[..., 1], q[..., 3]], axis=-1)


def _convert(motion: Motion, points: Callable[[FloatArray], FloatArray],
             quats: Callable[[FloatArray], FloatArray], factor: float, *, divide: bool
             ) -> Motion:
    def length(p: FloatArray) -> FloatArray:
        p = points(p)
        return p / factor if divide else p * factor

    sk = motion.skeleton
    skeleton = Skeleton(sk.names, sk.parents, length(sk.offsets), sk.channels,
                        list(zip(sk.end_site_parents.tolist(),
                                 length(sk.end_site_offsets), strict=True)))
    return dataclasses.replace(
        motion, skeleton=skeleton, root_positions=length(motion.root_positions),
        rotations=quats(motion.rotations),
        joint_translations={j: length(v) for j, v in motion.joint_translations.items()})


def _change(motion: Motion, up: str, scale: float, *, to_file: bool) -> Motion:
    axis = choice(up, "up", UP_AXES)
    factor = as_float(scale, "scale", minimum=0.0, exclusive=True)
    if axis == "y" and factor == 1.0:
        return motion
    if axis == "y":
        return _convert(motion, lambda p: p, lambda q: q, factor, divide=to_file)
    if to_file:
        return _convert(motion, _points_y_to_z, _quats_y_to_z, factor, divide=True)
    return _convert(motion, _points_z_to_y, _quats_z_to_y, factor, divide=False)


def import_axes(motion: Motion, *, up: str = "y", scale: float = 1.0) -> Motion:
    """A motion read in a file's frame, in limbik's: Y up, lengths times ``scale``."""
    return _change(motion, up, scale, to_file=False)


def export_axes(motion: Motion, *, up: str = "y", scale: float = 1.0) -> Motion:
    """The inverse of :func:`import_axes`: limbik's frame back to the file's."""
    return _change(motion, up, scale, to_file=True)


def import_height_field(heights: object, cell_size: float, origin: tuple[float, float], *,
                        up: str = "y", scale: float = 1.0
                        ) -> tuple[FloatArray, float, tuple[float, float]]:
    """A height field given in a file's frame, in limbik's: ``(heights, cell, (x0, z0))``.

    In the file's frame ``heights[i, j]`` is the height (along ``up``) at
    ``origin + (j, i) · cell_size`` on its two other axes: ``(x, z)`` when Y is up,
    ``(x, y)`` when Z is up. Z up, rows run along the file's +Y, which is limbik's −Z,
    so they come back reversed. Heights, spacing and origin are multiplied by ``scale``.
    """
    axis = choice(up, "up", UP_AXES)
    factor = as_float(scale, "scale", minimum=0.0, exclusive=True)
    h = np.asarray(heights, dtype=np.float64)
    if h.ndim != 2:
        raise InvalidInputError(f"heights must be a 2-D array, got shape {h.shape}",
                                argument="heights")
    cell = as_float(cell_size, "cell_size", minimum=0.0, exclusive=True)
    x0, second = (float(v) for v in origin)
    if axis == "z":
        h = h[::-1]
        second = -(second + (h.shape[0] - 1) * cell)
    return h * factor, cell * factor, (x0 * factor, second * factor)
