"""A constrained polish for cone-limited chains that FABRIK and its arcs leave short.

Each bone ``i`` is written as a point ``(x, y)`` of its joint's cross-section at unit
height along the parent bone, in the parent's carried frame (the frames
:func:`limbik.fabrik`'s forward pass measures the limits in): the bone's direction is
``look + x · right + y · up``, normalised. Within an elliptical cone that point lies in
the quarter ellipses of half-axes ``tan(right)``/``tan(left)`` and ``tan(up)``/``tan(down)``;
within a ``Cone`` of angle ``a``, in the disc of radius ``tan(a)``. The point is the
ellipse's half-axes times ``(s, t) · sin(ρ)/ρ`` with ``ρ = |(s, t)|``, so every ``(s, t)``
gives a bend within the limit and the limit is never broken. A free bone 0 turns by a
rotation vector about the root. Levenberg–Marquardt steps on these parameters (Jacobian
by finite differences) bring the end toward the target, from the given pose and, where
that stalls short, from random bends.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray
from limbik.solvers.fabrik import _kernels as K

#: Levenberg–Marquardt steps at most, and the finite-difference step (parameters are O(1))
STEPS = 60
_EPS = 1e-7
#: starts from random bends (seeded, the same for every chain) where the given pose's
#: polish stalls short
RESTARTS = 8
#: a bend on its limit starts this far inside it (sin's slope is 0 on the limit)
_INSIDE = 0.98


def can_polish(limits: Any) -> bool:
    """Whether the polish applies: elliptical cones, with cones or free bones elsewhere, in
    carried frames (or in seed frames where every elliptical cone is circular: its limit
    then does not depend on the frame's turn about the parent bone)."""
    if limits is None:
        return False
    kinds, params = limits[0], limits[1]
    ellipse = kinds == K.ELLIPSE
    if limits[4] and np.any(params[ellipse] != params[ellipse, :1]):
        return False
    return bool(ellipse.any()) and bool(np.all((kinds == K.FREE) | (kinds == K.CONE) | ellipse))


def _dot(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.einsum("...i,...i->...", a, b)[..., None]


def _transport(look: FloatArray, up: FloatArray, d: FloatArray
               ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The frame (look, up, right) carried to look ``d`` by the minimal rotation, as the
    kernels' forward pass carries it (arrays (..., 3))."""
    c = _dot(look, d)
    k = np.cross(look, d)
    turn = c > -1.0 + 1e-9
    new = np.where(turn, c * up + np.cross(k, up) + k * _dot(k, up) / np.where(turn, 1.0 + c, 1.0),
                   up)
    new = new - _dot(new, d) * d
    size = np.sqrt(_dot(new, new))
    if np.any(size < 1e-6):  # up collapsed onto d: any perpendicular
        axis = np.where(np.abs(d[..., :1]) > 0.9, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
        other = axis - _dot(axis, d) * d
        new = np.where(size < 1e-6, other, new)
        size = np.sqrt(_dot(new, new))
    new = new / size
    return d, new, np.cross(d, new)


def _rotate(v: FloatArray, w: FloatArray) -> FloatArray:
    """``v`` turned by rotation vectors ``w`` (..., 3)."""
    angle = np.sqrt(_dot(w, w))
    k = w / np.where(angle > 0.0, angle, 1.0)
    return (v * np.cos(angle) + np.cross(k, v) * np.sin(angle)
            + k * _dot(k, v) * (1.0 - np.cos(angle)))


class _Chain:
    """The parameterisation of chains of one constraint list (see the module's text)."""

    size: int

    def __init__(self, limits: Any, frame0: FloatArray) -> None:
        kinds, params = limits[0], limits[1]
        self.frame0 = frame0
        self.free_root = not (limits[3] and kinds[0] != K.FREE)
        bones = kinds.size
        # half-axes (right, left, up, down) of each bone's region; 0 marks a free bone
        axes = np.zeros((bones, 4))
        cone = kinds == K.CONE
        axes[cone] = np.tan(params[cone, :1])
        ellipse = kinds == K.ELLIPSE
        axes[ellipse] = params[ellipse][:, [1, 0, 2, 3]]
        if self.free_root:
            axes[0] = 0.0
        self.axes = axes
        self.limited = (kinds != K.FREE) & ~((np.arange(bones) == 0) & self.free_root)
        self.size = 2 * bones + (1 if self.free_root else 0)  # ω (3) or bone 0's (s, t)

    def _cross_section(self, i: int, s: FloatArray, t: FloatArray
                       ) -> tuple[FloatArray, FloatArray]:
        if not self.limited[i]:
            return s, t
        rho = np.hypot(s, t)
        f = np.sinc(rho / np.pi)
        x, y = s * f, t * f
        a = self.axes[i]
        return x * np.where(x >= 0.0, a[0], a[1]), y * np.where(y >= 0.0, a[2], a[3])

    def positions(self, q: FloatArray, d0: FloatArray, root: FloatArray, lengths: FloatArray
                  ) -> FloatArray:
        """Poses (R, k, n, 3) of parameters ``q`` (R, k, size); ``d0`` (R, 3) bone 0's
        direction where bone 0 turns freely, ``root`` (R, 3), ``lengths`` (R, n − 1)."""
        shape = q.shape[:-1]
        look = np.broadcast_to(self.frame0[0], shape + (3,))
        up = np.broadcast_to(self.frame0[1], shape + (3,))
        right = np.broadcast_to(self.frame0[2], shape + (3,))
        out = [np.broadcast_to(root[:, None], shape + (3,))]
        column = 0
        for i in range(self.axes.shape[0]):
            if i == 0 and self.free_root:
                d = _rotate(np.broadcast_to(d0[:, None], shape + (3,)), q[..., :3])
                column = 3
            else:
                x, y = self._cross_section(i, q[..., column], q[..., column + 1])
                column += 2
                d = look + x[..., None] * right + y[..., None] * up
                d = d / np.sqrt(_dot(d, d))
            look, up, right = _transport(look, up, d)
            out.append(out[-1] + lengths[:, None, i, None] * d)
        return np.stack(out, axis=-2)

    def parameters(self, p: FloatArray) -> FloatArray:
        """Parameters (R, size) of poses ``p`` (R, n, 3) whose bends are within their
        limits (a bend on its limit is moved ``_INSIDE`` of the way in)."""
        d = np.diff(p, axis=1)
        d = d / np.linalg.norm(d, axis=-1, keepdims=True)
        rows = p.shape[0]
        look = np.broadcast_to(self.frame0[0], (rows, 3))
        up = np.broadcast_to(self.frame0[1], (rows, 3))
        right = np.broadcast_to(self.frame0[2], (rows, 3))
        q = []
        for i in range(d.shape[1]):
            if i == 0 and self.free_root:
                q.append(np.zeros((rows, 3)))
            else:
                h = np.maximum(_dot(look, d[:, i])[:, 0], 1e-3)
                x = _dot(right, d[:, i])[:, 0] / h
                y = _dot(up, d[:, i])[:, 0] / h
                if self.limited[i]:
                    a = self.axes[i]
                    ax = np.where(x >= 0.0, a[0], a[1])
                    by = np.where(y >= 0.0, a[2], a[3])
                    x = np.where(ax > 0.0, x / np.where(ax > 0.0, ax, 1.0), 0.0)
                    y = np.where(by > 0.0, y / np.where(by > 0.0, by, 1.0), 0.0)
                    r = np.hypot(x, y)
                    scale = np.minimum(r, _INSIDE)
                    rho = np.arcsin(scale)
                    f = np.where(r > 0.0, rho / np.where(r > 0.0, r, 1.0), 1.0)
                    x, y = x * f, y * f
                q.append(np.stack([x, y], axis=-1))
            look, up, right = _transport(look, up, d[:, i])
        return np.concatenate(q, axis=-1)


def polish(p: FloatArray, t: FloatArray, limits: Any, frame0: FloatArray, tol: FloatArray,
           steps: int = STEPS, restarts: int = RESTARTS) -> FloatArray:
    """Poses ``(R, n, 3)`` from the admissible poses ``p`` (R, n, 3), moved within the
    limits toward targets ``t`` (R, 3) by Levenberg–Marquardt steps until the end is
    within ``tol / 2`` (R,) of the target or ``steps`` are spent. Where that leaves the
    end farther, ``restarts`` random starts (seeded; bone 0 toward the target) are
    polished the same way, and the pose ending nearest the target is returned. Bone
    lengths and root are kept."""
    chain = _Chain(limits, frame0)
    lengths = np.linalg.norm(np.diff(p, axis=1), axis=-1)
    d0 = (p[:, 1] - p[:, 0]) / lengths[:, :1]
    pose, error = _descend(chain, chain.parameters(p), d0, p[:, 0], lengths, t, tol, steps, 1)
    short = np.flatnonzero(error > 0.5 * tol)
    if restarts and short.size:
        # the same starts for every chain, whatever else is in the batch
        q = np.repeat(np.random.default_rng(0).uniform(-1.5, 1.5, (restarts, chain.size)),
                      short.size, axis=0)
        aim = t[short] - p[short, 0]
        far_enough = np.linalg.norm(aim, axis=-1, keepdims=True) > 1e-9 * lengths[short].sum(
            axis=-1, keepdims=True)
        aim = np.where(far_enough, aim / np.where(far_enough, np.linalg.norm(
            aim, axis=-1, keepdims=True), 1.0), d0[short])
        if chain.free_root:
            q[:, :3] = 0.0
        root, span, goal = (np.tile(a[short], (restarts, 1)) for a in (p[:, 0], lengths, t))
        more, far = _descend(chain, q, np.tile(aim, (restarts, 1)), root, span, goal,
                             np.tile(tol[short], restarts), steps, restarts)
        best = np.argmin(far.reshape(restarts, -1), axis=0)
        far = far.reshape(restarts, -1)[best, np.arange(short.size)]
        nearer = far < error[short]
        more = more.reshape(restarts, short.size, *more.shape[1:])[best, np.arange(short.size)]
        pose[short[nearer]] = more[nearer]
    return pose


def _descend(chain: _Chain, q: FloatArray, d0: FloatArray, root: FloatArray,
             lengths: FloatArray, t: FloatArray, tol: FloatArray, steps: int, groups: int
             ) -> tuple[FloatArray, FloatArray]:
    """Levenberg–Marquardt from parameters ``q`` (R, m) (changed in place): the poses
    (R, n, 3) and their ends' distances (R,) from ``t``. The rows are ``groups`` starts
    of the same chains, one after another; a chain's starts stop once one is within
    ``tol / 2``."""
    total = lengths.sum(axis=-1)
    probe = np.concatenate([np.zeros((1, chain.size)), _EPS * np.eye(chain.size)])
    d0 = d0.copy()

    def ends(q: FloatArray, rows: np.ndarray) -> FloatArray:
        return chain.positions(q, d0[rows], root[rows], lengths[rows])

    pose = ends(q[:, None], np.arange(q.shape[0]))[:, 0]
    error = np.linalg.norm(pose[:, -1] - t, axis=-1)
    damping = np.full(q.shape[0], 1e-3)
    for _ in range(steps):
        close = error <= 0.5 * tol
        found = close.reshape(groups, -1).any(axis=0)  # by any start
        rows = np.flatnonzero(~close & ~np.tile(found, groups))
        if rows.size == 0:
            break
        tried = ends(q[rows, None] + probe, rows)[..., -1, :]  # (R, m + 1, 3)
        jac = (tried[:, 1:] - tried[:, :1]).transpose(0, 2, 1) / _EPS  # (R, 3, m)
        gap = t[rows] - tried[:, 0]
        normal = jac @ jac.transpose(0, 2, 1)
        scale = np.trace(normal, axis1=1, axis2=2) / 3.0 + 1e-12 * total[rows] ** 2
        normal += (damping[rows] * scale)[:, None, None] * np.eye(3)
        step = (jac.transpose(0, 2, 1) @ np.linalg.solve(normal, gap[..., None]))[..., 0]
        new_q = q[rows] + step
        new = ends(new_q[:, None], rows)[:, 0]
        new_error = np.linalg.norm(new[:, -1] - t[rows], axis=-1)
        better = new_error < error[rows]
        done = rows[better]
        if chain.free_root:  # fold bone 0's turn into its direction
            d0[done] = _rotate(d0[done], new_q[better, :3])
            new_q[:, :3] = 0.0
        q[done], pose[done], error[done] = new_q[better], new[better], new_error[better]
        damping[done] *= 0.3
        damping[rows[~better]] *= 4.0
    return pose, error
