"""Compiled fitting of world joint rotations to bone directions, down a joint tree."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from limbik.tolerances import EPS_DIRECTION


@njit(cache=True)  # called from the kernels
def _unit(x: float, y: float, z: float) -> tuple[float, float, float]:
    """``(x, y, z)`` over its length; 0 below ``EPS_DIRECTION`` (as ``normalize``)."""
    n = math.sqrt(x * x + y * y + z * z)
    if n < EPS_DIRECTION:
        return 0.0, 0.0, 0.0
    return x / n, y / n, z / n


@njit(cache=True)  # called from the kernels
def _swing(ax: float, ay: float, az: float, bx: float, by: float, bz: float
           ) -> tuple[float, float, float, float]:
    """The minimal rotation taking direction ``a`` to ``b``, as
    :func:`limbik.geometry.quaternion.quaternion_from_two_vectors` takes it."""
    ax, ay, az = _unit(ax, ay, az)
    bx, by, bz = _unit(bx, by, bz)
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
        x, y, z = _unit(hx - along * ax, hy - along * ay, hz - along * az)
        if x == 0.0 and y == 0.0 and z == 0.0:
            x = 1.0
        w = 0.0
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n < 1e-300:
        return 0.0, 0.0, 0.0, 1.0
    return x / n, y / n, z / n, w / n


@njit(cache=True)
def aim_world_rotations(parents: np.ndarray, child: np.ndarray, direction: np.ndarray,
                        unit: np.ndarray, lengths: np.ndarray, world: np.ndarray) -> None:
    """Fill ``world`` ``(T, J, 4)`` (x, y, z, w) down the tree ``parents`` ``(J,)`` (each
    parent before its children, -1 for the root).

    A joint with one child ``child[j] >= 0`` takes its parent's world rotation (the
    identity for the root) turned by the smallest rotation from its rest bone
    ``direction[child]`` ``(J, 3)`` so carried to the bone's direction in the frame,
    ``unit[:, child - 1]`` ``(T, J - 1, 3)`` (where the bone has length there,
    ``lengths`` ``(T, J - 1)``); a joint with ``child[j] == -1`` keeps its parent's; one with
    ``child[j] == -2`` keeps the rotation ``world`` already holds for it. Each is then
    made unit length.
    """
    frames, joints = world.shape[0], world.shape[1]
    for f in range(frames):
        for j in range(joints):
            p = parents[j]
            if p < 0:
                px, py, pz, pw = 0.0, 0.0, 0.0, 1.0
            else:
                px, py, pz, pw = world[f, p, 0], world[f, p, 1], world[f, p, 2], world[f, p, 3]
            c = child[j]
            if c == -2:
                x, y, z, w = world[f, j, 0], world[f, j, 1], world[f, j, 2], world[f, j, 3]
            elif c == -1:
                x, y, z, w = px, py, pz, pw
            else:
                vx, vy, vz = direction[c, 0], direction[c, 1], direction[c, 2]
                # the rest bone carried by the parent (v + w t + u × t, t = 2 u × v)
                tx = 2.0 * (py * vz - pz * vy)
                ty = 2.0 * (pz * vx - px * vz)
                tz = 2.0 * (px * vy - py * vx)
                cx = vx + pw * tx + (py * tz - pz * ty)
                cy = vy + pw * ty + (pz * tx - px * tz)
                cz = vz + pw * tz + (px * ty - py * tx)
                if lengths[f, c - 1] > 0.0:
                    gx, gy, gz = unit[f, c - 1, 0], unit[f, c - 1, 1], unit[f, c - 1, 2]
                else:
                    gx, gy, gz = cx, cy, cz
                ax, ay, az, aw = _swing(cx, cy, cz, gx, gy, gz)
                x = aw * px + ax * pw + ay * pz - az * py
                y = aw * py - ax * pz + ay * pw + az * px
                z = aw * pz + ax * py - ay * px + az * pw
                w = aw * pw - ax * px - ay * py - az * pz
            n = math.sqrt(x * x + y * y + z * z + w * w)
            world[f, j, 0] = x / n
            world[f, j, 1] = y / n
            world[f, j, 2] = z / n
            world[f, j, 3] = w / n
