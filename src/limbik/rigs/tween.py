"""Roblox-style tweens of a :class:`~limbik.Frame` property (``TweenService``, ``TweenInfo``).

``TweenInfo(time)`` has Roblox's defaults, ``EasingStyle.Quad`` and
``EasingDirection.Out``. A :class:`TweenedFrame` is a property being tweened, like a
Motor6D's ``C0``: playing a new tween cancels the running one and starts from the
property's current value, as ``TweenService`` does when two tweens touch one property.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from limbik._validation import as_float, choice
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame

__all__ = ["Tween", "TweenInfo", "TweenedFrame", "ease"]

EASING_STYLES = ("Linear", "Sine", "Quad", "Cubic", "Quart", "Quint")
EASING_DIRECTIONS = ("In", "Out", "InOut")


def _ease_in(style: str, t: float) -> float:
    if style == "Linear":
        return t
    if style == "Sine":
        return 1.0 - math.cos(t * math.pi / 2)
    power = {"Quad": 2, "Cubic": 3, "Quart": 4, "Quint": 5}[style]
    return float(t ** power)


def ease(alpha: float, style: str = "Quad", direction: str = "Out") -> float:
    """Roblox's ``TweenService:GetValue(alpha, style, direction)`` for ``alpha`` in [0, 1].

    ``Out`` is ``1 − In(1 − t)``; ``InOut`` runs ``In`` on the first half and ``Out``
    on the second. Quad Out is ``1 − (1 − t)²``.
    """
    style = choice(style, "style", EASING_STYLES)
    direction = choice(direction, "direction", EASING_DIRECTIONS)
    t = float(alpha)
    if t <= 0.0 or t >= 1.0:
        return 0.0 if t <= 0.0 else 1.0
    if direction == "In":
        return _ease_in(style, t)
    if direction == "Out":
        return 1.0 - _ease_in(style, 1.0 - t)
    if t < 0.5:
        return _ease_in(style, 2.0 * t) / 2.0
    return 1.0 - _ease_in(style, 2.0 * (1.0 - t)) / 2.0


@dataclass(frozen=True)
class TweenInfo:
    """``TweenInfo.new(time, easingStyle, easingDirection)``: seconds, Quad, Out by default."""

    time: float = 1.0
    easing_style: str = "Quad"
    easing_direction: str = "Out"

    def __post_init__(self) -> None:
        as_float(self.time, "time", minimum=0.0)
        choice(self.easing_style, "easing_style", EASING_STYLES)
        choice(self.easing_direction, "easing_direction", EASING_DIRECTIONS)


class Tween:
    """One tween from ``start`` to ``goal`` (unbatched Frames), advanced by :meth:`advance`.

    The value at ``elapsed`` seconds is ``start:Lerp(goal, ease(elapsed / time))``
    (slerped rotation, linear position); a zero ``time`` jumps to the goal.
    """

    def __init__(self, start: Frame, goal: Frame, info: TweenInfo) -> None:
        for name, value in (("start", start), ("goal", goal)):
            if not isinstance(value, Frame) or value.shape != ():
                raise InvalidInputError(f"{name} must be one unbatched Frame, got "
                                        f"{type(value).__name__}", argument=name)
        if not isinstance(info, TweenInfo):
            raise InvalidInputError(f"info must be a TweenInfo, got {type(info).__name__}",
                                    argument="info")
        self.start = start
        self.goal = goal
        self.info = info
        self.elapsed = 0.0
        self.cancelled = False

    @property
    def done(self) -> bool:
        """True once the tween reached its goal or was cancelled."""
        return self.cancelled or self.elapsed >= self.info.time

    @property
    def value(self) -> Frame:
        """The tweened value now."""
        if self.info.time <= 0.0 or self.elapsed >= self.info.time:
            return self.goal
        a = ease(self.elapsed / self.info.time, self.info.easing_style,
                 self.info.easing_direction)
        return self.start.lerp(self.goal, a)

    def advance(self, dt: float) -> Frame:
        """Move ``dt`` seconds on (nothing once cancelled) and return :attr:`value`."""
        dt = as_float(dt, "dt", minimum=0.0)
        if not self.cancelled:
            self.elapsed = min(self.elapsed + dt, max(self.info.time, 0.0))
        return self.value

    def cancel(self) -> None:
        """Stop where it is (``Tween:Cancel()``)."""
        self.cancelled = True


class TweenedFrame:
    """A Frame property driven by tweens, like ``Motor6D.C0`` under ``TweenService``.

    :meth:`play` cancels the running tween and starts a new one from the current
    value; :meth:`advance` moves the running tween on and updates :attr:`value`.
    """

    def __init__(self, value: Frame) -> None:
        if not isinstance(value, Frame) or value.shape != ():
            raise InvalidInputError("value must be one unbatched Frame", argument="value")
        self.value = value
        self.tween: Tween | None = None

    def play(self, goal: Frame, info: TweenInfo) -> Tween:
        """Cancel the running tween and tween from the current value to ``goal``."""
        if self.tween is not None:
            self.tween.cancel()
        self.tween = Tween(self.value, goal, info)
        return self.tween

    def advance(self, dt: float) -> Frame:
        """Advance the running tween by ``dt`` seconds; the new value."""
        if self.tween is not None and not self.tween.cancelled:
            self.value = self.tween.advance(dt)
        return self.value
