"""Compiled loops of joint rotations: each bone's minimal turn applied to its input rotation.

The compiled form of :func:`limbik.solvers.rotations.joint_rotations`, which ``two_bone``'s
pose layer and ``ccd`` use to fill ``Solution.rotations``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def joint_rotations_kernel(positions, start, rotations, out):  # pragma: no cover - compiled
    """Rows ``out (B, n, 4)``: joint ``j`` is ``D_j · rotations[j]``, the end joint
    ``D_{n−2} · rotations[n − 1]``, where ``D_j`` is the smallest rotation taking bone ``j``
    of ``start (B, n, 3)`` onto bone ``j`` of ``positions (B, n, 3)``. ``rotations`` is
    ``(B, n, 4)`` or ``(1, n, 4)`` (shared). A zero-length bone does not turn; opposite
    directions turn half way about the perpendicular nearest the least-aligned world axis.
    A bone is of zero length when it is at most 1e-12 of the row's longest bone component
    (in either pose), so the answer does not depend on the chain's scale.
    """
    batch = positions.shape[0]
    n = positions.shape[1]
    shared = rotations.shape[0] == 1
    for b in range(batch):
        r = 0 if shared else b
        longest = 0.0
        for j in range(n - 1):
            for c in range(3):
                longest = max(longest, abs(start[b, j + 1, c] - start[b, j, c]),
                              abs(positions[b, j + 1, c] - positions[b, j, c]))
        tiny = 1e-12 * longest
        dx = dy = dz = 0.0
        dw = 1.0
        for j in range(n):
            if j < n - 1:
                ax = start[b, j + 1, 0] - start[b, j, 0]
                ay = start[b, j + 1, 1] - start[b, j, 1]
                az = start[b, j + 1, 2] - start[b, j, 2]
                bx = positions[b, j + 1, 0] - positions[b, j, 0]
                by = positions[b, j + 1, 1] - positions[b, j, 1]
                bz = positions[b, j + 1, 2] - positions[b, j, 2]
                na = np.sqrt(ax * ax + ay * ay + az * az)
                nb = np.sqrt(bx * bx + by * by + bz * bz)
                if na <= tiny or nb <= tiny:
                    dx = dy = dz = 0.0
                    dw = 1.0
                else:
                    ax /= na
                    ay /= na
                    az /= na
                    bx /= nb
                    by /= nb
                    bz /= nb
                    dw = 1.0 + ax * bx + ay * by + az * bz
                    dx = ay * bz - az * by
                    dy = az * bx - ax * bz
                    dz = ax * by - ay * bx
                    if dw < 1e-12:
                        # half turn about a stable perpendicular of a
                        ux, uy, uz = abs(ax), abs(ay), abs(az)
                        if ux <= uy and ux <= uz:
                            hx, hy, hz = 1.0, 0.0, 0.0
                        elif uy <= uz:
                            hx, hy, hz = 0.0, 1.0, 0.0
                        else:
                            hx, hy, hz = 0.0, 0.0, 1.0
                        k = hx * ax + hy * ay + hz * az
                        dx, dy, dz = hx - k * ax, hy - k * ay, hz - k * az
                        dw = 0.0
                    m = np.sqrt(dx * dx + dy * dy + dz * dz + dw * dw)
                    dx /= m
                    dy /= m
                    dz /= m
                    dw /= m
            qx = rotations[r, j, 0]
            qy = rotations[r, j, 1]
            qz = rotations[r, j, 2]
            qw = rotations[r, j, 3]
            ox = dw * qx + dx * qw + dy * qz - dz * qy
            oy = dw * qy - dx * qz + dy * qw + dz * qx
            oz = dw * qz + dx * qy - dy * qx + dz * qw
            ow = dw * qw - dx * qx - dy * qy - dz * qz
            m = np.sqrt(ox * ox + oy * oy + oz * oz + ow * ow)
            out[b, j, 0] = ox / m
            out[b, j, 1] = oy / m
            out[b, j, 2] = oz / m
            out[b, j, 3] = ow / m
