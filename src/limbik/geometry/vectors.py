"""Batched 3-vector helpers. All take ``(..., 3)`` float64 arrays and broadcast."""

from __future__ import annotations

import numpy as np

from limbik._runtime.validation import FloatArray, finite_squares, huge_exponents
from limbik.tolerances import EPS_DIRECTION

__all__ = ["any_perpendicular", "cross", "dot", "norm", "normalize", "project_off"]


def dot(a: FloatArray, b: FloatArray) -> FloatArray:
    """Dot product over the last axis: ``(..., 3), (..., 3) -> (...)``."""
    return np.einsum("...i,...i->...", a, b)


def cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """Cross product over the last axis: ``(..., 3), (..., 3) -> (...)``, broadcasting.

    The same products and differences as ``np.cross`` (the same bits), without its
    axis handling, which costs tens of microseconds on small arrays.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], axis=-1)


def norm(v: FloatArray) -> FloatArray:
    """Euclidean norm over the last axis: ``(..., 3) -> (...)``, finite for any finite
    vectors (those whose squares overflow are measured scaled down by a power of two)."""
    n = np.sqrt(dot(v, v))
    if np.all(np.isfinite(n)):
        return n
    v = np.asarray(v, dtype=np.float64)
    exponent = huge_exponents(v)
    if exponent is None:  # pragma: no cover - only squares of components above 1e150 overflow
        return n
    w = np.ldexp(v, -exponent[..., None])  # exact: the norm scales by the same power of two
    with np.errstate(over="ignore"):  # a norm beyond the float range is inf
        return np.ldexp(np.sqrt(dot(w, w)), exponent)


def normalize(v: FloatArray, fallback: FloatArray | None = None) -> FloatArray:
    """Unit vectors ``(..., 3)``.

    Where a vector's norm is below ``EPS_DIRECTION`` the result is ``fallback``
    (broadcast), or zero when no fallback is given. Never NaN.
    """
    v = np.asarray(v, dtype=np.float64)
    n = np.sqrt(dot(v, v))[..., None]
    if not np.all(np.isfinite(n)):  # squares beyond the float range: scale down first
        v = finite_squares(v)
        n = np.sqrt(dot(v, v))[..., None]
    small = n < EPS_DIRECTION
    out = v / np.where(small, 1.0, n)
    if fallback is None:
        return np.where(small, 0.0, out)
    return np.where(small, np.broadcast_to(fallback, out.shape), out)


def project_off(v: FloatArray, axis: FloatArray) -> FloatArray:
    """The part of ``v`` perpendicular to the unit vector ``axis``: ``(..., 3)``."""
    return v - dot(v, axis)[..., None] * axis


def any_perpendicular(v: FloatArray) -> FloatArray:
    """A unit vector perpendicular to each ``v`` ``(..., 3)``, chosen stably.

    Uses the world axis least aligned with ``v``; a zero ``v`` gives +X.
    """
    v = np.asarray(v, dtype=np.float64)
    a = np.abs(v)
    # pick X unless v is mostly along X, then Y unless mostly along Y, else Z
    use_x = (a[..., 0] <= a[..., 1]) & (a[..., 0] <= a[..., 2])
    use_y = ~use_x & (a[..., 1] <= a[..., 2])
    helper = np.zeros(np.broadcast_shapes(v.shape), dtype=np.float64)
    helper[..., 0] = use_x
    helper[..., 1] = use_y
    helper[..., 2] = ~use_x & ~use_y
    u = normalize(v)
    p = project_off(helper, u)
    return normalize(p, fallback=np.array([1.0, 0.0, 0.0]))
