"""Compiled height-field sampling (bilinear, clamped at the edges)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)  # called from the kernels
def height_at(heights: np.ndarray, cell: float, x0: float, z0: float, x: float,
              z: float) -> float:
    """Bilinear height of the grid ``heights`` ``(rows, cols)`` (cell size ``cell``, first
    sample at ``(x0, z0)``) at ``(x, z)``; outside the grid the edge is held."""
    rows, cols = heights.shape
    if rows * cols == 1:
        return heights[0, 0]
    u = min(max((x - x0) / cell, 0.0), cols - 1.0)
    v = min(max((z - z0) / cell, 0.0), rows - 1.0)
    j = min(int(np.floor(u)), max(cols - 2, 0))
    i = min(int(np.floor(v)), max(rows - 2, 0))
    fu = u - j
    fv = v - i
    i1 = min(i + 1, rows - 1)
    j1 = min(j + 1, cols - 1)
    return ((1 - fv) * ((1 - fu) * heights[i, j] + fu * heights[i, j1])
            + fv * ((1 - fu) * heights[i1, j] + fu * heights[i1, j1]))


@njit(cache=True)
def sample_heights(heights: np.ndarray, cell: float, x0: float, z0: float, x: np.ndarray,
                   z: np.ndarray) -> np.ndarray:
    """:func:`height_at` for each of the points ``x``, ``z`` ``(n,)``: ``(n,)``."""
    out = np.empty(x.shape[0])
    for k in range(x.shape[0]):
        out[k] = height_at(heights, cell, x0, z0, x[k], z[k])
    return out
