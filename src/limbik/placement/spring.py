"""Critically damped springs for smoothing signals in time (like Unity's SmoothDamp).

A critically damped spring follows its target without overshoot; ``smooth_time``
(seconds) is roughly the time it takes to close most of a step, as in Roblox
IKControl's ``SmoothTime``. ``smooth_zero_lag`` runs the spring forward and then
backward over a whole clip, so offline smoothing adds no lag.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from limbik._runtime.validation import FloatArray, as_float, as_float_array

__all__ = ["smooth_damp", "smooth_zero_lag"]


@njit(cache=True)
def _smooth_damp_kernel(signal: np.ndarray, dt: float, smooth_time: float) -> np.ndarray:
    n, k = signal.shape
    out = np.empty_like(signal)
    omega = 2.0 / smooth_time
    x = omega * dt
    decay = 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x)
    for c in range(k):
        value = signal[0, c]
        velocity = 0.0
        out[0, c] = value
        for i in range(1, n):
            change = value - signal[i, c]
            temp = (velocity + omega * change) * dt
            velocity = (velocity - omega * temp) * decay
            value = signal[i, c] + (change + temp) * decay
            out[i, c] = value
    return out


def _prepare(signal: Any, dt: float, smooth_time: float) -> tuple[FloatArray, tuple[int, ...]]:
    s = as_float_array(signal, "signal")
    if s.ndim == 0 or s.shape[0] == 0:
        raise ValueError("signal must have a leading time axis with at least one frame")
    as_float(dt, "dt", minimum=0.0, exclusive=True)
    as_float(smooth_time, "smooth_time", minimum=0.0)
    shape = s.shape
    return np.ascontiguousarray(s.reshape(shape[0], -1)), shape


def smooth_damp(signal: Any, dt: float, smooth_time: float) -> FloatArray:
    """Follow ``signal`` ``(frames, ...)`` with a critically damped spring; same shape out.

    The spring starts at rest on the first sample. ``smooth_time`` 0 returns the input.
    """
    s, shape = _prepare(signal, dt, smooth_time)
    if smooth_time == 0:
        return s.reshape(shape).copy()
    return _smooth_damp_kernel(s, float(dt), float(smooth_time)).reshape(shape)


def smooth_zero_lag(signal: Any, dt: float, smooth_time: float) -> FloatArray:
    """Forward-then-backward spring ``(frames, ...)``: smooth, no lag, no overshoot."""
    s, shape = _prepare(signal, dt, smooth_time)
    if smooth_time == 0:
        return s.reshape(shape).copy()
    forward = _smooth_damp_kernel(s, float(dt), float(smooth_time))
    backward = _smooth_damp_kernel(np.ascontiguousarray(forward[::-1]), float(dt),
                                   float(smooth_time))
    return backward[::-1].reshape(shape).copy()
