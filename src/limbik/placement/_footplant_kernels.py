"""Compiled per-frame passes of foot placement over whole clips."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def limit_rate(values: np.ndarray, rate: np.ndarray, free: np.ndarray) -> np.ndarray:
    """``values`` ``(n,)`` with ``|out[i] - out[i-1]| <= rate[i]`` where it can be had by
    changing only frames with ``free[i]`` true (the others are kept exactly).

    A forward pass clamps each free frame to its predecessor's reach, a backward pass to
    its successor's, so a change that would happen within a frame next to a kept frame
    is spread over the free frames before and after it. Where two kept frames are
    further apart than the rates between them allow, those rates are scaled up just
    enough to join them (evenly, rather than in one frame at the end).
    """
    n = values.shape[0]
    out = values.copy()
    rate = rate.copy()
    i = 0
    while i < n:
        if not free[i]:
            i += 1
            continue
        start = i
        while i < n and free[i]:
            i += 1
        if start > 0 and i < n:
            available = 0.0
            for k in range(start, i + 1):
                available += rate[k]
            needed = abs(values[i] - values[start - 1])
            if needed > available:
                scale = needed / max(available, 1e-300) * (1.0 + 1e-9)
                for k in range(start, i + 1):
                    rate[k] *= scale
    for i in range(1, n):
        if free[i]:
            low = out[i - 1] - rate[i]
            high = out[i - 1] + rate[i]
            if out[i] < low:
                out[i] = low
            elif out[i] > high:
                out[i] = high
    for i in range(n - 2, -1, -1):
        if free[i]:
            low = out[i + 1] - rate[i + 1]
            high = out[i + 1] + rate[i + 1]
            if out[i] < low:
                out[i] = low
            elif out[i] > high:
                out[i] = high
    return out
