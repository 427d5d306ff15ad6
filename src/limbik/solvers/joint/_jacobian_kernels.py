"""Compiled loops of the Jacobian IK family (transpose, pseudo-inverse, DLS, SVD-DLS).

The chain arrives in the merged form of :attr:`JointChain.kernel_arrays`:
``pre_rot (m + 1, 3, 3)``, ``pre_trans (m + 1, 3)``, ``axis (m, 3)``, ``kind (m,)``
(0 rotation, 1 translation), ``lower``/``upper (m,)``. Every function here works on
contiguous float64 arrays. The batch loop with restarts is
:func:`limbik.solvers.joint._kernels.joint_solve_range`; this module holds the
joint-chain kinematics, the Jacobian step rules it uses, and Levenberg–Marquardt's own
loop, :func:`lm_solve_range`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

METHOD_TRANSPOSE = 0
METHOD_PINV = 1
METHOD_DLS = 2
METHOD_SVD_DLS = 3
#: Levenberg–Marquardt (:func:`lm_solve_range`); code 4 is the CCD sweep of ``_joint_kernels``.
METHOD_LM = 5


#: The options of every kernel here: cached on disk, NumPy's floating-point error model.
_NO_ALLOCATION: dict[str, Any] = {"cache": True, "error_model": "numpy"}

#: Compiled helpers called from the kernels here.
_kernel_helper = njit(**_NO_ALLOCATION)

@_kernel_helper
def splitmix64(state):  # pragma: no cover - compiled
    """One step of the SplitMix64 generator: ``(new state, uniform float in [0, 1))``."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@_kernel_helper
def uniform_restart(state, q, s, sample_lo, sample_hi):  # pragma: no cover - compiled
    """A restart ``q[s] (m,)`` uniform in ``[sample_lo, sample_hi]`` (m,), drawn with
    :func:`splitmix64` from ``state``; returns the generator's new state."""
    for k in range(q.shape[1]):
        state, u = splitmix64(state)
        q[s, k] = sample_lo[k] + (sample_hi[k] - sample_lo[k]) * u
    return state


@_kernel_helper
def draw_restart(state, q, s, sample_lo, sample_hi, centre, b, spread):  # pragma: no cover
    """A restart ``q[s] (m,)`` uniform in ``[sample_lo, sample_hi]`` (m,); returns the
    generator's new state.

    ``spread < 1`` narrows the box to ``spread`` times its size on either side of
    ``centre[b] (m,)`` (a warm start: the first restarts stay near it, later ones widen);
    ``spread >= 1`` draws from the whole box.
    """
    for k in range(q.shape[1]):
        state, u = splitmix64(state)
        lo = sample_lo[k]
        hi = sample_hi[k]
        if spread < 1.0:
            width = spread * (hi - lo)
            c = min(max(centre[b, k], lo), hi)
            lo = max(lo, c - width)
            hi = min(hi, c + width)
        q[s, k] = lo + (hi - lo) * u
    return state


@_kernel_helper
def jump_size(q, s, centre, b, kind, lower, upper):  # pragma: no cover - compiled
    """The largest change of one coordinate from ``centre[b] (m,)`` to ``q[s] (m,)``
    (radians or length units; unlimited rotations the short way round)."""
    big = 0.0
    for k in range(q.shape[1]):
        d = abs(q[s, k] - centre[b, k])
        if kind[k] == 0 and lower[k] == -np.inf and upper[k] == np.inf:
            d = d % (2.0 * np.pi)
            d = min(d, 2.0 * np.pi - d)
        big = max(big, d)
    return big


@_kernel_helper
def chain_fk(pre_rot, pre_trans, axis, kind, q, s, wr, wp, wa):  # pragma: no cover - compiled
    """World frames of one chain at ``q[s]`` (m,), written to slot ``s`` of the buffers.

    ``q (S, m)``. Writes ``wr[s] (m + 1, 3, 3)`` and ``wp[s] (m + 1, 3)``: frame of
    movable joint ``k`` after its motion (entry ``m``: the tip), and ``wa[s] (m, 3)``:
    world joint axes. (Slots instead of views: a view per call costs reference counting
    in every caller's compiled code.)
    """
    m = q.shape[1]
    r00 = 1.0
    r01 = 0.0
    r02 = 0.0
    r10 = 0.0
    r11 = 1.0
    r12 = 0.0
    r20 = 0.0
    r21 = 0.0
    r22 = 1.0
    px = 0.0
    py = 0.0
    pz = 0.0
    for k in range(m + 1):
        t0 = pre_trans[k, 0]
        t1 = pre_trans[k, 1]
        t2 = pre_trans[k, 2]
        px += r00 * t0 + r01 * t1 + r02 * t2
        py += r10 * t0 + r11 * t1 + r12 * t2
        pz += r20 * t0 + r21 * t1 + r22 * t2
        f00 = pre_rot[k, 0, 0]
        f01 = pre_rot[k, 0, 1]
        f02 = pre_rot[k, 0, 2]
        f10 = pre_rot[k, 1, 0]
        f11 = pre_rot[k, 1, 1]
        f12 = pre_rot[k, 1, 2]
        f20 = pre_rot[k, 2, 0]
        f21 = pre_rot[k, 2, 1]
        f22 = pre_rot[k, 2, 2]
        a0 = r00 * f00 + r01 * f10 + r02 * f20
        a1 = r00 * f01 + r01 * f11 + r02 * f21
        r02 = r00 * f02 + r01 * f12 + r02 * f22
        r00 = a0
        r01 = a1
        a0 = r10 * f00 + r11 * f10 + r12 * f20
        a1 = r10 * f01 + r11 * f11 + r12 * f21
        r12 = r10 * f02 + r11 * f12 + r12 * f22
        r10 = a0
        r11 = a1
        a0 = r20 * f00 + r21 * f10 + r22 * f20
        a1 = r20 * f01 + r21 * f11 + r22 * f21
        r22 = r20 * f02 + r21 * f12 + r22 * f22
        r20 = a0
        r21 = a1
        if k < m:
            ux = axis[k, 0]
            uy = axis[k, 1]
            uz = axis[k, 2]
            wx = r00 * ux + r01 * uy + r02 * uz
            wy = r10 * ux + r11 * uy + r12 * uz
            wz = r20 * ux + r21 * uy + r22 * uz
            wa[s, k, 0] = wx
            wa[s, k, 1] = wy
            wa[s, k, 2] = wz
            qk = q[s, k]
            if kind[k] == 1:
                px += wx * qk
                py += wy * qk
                pz += wz * qk
            else:
                # R <- R · Rot(u, q) = Rot_world(w, q) · R, Rot_world by Rodrigues' formula
                sn = math.sin(qk)
                cs = math.cos(qk)
                cc = 1.0 - cs
                m00 = cs + wx * wx * cc
                m01 = wx * wy * cc - wz * sn
                m02 = wx * wz * cc + wy * sn
                m10 = wy * wx * cc + wz * sn
                m11 = cs + wy * wy * cc
                m12 = wy * wz * cc - wx * sn
                m20 = wz * wx * cc - wy * sn
                m21 = wz * wy * cc + wx * sn
                m22 = cs + wz * wz * cc
                # column by column: the new column j needs only the old column j
                a0 = m00 * r00 + m01 * r10 + m02 * r20
                a1 = m10 * r00 + m11 * r10 + m12 * r20
                r20 = m20 * r00 + m21 * r10 + m22 * r20
                r00 = a0
                r10 = a1
                a0 = m00 * r01 + m01 * r11 + m02 * r21
                a1 = m10 * r01 + m11 * r11 + m12 * r21
                r21 = m20 * r01 + m21 * r11 + m22 * r21
                r01 = a0
                r11 = a1
                a0 = m00 * r02 + m01 * r12 + m02 * r22
                a1 = m10 * r02 + m11 * r12 + m12 * r22
                r22 = m20 * r02 + m21 * r12 + m22 * r22
                r02 = a0
                r12 = a1
        wr[s, k, 0, 0] = r00
        wr[s, k, 0, 1] = r01
        wr[s, k, 0, 2] = r02
        wr[s, k, 1, 0] = r10
        wr[s, k, 1, 1] = r11
        wr[s, k, 1, 2] = r12
        wr[s, k, 2, 0] = r20
        wr[s, k, 2, 1] = r21
        wr[s, k, 2, 2] = r22
        wp[s, k, 0] = px
        wp[s, k, 1] = py
        wp[s, k, 2] = pz


@_kernel_helper
def _pose_error(wr, wp, slot, m, targets_p, targets_r, b, w_pos, w_rot, use_rot,
                e):  # pragma: no cover - compiled
    """Weighted error vector ``e[slot]`` (3 or 6) of the frames in that slot of ``wr``,
    ``wp`` against target ``b``; returns (position error, angle error).

    The rotation error (rows 3 to 5) is the rotation vector (axis · angle, world frame)
    of ``target_r · Rᵀ`` with ``target_r = targets_r[b]`` and ``R = wr[slot, m]``, through the
    quaternion of that relative rotation (Shepperd), so it is accurate near 0 and near
    a half turn. ``targets_r=None`` (position targets) compiles without the rotation part.
    """
    dx = targets_p[b, 0] - wp[slot, m, 0]
    dy = targets_p[b, 1] - wp[slot, m, 1]
    dz = targets_p[b, 2] - wp[slot, m, 2]
    e[slot, 0] = w_pos * dx
    e[slot, 1] = w_pos * dy
    e[slot, 2] = w_pos * dz
    perr = math.sqrt(dx * dx + dy * dy + dz * dz)
    if targets_r is None:
        return perr, 0.0
    if not use_rot:
        return perr, 0.0
    t00 = targets_r[b, 0, 0]
    t01 = targets_r[b, 0, 1]
    t02 = targets_r[b, 0, 2]
    t10 = targets_r[b, 1, 0]
    t11 = targets_r[b, 1, 1]
    t12 = targets_r[b, 1, 2]
    t20 = targets_r[b, 2, 0]
    t21 = targets_r[b, 2, 1]
    t22 = targets_r[b, 2, 2]
    c00 = wr[slot, m, 0, 0]
    c01 = wr[slot, m, 0, 1]
    c02 = wr[slot, m, 0, 2]
    c10 = wr[slot, m, 1, 0]
    c11 = wr[slot, m, 1, 1]
    c12 = wr[slot, m, 1, 2]
    c20 = wr[slot, m, 2, 0]
    c21 = wr[slot, m, 2, 1]
    c22 = wr[slot, m, 2, 2]
    e00 = t00 * c00 + t01 * c01 + t02 * c02
    e01 = t00 * c10 + t01 * c11 + t02 * c12
    e02 = t00 * c20 + t01 * c21 + t02 * c22
    e10 = t10 * c00 + t11 * c01 + t12 * c02
    e11 = t10 * c10 + t11 * c11 + t12 * c12
    e12 = t10 * c20 + t11 * c21 + t12 * c22
    e20 = t20 * c00 + t21 * c01 + t22 * c02
    e21 = t20 * c10 + t21 * c11 + t22 * c12
    e22 = t20 * c20 + t21 * c21 + t22 * c22
    tr = e00 + e11 + e22
    # Shepperd: the largest of w, x, y, z first
    if tr >= e00 and tr >= e11 and tr >= e22:
        s = 1.0 + tr
        s = math.sqrt(s if s > 1e-300 else 1e-300) * 2.0
        w = 0.25 * s
        x = (e21 - e12) / s
        y = (e02 - e20) / s
        z = (e10 - e01) / s
    elif e00 >= e11 and e00 >= e22:
        s = 1.0 + e00 - e11 - e22
        s = math.sqrt(s if s > 1e-300 else 1e-300) * 2.0
        w = (e21 - e12) / s
        x = 0.25 * s
        y = (e01 + e10) / s
        z = (e02 + e20) / s
    elif e11 >= e22:
        s = 1.0 + e11 - e00 - e22
        s = math.sqrt(s if s > 1e-300 else 1e-300) * 2.0
        w = (e02 - e20) / s
        x = (e01 + e10) / s
        y = 0.25 * s
        z = (e12 + e21) / s
    else:
        s = 1.0 + e22 - e00 - e11
        s = math.sqrt(s if s > 1e-300 else 1e-300) * 2.0
        w = (e10 - e01) / s
        x = (e02 + e20) / s
        y = (e12 + e21) / s
        z = 0.25 * s
    if w < 0.0:
        w = -w
        x = -x
        y = -y
        z = -z
    sn = math.sqrt(x * x + y * y + z * z)
    angle = 2.0 * math.atan2(sn, w)
    f = angle / sn if sn >= 1e-300 else 0.0
    e[slot, 3] = w_rot * (x * f)
    e[slot, 4] = w_rot * (y * f)
    e[slot, 5] = w_rot * (z * f)
    return perr, angle


@_kernel_helper
def _fill_jacobian(wp, wa, s, kind, m, nrow, w_pos, w_rot, jac):  # pragma: no cover - compiled
    """Weighted geometric Jacobian (rows: linear, then angular) at the frames in slot ``s``
    into ``jac (nrow, m)``."""
    tx = wp[s, m, 0]
    ty = wp[s, m, 1]
    tz = wp[s, m, 2]
    for k in range(m):
        ax = wa[s, k, 0]
        ay = wa[s, k, 1]
        az = wa[s, k, 2]
        if kind[k] == 1:
            jac[0, k] = w_pos * ax
            jac[1, k] = w_pos * ay
            jac[2, k] = w_pos * az
            if nrow == 6:
                jac[3, k] = 0.0
                jac[4, k] = 0.0
                jac[5, k] = 0.0
        else:
            rx = tx - wp[s, k, 0]
            ry = ty - wp[s, k, 1]
            rz = tz - wp[s, k, 2]
            jac[0, k] = w_pos * (ay * rz - az * ry)
            jac[1, k] = w_pos * (az * rx - ax * rz)
            jac[2, k] = w_pos * (ax * ry - ay * rx)
            if nrow == 6:
                jac[3, k] = w_rot * ax
                jac[4, k] = w_rot * ay
                jac[5, k] = w_rot * az


@_kernel_helper
def _solve_spd(a, shift, b, n, out, l, y):  # pragma: no cover - compiled
    """Solve ``(a + shift · I) x = b`` for a symmetric positive-definite result by Cholesky.

    ``a (n, n)`` is left as it is; ``l (6, 6)`` and ``y (6,)`` are work space. Returns
    False when the matrix is not numerically positive definite.
    """
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j] + shift if i == j else a[i, j]
            for k in range(j):
                s -= l[i, k] * l[j, k]
            if i == j:
                if s <= 1e-300:
                    return False
                l[i, i] = math.sqrt(s)
            else:
                l[i, j] = s / l[j, j]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= l[i, k] * y[k]
        y[i] = s / l[i, i]
    for i in range(n - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, n):
            s -= l[k, i] * out[k]
        out[i] = s / l[i, i]
    return True


@_kernel_helper
def _jacobi_eigen(a, n, v):  # pragma: no cover - compiled
    """Eigen-decompose the symmetric ``a (n, n)`` in place by cyclic Jacobi rotations.

    On return the diagonal of ``a`` holds the eigenvalues and the columns of
    ``v (n, n)`` the matching unit eigenvectors.
    """
    for i in range(n):
        for j in range(n):
            v[i, j] = 1.0 if i == j else 0.0
    for _sweep in range(50):
        off = 0.0
        diag = 0.0
        for i in range(n):
            diag += a[i, i] * a[i, i]
            for j in range(i + 1, n):
                off += a[i, j] * a[i, j]
        if off <= 1e-30 * diag or off < 1e-300:
            return
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p, q]
                if abs(apq) < 1e-300:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):
                    akp = a[k, p]
                    akq = a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(n):
                    apk = a[p, k]
                    aqk = a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                for k in range(n):
                    vkp = v[k, p]
                    vkq = v[k, q]
                    v[k, p] = c * vkp - s * vkq
                    v[k, q] = s * vkp + c * vkq


@_kernel_helper
def _gram(jac, nrow, m, out):  # pragma: no cover - compiled
    """``out (nrow, nrow) = J Jᵀ`` of the first ``nrow`` rows and ``m`` columns of ``jac``."""
    for i in range(nrow):
        for j in range(i + 1):
            s = 0.0
            for k in range(m):
                s += jac[i, k] * jac[j, k]
            out[i, j] = s
            out[j, i] = s


@_kernel_helper
def _step(method, jac, e, nrow, m, lam2, cutoff, dq, work):  # pragma: no cover - compiled
    """One joint update ``dq (m,)`` for the weighted Jacobian ``jac`` and error ``e``.

    ``work (4, 6, 6)`` is scratch space.
    """
    jjt = work[0]  # its first nrow rows and columns (a C-ordered array: one signature
    # of the helpers for this and the Levenberg–Marquardt kernel)
    l = work[1]
    y = work[2, 0]
    y2 = work[2, 1]
    for i in range(6):
        y[i] = 0.0
    _gram(jac, nrow, m, jjt)
    if method == METHOD_TRANSPOSE:
        # Buss's step length: alpha = <e, J Jᵀ e> / |J Jᵀ e|²
        num = 0.0
        den = 0.0
        for i in range(nrow):
            v = 0.0
            for j in range(nrow):
                v += jjt[i, j] * e[j]
            num += e[i] * v
            den += v * v
        alpha = num / den if den > 1e-300 else 0.0
        for i in range(nrow):
            y[i] = alpha * e[i]
    elif method == METHOD_DLS:
        if not _solve_spd(jjt, lam2, e, nrow, y, l, y2):
            for i in range(nrow):
                y[i] = 0.0
    else:
        # J Jᵀ = U diag(σ²) Uᵀ, so J⁺ e = Σ (uᵢ·e)/σᵢ² Jᵀ uᵢ (with damping in the denominator)
        evecs = work[3]
        _jacobi_eigen(jjt, nrow, evecs)
        smax2 = 0.0
        for i in range(nrow):
            smax2 = max(smax2, jjt[i, i])
        for i in range(nrow):
            s2 = max(jjt[i, i], 0.0)
            proj = 0.0
            for j in range(nrow):
                proj += evecs[j, i] * e[j]
            if method == METHOD_PINV:
                if s2 <= cutoff * cutoff * smax2 or s2 <= 1e-300:
                    continue
                g = proj / s2
            else:
                # damping only for small singular values (numerical filtering):
                # λᵢ² = λ² (1 − (σᵢ/ε)²) below ε = 2λ, zero above
                eps2 = 4.0 * lam2
                li2 = lam2 * (1.0 - s2 / eps2) if s2 < eps2 else 0.0
                den = s2 + li2
                if den <= 1e-300:
                    continue
                g = proj / den
            for j in range(nrow):
                y[j] += g * evecs[j, i]
    for k in range(m):
        s = 0.0
        for i in range(nrow):
            s += jac[i, k] * y[i]
        dq[k] = s


@_kernel_helper
def _clip_q(q, s, lower, upper, kind):  # pragma: no cover - compiled
    """Clip ``q[s] (m,)`` to the limits; unlimited rotations wrap into (-π, π]."""
    for k in range(q.shape[1]):
        v = q[s, k]
        if v < lower[k]:
            q[s, k] = lower[k]
        elif v > upper[k]:
            q[s, k] = upper[k]
        elif kind[k] == 0 and lower[k] == -np.inf and upper[k] == np.inf:
            if v > np.pi or v <= -np.pi:
                # np.floor stays a float: an int (math.floor) overflows beyond 9.2e18
                q[s, k] = v - 2.0 * np.pi * np.floor((v + np.pi) / (2.0 * np.pi))


@_kernel_helper
def joint_positions(wr, wp, frame, offset, out):  # pragma: no cover - compiled
    """Positions ``out (n + 1, 3)`` of the base and every joint frame (fixed ones too).

    ``wr``, ``wp`` are the frames written by :func:`chain_fk`; ``frame (n + 1,)`` and
    ``offset (n + 1, 3)`` are :attr:`JointChain.position_map`.
    """
    for i in range(frame.shape[0]):
        f = frame[i]
        for c in range(3):
            if f < 0:
                out[i, c] = offset[i, c]
            else:
                out[i, c] = (wp[f, c] + wr[f, c, 0] * offset[i, 0] + wr[f, c, 1] * offset[i, 1]
                             + wr[f, c, 2] * offset[i, 2])


@njit(nogil=True, **_NO_ALLOCATION)
def lm_solve_range(start, stop, pre_rot, pre_trans, axis, kind, lower, upper,
                   target_p, target_r, use_rot, w_pos, w_rot, q_first, restarts, seeds,
                   sample_lo, sample_hi, jump_cost, lam_floor, max_step, tolerance,
                   angle_tolerance,
                   max_iterations, patience, frame, offset, rot_buf, pos_buf, axis_buf, q_buf,
                   work, q_out, err_out, reached_out, iters_out,
                   pos_out):  # pragma: no cover - compiled
    """Levenberg–Marquardt on batch elements ``start .. stop - 1`` (arguments as in
    :func:`limbik.solvers.joint._kernels.joint_solve_range`).

    Each iteration solves ``(J Jᵀ + λ I) y = e``, ``dq = Jᵀ y`` with the adaptive damping
    ``λ = μ · ½|e|² + lam_floor`` (small near a solution: Gauss–Newton steps; large far
    away: short gradient-like steps). A step is kept only if it lowers the error; then
    ``μ`` halves, else ``μ`` grows fourfold and the step is retried from the same point.
    An attempt ends when the target is reached, after ``max_iterations`` iterations,
    when no damping lowers the error, or when the squared error has not halved for
    ``patience`` iterations; restarts are drawn as in ``joint_solve_range``. When none
    reaches the target, a last run from the best point found ends only when ``patience``
    steps in a row bring the tip closer by no more than ``tolerance``.

    A ``jump_cost`` (not None) marks ``q_first`` as a warm start: when its attempt does not reach
    the target, that last run continues from it at once (the best effort nearest the
    warm start); restart ``r`` of ``R`` is drawn within ``r / R`` of the sampling box
    around the warm start (see :func:`draw_restart`), and an unreached restart's end point
    counts its error plus ``jump_cost`` times its :func:`jump_size` from the warm start,
    so it replaces the continuation only when that sum is smaller (then the last run
    continues from the restart, by the error alone). ``jump_cost=None``: restarts from the
    whole box and the best of all attempts, as for a cold start.

    Scratch space, from :func:`lm_scratch`: ``rot_buf (2, m + 1, 3, 3)``,
    ``pos_buf (2, m + 1, 3)``, ``axis_buf (2, m, 3)``, ``q_buf (2, m)`` (current and
    trial point) and ``work (5, 6, max(m, 6))``.
    """
    # The current point and the trial point live in slots ``cur`` and ``1 - cur`` of the
    # scratch buffers; accepting a trial flips ``cur`` (no array variables are swapped,
    # which keeps the compiled function small).
    m = axis.shape[0]
    nrow = 6 if use_rot else 3
    jac = work[0]
    jjt = work[1]
    chol = work[2]
    errs = work[3]
    y = work[3, 2]
    tmp = work[3, 3]
    rhs = work[4, 0]
    # (``jump_cost`` None, a cold start, compiles without the warm start's code: every use
    # of it sits under a ``jump_cost is (not) None`` test, which Numba prunes for None.)
    # The attempts: the first start, the restarts, then (none reached) one more from the best
    # point found, which goes on while a step still brings the tip closer by more than the
    # tolerance: toward a target out of reach the attempts' halving rule stops short of the
    # stretched chain. A warm start runs that last one right after its own attempt (att 1),
    # and again after the restarts only if one of them won.
    attempts = 2 + restarts + (0 if jump_cost is None else 1)
    for b in range(start, stop):
        best = np.inf
        total = 0
        done = False
        from_restart = False
        state = seeds[b]
        for att in range(attempts):
            cur = np.intp(0)  # not a literal 0: the helpers compile once, for any slot
            # after a warm start, a restart's answer (its end point: LM keeps only steps that
            # lower the error) is charged for its jump from the warm start, and compared
            # with the best so far once it has ended
            charged = False
            if jump_cost is not None:
                charged = 1 < att < attempts - 1
                polish = att == 1 or att == attempts - 1
                if att == attempts - 1 and not from_restart:
                    break  # the warm start's continuation stands, already run to its end
            else:
                polish = att > restarts
            if att == 0:
                for k in range(m):
                    q_buf[0, k] = q_first[b, k]
            elif polish:
                for k in range(m):
                    q_buf[0, k] = q_out[b, k]
            elif jump_cost is not None:
                # a warm start's restarts widen from it: restart r of R within r / R
                state = draw_restart(state, q_buf, cur, sample_lo, sample_hi, q_first, b,
                                     2.0 * (att - 1) / restarts)
            else:
                state = uniform_restart(state, q_buf, cur, sample_lo, sample_hi)
            _clip_q(q_buf, cur, lower, upper, kind)
            chain_fk(pre_rot, pre_trans, axis, kind, q_buf, cur, rot_buf, pos_buf, axis_buf)
            perr, aerr = _pose_error(rot_buf, pos_buf, cur, m, target_p, target_r, b, w_pos,
                                     w_rot, use_rot, errs)
            err2 = 0.0
            for i in range(nrow):
                err2 += errs[cur, i] * errs[cur, i]
            mu = 1.0
            attempt_best = err2
            stall = 0
            for it in range(max_iterations + 1):
                err = math.sqrt(err2)
                ok = perr <= tolerance and (not use_rot or aerr <= angle_tolerance)
                if ok or (err < best and not charged):
                    best = err
                    from_restart = charged
                    for k in range(m):
                        q_out[b, k] = q_buf[cur, k]
                    err_out[b] = err
                if ok:
                    done = True
                    break
                if it == max_iterations:
                    break
                _fill_jacobian(pos_buf, axis_buf, cur, kind, m, nrow, w_pos, w_rot, jac)
                # a joint at a limit that the gradient pushes further out stays put
                for k in range(m):
                    qk = q_buf[cur, k]
                    if qk <= lower[k] or qk >= upper[k]:
                        g = 0.0
                        for i in range(nrow):
                            g += jac[i, k] * errs[cur, i]
                        if (qk <= lower[k] and g < 0.0) or (qk >= upper[k] and g > 0.0):
                            for i in range(nrow):
                                jac[i, k] = 0.0
                _gram(jac, nrow, m, jjt)
                for i in range(nrow):
                    rhs[i] = errs[cur, i]
                accepted = False
                nxt = 1 - cur
                for _trial in range(12):
                    if not _solve_spd(jjt, mu * 0.5 * err2 + lam_floor, rhs, nrow, y, chol, tmp):
                        mu *= 4.0
                        continue
                    big = 0.0
                    for k in range(m):
                        s = 0.0
                        for i in range(nrow):
                            s += jac[i, k] * y[i]
                        q_buf[nxt, k] = s
                        if abs(s) > big:
                            big = abs(s)
                    scale = max_step / big if big > max_step else 1.0
                    for k in range(m):
                        q_buf[nxt, k] = q_buf[cur, k] + scale * q_buf[nxt, k]
                    _clip_q(q_buf, nxt, lower, upper, kind)
                    chain_fk(pre_rot, pre_trans, axis, kind, q_buf, nxt, rot_buf, pos_buf,
                             axis_buf)
                    perr2, aerr2 = _pose_error(rot_buf, pos_buf, nxt, m, target_p, target_r, b,
                                               w_pos, w_rot, use_rot, errs)
                    new2 = 0.0
                    for i in range(nrow):
                        new2 += errs[nxt, i] * errs[nxt, i]
                    if new2 < err2:
                        accepted = True
                        cur = nxt  # the trial point becomes the current one
                        err2 = new2
                        perr = perr2
                        aerr = aerr2
                        mu = mu * 0.5 if mu > 2e-6 else 1e-6
                        break
                    mu *= 4.0
                total += 1
                if not accepted:
                    break
                if (err2 < attempt_best * 0.5 if not polish
                        else math.sqrt(attempt_best) - math.sqrt(err2) > tolerance):
                    attempt_best = err2
                    stall = 0
                else:
                    stall += 1
                    if stall > patience:
                        break
            if jump_cost is not None:
                if charged and not done:
                    err = math.sqrt(err2)
                    score = err + jump_cost * jump_size(q_buf, cur, q_first, b, kind, lower,
                                                        upper)
                    if score < best:
                        best = score
                        from_restart = True
                        for k in range(m):
                            q_out[b, k] = q_buf[cur, k]
                        err_out[b] = err
            if done:
                break
        reached_out[b] = done
        iters_out[b] = total
        cur = np.intp(0)
        for k in range(m):
            q_buf[cur, k] = q_out[b, k]
        chain_fk(pre_rot, pre_trans, axis, kind, q_buf, cur, rot_buf, pos_buf, axis_buf)
        joint_positions(rot_buf[cur], pos_buf[cur], frame, offset, pos_out[b])


_SCRATCH = threading.local()


def thread_scratch(kind: str, m: int, make: Callable[[int], tuple[np.ndarray, ...]]
                   ) -> tuple[np.ndarray, ...]:
    """The arrays ``make(m)`` gives, made once per thread, per ``kind`` of kernel and per
    ``m``, so repeated single solves do not allocate their scratch space again."""
    cache = _SCRATCH.__dict__.setdefault(kind, {})
    scratch = cache.get(m)
    if scratch is None:
        scratch = cache[m] = make(m)
    return scratch


def _lm_arrays(m: int) -> tuple[np.ndarray, ...]:
    return (np.empty((2, m + 1, 3, 3)), np.empty((2, m + 1, 3)), np.empty((2, m, 3)),
            np.empty((2, m)), np.zeros((5, 6, max(m, 6))))


def lm_scratch(m: int) -> tuple[np.ndarray, ...]:
    """Scratch arrays of :func:`lm_solve_range` for a chain of ``m`` movable joints, kept
    per thread (:func:`thread_scratch`)."""
    return thread_scratch("lm", m, _lm_arrays)
