"""Compiled quaternion arithmetic on one rotation at a time, scalar last ``(x, y, z, w)``,
for kernels (and :func:`swing_rows` over rows): the same operations, in the same order,
as the NumPy functions of :mod:`limbik.geometry.quaternion` (their results agree to
rounding)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from limbik.tolerances import EPS_DIRECTION

Quaternion = tuple[float, float, float, float]
Vector = tuple[float, float, float]


@njit(cache=True)  # called from the kernels
def unit(x: float, y: float, z: float) -> Vector:
    """``(x, y, z)`` over its length; 0 below ``EPS_DIRECTION`` (as ``normalize``, and as
    it scaled down by a power of two first where the squares overflow)."""
    n = math.sqrt(x * x + y * y + z * z)
    if n == math.inf:
        e = math.frexp(max(abs(x), abs(y), abs(z)))[1]
        x, y, z = math.ldexp(x, -e), math.ldexp(y, -e), math.ldexp(z, -e)
        n = math.sqrt(x * x + y * y + z * z)
    if n < EPS_DIRECTION:
        return 0.0, 0.0, 0.0
    return x / n, y / n, z / n


@njit(cache=True)  # called from the kernels
def multiply(ax: float, ay: float, az: float, aw: float, bx: float, by: float, bz: float,
             bw: float) -> Quaternion:
    """Hamilton product ``a ⊗ b``: rotate by ``b`` first, then ``a``
    (``quaternion_multiply``)."""
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


@njit(cache=True)  # called from the kernels
def rotate(x: float, y: float, z: float, w: float, vx: float, vy: float, vz: float) -> Vector:
    """The vector ``v`` rotated by the unit quaternion ``(x, y, z, w)``
    (``rotate_vectors``: v + w t + u × t with t = 2 u × v)."""
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty),
            vy + w * ty + (z * tx - x * tz),
            vz + w * tz + (x * ty - y * tx))


@njit(cache=True)  # called from the kernels
def swing(ax: float, ay: float, az: float, bx: float, by: float, bz: float) -> Quaternion:
    """The minimal rotation taking direction ``a`` to ``b``
    (``quaternion_from_two_vectors``): a half turn about a stable perpendicular for
    opposite directions, the identity where either is zero."""
    ax, ay, az = unit(ax, ay, az)
    bx, by, bz = unit(bx, by, bz)
    d = ax * bx + ay * by + az * bz
    if d < 0.0:  # nearly opposite: a × (a + b) and |a × b|² / (1 - a·b) keep their digits
        cx, cy, cz = ax + bx, ay + by, az + bz
    else:
        cx, cy, cz = bx, by, bz
    x = ay * cz - az * cy
    y = az * cx - ax * cz
    z = ax * cy - ay * cx
    squares = x * x + y * y + z * z
    w = squares / (1.0 - min(d, 0.0)) if d < 0.0 else 1.0 + d
    if ax * ax + ay * ay + az * az < 0.5 or bx * bx + by * by + bz * bz < 0.5:
        return 0.0, 0.0, 0.0, 1.0
    if w < 1e-12 and squares < 1e-24:  # opposite: a half turn about a perpendicular
        ux, uy, uz = abs(ax), abs(ay), abs(az)
        hx = 1.0 if ux <= uy and ux <= uz else 0.0
        hy = 1.0 if hx == 0.0 and uy <= uz else 0.0
        hz = 1.0 if hx == 0.0 and hy == 0.0 else 0.0
        along = hx * ax + hy * ay + hz * az
        x, y, z = unit(hx - along * ax, hy - along * ay, hz - along * az)
        if x == 0.0 and y == 0.0 and z == 0.0:
            x = 1.0
        w = 0.0
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n < 1e-300:
        return 0.0, 0.0, 0.0, 1.0
    return x / n, y / n, z / n, w / n


@njit(cache=True)
def swing_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`swing` of each row of ``a`` and ``b`` ``(n, 3)``: ``(n, 4)``."""
    out = np.empty((a.shape[0], 4))
    for i in range(a.shape[0]):
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = swing(a[i, 0], a[i, 1], a[i, 2],
                                                           b[i, 0], b[i, 1], b[i, 2])
    return out
