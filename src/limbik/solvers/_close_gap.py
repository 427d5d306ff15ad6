"""Closing the gap FABRIK leaves near the edges of a chain's reach.

FABRIK converges slowly where the chain is nearly straight (targets near its full
reach) or folded (near its inner reach): after 100 iterations a few percent of random
reachable targets are still short. :func:`close_gap` reshapes such a chain as little as
it can to reach the target exactly. It scales every bend angle by one factor ``s``
(each joint's bend is a rotation about a world axis, from the parent bone's direction
to the child's: ``s = 1`` is the given pose, ``s = 0`` the straight chain), choosing the
``s`` nearest 1 at which the end is as far from the root as the target (where none
does, as for some chains folded near their inner reach, Newton steps of least change
on the bend angles find such a shape); then it turns the whole chain about the root
onto the target. Bone lengths are kept, and the change
shrinks with the gap, so poses stay continuous along a target path.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

import limbik._numba_cache  # noqa: F401  (Numba's cache: locked saves, kernel-source stamp)
from limbik._kernel_options import read_only

__all__ = ["close_gap"]

#: Bend scales tried on each side of 1 before the nearest crossing is bisected.
STEPS = 32
BISECTIONS = 60
#: Newton steps where no bend scale reaches.
NEWTON_STEPS = 40


def close_gap(positions: np.ndarray, target: np.ndarray, tolerance: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Chains ``positions (m, n, 3)`` reshaped to put their end on ``target (m, 3)``.

    Returns ``(positions, closed)``: where ``closed (m,)`` is true the new pose's end is
    within ``tolerance (m,)`` of the target, with the root and every bone length kept;
    elsewhere (no bend scale gives the target's distance) the input pose is returned.
    """
    out = np.array(positions, dtype=np.float64, order="C")
    closed = np.zeros(len(out), dtype=np.bool_)
    _close_gaps(out, read_only(np.ascontiguousarray(target, dtype=np.float64)),
                read_only(np.ascontiguousarray(tolerance, dtype=np.float64)), closed)
    return out, closed


@njit(cache=True, nogil=True, error_model="numpy")
def _turn(ax, ay, az, angle, vx, vy, vz):  # pragma: no cover - compiled
    """``v`` turned by ``angle`` about the unit axis ``a`` (Rodrigues)."""
    c = math.cos(angle)
    s = math.sin(angle)
    k = (ax * vx + ay * vy + az * vz) * (1.0 - c)
    return (vx * c + (ay * vz - az * vy) * s + ax * k,
            vy * c + (az * vx - ax * vz) * s + ay * k,
            vz * c + (ax * vy - ay * vx) * s + az * k)


@njit(cache=True, nogil=True, error_model="numpy")
def _end(first, axes, angles, lengths, scale, bent):  # pragma: no cover - compiled
    """Bone directions with every bend scaled by ``scale`` (into ``bent (n - 1, 3)``);
    returns the end's offset from the root."""
    vx, vy, vz = first[0], first[1], first[2]
    ex, ey, ez = lengths[0] * vx, lengths[0] * vy, lengths[0] * vz
    bent[0, 0], bent[0, 1], bent[0, 2] = vx, vy, vz
    for j in range(angles.shape[0]):
        vx, vy, vz = _turn(axes[j, 0], axes[j, 1], axes[j, 2], scale * angles[j], vx, vy, vz)
        bent[j + 1, 0], bent[j + 1, 1], bent[j + 1, 2] = vx, vy, vz
        ex += lengths[j + 1] * vx
        ey += lengths[j + 1] * vy
        ez += lengths[j + 1] * vz
    return ex, ey, ez


@njit(cache=True, nogil=True, error_model="numpy")
def _gap(first, axes, angles, lengths, scale, distance, bent):  # pragma: no cover - compiled
    ex, ey, ez = _end(first, axes, angles, lengths, scale, bent)
    return math.sqrt(ex * ex + ey * ey + ez * ez) - distance


@njit(cache=True, nogil=True, error_model="numpy")
def _least_change(first, axes, angles, lengths, distance, tolerance, bent,
                  slope):  # pragma: no cover - compiled
    """Where no single bend scale reaches (a chain folded near its inner reach): Newton
    steps of least change on the bend angles (each kept in [0, π]) toward the target's
    distance. True, with ``angles`` changed, when within ``tolerance / 4`` of it."""
    k = angles.shape[0]
    for _ in range(NEWTON_STEPS):
        value = _gap(first, axes, angles, lengths, 1.0, distance, bent)
        if abs(value) <= 0.25 * tolerance:
            return True
        norm = 0.0
        for j in range(k):
            keep = angles[j]
            step = 1e-7 if keep < math.pi - 1e-7 else -1e-7
            angles[j] = keep + step
            slope[j] = (_gap(first, axes, angles, lengths, 1.0, distance, bent) - value) / step
            angles[j] = keep
            norm += slope[j] * slope[j]
        if norm == 0.0:
            return False
        for j in range(k):
            angles[j] = min(max(angles[j] - slope[j] * value / norm, 0.0), math.pi)
    return abs(_gap(first, axes, angles, lengths, 1.0, distance, bent)) <= 0.25 * tolerance


@njit(cache=True, nogil=True, error_model="numpy")
def _close_gaps(p, target, tolerance, closed):  # pragma: no cover - compiled
    """:func:`close_gap` in place on ``p (m, n, 3)``; sets ``closed (m,)``."""
    n = p.shape[1]
    lengths = np.empty(n - 1)
    first = np.empty(3)
    axes = np.zeros((max(n - 2, 0), 3))
    angles = np.zeros(max(n - 2, 0))
    bent = np.empty((n - 1, 3))
    direction = np.empty((n - 1, 3))
    slope = np.empty(max(n - 2, 0))
    for b in range(p.shape[0]):
        for j in range(n - 1):
            dx = p[b, j + 1, 0] - p[b, j, 0]
            dy = p[b, j + 1, 1] - p[b, j, 1]
            dz = p[b, j + 1, 2] - p[b, j, 2]
            length = math.sqrt(dx * dx + dy * dy + dz * dz)
            lengths[j] = length
            if length > 0.0:
                dx, dy, dz = dx / length, dy / length, dz / length
            direction[j, 0], direction[j, 1], direction[j, 2] = dx, dy, dz
        widest = 0.0
        for j in range(n - 2):
            cx = direction[j, 1] * direction[j + 1, 2] - direction[j, 2] * direction[j + 1, 1]
            cy = direction[j, 2] * direction[j + 1, 0] - direction[j, 0] * direction[j + 1, 2]
            cz = direction[j, 0] * direction[j + 1, 1] - direction[j, 1] * direction[j + 1, 0]
            sn = math.sqrt(cx * cx + cy * cy + cz * cz)
            cs = (direction[j, 0] * direction[j + 1, 0] + direction[j, 1] * direction[j + 1, 1]
                  + direction[j, 2] * direction[j + 1, 2])
            angles[j] = math.atan2(sn, cs)
            widest = max(widest, angles[j])
            if sn > 0.0:
                axes[j, 0], axes[j, 1], axes[j, 2] = cx / sn, cy / sn, cz / sn
            else:
                axes[j, 0], axes[j, 1], axes[j, 2] = 0.0, 0.0, 0.0
        first[0], first[1], first[2] = direction[0, 0], direction[0, 1], direction[0, 2]
        gx = target[b, 0] - p[b, 0, 0]
        gy = target[b, 1] - p[b, 0, 1]
        gz = target[b, 2] - p[b, 0, 2]
        distance = math.sqrt(gx * gx + gy * gy + gz * gz)
        if distance == 0.0 or lengths[0] == 0.0:
            continue
        top = min(2.0, math.pi / widest) if widest > 0.0 else 2.0
        # the crossing nearest s = 1: step outward on both sides, bisect the first bracket
        at_one = _gap(first, axes, angles, lengths, 1.0, distance, bent)
        low = high = 1.0
        found = at_one == 0.0
        before_low = before_high = at_one
        last_low = last_high = 1.0
        for step in range(1, STEPS + 1):
            if found:
                break
            for side in (-1.0, 1.0):
                scale = min(max(1.0 + side * step / STEPS, 0.0), top)
                last = last_low if side < 0.0 else last_high
                before = before_low if side < 0.0 else before_high
                if scale == last:
                    continue
                value = _gap(first, axes, angles, lengths, scale, distance, bent)
                if (value <= 0.0) != (before <= 0.0):
                    low, high = min(scale, last), max(scale, last)
                    found = True
                    break
                if side < 0.0:
                    before_low, last_low = value, scale
                else:
                    before_high, last_high = value, scale
        if found:
            low_short = _gap(first, axes, angles, lengths, low, distance, bent) <= 0.0
            for _ in range(BISECTIONS):
                middle = 0.5 * (low + high)
                if ((_gap(first, axes, angles, lengths, middle, distance, bent) <= 0.0)
                        == low_short):
                    low = middle
                else:
                    high = middle
            scale = 0.5 * (low + high)
        elif _least_change(first, axes, angles, lengths, distance, tolerance[b], bent, slope):
            scale = 1.0  # ``angles`` now holds the changed bends
        else:
            continue
        ex, ey, ez = _end(first, axes, angles, lengths, scale, bent)
        # turn the chain about the root so its end points at the target
        norm = math.sqrt(ex * ex + ey * ey + ez * ez)
        ax, ay, az = ex / norm, ey / norm, ez / norm
        bx, by, bz = gx / distance, gy / distance, gz / distance
        cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
        sn = math.sqrt(cx * cx + cy * cy + cz * cz)
        turn = math.atan2(sn, ax * bx + ay * by + az * bz)
        if sn > 0.0:
            cx, cy, cz = cx / sn, cy / sn, cz / sn
        elif turn > 0.0:  # end exactly opposite the target: any perpendicular axis
            cx, cy, cz = (-ay, ax, 0.0) if abs(az) < 0.9 else (0.0, -az, ay)
            norm = math.sqrt(cx * cx + cy * cy + cz * cz)
            cx, cy, cz = cx / norm, cy / norm, cz / norm
        x, y, z = p[b, 0, 0], p[b, 0, 1], p[b, 0, 2]
        for j in range(n - 1):
            vx, vy, vz = _turn(cx, cy, cz, turn, bent[j, 0], bent[j, 1], bent[j, 2])
            x += lengths[j] * vx
            y += lengths[j] * vy
            z += lengths[j] * vz
            direction[j, 0], direction[j, 1], direction[j, 2] = x, y, z
        ex = direction[n - 2, 0] - target[b, 0]
        ey = direction[n - 2, 1] - target[b, 1]
        ez = direction[n - 2, 2] - target[b, 2]
        if math.sqrt(ex * ex + ey * ey + ez * ez) <= tolerance[b]:
            for j in range(n - 1):
                p[b, j + 1, 0] = direction[j, 0]
                p[b, j + 1, 1] = direction[j, 1]
                p[b, j + 1, 2] = direction[j, 2]
            closed[b] = True
