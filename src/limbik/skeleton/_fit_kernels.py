"""Compiled fitting of world joint rotations to bone directions: down a joint tree, and
the best rotation of a joint with several children."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from limbik.geometry._quaternion_kernels import multiply, rotate, swing


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
                # the rest bone carried by the parent
                cx, cy, cz = rotate(px, py, pz, pw, direction[c, 0], direction[c, 1],
                                    direction[c, 2])
                if lengths[f, c - 1] > 0.0:
                    gx, gy, gz = unit[f, c - 1, 0], unit[f, c - 1, 1], unit[f, c - 1, 2]
                else:
                    gx, gy, gz = cx, cy, cz
                ax, ay, az, aw = swing(cx, cy, cz, gx, gy, gz)
                x, y, z, w = multiply(ax, ay, az, aw, px, py, pz, pw)
            n = math.sqrt(x * x + y * y + z * z + w * w)
            world[f, j, 0] = x / n
            world[f, j, 1] = y / n
            world[f, j, 2] = z / n
            world[f, j, 3] = w / n


@njit(cache=True)
def best_rotations(h: np.ndarray) -> np.ndarray:
    """The rotations ``(n, 4)`` (x, y, z, w; w >= 0) that best map rest points onto points
    now, from their covariances ``h`` ``(n, 3, 3)`` (``h[c, d]``: the sum over the points
    of rest coordinate ``c`` times coordinate ``d`` now): Horn's unit quaternion, the
    eigenvector of the largest eigenvalue of his symmetric 4 × 4 matrix (cyclic Jacobi
    sweeps), which maximises the match over proper rotations as Kabsch's SVD with its
    reflection fix does."""
    out = np.empty((h.shape[0], 4))
    a = np.empty((4, 4))
    v = np.empty((4, 4))
    for i in range(h.shape[0]):
        sxx, sxy, sxz = h[i, 0, 0], h[i, 0, 1], h[i, 0, 2]
        syx, syy, syz = h[i, 1, 0], h[i, 1, 1], h[i, 1, 2]
        szx, szy, szz = h[i, 2, 0], h[i, 2, 1], h[i, 2, 2]
        # (rows and columns: w, x, y, z)
        a[0, 0], a[0, 1], a[0, 2], a[0, 3] = sxx + syy + szz, syz - szy, szx - sxz, sxy - syx
        a[1, 1], a[1, 2], a[1, 3] = sxx - syy - szz, sxy + syx, szx + sxz
        a[2, 2], a[2, 3] = -sxx + syy - szz, syz + szy
        a[3, 3] = -sxx - syy + szz
        for r in range(4):
            for c in range(r):
                a[r, c] = a[c, r]
            for c in range(4):
                v[r, c] = 1.0 if r == c else 0.0
        for _ in range(32):  # (sweeps until the off-diagonal is rounding of the diagonal)
            off = 0.0
            diagonal = 0.0
            for p in range(4):
                diagonal += a[p, p] * a[p, p]
                for q in range(p + 1, 4):
                    off += a[p, q] * a[p, q]
            if not off > 1e-36 * diagonal:
                break
            for p in range(3):
                for q in range(p + 1, 4):
                    if a[p, q] == 0.0:
                        continue
                    theta = (a[q, q] - a[p, p]) / (2.0 * a[p, q])
                    t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                    cs = 1.0 / math.sqrt(t * t + 1.0)
                    sn = t * cs
                    for k in range(4):  # A <- Jᵀ A J, V <- V J
                        akp, akq = a[k, p], a[k, q]
                        a[k, p], a[k, q] = cs * akp - sn * akq, sn * akp + cs * akq
                    for k in range(4):
                        apk, aqk = a[p, k], a[q, k]
                        a[p, k], a[q, k] = cs * apk - sn * aqk, sn * apk + cs * aqk
                    for k in range(4):
                        vkp, vkq = v[k, p], v[k, q]
                        v[k, p], v[k, q] = cs * vkp - sn * vkq, sn * vkp + cs * vkq
        top = 0
        for k in range(1, 4):
            if a[k, k] > a[top, top]:
                top = k
        w, x, y, z = v[0, top], v[1, top], v[2, top], v[3, top]
        if w < 0.0:
            w, x, y, z = -w, -x, -y, -z
        n = math.sqrt(x * x + y * y + z * z + w * w)
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = x / n, y / n, z / n, w / n
    return out
