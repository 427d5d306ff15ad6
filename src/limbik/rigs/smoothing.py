"""``CriticallyDamped``: a per-frame spring toward a moving goal, exact for any ``dt``.

The spring ``x'' = ω² (g − x) − 2ω x'`` with ``ω = 2 / smooth_time`` (the time
constant of Roblox ``IKControl.SmoothTime`` and Unity's ``SmoothDamp``) never
overshoots a step. Each :meth:`CriticallyDamped.step` integrates it in closed form
while the goal moves in a straight line from the previous step's goal to the new one,
so the state after a given time does not depend on how that time was cut into frames
(for goals that move linearly between frames; otherwise to the sampling of the
goal's path). :func:`limbik.placement.spring.smooth_damp` is the whole-clip version.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray, as_float, as_float_array
from limbik.errors import InvalidInputError

__all__ = ["CriticallyDamped"]


class CriticallyDamped:
    """A critically damped follower of goals with shape ``(...)`` (points, angles, ...).

    Parameters
    ----------
    value : array_like
        The starting value; the spring starts at rest there, with its goal there.
    smooth_time : float
        Seconds, >= 0; 0 follows the goal exactly.
    """

    def __init__(self, value: Any, smooth_time: float) -> None:
        self.value = np.array(as_float_array(value, "value"), dtype=np.float64)
        self.velocity = np.zeros_like(self.value)
        self.goal = self.value.copy()
        self.smooth_time = as_float(smooth_time, "smooth_time", minimum=0.0)

    def reset(self, value: Any) -> None:
        """Jump to ``value`` (and make it the goal), at rest."""
        self.value = np.array(as_float_array(value, "value"), dtype=np.float64)
        self.velocity = np.zeros_like(self.value)
        self.goal = self.value.copy()

    def step(self, goal: Any, dt: float) -> FloatArray:
        """Advance ``dt`` seconds toward ``goal`` (same shape as the value); the new value."""
        g1 = as_float_array(goal, "goal")
        if g1.shape != self.value.shape:
            raise InvalidInputError(f"goal must have shape {self.value.shape}, got {g1.shape}",
                                    argument="goal")
        dt = as_float(dt, "dt", minimum=0.0)
        if self.smooth_time == 0.0:
            self.value = g1.copy()
            self.velocity = np.zeros_like(g1)
        elif dt > 0.0:
            omega = 2.0 / self.smooth_time
            g0 = self.goal
            s = (g1 - g0) / dt  # the goal's velocity over this step
            a = self.value - g0 + 2.0 * s / omega
            b = self.velocity - s + omega * a
            decay = math.exp(-omega * dt)
            e = -2.0 * s / omega + (a + b * dt) * decay
            self.value = g0 + s * dt + e
            self.velocity = s + (b - omega * (a + b * dt)) * decay
        self.goal = g1.copy()
        return self.value.copy()
