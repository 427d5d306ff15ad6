"""Compiled FABRIK loops: chains, trees and the joint-constraint projections.

Everything here is Numba code over contiguous float64 arrays, cached on disk. The
public modules (:mod:`limbik.solvers.fabrik.chain`, :mod:`limbik.solvers.fabrik.tree`,
:mod:`limbik.solvers.constraints`) validate, broadcast and allocate; these functions
trust their inputs.

What a first call compiles is kept small: the drivers take ``limits=None`` when no
constraint applies, and Numba then drops (and never compiles) the constraint code.
The ``*_range`` drivers solve a range of a batch and release the interpreter lock, so a
large batch runs their chunks on every thread (:mod:`limbik._runtime.batch_threads`) with no
parallel driver to compile.

Constraints are encoded per bone as ``kind`` (int), ``params`` (4 floats) and
``axis`` (3 floats, hinge axis in the parent bone's frame):

=========  =====================================  ==========================
kind       params                                 meaning
=========  =====================================  ==========================
0 FREE     unused                                 no limit
1 CONE     (angle, -, -, -)                       circular cone
2 ELLIPSE  (tan left, tan right, tan up, tan down)  nearest point on ellipse
3 SEED     (left, right, up, down) in radians      the seed's atan2 scaling
4 HINGE    (min angle, max angle, -, -)           plane ⟂ axis, angle range
=========  =====================================  ==========================

A bone's frame is three unit vectors: ``look`` (along the bone), ``up`` and
``right = look × up``, as in a CFrame looking down the bone.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

FREE = 0
CONE = 1
ELLIPSE = 2
SEED = 3
HINGE = 4

_EPS = 1e-12
_BISECTION_CAP = 256

#: entry points (called from Python, cached on disk)
_jit = njit(cache=True, error_model="numpy", fastmath=False)
#: entry points that run on a batch's threads
_jit_no_alloc = njit(cache=True, error_model="numpy", fastmath=False, nogil=True)
#: helpers called only from compiled code: compiled into their callers, so they cost no
#: Python wrapper, machine code or cache file of their own (a cold first call is shorter)
_inner_alloc = register_jitable(error_model="numpy", fastmath=False)
_inner = register_jitable(error_model="numpy", fastmath=False)


# --------------------------------------------------------------------------- small vectors
@_inner
def _normalize(x, y, z, fx, fy, fz):
    n = math.sqrt(x * x + y * y + z * z)
    if n < _EPS:
        return fx, fy, fz
    return x / n, y / n, z / n


@_inner
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@_inner
def _transport(lx, ly, lz, ux, uy, uz, dx, dy, dz):
    """Carry a frame (look l, up u) to the new look ``d`` by the minimal rotation l → d.

    Returns the new (look, up, right). Opposite directions use a half turn about
    ``u``. The up vector is re-orthogonalised against ``d``.
    """
    c = lx * dx + ly * dy + lz * dz
    if c > -1.0 + 1e-9:
        kx, ky, kz = _cross(lx, ly, lz, dx, dy, dz)
        # Rodrigues for the minimal rotation: R v = c v + k × v + k (k·v) / (1 + c)
        kv = kx * ux + ky * uy + kz * uz
        cx, cy, cz = _cross(kx, ky, kz, ux, uy, uz)
        f = kv / (1.0 + c)
        nx = c * ux + cx + kx * f
        ny = c * uy + cy + ky * f
        nz = c * uz + cz + kz * f
    else:
        nx, ny, nz = ux, uy, uz
    # remove any component along d (rounding) and renormalise
    p = nx * dx + ny * dy + nz * dz
    nx -= p * dx
    ny -= p * dy
    nz -= p * dz
    n = math.sqrt(nx * nx + ny * ny + nz * nz)
    if n < 1e-6:
        # up collapsed onto d: rebuild from any perpendicular
        ax, ay, az = 1.0, 0.0, 0.0
        if abs(dx) > 0.9:
            ax, ay, az = 0.0, 1.0, 0.0
        p = ax * dx + ay * dy + az * dz
        nx, ny, nz = ax - p * dx, ay - p * dy, az - p * dz
        n = math.sqrt(nx * nx + ny * ny + nz * nz)
    nx /= n
    ny /= n
    nz /= n
    rx, ry, rz = _cross(dx, dy, dz, nx, ny, nz)
    return dx, dy, dz, nx, ny, nz, rx, ry, rz


@_jit
def look_at(ax, ay, az, bx, by, bz):
    """(look, up, right) of the seed's ``CFrame.new(a, b)``, world up +Y.

    The choices of :meth:`limbik.Frame.look_at`: ``a == b`` looks down −Z; a look
    straight up or down takes world +X (less its look part) as ``right``.
    """
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    if n > 0.0:
        lx, ly, lz = dx / n, dy / n, dz / n
    else:
        lx, ly, lz = 0.0, 0.0, -1.0
    rx, ry, rz = -lz, 0.0, lx
    rn = math.sqrt(rx * rx + rz * rz)
    if rn < 1e-12:
        rx, ry, rz = 1.0 - lx * lx, -lx * ly, -lx * lz
        rn = math.sqrt(rx * rx + ry * ry + rz * rz)
        if rn < 1e-6:
            rx, ry, rz = -lz * lx, -lz * ly, 1.0 - lz * lz
            rn = math.sqrt(rx * rx + ry * ry + rz * rz)
    rx /= rn
    ry /= rn
    rz /= rn
    ux, uy, uz = _cross(rx, ry, rz, lx, ly, lz)
    return lx, ly, lz, ux, uy, uz, rx, ry, rz


# --------------------------------------------------------------------------- ellipse
@_inner
def _ellipse_root(r0m1, z0, z1, g):
    """Eberly's bisection for the Lagrange parameter, as ``t = s + 1`` (first quadrant).

    ``r0m1 = (e0/e1)² − 1 >= 0``. Bisecting ``t`` rather than ``s`` keeps full
    relative precision when the point is deep inside (``t`` near 0), and the
    geometric midpoint is used while the bracket spans orders of magnitude.
    """
    n0 = (r0m1 + 1.0) * z0
    t0 = z1
    t1 = 1.0 if g < 0 else math.hypot(n0, z1)
    t = t0
    for _ in range(_BISECTION_CAP):
        if t0 > 0.0 and t1 > 4.0 * t0:
            t = math.sqrt(t0) * math.sqrt(t1)
        else:
            t = 0.5 * (t0 + t1)
        if t == t0 or t == t1:
            break
        ratio0 = n0 / (t + r0m1)
        ratio1 = z1 / t
        g = ratio0 * ratio0 + ratio1 * ratio1 - 1.0
        if g > 0.0:
            t0 = t
        elif g < 0.0:
            t1 = t
        else:
            break
    return t


@_inner
def _ellipse_nearest_q1(e0, e1, y0, y1):
    """Nearest point on the ellipse with semi-axes ``e0 >= e1 > 0`` to ``(y0, y1) >= 0``.

    D. Eberly, "Distance from a Point to an Ellipse, an Ellipsoid, or a
    Hyperellipsoid" (robust bisection on the Lagrange parameter).
    """
    if y1 > 0.0:
        if y0 > 0.0:
            z0 = y0 / e0
            z1 = y1 / e1
            g = z0 * z0 + z1 * z1 - 1.0
            if g != 0.0:
                r0m1 = (e0 - e1) * (e0 + e1) / (e1 * e1)
                t = _ellipse_root(r0m1, z0, z1, g)
                return (r0m1 + 1.0) * y0 / (t + r0m1), y1 / t
            return y0, y1
        return 0.0, e1
    numer0 = e0 * y0
    denom0 = e0 * e0 - e1 * e1
    if numer0 < denom0:
        xde0 = numer0 / denom0
        return e0 * xde0, e1 * math.sqrt(max(0.0, 1.0 - xde0 * xde0))
    return e0, 0.0


@_jit
def ellipse_nearest(a, b, x, y):
    """Nearest point ``(qx, qy)`` on the axis-aligned ellipse (semi-axes a, b >= 0) to (x, y).

    Degenerate ellipses (a or b zero) are segments; the nearest point of the
    segment is returned.
    """
    sx = 1.0 if x >= 0.0 else -1.0
    sy = 1.0 if y >= 0.0 else -1.0
    ax_ = abs(x)
    ay_ = abs(y)
    big = max(a, b)
    if big <= 0.0:
        return 0.0, 0.0
    # flush coordinates far below the ellipse's scale (subnormals lose precision)
    if ax_ < 1e-200 * big:
        ax_ = 0.0
    if ay_ < 1e-200 * big:
        ay_ = 0.0
    if b <= 1e-12 * big:
        return sx * min(ax_, a), 0.0
    if a <= 1e-12 * big:
        return 0.0, sy * min(ay_, b)
    if a >= b:
        qx, qy = _ellipse_nearest_q1(a, b, ax_, ay_)
    else:
        qy, qx = _ellipse_nearest_q1(b, a, ay_, ax_)
    return sx * qx, sy * qy


@_inner
def _inside_ellipse(a, b, x, y):
    if a > 0.0 and b > 0.0:
        u = x / a
        v = y / b
        return u * u + v * v <= 1.0
    if a > 0.0:
        return y == 0.0 and abs(x) <= a
    if b > 0.0:
        return x == 0.0 and abs(y) <= b
    return x == 0.0 and y == 0.0


@_inner
def _normal_point(a, b, x, y):
    """The ellipse point whose outward normal is parallel to (x, y) (x, y not both 0)."""
    n = math.hypot(x, y)
    if n == 0.0:
        return a, 0.0
    nx = x / n
    ny = y / n
    d = math.sqrt(a * a * nx * nx + b * b * ny * ny)
    if d == 0.0:
        return 0.0, 0.0
    return a * a * nx / d, b * b * ny / d


# --------------------------------------------------------------------------- constraints
@_inner
def _constrain_cone(angle, dx, dy, dz, lx, ly, lz, rx, ry, rz):
    h = dx * lx + dy * ly + dz * lz
    px = dx - h * lx
    py = dy - h * ly
    pz = dz - h * lz
    s = math.sqrt(px * px + py * py + pz * pz)
    if math.atan2(s, h) <= angle:
        return dx, dy, dz
    if s < _EPS:
        px, py, pz = rx, ry, rz
    else:
        px, py, pz = px / s, py / s, pz / s
        # second Gram-Schmidt pass: with d folded back onto -l, p is mostly rounding
        t = px * lx + py * ly + pz * lz
        px, py, pz = px - t * lx, py - t * ly, pz - t * lz
        s = math.sqrt(px * px + py * py + pz * pz)
        px, py, pz = px / s, py / s, pz / s
    c = math.cos(angle)
    sn = math.sin(angle)
    return c * lx + sn * px, c * ly + sn * py, c * lz + sn * pz


@_inner
def _constrain_ellipse(tl, tr, tu, td, dx, dy, dz, lx, ly, lz, ux, uy, uz, rx, ry, rz):
    """Default elliptical cone: nearest point on the cross-section ellipse at the bone's height.

    ``tl, tr, tu, td`` are the tangents of the four half-angles. Beyond 90° (and
    at exactly 90°) the direction is always moved to the boundary, to the point
    whose outward normal is parallel to the sideways part of the direction: the
    limit of the nearest point as the direction reaches 90° from the front.
    """
    h = dx * lx + dy * ly + dz * lz
    x = dx * rx + dy * ry + dz * rz
    y = dx * ux + dy * uy + dz * uz
    a = tr if x >= 0.0 else tl
    b = tu if y >= 0.0 else td
    if h > 1e-9:
        px = x / h
        py = y / h
        if _inside_ellipse(a, b, px, py):
            return dx, dy, dz
        qx, qy = ellipse_nearest(a, b, px, py)
    else:
        if x == 0.0 and y == 0.0:
            qx, qy = tr, 0.0
        else:
            qx, qy = _normal_point(a, b, x, y)
    vx = lx + qx * rx + qy * ux
    vy = ly + qx * ry + qy * uy
    vz = lz + qx * rz + qy * uz
    return _normalize(vx, vy, vz, lx, ly, lz)


@_inner
def _dist(ax, ay, az, bx, by, bz):
    dx = ax - bx  # products, not ** 2: Python's pow can round otherwise than x * x
    dy = ay - by
    dz = az - bz
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@_jit
def constrain_seed(cx, cy, cz, lx, ly, lz, ux, uy, uz, rx, ry, rz, left, right, up, down):
    """Port of the seed's ``chain:constrain(calc, line, cf)`` (Lua), line by line.

    ``calc`` is the bone vector, ``line`` the cone axis (any length), ``u``/``r`` the
    frame's up and right; angles in radians. Returns the constrained vector (same
    length as ``calc``). ``table.sort`` of {Top, Bottom} and {Right, Left} by
    distance to ``calc`` swaps only when the second is strictly closer. Where the
    Lua divides by zero (``calc`` exactly perpendicular to ``line``: the cone's
    cross-section has no size) the result is the limit from either side,
    ``line.unit · |calc|``; a zero ``line`` leaves ``calc`` as it is.
    """
    lm = math.sqrt(lx * lx + ly * ly + lz * lz)
    if lm == 0.0:
        return cx, cy, cz
    scalar = (cx * lx + cy * ly + cz * lz) / lm
    nx, ny, nz = lx / lm, ly / lm, lz / lm
    projx = scalar * nx
    projy = scalar * ny
    projz = scalar * nz
    if _dist(-ux, -uy, -uz, cx, cy, cz) < _dist(ux, uy, uz, cx, cy, cz):
        ux, uy, uz = -ux, -uy, -uz
    if _dist(-rx, -ry, -rz, cx, cy, cz) < _dist(rx, ry, rz, cx, cy, cz):
        rx, ry, rz = -rx, -ry, -rz
    adjx = cx - projx
    adjy = cy - projy
    adjz = cz - projz
    if scalar < 0.0:
        projx, projy, projz = -projx, -projy, -projz
    xaspect = adjx * rx + adjy * ry + adjz * rz
    yaspect = adjx * ux + adjy * uy + adjz * uz
    pm = math.sqrt(projx * projx + projy * projy + projz * projz)
    m = math.sqrt(cx * cx + cy * cy + cz * cz)
    if pm == 0.0:
        return nx * m, ny * m, nz * m
    lb = -(pm * math.tan(left))
    rb = pm * math.tan(right)
    ub = pm * math.tan(up)
    db = -(pm * math.tan(down))
    xbound = rb if xaspect >= 0.0 else lb
    ybound = ub if yaspect >= 0.0 else db
    ellipse = xaspect * xaspect / (xbound * xbound) + yaspect * yaspect / (ybound * ybound)
    inbounds = ellipse <= 1.0 and scalar >= 0.0
    if inbounds:
        return cx, cy, cz
    ang = math.atan2(yaspect, xaspect)
    x = xbound * math.cos(ang)
    y = ybound * math.sin(ang)
    fx = projx + rx * x + ux * y
    fy = projy + ry * x + uy * y
    fz = projz + rz * x + uz * y
    fm = math.sqrt(fx * fx + fy * fy + fz * fz)
    return fx / fm * m, fy / fm * m, fz / fm * m


@_inner
def _constrain_hinge(lo, hi, dx, dy, dz, lx, ly, lz, ax, ay, az):
    """Keep ``d`` in the plane ⟂ ``a`` (unit, ⟂ l) at a signed angle from ``l`` in [lo, hi]."""
    wx, wy, wz = _cross(ax, ay, az, lx, ly, lz)
    c = dx * lx + dy * ly + dz * lz
    s = dx * wx + dy * wy + dz * wz
    if abs(c) < _EPS and abs(s) < _EPS:
        theta = 0.0
    else:
        theta = math.atan2(s, c)
    if theta < lo or theta > hi:
        # nearest end of the arc, measured around the circle
        dlo = abs(theta - lo)
        dlo = min(dlo, 2.0 * math.pi - dlo)
        dhi = abs(theta - hi)
        dhi = min(dhi, 2.0 * math.pi - dhi)
        theta = lo if dlo <= dhi else hi
    ct = math.cos(theta)
    st = math.sin(theta)
    return ct * lx + st * wx, ct * ly + st * wy, ct * lz + st * wz


@_inner
def _apply_constraint(kind, prm, hax, dx, dy, dz, lx, ly, lz, ux, uy, uz, rx, ry, rz):
    """Constrain the unit direction ``d`` against the frame (l, u, r). Returns a unit vector."""
    if kind == CONE:
        return _constrain_cone(prm[0], dx, dy, dz, lx, ly, lz, rx, ry, rz)
    if kind == ELLIPSE:
        return _constrain_ellipse(prm[0], prm[1], prm[2], prm[3], dx, dy, dz,
                                  lx, ly, lz, ux, uy, uz, rx, ry, rz)
    if kind == SEED:
        return constrain_seed(dx, dy, dz, lx, ly, lz, ux, uy, uz, rx, ry, rz,
                              prm[0], prm[1], prm[2], prm[3])
    if kind == HINGE:
        # hinge axis given in the frame's local coordinates (x right, y up, z back)
        ax = hax[0] * rx + hax[1] * ux - hax[2] * lx
        ay = hax[0] * ry + hax[1] * uy - hax[2] * ly
        az = hax[0] * rz + hax[1] * uz - hax[2] * lz
        return _constrain_hinge(prm[0], prm[1], dx, dy, dz, lx, ly, lz, ax, ay, az)
    return dx, dy, dz


@_jit
def constrain_direction(kind, prm, hax, d, frame):
    """Vector wrapper of the constraint projection, for tests and Python callers.

    ``d`` (3,) unit direction, ``frame`` (3, 3) rows look, up, right.
    """
    out = np.empty(3)
    x, y, z = _apply_constraint(kind, prm, hax, d[0], d[1], d[2],
                                frame[0, 0], frame[0, 1], frame[0, 2],
                                frame[1, 0], frame[1, 1], frame[1, 2],
                                frame[2, 0], frame[2, 1], frame[2, 2])
    out[0] = x
    out[1] = y
    out[2] = z
    return out


# --------------------------------------------------------------------------- chain
@_inner
def _forward(p, root, lengths, frame0, limits):
    """Forward reaching from ``root`` with constraints; writes into ``p`` (n, 3).

    ``limits``: None, or the constraints (see :func:`solve_chain_range`). With
    ``seed_frames``, bone i > 0 is constrained in ``CFrame.new(p[i − 1], p[i])`` (seed
    003's look-at frame) instead of the frame carried along the chain.
    """
    n = p.shape[0]
    p[0, 0] = root[0]
    p[0, 1] = root[1]
    p[0, 2] = root[2]
    lx, ly, lz = frame0[0, 0], frame0[0, 1], frame0[0, 2]
    if limits is None:
        for i in range(n - 1):
            dx, dy, dz = _normalize(p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1],
                                    p[i + 1, 2] - p[i, 2], lx, ly, lz)
            lx, ly, lz = dx, dy, dz
            L = lengths[i]
            p[i + 1, 0] = p[i, 0] + L * dx
            p[i + 1, 1] = p[i, 1] + L * dy
            p[i + 1, 2] = p[i, 2] + L * dz
        return
    kinds, params, haxes, constrain_root, seed_frames = limits
    ux, uy, uz = frame0[1, 0], frame0[1, 1], frame0[1, 2]
    rx, ry, rz = frame0[2, 0], frame0[2, 1], frame0[2, 2]
    for i in range(n - 1):
        dx = p[i + 1, 0] - p[i, 0]
        dy = p[i + 1, 1] - p[i, 1]
        dz = p[i + 1, 2] - p[i, 2]
        dx, dy, dz = _normalize(dx, dy, dz, lx, ly, lz)
        k = kinds[i]
        if seed_frames and i > 0:
            lx, ly, lz, ux, uy, uz, rx, ry, rz = look_at(p[i - 1, 0], p[i - 1, 1], p[i - 1, 2],
                                                          p[i, 0], p[i, 1], p[i, 2])
        if k != FREE and (i > 0 or constrain_root):
            dx, dy, dz = _apply_constraint(k, params[i], haxes[i], dx, dy, dz,
                                           lx, ly, lz, ux, uy, uz, rx, ry, rz)
        if not seed_frames:
            lx, ly, lz, ux, uy, uz, rx, ry, rz = _transport(lx, ly, lz, ux, uy, uz, dx, dy, dz)
        L = lengths[i]
        p[i + 1, 0] = p[i, 0] + L * dx
        p[i + 1, 1] = p[i, 1] + L * dy
        p[i + 1, 2] = p[i, 2] + L * dz


@_inner
def _backward(p, target, lengths, has_dir, dirx, diry, dirz):
    """Backward reaching from ``target``; writes into ``p`` (n, 3)."""
    n = p.shape[0]
    # fallback direction for coincident joints: the old last bone, reversed
    fx, fy, fz = _normalize(p[n - 2, 0] - p[n - 1, 0], p[n - 2, 1] - p[n - 1, 1],
                            p[n - 2, 2] - p[n - 1, 2], 0.0, 1.0, 0.0)
    p[n - 1, 0] = target[0]
    p[n - 1, 1] = target[1]
    p[n - 1, 2] = target[2]
    start = n - 2
    if has_dir:
        L = lengths[n - 2]
        p[n - 2, 0] = target[0] - L * dirx
        p[n - 2, 1] = target[1] - L * diry
        p[n - 2, 2] = target[2] - L * dirz
        fx, fy, fz = -dirx, -diry, -dirz
        start = n - 3
    for i in range(start, -1, -1):
        dx, dy, dz = _normalize(p[i, 0] - p[i + 1, 0], p[i, 1] - p[i + 1, 1],
                                p[i, 2] - p[i + 1, 2], fx, fy, fz)
        fx, fy, fz = dx, dy, dz
        L = lengths[i]
        p[i, 0] = p[i + 1, 0] + L * dx
        p[i, 1] = p[i + 1, 1] + L * dy
        p[i, 2] = p[i + 1, 2] + L * dz


@_inner
def _chain_error(p, target, lengths, has_dir, dirx, diry, dirz):
    n = p.shape[0]
    ex = p[n - 1, 0] - target[0]
    ey = p[n - 1, 1] - target[1]
    ez = p[n - 1, 2] - target[2]
    err = math.sqrt(ex * ex + ey * ey + ez * ez)
    if has_dir:
        L = lengths[n - 2]
        ex = p[n - 2, 0] - (target[0] - L * dirx)
        ey = p[n - 2, 1] - (target[1] - L * diry)
        ez = p[n - 2, 2] - (target[2] - L * dirz)
        err = max(err, math.sqrt(ex * ex + ey * ey + ez * ez))
    return err


@_inner
def _moved(a, b):
    m = 0.0
    for i in range(a.shape[0]):
        for k in range(3):
            m = max(m, abs(a[i, k] - b[i, k]))
    return m


@_inner
def _unbend(p, t, lengths, total):
    """Bend the chain off its line (in place) when all joints and the target share a line.

    FABRIK and CCD never leave such a line: every step moves joints along it. The
    line runs from the root through the joint farthest from it (through the target
    when every joint is at the root); joints and target within ``1e-6 × total`` of it
    count as on it. The new pose depends on the pose and target only: a zigzag in the
    plane of the line ``u`` and ``w`` (the unit vector of ``u × x``, or ``u × y`` when
    ``u`` is within about 26° of x), every bone at the angle ``a`` from the line, leaning
    to ``+w`` or ``−w`` (taken longest bone first, ties by index, each to the side that
    brings the sum of ``±length`` so far back toward 0, ``+w`` at 0), turned in that
    plane about the root so the end points at the target. ``a`` puts the end at the
    target's distance where the zigzag can (the distance is at least the leans' sum);
    else three straight links do (:func:`_three_links`) where they can; else a = 1.2 rad.
    Returns True when the chain was bent.
    """
    n = p.shape[0]
    ux, uy, uz = 0.0, 0.0, 0.0
    m = 0.0
    for i in range(1, n):
        dx = p[i, 0] - p[0, 0]
        dy = p[i, 1] - p[0, 1]
        dz = p[i, 2] - p[0, 2]
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        if d > m:
            m = d
            ux, uy, uz = dx, dy, dz
    if m < 1e-12 * total:
        ux = t[0] - p[0, 0]
        uy = t[1] - p[0, 1]
        uz = t[2] - p[0, 2]
        m = math.sqrt(ux * ux + uy * uy + uz * uz)
        if m < 1e-12 * total:
            ux, uy, uz, m = 0.0, 1.0, 0.0, 1.0
    ux /= m
    uy /= m
    uz /= m
    tol = 1e-6 * total
    for i in range(1, n + 1):
        if i < n:
            cx, cy, cz = _cross(p[i, 0] - p[0, 0], p[i, 1] - p[0, 1], p[i, 2] - p[0, 2],
                                ux, uy, uz)
        else:
            cx, cy, cz = _cross(t[0] - p[0, 0], t[1] - p[0, 1], t[2] - p[0, 2], ux, uy, uz)
        if cx * cx + cy * cy + cz * cz > tol * tol:
            return False
    # the target's side of the root along the line
    along = (t[0] - p[0, 0]) * ux + (t[1] - p[0, 1]) * uy + (t[2] - p[0, 2]) * uz
    if along < 0.0:
        ux, uy, uz, along = -ux, -uy, -uz, -along
    # a unit vector perpendicular to the line
    if abs(ux) < 0.9:
        wx, wy, wz = _cross(ux, uy, uz, 1.0, 0.0, 0.0)
    else:
        wx, wy, wz = _cross(ux, uy, uz, 0.0, 1.0, 0.0)
    wn = math.sqrt(wx * wx + wy * wy + wz * wz)
    wx /= wn
    wy /= wn
    wz /= wn
    # the bones, longest first, each lean to the side that brings the sum of leans back
    # toward 0; a bone's side (±1) is kept in p[i + 1, 0], which is rewritten below
    for i in range(n - 1):
        p[i + 1, 0] = 0.0
    alternating = 0.0
    for _ in range(n - 1):
        k = -1
        for i in range(n - 1):
            if p[i + 1, 0] == 0.0 and (k < 0 or lengths[i] > lengths[k]):
                k = i
        p[k + 1, 0] = 1.0 if alternating <= 0.0 else -1.0
        alternating += p[k + 1, 0] * lengths[k]
    s2 = alternating * alternating
    if total * total > s2 and along * along >= s2:
        c2 = min(1.0, (along * along - s2) / (total * total - s2))
        ca = math.sqrt(c2)
        sa = math.sqrt(1.0 - c2)
    elif _three_links(p, lengths, along, ux, uy, uz, wx, wy, wz):
        return True
    else:
        ca = math.cos(1.2)
        sa = math.sin(1.2)
    # the zigzag's end (total cos a, alternating sin a), turned onto the line
    ex = total * ca
    ey = alternating * sa
    en = math.sqrt(ex * ex + ey * ey)
    if en > 0.0:
        rc = ex / en
        rs = -ey / en
    else:
        rc, rs = 1.0, 0.0
    for i in range(n - 1):
        sy = p[i + 1, 0] * sa
        bx = rc * ca - rs * sy  # the bone's direction in the plane (along u, along w)
        by = rs * ca + rc * sy
        p[i + 1, 0] = p[i, 0] + lengths[i] * (bx * ux + by * wx)
        p[i + 1, 1] = p[i, 1] + lengths[i] * (bx * uy + by * wy)
        p[i + 1, 2] = p[i, 2] + lengths[i] * (bx * uz + by * wz)
    return True


@_inner
def _three_links(p, lengths, d, ux, uy, uz, wx, wy, wz):
    """Lay the chain (in place, from its root) as three straight links that end at distance
    ``d`` along ``u``, in the plane of ``u`` and ``w``: the bones, longest first, each
    join the link of least length so far (ties: the first), and every bone takes its
    link's direction (the end is the sum of the links, whatever the bones' order). Link
    0 turns to ``+w``, link 1 bends back at the middle of its possible distances from
    the target. Returns False (the pose untouched beyond ``p[1:, 1]``) when three such
    links cannot reach ``d``."""
    n = p.shape[0]
    for i in range(n - 1):
        p[i + 1, 1] = -1.0  # the bone's link, -1 while unassigned
    x = 0.0
    y = 0.0
    z = 0.0
    for _ in range(n - 1):
        k = -1
        for i in range(n - 1):
            if p[i + 1, 1] < 0.0 and (k < 0 or lengths[i] > lengths[k]):
                k = i
        if x <= y and x <= z:
            p[k + 1, 1] = 0.0
            x += lengths[k]
        elif y <= z:
            p[k + 1, 1] = 1.0
            y += lengths[k]
        else:
            p[k + 1, 1] = 2.0
            z += lengths[k]
    # link 0 ends at distance r from the target, r within reach of links 1 and 2
    lo = max(abs(y - z), abs(d - x))
    hi = min(y + z, d + x)
    if lo > hi or y <= 0.0 or z <= 0.0:
        return False
    r = 0.5 * (lo + hi)
    cos0 = (d * d + x * x - r * r) / (2.0 * d * x) if d * x > 0.0 else 0.0
    cos0 = min(1.0, max(-1.0, cos0))
    e0x = cos0  # link 0's direction (along u, along w)
    e0y = math.sqrt(1.0 - cos0 * cos0)
    qx = d - x * e0x  # from link 0's end to the target
    qy = -x * e0y
    qn = math.sqrt(qx * qx + qy * qy)
    if qn > 0.0:
        qx /= qn
        qy /= qn
    else:
        qx, qy = -e0x, -e0y
    cos1 = min(1.0, max(-1.0, (qn * qn + y * y - z * z) / (2.0 * qn * y))) if qn > 0.0 \
        else 1.0
    sin1 = math.sqrt(1.0 - cos1 * cos1)
    e1x = qx * cos1 - qy * sin1  # link 1: q turned toward -w
    e1y = qx * sin1 + qy * cos1
    e2x = (qn * qx - y * e1x) / z
    e2y = (qn * qy - y * e1y) / z
    en = math.sqrt(e2x * e2x + e2y * e2y)
    e2x /= en
    e2y /= en
    for i in range(n - 1):
        link = p[i + 1, 1]
        if link == 0.0:
            bx, by = e0x, e0y
        elif link == 1.0:
            bx, by = e1x, e1y
        else:
            bx, by = e2x, e2y
        p[i + 1, 0] = p[i, 0] + lengths[i] * (bx * ux + by * wx)
        p[i + 1, 1] = p[i, 1] + lengths[i] * (bx * uy + by * wy)
        p[i + 1, 2] = p[i, 2] + lengths[i] * (bx * uz + by * wz)
    return True


@_inner_alloc
def chain_workspace(n):
    """Scratch of :func:`solve_chain_range` for chains of ``n`` joints (also from Python).

    Passed in rather than allocated there, so a serial solve compiles no allocation.
    """
    return np.empty(n - 1), np.empty(3), np.empty((n, 3)), np.empty(3)


@_jit_no_alloc
def solve_chain_range(start, stop, pos, target, direction, has_dir, tol_abs, tol_rel, max_iter,
                      min_improvement, fixed_root, frame0, limits, reached, error, iterations,
                      work, own_units):
    """FABRIK on chains ``start .. stop − 1`` of a batch, in place.

    pos (B, n, 3) start poses, overwritten with the solution; target (B, 3);
    direction (B, 3) unit last-bone directions (read when ``has_dir``);
    tol_abs < 0 means ``tol_rel`` × chain length; frame0 (3, 3) rows look, up,
    right of the root frame. ``limits`` is None when no constraint applies (the
    constraint code is then not compiled at all), else the tuple ``(kinds (n − 1,)
    int64, params (n − 1, 4), haxes (n − 1, 3), constrain_root, seed_frames)``.
    Outputs reached (B,) bool, error (B,), iterations (B,) int64; ``work`` is
    :func:`chain_workspace`'s scratch. A chain whose
    pose or target holds NaN or inf is left alone (its outputs unset); returns the
    number of such chains. With ``own_units`` each chain is solved in units of its own
    size (:func:`_chain_unit`, a power of two: exact), ``tol_abs`` and
    ``min_improvement`` given in the batch's units; else in the units it comes in.
    """
    n = pos.shape[1]
    lengths, root, scratch, own_target = work
    skipped = 0
    for b in range(start, stop):
        p = pos[b]
        t = target[b]
        if not _finite_chain(p, t):
            skipped += 1
            continue
        unit = _chain_unit(p, t) if own_units else 1.0
        if unit != 1.0:  # (the pose in place, the target in scratch: the caller's stays)
            for i in range(n):
                for c in range(3):
                    p[i, c] /= unit
            for c in range(3):
                own_target[c] = t[c] / unit
            t = own_target
        chain_tol_abs = tol_abs / unit if tol_abs >= 0.0 else tol_abs
        chain_min_improvement = min_improvement / unit
        total = 0.0
        for i in range(n - 1):
            dx = p[i + 1, 0] - p[i, 0]
            dy = p[i + 1, 1] - p[i, 1]
            dz = p[i + 1, 2] - p[i, 2]
            lengths[i] = math.sqrt(dx * dx + dy * dy + dz * dz)
            total += lengths[i]
        root[0] = p[0, 0]
        root[1] = p[0, 1]
        root[2] = p[0, 2]
        tol = chain_tol_abs if chain_tol_abs >= 0.0 else tol_rel * total
        db = b if direction.shape[0] > 1 else 0  # (1, 3) when no direction is given
        dirx = direction[db, 0]
        diry = direction[db, 1]
        dirz = direction[db, 2]
        it = 0
        bent = False
        settle = 0  # no early stop up to this iteration (set by the bend)
        if n < 2 or total <= 0.0:
            err = _chain_error(p, t, lengths, False, 0.0, 0.0, 0.0) if n >= 1 else 0.0
            reached[b] = err <= tol
            error[b] = err * unit
            iterations[b] = 0
            _scale_back(p, unit)
            continue
        tx = t[0] - root[0]
        ty = t[1] - root[1]
        tz = t[2] - root[2]
        dist = math.sqrt(tx * tx + ty * ty + tz * tz)
        iterate = True
        if fixed_root and dist > total:
            # out of reach: a straight line toward the target (seed)
            for i in range(n - 1):
                dx, dy, dz = _normalize(t[0] - p[i, 0], t[1] - p[i, 1], t[2] - p[i, 2],
                                        tx / dist, ty / dist, tz / dist)
                p[i + 1, 0] = p[i, 0] + lengths[i] * dx
                p[i + 1, 1] = p[i, 1] + lengths[i] * dy
                p[i + 1, 2] = p[i, 2] + lengths[i] * dz
            iterate = False
            if limits is not None:
                for i in range(n):
                    for c in range(3):
                        scratch[i, c] = p[i, c]
                _forward(p, root, lengths, frame0, limits)
                iterate = _moved(p, scratch) > 1e-12 * total
        err = _chain_error(p, t, lengths, has_dir, dirx, diry, dirz)
        if iterate:
            if n > 2 and err > tol and _unbend(p, t, lengths, total):
                bent = True  # a start on a line through the target: bent before the first pass
                settle = 1
                err = _chain_error(p, t, lengths, has_dir, dirx, diry, dirz)
            if limits is not None:
                # make the start pose itself admissible so every exit satisfies the limits
                _forward(p, root, lengths, frame0, limits)
                err = _chain_error(p, t, lengths, has_dir, dirx, diry, dirz)
            while err > tol and it < max_iter:
                _backward(p, t, lengths, has_dir, dirx, diry, dirz)
                if fixed_root:
                    _forward(p, root, lengths, frame0, limits)
                else:
                    for c in range(3):
                        scratch[0, c] = p[0, c]
                    _forward(p, scratch[0], lengths, frame0, limits)
                it += 1
                new_err = _chain_error(p, t, lengths, has_dir, dirx, diry, dirz)
                improvement = err - new_err
                err = new_err
                if (not bent and n > 2 and err > tol and improvement <= 1e-9 * total
                        and _unbend(p, t, lengths, total)):
                    # stuck on a line through the target: bend once and go on
                    bent = True
                    if limits is not None:
                        for c in range(3):
                            scratch[0, c] = p[0, c]
                        _forward(p, scratch[0], lengths, frame0, limits)
                    err = _chain_error(p, t, lengths, has_dir, dirx, diry, dirz)
                    settle = it + 2
                    continue
                if improvement < chain_min_improvement and it > settle:
                    break
        reached[b] = err <= tol
        error[b] = err * unit
        iterations[b] = it
        _scale_back(p, unit)
    return skipped


@_inner
def _chain_unit(p, t):
    """The power of two at most the largest absolute value of the pose ``p`` (n, 3) and
    the target ``t`` (3,), all finite (1.0 for zeros): the chain's own unit."""
    largest = max(abs(t[0]), abs(t[1]), abs(t[2]))
    for i in range(p.shape[0]):
        for c in range(3):
            largest = max(largest, abs(p[i, c]))
    if largest == 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)


@_inner
def _scale_back(p, unit):
    """The pose ``p`` (n, 3) solved in ``unit`` back in the caller's units, in place."""
    if unit != 1.0:
        for i in range(p.shape[0]):
            for c in range(3):
                p[i, c] *= unit


@_inner
def _finite_chain(p, t):
    """Whether every value of the pose ``p`` (n, 3) and the target ``t`` (3,) is finite."""
    for i in range(p.shape[0]):
        for c in range(3):
            if not math.isfinite(p[i, c]):
                return False
    return math.isfinite(t[0]) and math.isfinite(t[1]) and math.isfinite(t[2])


# --------------------------------------------------------------------------- tree
@_jit_no_alloc
def solve_tree_range(start, stop, pos, parents, targets, effectors, weights, tol_abs, tol_rel,
                     max_iter, min_improvement, fixed_root, frame0, limits, reached, error,
                     iterations, work):
    """Multi-effector FABRIK on trees ``start .. stop − 1`` of a batch, in place.

    pos (B, n, 3); parents (n,) int64 with parents[0] = -1 and parents[j] < j;
    targets (B, k, 3) for the leaves ``effectors`` (k,); weights (B, k) > 0.
    Bone ``j - 1`` joins joint ``parents[j]`` to joint ``j``. The error is the
    largest effector distance. ``frame0`` and ``limits`` as in
    :func:`solve_chain_range`, with one constraint per bone (n − 1); ``work`` is
    :func:`tree_workspace`'s scratch.
    """
    lengths, eff_of, active, w, acc, wacc, frames, root = work
    for b in range(start, stop):
        p = pos[b]
        tg = targets[b]
        total = _tree_lengths(p, parents, lengths)
        tol = tol_abs if tol_abs >= 0.0 else tol_rel * total
        _tree_weights(parents, effectors, weights[b], active, w)
        root[0] = p[0, 0]
        root[1] = p[0, 1]
        root[2] = p[0, 2]

        if limits is not None:
            # make the start pose admissible so every exit satisfies the limits
            _tree_forward(p, parents, root, lengths, frame0, frames, limits)
        err = _tree_error(p, tg, effectors)
        it = 0
        while err > tol and it < max_iter:
            _tree_backward(p, parents, tg, eff_of, active, w, lengths, acc, wacc)
            if not fixed_root:  # the root goes where the backward stage left it
                root[0] = p[0, 0]
                root[1] = p[0, 1]
                root[2] = p[0, 2]
            _tree_forward(p, parents, root, lengths, frame0, frames, limits)
            it += 1
            new_err = _tree_error(p, tg, effectors)
            improvement = err - new_err
            err = new_err
            if improvement < min_improvement:
                break
        reached[b] = err <= tol
        error[b] = err
        iterations[b] = it


@_inner_alloc
def tree_workspace(parents, effectors):
    """Scratch of the tree loops (also from Python): lengths, eff_of, active, w, acc, wacc,
    frames, root.

    Only ``eff_of`` (each joint's effector index, or -1) is filled; the loops write
    the others before reading them. Passed in rather than allocated in the serial
    drivers, so they compile no allocation.
    """
    n = parents.shape[0]
    eff_of = np.empty(n, dtype=np.int64)
    for j in range(n):
        eff_of[j] = -1
    for e in range(effectors.shape[0]):
        eff_of[effectors[e]] = e
    return (np.empty(n), eff_of, np.empty(n, dtype=np.bool_), np.empty(n), np.empty((n, 3)),
            np.empty(n), np.empty((n, 9)), np.empty(3))


@_inner
def _tree_lengths(p, parents, lengths):
    """Bone lengths (``lengths[j]`` for the bone ending at j; ``lengths[0] = 0``); the total."""
    total = 0.0
    lengths[0] = 0.0
    for j in range(1, p.shape[0]):
        q = parents[j]
        dx = p[j, 0] - p[q, 0]
        dy = p[j, 1] - p[q, 1]
        dz = p[j, 2] - p[q, 2]
        lengths[j] = math.sqrt(dx * dx + dy * dy + dz * dz)
        total += lengths[j]
    return total


@_inner
def _tree_weights(parents, effectors, weights, active, w):
    """Which joints lead to an effector, and each joint's pull (its effectors' weights)."""
    n = parents.shape[0]
    for j in range(n):
        active[j] = False
        w[j] = 0.0
    for e in range(effectors.shape[0]):
        w[effectors[e]] += weights[e]
        active[effectors[e]] = True
    for j in range(n - 1, 0, -1):
        if active[j]:
            active[parents[j]] = True
            w[parents[j]] += w[j]


@_inner
def _tree_backward(p, parents, tg, eff_of, active, w, lengths, acc, wacc):
    """Backward stage: effectors to targets, sub-bases (and the root) to weighted centroids."""
    n = p.shape[0]
    for j in range(n):
        acc[j, 0] = 0.0
        acc[j, 1] = 0.0
        acc[j, 2] = 0.0
        wacc[j] = 0.0
    for j in range(n - 1, 0, -1):
        if not active[j]:
            continue
        q = parents[j]
        # fallback for coincident joints: keep the old bone direction
        fx, fy, fz = _normalize(p[q, 0] - p[j, 0], p[q, 1] - p[j, 1],
                                p[q, 2] - p[j, 2], 0.0, 1.0, 0.0)
        e = eff_of[j]
        if e >= 0:
            p[j, 0] = tg[e, 0]
            p[j, 1] = tg[e, 1]
            p[j, 2] = tg[e, 2]
        else:
            p[j, 0] = acc[j, 0] / wacc[j]
            p[j, 1] = acc[j, 1] / wacc[j]
            p[j, 2] = acc[j, 2] / wacc[j]
        dx, dy, dz = _normalize(p[q, 0] - p[j, 0], p[q, 1] - p[j, 1],
                                p[q, 2] - p[j, 2], fx, fy, fz)
        L = lengths[j]
        wj = w[j]
        acc[q, 0] += wj * (p[j, 0] + L * dx)
        acc[q, 1] += wj * (p[j, 1] + L * dy)
        acc[q, 2] += wj * (p[j, 2] + L * dz)
        wacc[q] += wj
    if wacc[0] > 0.0:
        p[0, 0] = acc[0, 0] / wacc[0]
        p[0, 1] = acc[0, 1] / wacc[0]
        p[0, 2] = acc[0, 2] / wacc[0]


@_jit_no_alloc
def tree_backward_pass(pos, parents, targets, effectors, weights, lengths_from, work):
    """One backward stage on a batch of trees, in place.

    pos (B, n, 3); ``lengths_from`` (B, n, 3) the poses whose bone lengths are kept;
    targets (B, k, 3) for ``effectors`` (k,) with weights (B, k); ``work`` as in
    :func:`solve_tree_range`.
    """
    lengths, eff_of, active, w, acc, wacc, _, _ = work
    for b in range(pos.shape[0]):
        _tree_lengths(lengths_from[b], parents, lengths)
        _tree_weights(parents, effectors, weights[b], active, w)
        _tree_backward(pos[b], parents, targets[b], eff_of, active, w, lengths, acc, wacc)


@_jit_no_alloc
def tree_forward_pass(pos, parents, lengths_from, roots, frame0, limits, work):
    """One forward stage on a batch of trees, in place.

    pos (B, n, 3); ``lengths_from`` (B, n, 3) the poses whose bone lengths are kept;
    roots (B, 3); constraints applied and ``work`` as in :func:`solve_tree_range`.
    """
    lengths, _, _, _, _, _, frames, _ = work
    for b in range(pos.shape[0]):
        _tree_lengths(lengths_from[b], parents, lengths)
        _tree_forward(pos[b], parents, roots[b], lengths, frame0, frames, limits)


@_inner
def _tree_error(p, tg, effectors):
    err = 0.0
    for e in range(effectors.shape[0]):
        j = effectors[e]
        ex = p[j, 0] - tg[e, 0]
        ey = p[j, 1] - tg[e, 1]
        ez = p[j, 2] - tg[e, 2]
        err = max(err, math.sqrt(ex * ex + ey * ey + ez * ez))
    return err


@_inner
def _tree_forward(p, parents, root, lengths, frame0, frames, limits):
    """Forward reaching over a tree (parents first); frames[j] = frame of the bone ending at j.

    ``limits`` as in :func:`solve_tree_range`. With ``seed_frames``, a bone whose parent
    bone ends at q > 0 is constrained in ``CFrame.new(p[parents[q]], p[q])`` instead of
    the carried frame.
    """
    n = p.shape[0]
    p[0, 0] = root[0]
    p[0, 1] = root[1]
    p[0, 2] = root[2]
    for m in range(3):
        for c in range(3):
            frames[0, 3 * m + c] = frame0[m, c]
    if limits is None:
        for j in range(1, n):
            q = parents[j]
            dx, dy, dz = _normalize(p[j, 0] - p[q, 0], p[j, 1] - p[q, 1], p[j, 2] - p[q, 2],
                                    frames[q, 0], frames[q, 1], frames[q, 2])
            frames[j, 0] = dx
            frames[j, 1] = dy
            frames[j, 2] = dz
            L = lengths[j]
            p[j, 0] = p[q, 0] + L * dx
            p[j, 1] = p[q, 1] + L * dy
            p[j, 2] = p[q, 2] + L * dz
        return
    kinds, params, haxes, constrain_root, seed_frames = limits
    for j in range(1, n):
        q = parents[j]
        f = frames[q]
        lx, ly, lz = f[0], f[1], f[2]
        ux, uy, uz = f[3], f[4], f[5]
        rx, ry, rz = f[6], f[7], f[8]
        if seed_frames and q > 0:
            g = parents[q]
            lx, ly, lz, ux, uy, uz, rx, ry, rz = look_at(p[g, 0], p[g, 1], p[g, 2],
                                                          p[q, 0], p[q, 1], p[q, 2])
        dx, dy, dz = _normalize(p[j, 0] - p[q, 0], p[j, 1] - p[q, 1], p[j, 2] - p[q, 2],
                                lx, ly, lz)
        kd = kinds[j - 1]
        if kd != FREE and (q != 0 or constrain_root):
            dx, dy, dz = _apply_constraint(kd, params[j - 1], haxes[j - 1], dx, dy, dz,
                                           lx, ly, lz, ux, uy, uz, rx, ry, rz)
        (frames[j, 0], frames[j, 1], frames[j, 2], frames[j, 3], frames[j, 4], frames[j, 5],
         frames[j, 6], frames[j, 7], frames[j, 8]) = _transport(lx, ly, lz, ux, uy, uz,
                                                                dx, dy, dz)
        L = lengths[j]
        p[j, 0] = p[q, 0] + L * dx
        p[j, 1] = p[q, 1] + L * dy
        p[j, 2] = p[q, 2] + L * dz
