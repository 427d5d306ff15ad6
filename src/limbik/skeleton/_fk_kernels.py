"""Compiled forward kinematics of a joint tree over many frames, on every thread."""

from __future__ import annotations

import numpy as np
from numba import njit

from limbik._runtime.batch_threads import run_range
from limbik._runtime.validation import UNIT_MARGIN

#: Joint transforms per chunk at least where frames are spread over threads (about
#: 0.1 ms of work).
SMALLEST_CHUNK = 8192


def forward_kinematics_frames(parents: np.ndarray, q_local: np.ndarray, t_local: np.ndarray,
                              q_world: np.ndarray, p_world: np.ndarray,
                              only: np.ndarray) -> int:
    """Fill ``q_world (N, J, 4)`` and ``p_world (N, J, 3)`` from local transforms.

    ``parents (J,)`` come before their children; -1 marks a root. Quaternions are
    (x, y, z, w). Only joints with ``only[j]`` true are (re)computed; the others must
    already hold their world transforms (pass all true for a full pass). Frames are
    independent and spread over every thread.

    Returns the number of computed joints whose local rotation is not unit to
    :data:`limbik._runtime.validation.UNIT_MARGIN` (a row validation keeps as it is) or whose
    translation is not finite (0 for validated input): callers that pass unvalidated
    arrays validate them and run again when it is not 0.
    """
    frames, joints = q_local.shape[0], max(1, q_local.shape[1])
    arguments = (parents, q_local, t_local, q_world, p_world, only)
    return sum(run_range(forward_kinematics_range, frames, lambda: arguments,
                         smallest=-(-SMALLEST_CHUNK // joints)))


@njit(cache=True, nogil=True)
def forward_kinematics_range(start: int, stop: int, parents: np.ndarray, q_local: np.ndarray,
                             t_local: np.ndarray, q_world: np.ndarray, p_world: np.ndarray,
                             only: np.ndarray) -> int:
    """:func:`forward_kinematics_frames` on frames ``start .. stop - 1``; returns their
    count of joints that fail its check."""
    joints = q_local.shape[1]
    failed = 0
    for f in range(start, stop):
        for j in range(joints):
            if not only[j]:
                continue
            p = parents[j]
            lx, ly, lz, lw = q_local[f, j, 0], q_local[f, j, 1], q_local[f, j, 2], q_local[f, j, 3]
            vx, vy, vz = t_local[f, j, 0], t_local[f, j, 1], t_local[f, j, 2]
            # NaN and infinity fail both tests
            if not (abs((lx * lx + ly * ly) + (lz * lz + lw * lw) - 1.0) < UNIT_MARGIN
                    and (vx - vx) + (vy - vy) + (vz - vz) == 0.0):
                failed += 1
            if p < 0:
                q_world[f, j, 0] = lx
                q_world[f, j, 1] = ly
                q_world[f, j, 2] = lz
                q_world[f, j, 3] = lw
                p_world[f, j, 0] = vx
                p_world[f, j, 1] = vy
                p_world[f, j, 2] = vz
                continue
            x, y, z, w = q_world[f, p, 0], q_world[f, p, 1], q_world[f, p, 2], q_world[f, p, 3]
            q_world[f, j, 0] = w * lx + x * lw + y * lz - z * ly
            q_world[f, j, 1] = w * ly - x * lz + y * lw + z * lx
            q_world[f, j, 2] = w * lz + x * ly - y * lx + z * lw
            q_world[f, j, 3] = w * lw - x * lx - y * ly - z * lz
            tx = 2.0 * (y * vz - z * vy)
            ty = 2.0 * (z * vx - x * vz)
            tz = 2.0 * (x * vy - y * vx)
            p_world[f, j, 0] = p_world[f, p, 0] + vx + w * tx + (y * tz - z * ty)
            p_world[f, j, 1] = p_world[f, p, 1] + vy + w * ty + (z * tx - x * tz)
            p_world[f, j, 2] = p_world[f, p, 2] + vz + w * tz + (x * ty - y * tx)
    return failed
