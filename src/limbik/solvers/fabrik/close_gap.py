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
onto the target. Bone lengths are kept, and the change is a modest multiple of the gap.
A chain reaching more than ``LEVER`` times the target's distance from the root is left
as it is: turning it onto a target near its root would swing it wide for a small gap.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from limbik._runtime.validation import read_only
from limbik.solvers._ccd_kernels import _perpendicular, _rotate_about

#: helpers called only from :func:`_close_gaps`: compiled into it, with no Python wrapper,
#: machine code or cache file of their own (as ``_fabrik_kernels``' ``_inner_alloc``)
_helper = register_jitable(error_model="numpy")

__all__ = ["close_gap"]

BISECTIONS = 60
#: Newton steps where no bend scale reaches.
NEWTON_STEPS = 40
#: Chains with a joint farther than this many times the target's distance from the root
#: are left as FABRIK gives them (turning them onto the target would swing them wide).
LEVER = 4.0


def close_gap(positions: np.ndarray, target: np.ndarray, tol_abs: float, tol_rel: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """Chains ``positions (m, n, 3)`` reshaped to put their end on ``target (m, 3)``.

    The tolerance is ``tol_abs``, or ``tol_rel`` times a chain's length where ``tol_abs``
    is negative. Returns ``(positions, closed)``: where ``closed (m,)`` is true the new
    pose's end is within tolerance of the target, with the root and every bone length
    kept; elsewhere (a target out of reach, or no shape found) the input pose is returned.
    """
    out = np.array(positions, dtype=np.float64, order="C")
    closed = np.zeros(len(out), dtype=np.bool_)
    _close_gaps(out, read_only(np.ascontiguousarray(target, dtype=np.float64)),
                float(tol_abs), float(tol_rel), closed)
    return out, closed


@_helper
def _unit_perpendicular(x, y, z):  # pragma: no cover - compiled
    """A unit vector perpendicular to the unit vector ``(x, y, z)``."""
    px, py, pz = _perpendicular(x, y, z)
    norm = math.sqrt(px * px + py * py + pz * pz)
    return px / norm, py / norm, pz / norm


@_helper
def _end(first, axes, angles, lengths, scale, bent):  # pragma: no cover - compiled
    """Bone directions with every bend scaled by ``scale`` (into ``bent (n - 1, 3)``);
    returns the end's offset from the root."""
    vx, vy, vz = first[0], first[1], first[2]
    ex, ey, ez = lengths[0] * vx, lengths[0] * vy, lengths[0] * vz
    bent[0, 0], bent[0, 1], bent[0, 2] = vx, vy, vz
    for j in range(angles.shape[0]):
        angle = scale * angles[j]
        vx, vy, vz = _rotate_about(axes[j, 0], axes[j, 1], axes[j, 2], math.cos(angle),
                                   math.sin(angle), vx, vy, vz)
        bent[j + 1, 0], bent[j + 1, 1], bent[j + 1, 2] = vx, vy, vz
        ex += lengths[j + 1] * vx
        ey += lengths[j + 1] * vy
        ez += lengths[j + 1] * vz
    return ex, ey, ez


@_helper
def _gap(first, axes, angles, lengths, scale, distance, bent):  # pragma: no cover - compiled
    ex, ey, ez = _end(first, axes, angles, lengths, scale, bent)
    return math.sqrt(ex * ex + ey * ey + ez * ez) - distance


@_helper
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


@_helper
def _bends(p, b, lengths, direction, axes, angles):  # pragma: no cover - compiled
    """Bone lengths, unit directions and the bends between them of chain ``b``; a
    zero-length bone takes its neighbour's direction (no bend). Returns the widest bend,
    or -1 when every bone has zero length."""
    n = p.shape[1]
    found = -1
    for j in range(n - 1):
        dx = p[b, j + 1, 0] - p[b, j, 0]
        dy = p[b, j + 1, 1] - p[b, j, 1]
        dz = p[b, j + 1, 2] - p[b, j, 2]
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        lengths[j] = length
        if length > 0.0:
            direction[j, 0], direction[j, 1], direction[j, 2] = dx / length, dy / length, \
                dz / length
            if found < 0:
                found = j
        elif found >= 0:
            direction[j, 0], direction[j, 1], direction[j, 2] = direction[j - 1, 0], \
                direction[j - 1, 1], direction[j - 1, 2]
    if found < 0:
        return -1.0
    for j in range(found):
        direction[j, 0], direction[j, 1], direction[j, 2] = direction[found, 0], \
            direction[found, 1], direction[found, 2]
    widest = 0.0
    for j in range(n - 2):
        ux, uy, uz = direction[j, 0], direction[j, 1], direction[j, 2]
        vx, vy, vz = direction[j + 1, 0], direction[j + 1, 1], direction[j + 1, 2]
        cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        sn = math.sqrt(cx * cx + cy * cy + cz * cz)
        angles[j] = math.atan2(sn, ux * vx + uy * vy + uz * vz)
        widest = max(widest, angles[j])
        if sn > 0.0:
            axes[j, 0], axes[j, 1], axes[j, 2] = cx / sn, cy / sn, cz / sn
        else:  # straight on or folded back: any axis perpendicular to the bone
            axes[j, 0], axes[j, 1], axes[j, 2] = _unit_perpendicular(ux, uy, uz)
    return widest


@_helper
def _bracket(first, axes, angles, lengths, distance, top, bent):  # pragma: no cover
    """The bend scale nearest 1 where the end is ``distance`` from the root: steps out from
    1 on both sides (2^-20 to 2^-5, then by 1/32), bisects the first brackets found and
    keeps the root nearer 1. NaN when there is none in [0, top]."""
    at_one = _gap(first, axes, angles, lengths, 1.0, distance, bent)
    if at_one == 0.0:
        return 1.0
    best = math.nan
    previous = (1.0, 1.0)
    before = (at_one, at_one)
    for step in range(16 + 31):
        offset = 2.0 ** (step - 20) if step < 16 else (step - 14) / 32.0
        for side in range(2):
            scale = min(max(1.0 - offset if side == 0 else 1.0 + offset, 0.0), top)
            last = previous[side]
            if scale == last:
                continue
            value = _gap(first, axes, angles, lengths, scale, distance, bent)
            if (value <= 0.0) != (before[side] <= 0.0):
                low, high = min(scale, last), max(scale, last)
                low_short = (value if scale < last else before[side]) <= 0.0
                for _ in range(BISECTIONS):
                    middle = 0.5 * (low + high)
                    if ((_gap(first, axes, angles, lengths, middle, distance, bent) <= 0.0)
                            == low_short):
                        low = middle
                    else:
                        high = middle
                root = 0.5 * (low + high)
                if math.isnan(best) or abs(root - 1.0) < abs(best - 1.0):
                    best = root
            if side == 0:
                previous = (scale, previous[1])
                before = (value, before[1])
            else:
                previous = (previous[0], scale)
                before = (before[0], value)
        if not math.isnan(best):
            return best
    return best


@njit(cache=True, nogil=True, error_model="numpy")
def _close_gaps(p, target, tol_abs, tol_rel, closed):  # pragma: no cover - compiled
    """:func:`close_gap` in place on ``p (m, n, 3)``; sets ``closed (m,)``."""
    n = p.shape[1]
    lengths = np.empty(n - 1)
    first = np.empty(3)
    axes = np.zeros((max(n - 2, 0), 3))
    angles = np.zeros(max(n - 2, 0))
    bent = np.empty((n - 1, 3))
    direction = np.empty((n - 1, 3))
    joints = np.empty((n - 1, 3))
    slope = np.empty(max(n - 2, 0))
    for b in range(p.shape[0]):
        widest = _bends(p, b, lengths, direction, axes, angles)
        if widest < 0.0:
            continue
        reach = 0.0
        longest = 0.0
        for j in range(n - 1):
            reach += lengths[j]
            longest = max(longest, lengths[j])
        gx = target[b, 0] - p[b, 0, 0]
        gy = target[b, 1] - p[b, 0, 1]
        gz = target[b, 2] - p[b, 0, 2]
        distance = math.sqrt(gx * gx + gy * gy + gz * gz)
        if distance == 0.0 or distance > reach or distance < 2.0 * longest - reach:
            continue  # at the root, or out of reach
        tolerance = tol_abs if tol_abs >= 0.0 else tol_rel * reach
        # the final turn about the root moves joint j by (its distance from the root /
        # the target's) times the end's move: where that is large (a target close to the
        # root of a long chain), a small gap would swing the whole chain
        farthest = 0.0
        for j in range(1, n):
            dx = p[b, j, 0] - p[b, 0, 0]
            dy = p[b, j, 1] - p[b, 0, 1]
            dz = p[b, j, 2] - p[b, 0, 2]
            farthest = max(farthest, math.sqrt(dx * dx + dy * dy + dz * dz))
        if farthest > LEVER * distance:
            continue
        first[0], first[1], first[2] = direction[0, 0], direction[0, 1], direction[0, 2]
        top = min(2.0, math.pi / widest) if widest > 0.0 else 2.0
        scale = _bracket(first, axes, angles, lengths, distance, top, bent)
        if math.isnan(scale):
            if not _least_change(first, axes, angles, lengths, distance, tolerance, bent,
                                 slope):
                continue
            scale = 1.0  # ``angles`` now holds the changed bends
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
        else:  # the end on or opposite the target's line: any perpendicular axis
            cx, cy, cz = _unit_perpendicular(ax, ay, az)
        cos_turn = math.cos(turn)
        sin_turn = math.sin(turn)
        x, y, z = p[b, 0, 0], p[b, 0, 1], p[b, 0, 2]
        unit = True
        for j in range(n - 1):
            vx, vy, vz = _rotate_about(cx, cy, cz, cos_turn, sin_turn, bent[j, 0], bent[j, 1],
                                       bent[j, 2])
            unit = unit and abs(math.sqrt(vx * vx + vy * vy + vz * vz) - 1.0) <= 1e-12
            x += lengths[j] * vx
            y += lengths[j] * vy
            z += lengths[j] * vz
            joints[j, 0], joints[j, 1], joints[j, 2] = x, y, z
        ex = joints[n - 2, 0] - target[b, 0]
        ey = joints[n - 2, 1] - target[b, 1]
        ez = joints[n - 2, 2] - target[b, 2]
        if unit and math.sqrt(ex * ex + ey * ey + ez * ez) <= tolerance:
            for j in range(n - 1):
                p[b, j + 1, 0] = joints[j, 0]
                p[b, j + 1, 1] = joints[j, 1]
                p[b, j + 1, 2] = joints[j, 2]
            closed[b] = True
