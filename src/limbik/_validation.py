"""Boundary checks: convert array-likes to float64 and reject bad shapes and NaN.

Every public function calls these on its inputs, so the layers below can assume
contiguous, finite float64 arrays of the right trailing shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from limbik.errors import InvalidInputError, NonFiniteInputError

FloatArray = NDArray[np.float64]


def _shape_text(trailing: tuple[int, ...]) -> str:
    if not trailing:
        return "(...)"
    return "(..., " + ", ".join(str(n) for n in trailing) + ")"


def as_float_array(value: Any, name: str, trailing: tuple[int, ...] = ()) -> FloatArray:
    """Return ``value`` as a finite float64 array whose shape ends with ``trailing``.

    Raises
    ------
    InvalidInputError
        If the value is not numeric or its trailing shape differs.
    NonFiniteInputError
        If it holds NaN or infinity.
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name} must be a numeric array of shape {_shape_text(trailing)}, "
            f"got {type(value).__name__}",
            argument=name,
        ) from exc
    k = len(trailing)
    if array.ndim < k or (k and array.shape[-k:] != trailing):
        raise InvalidInputError(
            f"{name} must have shape {_shape_text(trailing)}, got {array.shape}",
            argument=name,
        )
    check_finite(array, name)
    return array


def check_finite(array: FloatArray, name: str) -> None:
    """Raise :class:`NonFiniteInputError` naming the first NaN/inf entry of ``array``."""
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        index = tuple(int(i) for i in bad)
        kind = "NaN" if np.isnan(array[index]) else "inf"
        raise NonFiniteInputError(
            f"{name} must be finite, got {kind} at index {index}", argument=name
        )


def as_points(value: Any, name: str) -> FloatArray:
    """Points or vectors of shape ``(..., 3)``."""
    return as_float_array(value, name, (3,))


def as_point(value: Any, name: str) -> FloatArray:
    """One point ``(3,)``."""
    p = as_points(value, name)
    if p.shape != (3,):
        raise InvalidInputError(f"{name} must have shape (3,), got {p.shape}", argument=name)
    return p


def as_scalars(value: Any, name: str) -> FloatArray:
    """Scalars of any (broadcastable) shape."""
    return as_float_array(value, name, ())


def as_positive(value: Any, name: str, *, allow_zero: bool = False) -> FloatArray:
    """Scalars that must be > 0 (or >= 0 with ``allow_zero``)."""
    array = as_scalars(value, name)
    bad = array < 0 if allow_zero else array <= 0
    if np.any(bad):
        first = float(array[bad].flat[0])
        relation = ">= 0" if allow_zero else "> 0"
        raise InvalidInputError(f"{name} must be {relation}, got {first!r}", argument=name)
    return array


def as_quaternions(value: Any, name: str) -> FloatArray:
    """Quaternions ``(..., 4)`` (x, y, z, w), normalised; a zero quaternion raises."""
    array = as_float_array(value, name, (4,))
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    if np.any(norms < 1e-12):
        index = tuple(int(i) for i in np.argwhere(norms[..., 0] < 1e-12)[0])
        raise InvalidInputError(
            f"{name} must be a non-zero quaternion (x, y, z, w), got a zero quaternion "
            f"at index {index}",
            argument=name,
        )
    return array / norms


def as_unit_quaternions(value: Any, name: str) -> FloatArray:
    """Quaternions ``(..., 4)`` as :func:`as_quaternions`, but rows already unit to 1e-12
    are returned bit for bit (so a weight of 0 can give back the caller's input)."""
    array = as_float_array(value, name, (4,))
    unit = as_quaternions(array, name)
    norms = np.sum(array * array, axis=-1, keepdims=True)
    return np.where(np.abs(norms - 1.0) < 1e-12, array, unit)


def as_weight(value: Any, name: str) -> FloatArray:
    """A finite weight array ``(...)`` in [0, 1]."""
    array = as_float_array(value, name)
    bad = (array < 0.0) | (array > 1.0)
    if np.any(bad):
        raise InvalidInputError(f"{name} must be in [0, 1], got {float(array[bad].flat[0])!r}",
                                argument=name)
    return array


def choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    """Check that ``value`` is one of the string ``options``."""
    if not isinstance(value, str) or value not in options:
        listed = ", ".join(repr(o) for o in options)
        raise InvalidInputError(f"{name} must be one of {listed}, got {value!r}", argument=name)
    return value


def as_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """A Python int (bools rejected), optionally bounded below."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidInputError(
            f"{name} must be an int, got {type(value).__name__} {value!r}", argument=name
        )
    if minimum is not None and value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}", argument=name)
    return int(value)


def as_float(value: Any, name: str, *, minimum: float | None = None,
             exclusive: bool = False) -> float:
    """A finite Python float, optionally bounded below."""
    if isinstance(value, bool):
        raise InvalidInputError(f"{name} must be a number, got {value!r}", argument=name)
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name} must be a number, got {type(value).__name__} {value!r}", argument=name
        ) from exc
    if not np.isfinite(out):
        raise NonFiniteInputError(f"{name} must be finite, got {out}", argument=name)
    if minimum is not None and (out <= minimum if exclusive else out < minimum):
        relation = ">" if exclusive else ">="
        raise InvalidInputError(f"{name} must be {relation} {minimum}, got {out}", argument=name)
    return out


def broadcast_shapes(*pairs: tuple[str, tuple[int, ...]]) -> tuple[int, ...]:
    """Broadcast batch shapes, naming the arguments when they do not fit."""
    try:
        return np.broadcast_shapes(*(shape for _, shape in pairs))
    except ValueError:
        described = ", ".join(f"{name} {shape}" for name, shape in pairs)
        raise InvalidInputError(
            f"batch shapes must broadcast together, got {described}"
        ) from None
