"""Roblox-style tweens of a :class:`~limbik.Frame` property (``TweenService``, ``TweenInfo``).

``TweenInfo(time)`` has Roblox's defaults, ``EasingStyle.Quad`` and
``EasingDirection.Out``. A :class:`TweenedFrame` is a property being tweened, like a
Motor6D's ``C0``: playing a new tween cancels the running one and starts from the
property's current value, as ``TweenService`` does when two tweens touch one property.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from limbik._runtime.validation import as_float, choice
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame

__all__ = ["Tween", "TweenInfo", "TweenedFrame", "broadcast_frame", "ease"]

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
    """One tween from ``start`` to ``goal`` (Frames of one batch shape), advanced by
    :meth:`advance`.

    The value at ``elapsed`` seconds is ``start:Lerp(goal, ease(elapsed / time))``
    (slerped rotation, linear position); a zero ``time`` jumps to the goal. A batched
    tween moves every element by the same eased fraction.
    """

    def __init__(self, start: Frame, goal: Frame, info: TweenInfo) -> None:
        for name, value in (("start", start), ("goal", goal)):
            if not isinstance(value, Frame):
                raise InvalidInputError(f"{name} must be a Frame, got "
                                        f"{type(value).__name__}", argument=name)
        if goal.shape != start.shape:
            raise InvalidInputError(f"goal must have the batch shape of start {start.shape}, "
                                    f"got {goal.shape}", argument="goal")
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


def broadcast_frame(frame: Frame, shape: tuple[int, ...], name: str) -> Frame:
    """``frame`` repeated to batch ``shape`` (a named error where it does not broadcast)."""
    if frame.shape == shape:
        return frame
    try:
        q = np.broadcast_to(frame.quaternion, shape + (4,))
        p = np.broadcast_to(frame.position, shape + (3,))
    except ValueError:
        raise InvalidInputError(f"{name} must broadcast to the batch shape {shape}, got "
                                f"{frame.shape}", argument=name) from None
    return Frame._make(q, p)


def _select(mask: np.ndarray, chosen: Frame, other: Frame) -> Frame:
    """``chosen`` where ``mask`` (batch shape), else ``other``: the same bits as each."""
    return Frame._make(np.where(mask[..., None], chosen.quaternion, other.quaternion),
                       np.where(mask[..., None], chosen.position, other.position))


class TweenedFrame:
    """A Frame property driven by tweens, like ``Motor6D.C0`` under ``TweenService``.

    :meth:`play` cancels the running tween and starts a new one from the current
    value; :meth:`advance` moves the running tween on and updates :attr:`value`.

    A batched value (one C0 per character of a crowd) has a tween per element:
    ``play(goal, info, where=mask)`` starts a tween on the elements of ``mask`` only,
    and the others go on with theirs.
    """

    def __init__(self, value: Frame) -> None:
        if not isinstance(value, Frame):
            raise InvalidInputError(f"value must be a Frame, got {type(value).__name__}",
                                    argument="value")
        self.value = value
        #: the tween played last
        self.tween: Tween | None = None
        # the running tweens, each with the elements it drives (None: all of them)
        self._running: list[tuple[Tween, np.ndarray | None]] = []

    def play(self, goal: Frame, info: TweenInfo, *, where: Any = None) -> Tween:
        """Cancel the running tween and tween from the current value to ``goal``.

        ``goal`` broadcasts to the value's batch shape; ``where`` (bool, that shape)
        limits the new tween to some elements, the others keeping their tweens.
        """
        if not isinstance(goal, Frame):
            raise InvalidInputError(f"goal must be a Frame, got {type(goal).__name__}",
                                    argument="goal")
        shape = self.value.shape
        mask = None
        if where is not None:
            raw = np.asarray(where)
            if raw.dtype != np.bool_:
                raise InvalidInputError(f"where must be booleans, got {raw.dtype}",
                                        argument="where")
            try:
                mask = np.broadcast_to(raw, shape).copy()
            except ValueError:
                raise InvalidInputError(f"where must broadcast to the batch shape {shape}, "
                                        f"got {raw.shape}", argument="where") from None
        tween = Tween(self.value, broadcast_frame(goal, shape, "goal"), info)
        running = []
        for old, owned in self._running:  # the new tween takes its elements from these
            left = None if mask is None else ~mask if owned is None else owned & ~mask
            if left is None or not left.any():
                old.cancel()
            else:
                running.append((old, left))
        if mask is None or mask.any():
            running.append((tween, mask))
        self._running = running
        self.tween = tween
        return tween

    def advance(self, dt: float) -> Frame:
        """Advance the running tweens by ``dt`` seconds; the new value."""
        dt = as_float(dt, "dt", minimum=0.0)
        value = self.value
        running = []
        for tween, owned in self._running:
            if tween.cancelled:
                continue
            now = tween.advance(dt)
            value = now if owned is None else _select(owned, now, value)
            if not tween.done:  # a finished tween has left its goal in the value
                running.append((tween, owned))
        self._running = running
        self.value = value
        return value
