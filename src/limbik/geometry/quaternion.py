"""Batched unit-quaternion functions, scalar last ``(x, y, z, w)`` as in scipy.

Inputs are float64 arrays that broadcast over leading dimensions; callers at the
public boundary validate them (see :mod:`limbik._runtime.validation`). None of these
functions returns NaN for finite input.
"""

from __future__ import annotations

import numpy as np

from limbik._runtime.validation import FloatArray
from limbik.geometry.vectors import any_perpendicular, cross, dot, norm, normalize

__all__ = [
    "axis_angle_from_quaternion",
    "matrix_from_quaternion",
    "quaternion_conjugate",
    "quaternion_from_axis_angle",
    "quaternion_from_euler_xyz",
    "quaternion_from_matrix",
    "quaternion_from_two_vectors",
    "quaternion_multiply",
    "quaternion_normalize",
    "quaternion_slerp",
    "rotate_vectors",
]

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def _single(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are one float64 vector each: their products are then
    computed on Python floats, the same IEEE operations in the same order as NumPy's
    (the same bits) without NumPy's per-operation cost. A result with an infinity or a
    NaN is computed again by NumPy, which then warns (or raises, under ``np.errstate``)
    as before and gives its own NaN signs; underflow is not reported for one vector."""
    return a.ndim == 1 and b.ndim == 1 and a.dtype == _F64 and b.dtype == _F64


_F64 = np.dtype(np.float64)


def quaternion_multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton product ``a ⊗ b`` ``(..., 4)``: rotate by ``b`` first, then ``a``."""
    a = np.asarray(a)
    b = np.asarray(b)
    if _single(a, b) and a.shape[0] == 4 and b.shape[0] == 4:
        ax, ay, az, aw = a.tolist()
        bx, by, bz, bw = b.tolist()
        x = aw * bx + ax * bw + ay * bz - az * by
        y = aw * by - ax * bz + ay * bw + az * bx
        z = aw * bz + ax * by - ay * bx + az * bw
        w = aw * bw - ax * bx - ay * by - az * bz
        total = x + y + z + w
        if total - total == 0.0:  # all finite (else NumPy's path below)
            return np.array([x, y, z, w])
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def quaternion_conjugate(q: FloatArray) -> FloatArray:
    """Conjugate (the inverse of a unit quaternion) ``(..., 4)``."""
    return np.asarray(q) * np.array([-1.0, -1.0, -1.0, 1.0])


def quaternion_normalize(q: FloatArray) -> FloatArray:
    """Unit quaternions ``(..., 4)``; a zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    small = n < 1e-300
    return np.where(small, IDENTITY, q / np.where(small, 1.0, n))


def rotate_vectors(q: FloatArray, v: FloatArray) -> FloatArray:
    """Rotate vectors ``(..., 3)`` by unit quaternions ``(..., 4)``; broadcasts."""
    q = np.asarray(q)
    v = np.asarray(v)
    if _single(q, v) and q.shape[0] == 4 and v.shape[0] == 3:
        x, y, z, w = q.tolist()
        vx, vy, vz = v.tolist()
        tx = 2.0 * (y * vz - z * vy)
        ty = 2.0 * (z * vx - x * vz)
        tz = 2.0 * (x * vy - y * vx)
        rx = vx + w * tx + (y * tz - z * ty)
        ry = vy + w * ty + (z * tx - x * tz)
        rz = vz + w * tz + (x * ty - y * tx)
        total = rx + ry + rz
        if total - total == 0.0:  # all finite (else NumPy's path below)
            return np.array([rx, ry, rz])
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    # v' = v + w t + u × t with t = 2 u × v
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return np.stack(
        [vx + w * tx + (y * tz - z * ty),
         vy + w * ty + (z * tx - x * tz),
         vz + w * tz + (x * ty - y * tx)],
        axis=-1,
    )


def matrix_from_quaternion(q: FloatArray) -> FloatArray:
    """Rotation matrices ``(..., 3, 3)`` from unit quaternions ``(..., 4)``."""
    q = np.asarray(q)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        [
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        ],
        axis=-1,
    )
    return m.reshape(*m.shape[:-1], 3, 3)


def quaternion_from_matrix(m: FloatArray) -> FloatArray:
    """Unit quaternions ``(..., 4)`` (w >= 0) from rotation matrices ``(..., 3, 3)``.

    Uses the branch with the largest diagonal term (Shepperd), so it is accurate
    for every rotation, including half turns.
    """
    m = np.asarray(m, dtype=np.float64)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    trace = m00 + m11 + m22
    candidates = np.stack([trace, m00, m11, m22], axis=-1)
    branch = np.argmax(candidates, axis=-1)
    q = np.empty(m.shape[:-2] + (4,))
    # w largest
    s = np.sqrt(np.maximum(1.0 + trace, 1e-300)) * 2.0
    q_w = np.stack(
        [(m[..., 2, 1] - m[..., 1, 2]) / s, (m[..., 0, 2] - m[..., 2, 0]) / s,
         (m[..., 1, 0] - m[..., 0, 1]) / s, 0.25 * s], axis=-1)
    s = np.sqrt(np.maximum(1.0 + m00 - m11 - m22, 1e-300)) * 2.0
    q_x = np.stack(
        [0.25 * s, (m[..., 0, 1] + m[..., 1, 0]) / s, (m[..., 0, 2] + m[..., 2, 0]) / s,
         (m[..., 2, 1] - m[..., 1, 2]) / s], axis=-1)
    s = np.sqrt(np.maximum(1.0 + m11 - m00 - m22, 1e-300)) * 2.0
    q_y = np.stack(
        [(m[..., 0, 1] + m[..., 1, 0]) / s, 0.25 * s, (m[..., 1, 2] + m[..., 2, 1]) / s,
         (m[..., 0, 2] - m[..., 2, 0]) / s], axis=-1)
    s = np.sqrt(np.maximum(1.0 + m22 - m00 - m11, 1e-300)) * 2.0
    q_z = np.stack(
        [(m[..., 0, 2] + m[..., 2, 0]) / s, (m[..., 1, 2] + m[..., 2, 1]) / s, 0.25 * s,
         (m[..., 1, 0] - m[..., 0, 1]) / s], axis=-1)
    q = np.choose(branch[..., None], [q_w, q_x, q_y, q_z])
    q = np.where(q[..., 3:4] < 0, -q, q)
    return quaternion_normalize(q)


def quaternion_from_axis_angle(axis: FloatArray, angle: FloatArray) -> FloatArray:
    """Quaternions ``(..., 4)`` rotating by ``angle`` (rad, ``(...)``) about ``axis`` ``(..., 3)``.

    The axis is normalised; a zero axis gives the identity.
    """
    axis = normalize(np.asarray(axis, dtype=np.float64))
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    xyz = axis * np.sin(half)
    w = np.broadcast_to(np.cos(half), xyz.shape[:-1] + (1,))
    return np.concatenate([xyz, w], axis=-1)


def axis_angle_from_quaternion(q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Unit axes ``(..., 3)`` and angles in ``[0, π]`` ``(...)`` of unit quaternions.

    The identity gives axis +X and angle 0.
    """
    q = np.asarray(q, dtype=np.float64)
    q = np.where(q[..., 3:4] < 0, -q, q)
    s = norm(q[..., :3])
    angle = 2.0 * np.arctan2(s, q[..., 3])
    axis = normalize(q[..., :3], fallback=np.array([1.0, 0.0, 0.0]))
    return axis, angle


def quaternion_from_euler_xyz(rx: FloatArray, ry: FloatArray, rz: FloatArray) -> FloatArray:
    """Quaternions for ``R = Rx(rx) · Ry(ry) · Rz(rz)`` (Roblox ``CFrame.Angles``)."""
    ex = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), rx)
    ey = quaternion_from_axis_angle(np.array([0.0, 1.0, 0.0]), ry)
    ez = quaternion_from_axis_angle(np.array([0.0, 0.0, 1.0]), rz)
    return quaternion_multiply(quaternion_multiply(ex, ey), ez)


def quaternion_from_two_vectors(a: FloatArray, b: FloatArray) -> FloatArray:
    """The minimal (swing) rotation taking direction ``a`` to direction ``b``: ``(..., 4)``.

    Opposite directions give a half turn about a stable perpendicular axis; a zero
    vector on either side gives the identity.
    """
    a = normalize(np.asarray(a, dtype=np.float64))
    b = normalize(np.asarray(b, dtype=np.float64))
    a, b = np.broadcast_arrays(a, b)
    d = dot(a, b)
    # For nearly opposite directions, a × b and 1 + a·b both cancel to rounding. There
    # they are taken as the equal a × (a + b) (the small sum a + b is exact) and
    # |a × b|² / (1 - a·b), which keep their digits, so the rotation lands on b even
    # when the two directions are a hair from opposite.
    near_opposite = d < 0.0
    xyz = cross(a, np.where(near_opposite[..., None], a + b, b))
    w = np.where(near_opposite, dot(xyz, xyz) / (1.0 - np.minimum(d, 0.0)), 1.0 + d)
    # only truly opposite directions need the perpendicular: nearly opposite ones still
    # have a well-defined cross product (w then carries only rounding)
    opposite = (w < 1e-12) & (dot(xyz, xyz) < 1e-24)
    zero = (dot(a, a) < 0.5) | (dot(b, b) < 0.5)
    if np.any(opposite):  # (the perpendicular only where it is needed: it is rare)
        xyz = np.where(opposite[..., None], any_perpendicular(a), xyz)
        w = np.where(opposite, 0.0, w)
    q = quaternion_normalize(np.concatenate([xyz, w[..., None]], axis=-1))
    return np.where(zero[..., None], IDENTITY, q)


def quaternion_slerp(q0: FloatArray, q1: FloatArray, t: FloatArray) -> FloatArray:
    """Spherical interpolation ``(..., 4)`` along the shorter arc; ``t`` is ``(...)``."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(d < 0, -q1, q1)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin_theta = np.sin(theta)
    close = sin_theta < 1e-9
    safe = np.where(close, 1.0, sin_theta)
    w0 = np.where(close, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(close, t, np.sin(t * theta) / safe)
    return quaternion_normalize(w0 * q0 + w1 * q1)
