"""Compiled loops of cyclic coordinate descent (CCD), on joint chains and on point chains.

On joint chains this module holds the sweep only: the batch loop with restarts is
:func:`limbik.solvers.joint._kernels.joint_solve_range`, with the forward kinematics of
:mod:`limbik.solvers.joint._jacobian_kernels`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from limbik.geometry._quaternion_kernels import multiply, rotate
from limbik.solvers.fabrik._kernels import _unbend

#: Compiled helpers called from the kernels here.
_helper = njit(cache=True)

#: A joint's objective ``A cos φ + B sin φ`` whose amplitude is below this fraction of its
#: scale (``w_p² |h| |d|`` plus ``3 w_o²``) is flat: the joint is left as it is.
FLAT_OBJECTIVE = 1e-12


@_helper
def _rotate_about(ax, ay, az, c, s, vx, vy, vz):  # pragma: no cover - compiled
    """Rotate vector v about the unit axis a by the angle with cosine c and sine s."""
    d = ax * vx + ay * vy + az * vz
    cx = ay * vz - az * vy
    cy = az * vx - ax * vz
    cz = ax * vy - ay * vx
    C = 1.0 - c
    return (vx * c + cx * s + ax * d * C,
            vy * c + cy * s + ay * d * C,
            vz * c + cz * s + az * d * C)


@_helper
def _best_angle(q, lo, hi, big_a, big_b):  # pragma: no cover - compiled
    """New joint angle maximising ``A cos φ + B sin φ`` (φ = new − q) within [lo, hi].

    A joint with limits turns by at most a half turn (``|φ| <= π``): it never goes the
    long way round its range to an angle on the other side of its gap.
    """
    phi = np.arctan2(big_b, big_a)
    if lo == -np.inf and hi == np.inf:
        new = q + phi
        if new > np.pi or new <= -np.pi:
            new = new - 2.0 * np.pi * np.floor((new + np.pi) / (2.0 * np.pi))
        return new
    lo = max(lo, q - np.pi)
    hi = min(hi, q + np.pi)
    new = q + phi
    if lo <= new <= hi:
        return new
    # the optimum lies outside the range: the better end (the objective is a sinusoid)
    flo = big_a * np.cos(lo - q) + big_b * np.sin(lo - q)
    fhi = big_a * np.cos(hi - q) + big_b * np.sin(hi - q)
    return lo if flo >= fhi else hi


# inlined into the driver: a call per sweep, with its array arguments, costs ~5 %
@njit(cache=True, inline="always")
def ccd_sweep(q, wr, wp, wa, kind, lower, upper, target_p, target_r, use_rot, w_pos, w_rot,
              radius2, tip_r):  # pragma: no cover - compiled
    """One CCD sweep on a joint chain, from the tip joint to the base joint, ``q (m,)`` in place.

    ``wr``, ``wp``, ``wa`` are the frames of ``chain_fk`` at ``q``; ``target_p (3,)``,
    ``target_r (3, 3)`` (ignored unless ``use_rot``); ``tip_r (3, 3)`` is scratch space.
    Each joint takes the coordinate within its limits that minimises
    ``w_p² |target − tip|² + w_o² Σᵢ |target_axisᵢ − tip_axisᵢ|²`` plus the motion cost
    ``w_p² |Δu|²`` of a point ``u`` at ``sqrt(radius2)`` from its axis (a revolute joint
    turned by φ moves it ``2 sqrt(radius2) |sin(φ / 2)|``), with the others held; the tip
    is moved along analytically, without new forward kinematics. The motion cost damps a
    joint whose lever on the tip is far below that radius (a wrist roll next to the
    wrist's singular pose) instead of turning it to the far side of its circle for a
    small gain; ``radius2 = 0`` is the classic CCD step.
    """
    m = q.shape[0]
    wp2 = w_pos * w_pos
    wo2 = w_rot * w_rot
    # the cost w_p² |Δu|² = 2 w_p² radius2 (1 − cos φ) against the objective below,
    # A cos φ + B sin φ (half the squared error drop): A grows by w_p² radius2
    motion = wp2 * radius2
    tpx = target_p[0]
    tpy = target_p[1]
    tpz = target_p[2]
    tx = wp[m, 0]
    ty = wp[m, 1]
    tz = wp[m, 2]
    for i in range(3):
        for j in range(3):
            tip_r[i, j] = wr[m, i, j]
    for k in range(m - 1, -1, -1):
        ax = wa[k, 0]
        ay = wa[k, 1]
        az = wa[k, 2]
        if kind[k] == 1:
            t = ax * (tpx - tx) + ay * (tpy - ty) + az * (tpz - tz)
            new = min(max(q[k] + t, lower[k]), upper[k])
            t = new - q[k]
            q[k] = new
            tx += t * ax
            ty += t * ay
            tz += t * az
            continue
        px = wp[k, 0]
        py = wp[k, 1]
        pz = wp[k, 2]
        hx = tx - px
        hy = ty - py
        hz = tz - pz
        dx = tpx - px
        dy = tpy - py
        dz = tpz - pz
        ah = ax * hx + ay * hy + az * hz
        ad = ax * dx + ay * dy + az * dz
        big_a = wp2 * (dx * hx + dy * hy + dz * hz - ad * ah)
        big_b = wp2 * (dx * (ay * hz - az * hy) + dy * (az * hx - ax * hz)
                       + dz * (ax * hy - ay * hx))
        if use_rot:
            for c in range(3):
                hx2 = tip_r[0, c]
                hy2 = tip_r[1, c]
                hz2 = tip_r[2, c]
                dx2 = target_r[0, c]
                dy2 = target_r[1, c]
                dz2 = target_r[2, c]
                ah2 = ax * hx2 + ay * hy2 + az * hz2
                ad2 = ax * dx2 + ay * dy2 + az * dz2
                big_a += wo2 * (dx2 * hx2 + dy2 * hy2 + dz2 * hz2 - ad2 * ah2)
                big_b += wo2 * (dx2 * (ay * hz2 - az * hy2)
                                + dy2 * (az * hx2 - ax * hz2)
                                + dz2 * (ax * hy2 - ay * hx2))
        # a joint that cannot move the tip toward the goal (its axis through the tip, or
        # the goal on its axis) keeps its angle: the best angle of a flat objective is
        # rounding noise, and would spin the joint
        flat = wp2 * math.sqrt((hx * hx + hy * hy + hz * hz) * (dx * dx + dy * dy + dz * dz))
        if use_rot:
            flat += 3.0 * wo2
        if big_a * big_a + big_b * big_b <= (FLAT_OBJECTIVE * flat) ** 2:
            continue
        new = _best_angle(q[k], lower[k], upper[k], big_a + motion, big_b)
        phi = new - q[k]
        q[k] = new
        c = np.cos(phi)
        s = np.sin(phi)
        hx, hy, hz = _rotate_about(ax, ay, az, c, s, hx, hy, hz)
        tx = px + hx
        ty = py + hy
        tz = pz + hz
        if use_rot:
            for col in range(3):
                vx, vy, vz = _rotate_about(ax, ay, az, c, s, tip_r[0, col],
                                           tip_r[1, col], tip_r[2, col])
                tip_r[0, col] = vx
                tip_r[1, col] = vy
                tip_r[2, col] = vz


@_helper
def _end_distance(out, b, n, gx, gy, gz):  # pragma: no cover - compiled
    """Distance from chain ``b``'s end joint to the goal (gx, gy, gz)."""
    ex = out[b, n - 1, 0] - gx
    ey = out[b, n - 1, 1] - gy
    ez = out[b, n - 1, 2] - gz
    return np.sqrt(ex * ex + ey * ey + ez * ez)


@_helper
def _pivot(out, b, i, n, gx, gy, gz):  # pragma: no cover - compiled
    """Joint ``i`` of chain ``b`` (p), its vectors to the end (h) and to the goal (d), |h|, |d|."""
    px = out[b, i, 0]
    py = out[b, i, 1]
    pz = out[b, i, 2]
    hx = out[b, n - 1, 0] - px
    hy = out[b, n - 1, 1] - py
    hz = out[b, n - 1, 2] - pz
    dx = gx - px
    dy = gy - py
    dz = gz - pz
    return (px, py, pz, hx, hy, hz, dx, dy, dz, np.sqrt(hx * hx + hy * hy + hz * hz),
            np.sqrt(dx * dx + dy * dy + dz * dz))


@_helper
def _distance(out, b, i, j):  # pragma: no cover - compiled
    """Distance between joints ``i`` and ``j`` of chain ``b``."""
    dx = out[b, j, 0] - out[b, i, 0]
    dy = out[b, j, 1] - out[b, i, 1]
    dz = out[b, j, 2] - out[b, i, 2]
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@_helper
def _perpendicular(hx, hy, hz):  # pragma: no cover - compiled
    """A stable (unnormalised) perpendicular of h: h crossed with its least-aligned axis."""
    ux = abs(hx)
    uy = abs(hy)
    uz = abs(hz)
    if ux <= uy and ux <= uz:
        return 0.0, -hz, hy
    if uy <= uz:
        return hz, 0.0, -hx
    return -hy, hx, 0.0


@_helper
def _damped_turn(hx, hy, hz, dx, dy, dz, nh, nd, radius2):  # pragma: no cover - compiled
    """The turn of one point-chain CCD step: unit axis and cosine, sine of the angle.

    Turns ``h`` (pivot to end, length ``nh``) toward ``d`` (pivot to goal, ``nd``) about
    ``h × d`` by the angle that minimises ``|d − h'|²`` plus the motion cost ``|Δu|²``
    of a point at ``sqrt(radius2)`` from the pivot (``radius2 = 0``: all the way, the
    classic step). Where ``h`` and ``d`` are parallel the chain stays, and where they
    point apart it makes a half turn about a stable perpendicular of ``h`` unless that
    costs more than it gains. ``(1, 0)`` is no turn.
    """
    cx = hy * dz - hz * dy
    cy = hz * dx - hx * dz
    cz = hx * dy - hy * dx
    cross2 = cx * cx + cy * cy + cz * cz
    cross = np.sqrt(cross2)  # nh nd sin α
    along = hx * dx + hy * dy + hz * dz + radius2  # nh nd cos α, plus the cost
    if cross <= 1e-12 * nh * nd:  # (also where nh nd underflows to 0)
        if along >= 0.0:
            return 1.0, 0.0, 0.0, 1.0, 0.0
        cx, cy, cz = _perpendicular(hx, hy, hz)
        nc = np.sqrt(cx * cx + cy * cy + cz * cz)
        return cx / nc, cy / nc, cz / nc, -1.0, 0.0
    unit = 1.0 / cross
    norm = 1.0 / np.sqrt(along * along + cross2)
    return cx * unit, cy * unit, cz * unit, along * norm, cross * norm


@njit(cache=True, nogil=True)
def ccd_points_solve_range(start, stop, positions, target, tolerance, max_iterations,
                           min_improvement, radius2, out, err_out, reached_out,
                           iters_out):  # pragma: no cover - compiled
    """Batched CCD on point chains ``positions (B, n, 3)`` toward ``target (B, 3)``.

    One iteration is one sweep from the joint next to the end effector to the root;
    each joint turns the rest of the chain toward the target about the axis of the
    smallest rotation that points the end effector at it, by the angle of
    :func:`_damped_turn` with the motion-cost radius ``sqrt(radius2)`` (``(B,)``). Stops
    when the end effector is within ``tolerance`` (``(B,)``), after ``max_iterations``
    sweeps, or when a sweep reduces the distance by less than ``min_improvement``
    (``(B,)``). Writes the solved points to ``out``.
    Solves chains ``start .. stop - 1``.
    """
    n = positions.shape[1]
    lengths = np.empty(max(n - 1, 1))
    for b in range(start, stop):
        reach = 0.0
        for i in range(n):
            for c in range(3):
                out[b, i, c] = positions[b, i, c]
            if i > 0:
                lengths[i - 1] = _distance(out, b, i - 1, i)
                reach += lengths[i - 1]
        gx = target[b, 0]
        gy = target[b, 1]
        gz = target[b, 2]
        r2 = radius2[b]
        previous = np.inf
        total = 0
        err = 0.0
        done = False
        # a chain on a line through the target never leaves it: bent off it once
        bent = n < 3 or reach <= 0.0
        for it in range(max_iterations + 1):
            err = _end_distance(out, b, n, gx, gy, gz)
            if err <= tolerance[b]:
                done = True
                break
            if (not bent and (it == 0 or previous - err <= 1e-9 * reach)
                    and _unbend(out[b], target[b], lengths, reach)):
                bent = True
                previous = np.inf
                err = _end_distance(out, b, n, gx, gy, gz)
                if err <= tolerance[b]:
                    done = True
                    break
            if it == max_iterations or previous - err < min_improvement[b]:
                break
            previous = err
            for i in range(n - 2, -1, -1):
                px, py, pz, hx, hy, hz, dx, dy, dz, nh, nd = _pivot(out, b, i, n, gx, gy, gz)
                if nh < 1e-300 or nd < 1e-300:
                    continue
                ax, ay, az, cs, sn = _damped_turn(hx, hy, hz, dx, dy, dz, nh, nd, r2)
                if sn == 0.0 and cs > 0.0:
                    continue
                for j in range(i + 1, n):
                    vx, vy, vz = _rotate_about(ax, ay, az, cs, sn, out[b, j, 0] - px,
                                               out[b, j, 1] - py, out[b, j, 2] - pz)
                    out[b, j, 0] = px + vx
                    out[b, j, 1] = py + vy
                    out[b, j, 2] = pz + vz
            total += 1
        err_out[b] = err
        reached_out[b] = done
        iters_out[b] = total


@_helper
def _qmul(a, b):  # pragma: no cover - compiled
    """Hamilton product of (x, y, z, w) tuples."""
    return multiply(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])


@_helper
def _qrot(q, vx, vy, vz):  # pragma: no cover - compiled
    """Rotate (vx, vy, vz) by the unit quaternion tuple q."""
    return rotate(q[0], q[1], q[2], q[3], vx, vy, vz)


@_helper
def swing_twist_project(q, ax, ay, az, swing_max, twist_min, twist_max):  # pragma: no cover
    """Nearest allowed rotation to ``q`` (tuple x, y, z, w) under a swing-twist limit.

    ``q = swing · twist`` with the twist about the unit axis ``a`` and the swing about
    an axis perpendicular to it. The twist angle (within (−π, π]) moves to the nearer
    end of ``[twist_min, twist_max]`` (on the circle) and the swing angle is capped at
    ``swing_max`` about its own axis, so the bone's direction moves to the nearest
    direction of its cone. Returns the rotation as a tuple with w >= 0.
    """
    x, y, z, w = q
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    p = x * ax + y * ay + z * az
    tn = np.sqrt(p * p + w * w)
    if tn < 1e-300:  # a half-turn swing: no twist
        tx, ty, tz, tw = 0.0, 0.0, 0.0, 1.0
    else:
        tx, ty, tz, tw = p * ax / tn, p * ay / tn, p * az / tn, w / tn
    # swing = q · twist⁻¹
    sx, sy, sz, sw = _qmul((x, y, z, w), (-tx, -ty, -tz, tw))
    theta = 2.0 * np.arctan2(tx * ax + ty * ay + tz * az, tw)
    if theta > np.pi:
        theta -= 2.0 * np.pi
    elif theta <= -np.pi:
        theta += 2.0 * np.pi
    if theta < twist_min or theta > twist_max:
        two_pi = 2.0 * np.pi
        d_lo = (twist_min - theta) % two_pi
        d_hi = (theta - twist_max) % two_pi
        theta = twist_min if d_lo <= d_hi else twist_max
        half = 0.5 * theta
        tx, ty, tz, tw = ax * np.sin(half), ay * np.sin(half), az * np.sin(half), np.cos(half)
    if sw < 0.0:
        sx, sy, sz, sw = -sx, -sy, -sz, -sw
    sn = np.sqrt(sx * sx + sy * sy + sz * sz)
    angle = 2.0 * np.arctan2(sn, sw)
    if angle > swing_max and sn > 0.0:
        half = 0.5 * swing_max
        k = np.sin(half) / sn
        sx, sy, sz, sw = sx * k, sy * k, sz * k, np.cos(half)
    out = _qmul((sx, sy, sz, sw), (tx, ty, tz, tw))
    n = np.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2 + out[3] ** 2)
    return (out[0] / n, out[1] / n, out[2] / n, out[3] / n)


@_helper
def _carry(out, rot, b, i, n, c, px, py, pz):  # pragma: no cover - compiled
    """Turn joints ``i + 1..`` positions about ``p`` and rotations ``i..`` by tuple ``c``."""
    for j in range(i + 1, n):
        vx, vy, vz = _qrot(c, out[b, j, 0] - px, out[b, j, 1] - py, out[b, j, 2] - pz)
        out[b, j, 0] = px + vx
        out[b, j, 1] = py + vy
        out[b, j, 2] = pz + vz
    for j in range(i, n):
        r = _qmul(c, (rot[b, j, 0], rot[b, j, 1], rot[b, j, 2], rot[b, j, 3]))
        rn = np.sqrt(r[0] ** 2 + r[1] ** 2 + r[2] ** 2 + r[3] ** 2)
        for k in range(4):
            rot[b, j, k] = r[k] / rn


@njit(cache=True)
def ccd_points_limited_solve(positions, rotations, target, tolerance, max_iterations,
                             min_improvement, radius2, limits, out, rot,
                             err_out, reached_out, iters_out):  # pragma: no cover - compiled
    """CCD on point chains that carries joint rotations and applies swing-twist limits.

    ``positions (B, n, 3)`` and world joint rotations ``rotations (B, n, 4)`` are the
    input pose; ``limits (n − 1, 4)`` holds per bone (swing_max, twist_min, twist_max,
    active). Bone ``i``'s limit applies to ``ref_i⁻¹ · local_i``, its local rotation
    (relative to joint ``i − 1``, bone 0: to the world) measured from its input local
    rotation ``ref_i``, with the twist about the bone's own direction. Each CCD step
    turns joints ``i..`` toward the target as :func:`ccd_points_solve_range` does (motion
    cost ``radius2 (B,)``), then projects joint ``i`` onto its limit and carries the
    joints below it along. Writes positions to ``out`` and rotations to ``rot``.
    """
    batch = positions.shape[0]
    n = positions.shape[1]
    ref = np.empty((n, 4))
    axis = np.empty((n, 3))
    for b in range(batch):
        for i in range(n):
            for c in range(3):
                out[b, i, c] = positions[b, i, c]
            for c in range(4):
                rot[b, i, c] = rotations[b, i, c]
        for i in range(n - 1):
            ri = (rot[b, i, 0], rot[b, i, 1], rot[b, i, 2], rot[b, i, 3])
            inv = (-ri[0], -ri[1], -ri[2], ri[3])
            if i == 0:
                loc = ri
            else:
                loc = _qmul((-rot[b, i - 1, 0], -rot[b, i - 1, 1], -rot[b, i - 1, 2],
                             rot[b, i - 1, 3]), ri)
            for c in range(4):
                ref[i, c] = loc[c]
            vx, vy, vz = _qrot(inv, out[b, i + 1, 0] - out[b, i, 0],
                               out[b, i + 1, 1] - out[b, i, 1], out[b, i + 1, 2] - out[b, i, 2])
            vn = np.sqrt(vx * vx + vy * vy + vz * vz)
            if vn < 1e-300:
                axis[i, 0], axis[i, 1], axis[i, 2] = 0.0, 0.0, -1.0
            else:
                axis[i, 0], axis[i, 1], axis[i, 2] = vx / vn, vy / vn, vz / vn
        gx = target[b, 0]
        gy = target[b, 1]
        gz = target[b, 2]
        previous = np.inf
        total = 0
        err = 0.0
        done = False
        for it in range(max_iterations + 1):
            err = _end_distance(out, b, n, gx, gy, gz)
            if err <= tolerance[b]:
                done = True
                break
            if it == max_iterations or previous - err < min_improvement[b]:
                break
            previous = err
            for i in range(n - 2, -1, -1):
                px, py, pz, hx, hy, hz, dx, dy, dz, nh, nd = _pivot(out, b, i, n, gx, gy, gz)
                if nh > 1e-300 and nd > 1e-300:
                    ax, ay, az, cs, sn = _damped_turn(hx, hy, hz, dx, dy, dz, nh, nd,
                                                      radius2[b])
                    if not (sn == 0.0 and cs > 0.0):
                        # the turn as a quaternion: (axis sin θ, 1 + cos θ), normalised
                        cw = 1.0 + cs
                        if cw < 1e-12:  # a half turn
                            sn = 1.0
                            cw = 0.0
                        cn = np.sqrt(sn * sn + cw * cw)
                        _carry(out, rot, b, i, n, (ax * sn / cn, ay * sn / cn, az * sn / cn,
                                                   cw / cn), px, py, pz)
                if limits[i, 3] == 0.0:
                    continue
                ri = (rot[b, i, 0], rot[b, i, 1], rot[b, i, 2], rot[b, i, 3])
                if i == 0:
                    parent = (0.0, 0.0, 0.0, 1.0)
                else:
                    parent = (rot[b, i - 1, 0], rot[b, i - 1, 1], rot[b, i - 1, 2],
                              rot[b, i - 1, 3])
                base = _qmul(parent, (ref[i, 0], ref[i, 1], ref[i, 2], ref[i, 3]))
                delta = _qmul((-base[0], -base[1], -base[2], base[3]), ri)
                allowed = swing_twist_project(delta, axis[i, 0], axis[i, 1], axis[i, 2],
                                              limits[i, 0], limits[i, 1], limits[i, 2])
                new = _qmul(base, allowed)
                fix = _qmul(new, (-ri[0], -ri[1], -ri[2], ri[3]))
                _carry(out, rot, b, i, n, fix, px, py, pz)
            total += 1
        err_out[b] = err
        reached_out[b] = done
        iters_out[b] = total


@njit(cache=True)
def swing_twist_project_batch(rotations, axes, limit, out):  # pragma: no cover - compiled
    """:func:`swing_twist_project` over rows ``rotations (B, 4)``, ``axes (B, 3)``."""
    for b in range(rotations.shape[0]):
        r = swing_twist_project((rotations[b, 0], rotations[b, 1], rotations[b, 2],
                                 rotations[b, 3]), axes[b, 0], axes[b, 1], axes[b, 2],
                                limit[0], limit[1], limit[2])
        for k in range(4):
            out[b, k] = r[k]


#: Chains per chunk at least where a batch is spread over threads (a chunk about 0.1 ms).
CHUNK = 32
