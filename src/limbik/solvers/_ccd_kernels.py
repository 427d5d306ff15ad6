"""Compiled loops of cyclic coordinate descent (CCD), on joint chains and on point chains.

On joint chains this module holds the sweep only: the batch loop with restarts is
:func:`limbik.solvers._joint_kernels.joint_solve`, with the forward kinematics of
:mod:`limbik.solvers._jacobian_kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
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


@njit(cache=True)
def _best_angle(q, lo, hi, big_a, big_b):  # pragma: no cover - compiled
    """New joint angle maximising ``A cos φ + B sin φ`` (φ = new − q) within [lo, hi]."""
    phi = np.arctan2(big_b, big_a)
    if lo == -np.inf and hi == np.inf:
        new = q + phi
        if new > np.pi or new <= -np.pi:
            new = new - 2.0 * np.pi * np.floor((new + np.pi) / (2.0 * np.pi))
        return new
    for turn in (0.0, 2.0 * np.pi, -2.0 * np.pi):
        new = q + phi + turn
        if lo <= new <= hi:
            return new
    # the optimum lies outside the range: the better end (the objective is a sinusoid)
    flo = big_a * np.cos(lo - q) + big_b * np.sin(lo - q)
    fhi = big_a * np.cos(hi - q) + big_b * np.sin(hi - q)
    return lo if flo >= fhi else hi


# inlined into the driver: a call per sweep, with its array arguments, costs ~5 %
@njit(cache=True, inline="always")
def ccd_sweep(q, wr, wp, wa, kind, lower, upper, target_p, target_r, use_rot, w_pos, w_rot,
              tip_r):  # pragma: no cover - compiled
    """One CCD sweep on a joint chain, from the tip joint to the base joint, ``q (m,)`` in place.

    ``wr``, ``wp``, ``wa`` are the frames of ``chain_fk`` at ``q``; ``target_p (3,)``,
    ``target_r (3, 3)`` (ignored unless ``use_rot``); ``tip_r (3, 3)`` is scratch space.
    Each joint takes the coordinate within its limits that minimises
    ``w_p² |target − tip|² + w_o² Σᵢ |target_axisᵢ − tip_axisᵢ|²`` with the others held;
    the tip is moved along analytically, without new forward kinematics.
    """
    m = q.shape[0]
    wp2 = w_pos * w_pos
    wo2 = w_rot * w_rot
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
        new = _best_angle(q[k], lower[k], upper[k], big_a, big_b)
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


@njit(cache=True)
def ccd_points_solve_range(start, stop, positions, target, tolerance, max_iterations,
                           min_improvement, out, err_out, reached_out,
                           iters_out):  # pragma: no cover - compiled
    """Batched CCD on point chains ``positions (B, n, 3)`` toward ``target (B, 3)``.

    One iteration is one sweep from the joint next to the end effector to the root;
    each joint turns the rest of the chain by the smallest rotation that points the
    end effector at the target. Stops when the end effector is within ``tolerance``
    (``(B,)``), after ``max_iterations`` sweeps, or when a sweep reduces the distance
    by less than ``min_improvement`` (``(B,)``). Writes the solved points to ``out``.
    Solves chains ``start .. stop - 1``.
    """
    n = positions.shape[1]
    for b in range(start, stop):
        for i in range(n):
            for c in range(3):
                out[b, i, c] = positions[b, i, c]
        gx = target[b, 0]
        gy = target[b, 1]
        gz = target[b, 2]
        previous = np.inf
        total = 0
        err = 0.0
        done = False
        for it in range(max_iterations + 1):
            ex = out[b, n - 1, 0] - gx
            ey = out[b, n - 1, 1] - gy
            ez = out[b, n - 1, 2] - gz
            err = np.sqrt(ex * ex + ey * ey + ez * ez)
            if err <= tolerance[b]:
                done = True
                break
            if it == max_iterations or previous - err < min_improvement[b]:
                break
            previous = err
            for i in range(n - 2, -1, -1):
                px = out[b, i, 0]
                py = out[b, i, 1]
                pz = out[b, i, 2]
                hx = out[b, n - 1, 0] - px
                hy = out[b, n - 1, 1] - py
                hz = out[b, n - 1, 2] - pz
                dx = gx - px
                dy = gy - py
                dz = gz - pz
                nh = np.sqrt(hx * hx + hy * hy + hz * hz)
                nd = np.sqrt(dx * dx + dy * dy + dz * dz)
                if nh < 1e-300 or nd < 1e-300:
                    continue
                cx = hy * dz - hz * dy
                cy = hz * dx - hx * dz
                cz = hx * dy - hy * dx
                sn = np.sqrt(cx * cx + cy * cy + cz * cz) / (nh * nd)
                cs = (hx * dx + hy * dy + hz * dz) / (nh * nd)
                if sn < 1e-12:
                    if cs > 0.0:
                        continue
                    # pointing away: half turn about a stable perpendicular of h
                    ux = abs(hx)
                    uy = abs(hy)
                    uz = abs(hz)
                    if ux <= uy and ux <= uz:
                        cx, cy, cz = 0.0, -hz, hy
                    elif uy <= uz:
                        cx, cy, cz = hz, 0.0, -hx
                    else:
                        cx, cy, cz = -hy, hx, 0.0
                    sn = 0.0
                    cs = -1.0
                nc = np.sqrt(cx * cx + cy * cy + cz * cz)
                ax = cx / nc
                ay = cy / nc
                az = cz / nc
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


#: Chains per parallel work item of :func:`ccd_points_solve`.
CHUNK = 64


@njit(cache=True, parallel=True)
def ccd_points_solve(positions, target, tolerance, max_iterations, min_improvement,
                     out, err_out, reached_out, iters_out):  # pragma: no cover - compiled
    """:func:`ccd_points_solve_range` over the whole batch, chunks on every thread."""
    batch = positions.shape[0]
    for c in prange((batch + CHUNK - 1) // CHUNK):
        ccd_points_solve_range(c * CHUNK, min(batch, (c + 1) * CHUNK), positions, target,
                               tolerance, max_iterations, min_improvement, out, err_out,
                               reached_out, iters_out)
