"""Boundary checks: convert array-likes to float64 and reject bad shapes and NaN.

Every public function calls these on its inputs, so the layers below can assume
contiguous, finite float64 arrays of the right trailing shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.tolerances import EPS_DIRECTION

FloatArray = NDArray[np.float64]

MAX_MAGNITUDE = 1e100
"""The largest magnitude of a number that files (BVH, glTF, URDF) and chains may hold:
squared differences of such numbers stay finite."""


def _shape_text(trailing: tuple[int, ...]) -> str:
    if not trailing:
        return "(...)"
    return "(..., " + ", ".join(str(n) for n in trailing) + ")"


_NUMERIC_KINDS = "iuf"  # signed, unsigned, floating (not bool, complex, text, bytes)


def _not_numeric(value: Any, name: str, trailing: tuple[int, ...], what: str
                 ) -> InvalidInputError:
    return InvalidInputError(
        f"{name} must be a numeric array of shape {_shape_text(trailing)} (real numbers), "
        f"got {what}",
        argument=name,
    )


def as_float_array(value: Any, name: str, trailing: tuple[int, ...] = ()) -> FloatArray:
    """Return ``value`` as a finite float64 array whose shape ends with ``trailing``.

    Only real numbers are accepted: booleans, complex numbers, strings and bytes
    are rejected rather than converted; integers too large for a float are
    reported as non-finite.

    Raises
    ------
    InvalidInputError
        If the value is not numeric or its trailing shape differs.
    NonFiniteInputError
        If it holds NaN or infinity (or an integer beyond the float range).
    """
    array = as_real_array(value, name, trailing)
    k = len(trailing)
    if array.ndim < k or (k and array.shape[-k:] != trailing):
        raise InvalidInputError(
            f"{name} must have shape {_shape_text(trailing)}, got {array.shape}",
            argument=name,
        )
    check_finite(array, name)
    return array


def as_real_array(value: Any, name: str, trailing: tuple[int, ...] = ()) -> FloatArray:
    """``value`` as a float64 array under the rules of :func:`as_float_array`, without
    the shape and finiteness checks (for callers whose kernels scan for NaN)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _not_numeric(value, name, trailing,
                           f"{type(value).__name__} (ragged or not numbers)") from exc
    if raw.dtype.kind == "O":
        raw = _object_array(raw, value, name, trailing)
    if raw.dtype.kind not in _NUMERIC_KINDS:
        what = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "bytes",
                "M": "datetimes", "m": "timedeltas"}.get(raw.dtype.kind, str(raw.dtype))
        raise _not_numeric(value, name, trailing, what)
    return raw.astype(np.float64)


def _object_array(raw: np.ndarray, value: Any, name: str, trailing: tuple[int, ...]
                  ) -> np.ndarray:
    """An object array (ragged, mixed or huge Python ints) as float64, or an error."""
    items = raw.ravel().tolist()
    for item in items:
        if isinstance(item, bool | np.bool_ | str | bytes | complex | np.complexfloating):
            raise _not_numeric(value, name, trailing, f"{type(item).__name__} {item!r:.40}")
    out = np.empty(len(items))
    for i, item in enumerate(items):
        try:
            out[i] = float(item)
        except OverflowError:
            index = tuple(int(k) for k in np.unravel_index(i, raw.shape))
            raise NonFiniteInputError(
                f"{name} must be finite, got an integer beyond the float range at index "
                f"{index}", argument=name) from None
        except (TypeError, ValueError) as exc:
            raise _not_numeric(value, name, trailing,
                               f"{type(item).__name__} {item!r:.40}") from exc
    return out.reshape(raw.shape)


def check_finite(array: FloatArray, name: str) -> None:
    """Raise :class:`NonFiniteInputError` naming the first NaN/inf entry of ``array``."""
    if not np.isfinite(array).all():  # the method: a microsecond less than np.all
        bad = np.argwhere(~np.isfinite(array))[0]
        index = tuple(int(i) for i in bad)
        kind = "NaN" if np.isnan(array[index]) else "inf"
        raise NonFiniteInputError(
            f"{name} must be finite, got {kind} at index {index}", argument=name
        )


def as_points(value: Any, name: str) -> FloatArray:
    """Points or vectors of shape ``(..., 3)``."""
    return as_float_array(value, name, (3,))


#: Vectors with a component above this are scaled down for a norm (their squares would
#: overflow).
_HUGE_COMPONENT = 1e150


def huge_exponents(vectors: FloatArray) -> np.ndarray | None:
    """Per vector of ``vectors`` ``(..., 3)``, the exponent ``e`` ``(...)`` of the power of
    two just above its largest component where that is above 1e150 (whose squares may
    overflow), 0 elsewhere; None when no vector is that long."""
    big = np.max(np.abs(vectors), axis=-1, initial=0.0)
    huge = big > _HUGE_COMPONENT
    if not np.any(huge):
        return None
    return np.where(huge, np.frexp(big)[1], 0)


def finite_squares(vectors: FloatArray) -> FloatArray:
    """Vectors ``(..., 3)``, those with a component above 1e150 divided by a power of two
    (exact, so each keeps its direction bit for bit) to a largest component below 1: their
    squared norms do not overflow. Others are returned as they are (the same array when
    none is that long)."""
    exponent = huge_exponents(vectors)
    return vectors if exponent is None else np.ldexp(vectors, -exponent[..., None])


def as_directions(value: Any, name: str) -> tuple[FloatArray, FloatArray]:
    """Direction vectors ``(..., 3)`` and their norms ``(...)``, refusing any vector
    shorter than ``EPS_DIRECTION`` (1e-12): it has no direction to take. Vectors longer
    than about 1e150 come back scaled down by a power of two (:func:`finite_squares`), so
    ``vectors / norms`` are their unit directions at any length."""
    vectors = finite_squares(as_points(value, name))
    norms = np.sqrt(np.einsum("...i,...i->...", vectors, vectors))
    short = norms < EPS_DIRECTION
    if np.any(short):
        index = tuple(int(i) for i in np.argwhere(short)[0])
        length = float(np.asarray(norms)[index])
        raise InvalidInputError(
            f"{name} must be non-zero vectors (norm >= {EPS_DIRECTION:g}), got "
            + ("a zero vector" if length == 0.0 else f"one of norm {length:.3g}")
            + (f" at index {index}" if index else ""), argument=name)
    return vectors, norms


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
    with np.errstate(over="ignore"):  # huge entries are scaled below
        norms = np.linalg.norm(array, axis=-1, keepdims=True)
    if np.any(norms < 1e-12):
        index = tuple(int(i) for i in np.argwhere(norms[..., 0] < 1e-12)[0])
        size = float(np.max(np.abs(array[index])))
        raise InvalidInputError(
            f"{name} must be a non-zero quaternion (x, y, z, w) of norm >= 1e-12, got "
            + ("a zero quaternion" if size == 0.0 else f"one with entries up to {size:.3g}")
            + f" at index {index}", argument=name)
    unit = array / norms
    huge = ~np.isfinite(norms[..., 0])  # squares beyond the float range: scale first
    if np.any(huge):
        scaled = array[huge] / np.max(np.abs(array[huge]), axis=-1, keepdims=True)
        unit[huge] = scaled / np.linalg.norm(scaled, axis=-1, keepdims=True)
    return unit


def as_joint_rotations(value: Any, name: str, n_joints: int, shape: tuple[int, ...]
                       ) -> FloatArray:
    """World rotations ``(..., n_joints, 4)`` (x, y, z, w) of a chain's or tree's joints,
    normalised as :func:`as_quaternions`, whose batch shape broadcasts to a solve's
    batch ``shape`` (the solve's own shape is kept)."""
    q = as_quaternions(value, name)
    if q.ndim < 2 or q.shape[-2] != n_joints:
        raise InvalidInputError(f"{name} must have shape (..., {n_joints}, 4), got {q.shape}",
                                argument=name)
    batch = q.shape[:-2]
    if batch != shape and (len(batch) > len(shape) or any(
            b not in (1, s) for b, s in zip(batch[::-1], shape[::-1], strict=False))):
        raise InvalidInputError(f"{name} must have a batch shape that broadcasts to the "
                                f"solve's {shape}, got {q.shape}", argument=name)
    return q


#: Quaternions whose squared norm is within this of 1 are unit: kept bit for bit.
UNIT_TOLERANCE = 1e-12
#: A quick test of unit norm passes rows within this of 1: inside UNIT_TOLERANCE by far
#: more than the few units of 1e-16 by which two orders of the same sum of squares differ,
#: so a row it passes is unit by :func:`as_unit_quaternions`' own sum too.
UNIT_MARGIN = UNIT_TOLERANCE - 1e-14


def as_unit_quaternions(value: Any, name: str, *, copy: bool = True) -> FloatArray:
    """Quaternions ``(..., 4)`` as :func:`as_quaternions`, but rows already unit to 1e-12
    are returned bit for bit (so a weight of 0 can give back the caller's input).

    Where every row is unit (the common case) nothing is normalised: the array is
    returned as a copy, or with ``copy=False`` as it is (the caller's own array, for
    callers that only read it).
    """
    array = as_float_array(value, name, (4,))
    x, y, z, w = array[..., 0], array[..., 1], array[..., 2], array[..., 3]
    with np.errstate(over="ignore"):  # huge entries: not unit, so normalised below
        # a quick test first: a sum over the short last axis costs NumPy a loop per row
        quick = (x * x + y * y) + (z * z + w * w)
        if bool(np.all(np.abs(quick - 1.0) < UNIT_MARGIN)):
            return array.copy() if copy else array
        norms = np.sum(array * array, axis=-1, keepdims=True)
    unit = np.abs(norms - 1.0) < UNIT_TOLERANCE
    return np.where(unit, array, as_quaternions(array, name))


def as_parents(value: Any, name: str = "parents", *, min_joints: int = 2,
               forest: bool = False) -> np.ndarray:
    """A joint tree's parent indices ``(J,)`` as int64: ``parents[0] == -1`` (the root) and
    ``parents[j]`` in ``[0, j)`` for ``j >= 1`` (parents listed before their children);
    with ``forest``, any joint may be a root (-1)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # pragma: no cover - numpy accepts most things
        raise InvalidInputError(f"{name} must be a 1-D int array, got {value!r:.60}",
                                argument=name) from exc
    if arr.ndim != 1 or arr.size < min_joints or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidInputError(
            f"{name} must be a 1-D int array of length >= {min_joints}, got dtype {arr.dtype} "
            f"shape {arr.shape}", argument=name)
    arr = arr.astype(np.int64)
    if not forest and arr[0] != -1:
        raise InvalidInputError(f"{name}[0] must be -1 (joint 0 is the root), got {arr[0]}",
                                argument=name)
    idx = np.arange(arr.size)
    bad = (arr >= idx) | (arr < (-1 if forest else 0))
    bad[0] = arr[0] != -1
    if np.any(bad):
        j = int(np.argmax(bad))
        allowed = "-1 or in [0, j)" if forest else "in [0, j) for j >= 1"
        raise InvalidInputError(
            f"{name}[j] must be {allowed} (parents listed before children), "
            f"got {name}[{j}] = {arr[j]}", argument=name)
    return arr


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
    """A Python int within the int64 range (bools rejected), optionally bounded below."""
    if type(value) is int and (minimum is None or value >= minimum) and (
            -(2**63) <= value < 2**63):
        return value  # the common case, without the checks below
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise InvalidInputError(
            f"{name} must be an int, got {type(value).__name__} {value!r:.40}", argument=name
        )
    if minimum is not None and value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}", argument=name)
    if not -(2**63) <= value < 2**63:
        bits = int(value).bit_length()  # (str() of a huge int is refused by Python)
        shown = (str(int(value)) if bits <= 128
                 else f"an integer of about {bits * 0.30103:.0f} digits")
        raise InvalidInputError(f"{name} must be within [-2^63, 2^63 - 1] (a signed 64-bit "
                                f"integer), got {shown}", argument=name)
    return int(value)


def as_float(value: Any, name: str, *, minimum: float | None = None,
             exclusive: bool = False, maximum: float = np.inf) -> float:
    """A finite Python float, optionally bounded below (and at most ``maximum``).

    Accepts ints and floats (Python or NumPy) and 0-d real arrays; rejects booleans,
    strings, bytes and complex numbers. An int beyond the float range is non-finite.
    """
    if type(value) is float and -np.inf < value < np.inf and value <= maximum and (
            minimum is None or (value > minimum if exclusive else value >= minimum)):
        return value  # the common case, without the checks below
    if isinstance(value, bool | np.bool_ | str | bytes | complex | np.complexfloating):
        raise InvalidInputError(f"{name} must be a number, got {type(value).__name__} "
                                f"{value!r:.40}", argument=name)
    if isinstance(value, np.ndarray) and (value.ndim or value.dtype.kind not in _NUMERIC_KINDS):
        raise InvalidInputError(f"{name} must be a number, got an array of shape "
                                f"{value.shape} ({value.dtype})", argument=name)
    try:
        out = float(value)
    except OverflowError:
        raise NonFiniteInputError(f"{name} must be finite, got an integer beyond the float "
                                  "range", argument=name) from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name} must be a number, got {type(value).__name__} {value!r:.40}", argument=name
        ) from exc
    if not np.isfinite(out):
        raise NonFiniteInputError(f"{name} must be finite, got {out}", argument=name)
    if minimum is not None and (out <= minimum if exclusive else out < minimum):
        relation = ">" if exclusive else ">="
        raise InvalidInputError(f"{name} must be {relation} {minimum}, got {out}", argument=name)
    if out > maximum:
        raise InvalidInputError(f"{name} must be <= {maximum:g}, got {out:g}", argument=name)
    return out


def as_sequence(value: Any, name: str, what: str) -> tuple[Any, ...]:
    """``value`` (a list, tuple or other non-text iterable) as a tuple, or an error
    saying it should hold ``what``."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{name} must be a sequence of {what}, got "
                                f"{type(value).__name__}", argument=name)
    return tuple(value)


def as_flag(value: Any, name: str) -> bool:
    """A boolean flag: ``True``/``False`` (Python or NumPy), nothing else."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidInputError(
            f"{name} must be True or False, got {type(value).__name__} {value!r:.40}",
            argument=name)
    return bool(value)


def broadcast_shapes(*pairs: tuple[str, tuple[int, ...]]) -> tuple[int, ...]:
    """Broadcast batch shapes, naming the arguments when they do not fit."""
    longest = max((shape for _, shape in pairs), key=len, default=())
    if all(shape == longest or shape == () for _, shape in pairs):
        return longest  # the usual case, without NumPy's machinery (a few µs a call)
    try:
        return np.broadcast_shapes(*(shape for _, shape in pairs))
    except ValueError:
        described = ", ".join(f"{name} {shape}" for name, shape in pairs)
        raise InvalidInputError(
            f"batch shapes must broadcast together, got {described}"
        ) from None


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (no copy), for a kernel input.

    Numba compiles a kernel for each combination of argument types, and a read-only
    array is another type than a writable one: inputs handed over as read-only views
    keep one type whatever the caller passed (a broadcast array, a frozen class's
    array or a fresh one)."""
    view = array.view()
    view.flags.writeable = False
    return view
