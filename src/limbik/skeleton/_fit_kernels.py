"""Compiled fitting of world joint rotations to bone directions, down a joint tree."""

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
