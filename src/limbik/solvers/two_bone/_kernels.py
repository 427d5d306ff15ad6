"""Compiled loops of the analytic two-bone solver (see :mod:`limbik.solvers.two_bone.solver`).

One element ``i`` reads row ``i`` of each input, or row 0 where that input holds a
single row (so scalar lengths and a shared pole need no broadcast copies). Inputs are
not validated here beyond a cheap fused check: the kernel returns NaN when any input is
NaN or infinite, or a length is not positive, and the Python layer then reports which.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types

#: Bend-direction modes.
MODE_ROLLED = 0  # the seed's rolled plane of the world axes (the default)
MODE_POINT = 1  # a pole / reference point
MODE_FRAME = 2  # the seed's rolled plane of a root frame

#: Out-of-reach policies.
POLICY_EXTEND = 0
POLICY_PUSH_ROOT = 1
POLICY_STRETCH = 2

#: Fast-math flags without ``nnan``/``ninf``, so the fused finiteness check survives.
_FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

#: Compiled helpers called from the kernels here (LLVM inlines them into their callers).
_helper = njit(cache=True, fastmath=_FASTMATH, error_model="numpy")

#: Below this fraction of the reach the target is "at the root": the direction falls back.
AT_ROOT_RTOL = 1e-15
#: A pole within this angle (rad) of the root→target line gives no usable bend plane.
POLE_MIN_SINE = 1e-9


@_helper
def rolled_bend(x: float, y: float, z: float) -> tuple[float, float, float]:
    """The seed's rolled plane: where the minimal rotation taking −Z to the unit ``(x, y, z)``
    sends −Y (the mid joint's side). Behind (``(0, 0, 1)``, to 1e-12 rad) gives +Y, the
    thread's half turn about −X. Uses ``1/(1−z) = (1+z)/(x²+y²)`` for ``z > 0`` to avoid
    cancellation.
    """
    if z > 0.0:
        r2 = x * x + y * y
        if r2 <= 1e-24:  # straight behind to 1e-12 rad (a rotated frame leaves ~1e-16)
            return 0.0, 1.0, 0.0
        s = (1.0 + z) / r2
    else:
        s = 1.0 / (1.0 - z)
    return x * y * s, y * y * s - 1.0, -y


@_helper
def _rotate(qx: float, qy: float, qz: float, qw: float, vx: float, vy: float, vz: float
            ) -> tuple[float, float, float]:
    """Rotate ``v`` by the unit quaternion ``q``."""
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + (qy * tz - qz * ty),
            vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx))


_NORM_LOW, _NORM_HIGH = 2.0**-500, 2.0**500
_UP, _DOWN = 2.0**600, 2.0**-600


@_helper
def _norm3(x: float, y: float, z: float) -> float:
    """``|(x, y, z)|`` without overflow or underflow (exact power-of-two rescaling)."""
    big = max(abs(x), abs(y), abs(z))
    if big > _NORM_HIGH or big < _NORM_LOW:
        k = _DOWN if big > _NORM_HIGH else _UP
        x *= k
        y *= k
        z *= k
        return math.sqrt(x * x + y * y + z * z) / k
    return math.sqrt(x * x + y * y + z * z)


@_helper
def solve_element(rx: float, ry: float, rz: float, tx: float, ty: float, tz: float,
                  hx: float, hy: float, hz: float, qx: float, qy: float, qz: float,
                  qw: float, l1: float, l2: float, mode: int, policy: int,
                  max_stretch: float
                  ) -> tuple[float, float, float, float, float, float, float, float, float,
                             float, float]:
    """Solve one limb.

    ``h`` is the pole/reference point (``MODE_POINT``) and ``q`` the root frame's
    rotation (``MODE_FRAME``, else the identity). Returns the root, mid and end
    coordinates (9 floats), the error and the unstretched reach ``upper + lower``.
    """
    dx = tx - rx
    dy = ty - ry
    dz = tz - rz
    reach = l1 + l2
    reach0 = reach
    dist = _norm3(dx, dy, dz)
    if policy == POLICY_STRETCH and dist > reach:
        scale = min(dist / reach, max_stretch)
        l1 *= scale
        l2 *= scale
        reach = l1 + l2
    fold = abs(l1 - l2)
    # unit direction root -> target; the frame's -Z when the target is at the root
    aimed = dist > AT_ROOT_RTOL * reach
    if aimed:
        inv = 1.0 / dist
        ux = dx * inv
        uy = dy * inv
        uz = dz * inv
    elif mode == MODE_FRAME:
        ux, uy, uz = _rotate(qx, qy, qz, qw, 0.0, 0.0, -1.0)
    else:
        ux = 0.0
        uy = 0.0
        uz = -1.0
    # law of cosines on the clamped distance (the "extend" fold when out of reach)
    dc = min(max(dist, fold), reach)
    # sin from Heron's area: exactly 0 at both clamps, accurate near them
    if dc > _NORM_LOW * reach:  # below: the 0 limit (and 1/(l1 dc) cannot overflow)
        inv = 1.0 / (2.0 * l1 * dc)
        cos_a = min(max(((l1 - l2) * (l1 + l2) + dc * dc) * inv, -1.0), 1.0)
        sin_a = min(math.sqrt((reach + dc) * (reach - dc))
                    * (math.sqrt(dc + fold) * math.sqrt(dc - fold)) * inv, 1.0)
    else:
        cos_a = 0.0
        sin_a = 1.0
    # bend direction: unit, perpendicular to u, on the mid joint's side
    have = False
    nx = 0.0
    ny = 0.0
    nz = 0.0
    if mode == MODE_POINT:
        px = hx - rx
        py = hy - ry
        pz = hz - rz
        big = max(abs(px), abs(py), abs(pz))  # only its direction matters
        if big > _NORM_HIGH or big < _NORM_LOW:
            k = _DOWN if big > _NORM_HIGH else _UP
            px *= k
            py *= k
            pz *= k
        t = px * ux + py * uy + pz * uz
        nx = px - t * ux
        ny = py - t * uy
        nz = pz - t * uz
        pn2 = nx * nx + ny * ny + nz * nz
        p2 = px * px + py * py + pz * pz
        if pn2 > (POLE_MIN_SINE * POLE_MIN_SINE) * p2 and pn2 > 0.0:
            t = nx * ux + ny * uy + nz * uz  # second Gram-Schmidt pass
            nx -= t * ux
            ny -= t * uy
            nz -= t * uz
            inv = 1.0 / math.sqrt(nx * nx + ny * ny + nz * nz)
            nx *= inv
            ny *= inv
            nz *= inv
            have = True
    if not have:
        if mode == MODE_FRAME:
            lx, ly, lz = _rotate(-qx, -qy, -qz, qw, ux, uy, uz)
            bx, by, bz = rolled_bend(lx, ly, lz)
            nx, ny, nz = _rotate(qx, qy, qz, qw, bx, by, bz)
        else:
            nx, ny, nz = rolled_bend(ux, uy, uz)
    a = l1 * cos_a
    b = l1 * sin_a
    shift = dist - dc if policy == POLICY_PUSH_ROOT else 0.0
    ox = rx + shift * ux
    oy = ry + shift * uy
    oz = rz + shift * uz
    # the end lies on the line to the target, or (at the root) along -Z: measure the miss
    reach_end = shift + dc
    err = abs(dist - dc) if aimed else _norm3(dx - reach_end * ux, dy - reach_end * uy,
                                              dz - reach_end * uz)
    return (ox, oy, oz, ox + a * ux + b * nx, oy + a * uy + b * ny, oz + a * uz + b * nz,
            ox + dc * ux, oy + dc * uy, oz + dc * uz, err, reach0)


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy", nogil=True)
def solve_rows(start: int, stop: int, root: np.ndarray, target: np.ndarray, hint: np.ndarray,
               quat: np.ndarray, upper: np.ndarray, lower: np.ndarray, mode: int, policy: int,
               max_stretch: float, reach_rtol: float,
               positions: np.ndarray, error: np.ndarray, reached: np.ndarray) -> float:
    """Solve limbs ``start .. stop - 1`` of a batch in place.

    Parameters
    ----------
    root, target, hint : (N or 1, 3) float64
        ``hint`` is the pole/reference point (read only in ``MODE_POINT``).
    quat : (N or 1, 4) float64
        Root-frame rotations (x, y, z, w), read only in ``MODE_FRAME``.
    upper, lower : (N or 1,) float64
    positions : (N, 3, 3) float64, out
    error : (N,) float64, out
    reached : (N,) bool, out

    Returns
    -------
    float
        0.0, or NaN when an input is not finite or a length is not positive.
    """
    # Unsigned row numbers: Numba indexes with them without its test for negative indices
    # (about 4 % of the loop).
    one = np.uintp(1)
    zero = np.uintp(0)
    sr = one if root.shape[0] > 1 else zero
    st = one if target.shape[0] > 1 else zero
    sh = one if hint.shape[0] > 1 else zero
    sq = one if quat.shape[0] > 1 else zero
    s1 = one if upper.shape[0] > 1 else zero
    s2 = one if lower.shape[0] > 1 else zero
    use_hint = mode == MODE_POINT
    use_quat = mode == MODE_FRAME
    check = 0.0
    for i in range(np.uintp(start), np.uintp(stop)):
        jr = i * sr
        jt = i * st
        rx = root[jr, 0]
        ry = root[jr, 1]
        rz = root[jr, 2]
        tx = target[jt, 0]
        ty = target[jt, 1]
        tz = target[jt, 2]
        l1 = upper[i * s1]
        l2 = lower[i * s2]
        check += (rx + ry + rz + tx + ty + tz + l1 + l2) * 0.0
        if not (l1 > 0.0 and l2 > 0.0):
            check += math.nan
        hx = 0.0
        hy = 0.0
        hz = 0.0
        if use_hint:
            jh = i * sh
            hx = hint[jh, 0]
            hy = hint[jh, 1]
            hz = hint[jh, 2]
            check += (hx + hy + hz) * 0.0
        qx = 0.0
        qy = 0.0
        qz = 0.0
        qw = 1.0
        if use_quat:
            jq = i * sq
            qx = quat[jq, 0]
            qy = quat[jq, 1]
            qz = quat[jq, 2]
            qw = quat[jq, 3]
            check += (qx + qy + qz + qw) * 0.0
        (ox, oy, oz, mx, my, mz, ex, ey, ez, err, reach) = solve_element(
            rx, ry, rz, tx, ty, tz, hx, hy, hz, qx, qy, qz, qw, l1, l2, mode, policy,
            max_stretch)
        positions[i, 0, 0] = ox
        positions[i, 0, 1] = oy
        positions[i, 0, 2] = oz
        positions[i, 1, 0] = mx
        positions[i, 1, 1] = my
        positions[i, 1, 2] = mz
        positions[i, 2, 0] = ex
        positions[i, 2, 1] = ey
        positions[i, 2, 2] = ez
        error[i] = err
        reached[i] = err <= reach_rtol * reach
    return check


#: Limbs per chunk at least where a batch is spread over threads (about 0.13 ms of work;
#: smaller batches run on the calling thread).
CHUNK = 4096

#: Chunks start on multiples of this many limbs (more than a vector loop's elements per
#: pass), so every limb falls in the same place of the (possibly vectorised) fast-math
#: loop whatever the thread count.
GRANULE = 256


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def solve_one(root: np.ndarray, target: np.ndarray, hint: np.ndarray, upper: float,
              lower: float, mode: int, policy: int, max_stretch: float, reach_rtol: float
              ) -> tuple[np.ndarray, float, bool, float]:
    """One limb from ``(3,)`` arrays (no quaternion: modes rolled and point).

    Returns ``(positions (3, 3), error, reached, check)``; ``check`` as in
    :func:`solve_rows`, and also NaN when ``max_stretch`` is not finite and >= 1.
    """
    out = np.empty((3, 3))
    rx = root[0]
    ry = root[1]
    rz = root[2]
    tx = target[0]
    ty = target[1]
    tz = target[2]
    hx = hint[0]
    hy = hint[1]
    hz = hint[2]
    check = (rx + ry + rz + tx + ty + tz + hx + hy + hz + upper + lower + max_stretch) * 0.0
    if not (upper > 0.0 and lower > 0.0 and max_stretch >= 1.0):
        check += math.nan
    (ox, oy, oz, mx, my, mz, ex, ey, ez, err, reach) = solve_element(
        rx, ry, rz, tx, ty, tz, hx, hy, hz, 0.0, 0.0, 0.0, 1.0, upper, lower, mode, policy,
        max_stretch)
    out[0, 0] = ox
    out[0, 1] = oy
    out[0, 2] = oz
    out[1, 0] = mx
    out[1, 1] = my
    out[1, 2] = mz
    out[2, 0] = ex
    out[2, 1] = ey
    out[2, 2] = ez
    return out, err, err <= reach_rtol * reach, check


_single: list[Callable[..., Any]] = []


def single_entry() -> Callable[..., Any]:
    """:func:`solve_one`'s compiled entry point for float64 ``(3,)`` arrays of any strides.

    Calling it skips Numba's argument-type dispatch (about 1.5 µs per call). Callers must
    pass exactly: three 1-D float64 arrays of length 3, two floats, two ints, two floats.
    """
    if not _single:
        vec = types.Array(types.float64, 1, "A")
        sig = (vec, vec, vec, types.float64, types.float64, types.int64, types.int64,
               types.float64, types.float64)
        entry = solve_one.compile(sig)
        _single.append(entry if callable(entry) else solve_one)
    return _single[0]


#: Default offsets of the animated mid joint from the root→target line, as fractions of
#: ``upper + lower``: below the first the hinge axis alone sets the bend, above the
#: second the reference alone (smoothstep between).
REFERENCE_OFFSETS = (0.03, 0.1)


@_helper
def soft_distance(dist: float, reach: float, softness: float) -> float:
    """Unreal-style soft reach: beyond ``reach - softness`` the distance approaches
    ``reach`` exponentially (``softness`` in length units; 0 leaves ``dist`` as is)."""
    start = reach - softness
    if softness <= 0.0 or dist <= start:
        return dist
    return start + softness * (1.0 - math.exp(-(dist - start) / softness))


@_helper
def hinge_bend(ux: float, uy: float, uz: float, ax: float, ay: float, az: float,
               px: float, py: float, pz: float, reach: float, lo: float, hi: float
               ) -> tuple[float, float, float]:
    """Unit bend direction (the mid joint's side) for the unit root→target ``u``.

    The hinge's own direction is ``u × axis`` (axis projected off ``u``). ``p`` is the
    reference mid joint relative to the root (all zeros for none): its offset from the
    line, as a fraction of ``reach``, weighs it in by smoothstep from ``lo`` to ``hi``,
    turning the hinge direction about ``u`` toward it by that fraction of the angle
    between them; the weight also fades from 1 to 0 as that angle goes from 60° to 90°,
    so a reference behind the hinge is ignored (continuous in ``p``; the mid joint never
    bends to the back half). With ``axis`` parallel to ``u`` the reference, then the
    world rolled plane, is used.
    """
    t = ax * ux + ay * uy + az * uz
    ax -= t * ux
    ay -= t * uy
    az -= t * uz
    hx = uy * az - uz * ay
    hy = uz * ax - ux * az
    hz = ux * ay - uy * ax
    hn = math.sqrt(hx * hx + hy * hy + hz * hz)
    t = px * ux + py * uy + pz * uz
    rx = px - t * ux
    ry = py - t * uy
    rz = pz - t * uz
    rn = _norm3(rx, ry, rz)
    if hn <= 1e-12:
        if rn > 1e-12 * reach:
            return rx / rn, ry / rn, rz / rn
        return rolled_bend(ux, uy, uz)
    hx /= hn
    hy /= hn
    hz /= hn
    if rn <= 1e-12 * reach or hi <= 0.0:
        return hx, hy, hz
    s = (rn / reach - lo) / max(hi - lo, 1e-12)
    s = min(max(s, 0.0), 1.0)
    w = s * s * (3.0 - 2.0 * s)
    if w <= 0.0:
        return hx, hy, hz
    # the angle from h to r about u, then h turned by w times it; a reference more than
    # 60° off the hinge's side counts less, and from 90° (behind the hinge) not at all,
    # so a reference that swings behind the limb never flips the bend
    cx = hy * rz - hz * ry
    cy = hz * rx - hx * rz
    cz = hx * ry - hy * rx
    cos_h = (hx * rx + hy * ry + hz * rz) / rn
    f = min(max(2.0 * cos_h, 0.0), 1.0)
    w *= f * f * (3.0 - 2.0 * f)
    angle = math.atan2(cx * ux + cy * uy + cz * uz, hx * rx + hy * ry + hz * rz) * w
    c = math.cos(angle)
    sn = math.sin(angle)
    # Rodrigues about u (h is perpendicular to u)
    kx = uy * hz - uz * hy
    ky = uz * hx - ux * hz
    kz = ux * hy - uy * hx
    return c * hx + sn * kx, c * hy + sn * ky, c * hz + sn * kz


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def solve_batch_hinge(root: np.ndarray, target: np.ndarray, axis: np.ndarray,
                      reference: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                      use_reference: bool, lo: float, hi: float, softness: np.ndarray,
                      policy: int, max_stretch: float, reach_rtol: float,
                      positions: np.ndarray, error: np.ndarray, reached: np.ndarray) -> float:
    """:func:`solve_rows` on a whole batch (one thread), with a hinge ``axis`` (N or 1, 3)
    (and optional ``reference`` points) setting the bend, and a soft reach (``softness``
    (N or 1,), fraction of ``upper + lower``; 0 is off). The end goes to the softened
    distance along the root→target line; ``error`` is measured from the real target.
    Returns as :func:`solve_rows` (NaN also for a zero or non-finite axis)."""
    n = positions.shape[0]
    sr = 1 if root.shape[0] > 1 else 0
    st = 1 if target.shape[0] > 1 else 0
    sa = 1 if axis.shape[0] > 1 else 0
    sp = 1 if reference.shape[0] > 1 else 0
    s1 = 1 if upper.shape[0] > 1 else 0
    s2 = 1 if lower.shape[0] > 1 else 0
    ss = 1 if softness.shape[0] > 1 else 0
    check = 0.0
    for i in range(n):
        jr = i * sr
        jt = i * st
        ja = i * sa
        rx = root[jr, 0]
        ry = root[jr, 1]
        rz = root[jr, 2]
        tx = target[jt, 0]
        ty = target[jt, 1]
        tz = target[jt, 2]
        ax = axis[ja, 0]
        ay = axis[ja, 1]
        az = axis[ja, 2]
        l1 = upper[i * s1]
        l2 = lower[i * s2]
        soft = softness[i * ss] * (l1 + l2)
        check += (rx + ry + rz + tx + ty + tz + ax + ay + az + l1 + l2 + soft) * 0.0
        if not (l1 > 0.0 and l2 > 0.0 and ax * ax + ay * ay + az * az > 0.0 and soft >= 0.0):
            check += math.nan
        px = 0.0
        py = 0.0
        pz = 0.0
        if use_reference:
            jp = i * sp
            px = reference[jp, 0] - rx
            py = reference[jp, 1] - ry
            pz = reference[jp, 2] - rz
            check += (px + py + pz) * 0.0
        dx = tx - rx
        dy = ty - ry
        dz = tz - rz
        dist = _norm3(dx, dy, dz)
        reach = l1 + l2
        if dist > AT_ROOT_RTOL * reach:
            ux = dx / dist
            uy = dy / dist
            uz = dz / dist
        else:
            ux = 0.0
            uy = 0.0
            uz = -1.0
        bx, by, bz = hinge_bend(ux, uy, uz, ax, ay, az, px, py, pz, reach, lo, hi)
        goal = dist
        if policy != POLICY_STRETCH or max_stretch <= 1.0:
            goal = soft_distance(dist, reach, soft)
        sx = rx + ux * goal if dist > AT_ROOT_RTOL * reach else tx
        sy = ry + uy * goal if dist > AT_ROOT_RTOL * reach else ty
        sz = rz + uz * goal if dist > AT_ROOT_RTOL * reach else tz
        (ox, oy, oz, mx, my, mz, ex, ey, ez, err, reach0) = solve_element(
            rx, ry, rz, sx, sy, sz, rx + bx * reach, ry + by * reach, rz + bz * reach,
            0.0, 0.0, 0.0, 1.0, l1, l2, MODE_POINT, policy, max_stretch)
        positions[i, 0, 0] = ox
        positions[i, 0, 1] = oy
        positions[i, 0, 2] = oz
        positions[i, 1, 0] = mx
        positions[i, 1, 1] = my
        positions[i, 1, 2] = mz
        positions[i, 2, 0] = ex
        positions[i, 2, 1] = ey
        positions[i, 2, 2] = ez
        # measured on the limb anchored at the input root (push_root moves it)
        ex -= ox - rx
        ey -= oy - ry
        ez -= oz - rz
        miss = _norm3(ex - tx, ey - ty, ez - tz)
        error[i] = max(miss, err)
        reached[i] = error[i] <= reach_rtol * reach0
    return check
