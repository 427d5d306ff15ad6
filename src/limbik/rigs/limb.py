"""``TwoBoneRig``: a two-bone limb solved every frame, with weight and smoothing.

Like Roblox's ``IKControl`` (``Target``, ``Pole``, ``Weight``, ``SmoothTime``) on a
hip–knee–ankle or shoulder–elbow–hand chain, solved by :func:`limbik.two_bone`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from limbik._runtime.validation import as_float, as_float_array, as_point, choice
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.rigs.smoothing import CriticallyDamped
from limbik.solvers.solution import Solution
from limbik.solvers.two_bone.solver import two_bone

__all__ = ["TwoBoneRig"]


def _hinge_axis(pose: np.ndarray) -> np.ndarray | None:
    """The hinge axis ``n × u`` of a limb pose ``(3, 3)`` (``u`` the unit root→end line,
    ``n`` the mid joint's unit offset from it), about which :func:`two_bone` bends the mid
    joint to ``n``'s side; None for a (nearly) straight pose."""
    (rx, ry, rz), (mx, my, mz), (ex, ey, ez) = pose.tolist()  # floats: a few µs a step
    ux, uy, uz = ex - rx, ey - ry, ez - rz
    span = math.hypot(ux, uy, uz)
    reach = math.hypot(mx - rx, my - ry, mz - rz) + math.hypot(ex - mx, ey - my, ez - mz)
    if span <= 1e-9 * reach:
        return None
    ux, uy, uz = ux / span, uy / span, uz / span
    ox, oy, oz = mx - rx, my - ry, mz - rz
    along = ox * ux + oy * uy + oz * uz
    ox, oy, oz = ox - along * ux, oy - along * uy, oz - along * uz
    size = math.hypot(ox, oy, oz)
    if size <= 1e-6 * reach:
        return None
    ox, oy, oz = ox / size, oy / size, oz / size
    return np.array([oy * uz - oz * uy, oz * ux - ox * uz, ox * uy - oy * ux])


@dataclass(frozen=True)
class _LastStep:
    """What a :class:`TwoBoneRig` keeps of its last step for easing a change of bend:
    the root ``(3,)``, the smoothed goal ``(3,)``, the animated pose ``(3, 3)``, the mid
    joint relative to the root ``(3,)`` and its velocity ``(3,)`` (units a second; None
    before a second step)."""

    base: np.ndarray
    goal: np.ndarray
    anim: np.ndarray
    mid: np.ndarray
    velocity: np.ndarray | None


#: An eased change of bend lasts this many ``smooth_time``s: the quintic decay then has the
#: peak speed of a critically damped spring with that ``smooth_time``.
_EASE_LENGTH = 2.5


class _OffsetDecay:
    """An offset ``(3,)`` that decays to zero over ``duration`` seconds by a quintic in
    time (inertialization): it starts at ``offset`` with ``velocity`` and no acceleration,
    and ends at zero with no velocity and no acceleration, so a motion it is added to keeps
    its position, velocity and acceleration at both ends."""

    def __init__(self, offset: np.ndarray, velocity: np.ndarray, duration: float, *,
                 elapsed: float = 0.0) -> None:
        t1 = duration
        x0, v0 = offset, velocity
        self._coefficients = (-(6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t1 ** 5),
                              (16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t1 ** 4),
                              -(12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t1 ** 3))
        self._x0 = x0
        self._v0 = v0
        self.duration = t1
        #: seconds since the decay's start (negative: before it)
        self.elapsed = elapsed

    def step(self, dt: float) -> np.ndarray | None:
        """The offset ``dt`` seconds on; None once the decay is over."""
        self.elapsed += dt
        t = self.elapsed
        if t >= self.duration:
            return None
        a, b, c = self._coefficients
        return ((a * t + b) * t + c) * t ** 3 + self._v0 * t + self._x0


class TwoBoneRig:
    """A two-bone limb stepped per frame.

    Parameters
    ----------
    rest : array_like, shape (3, 3)
        Root, mid and end joints of the rest (or first animated) pose; the bone
        lengths come from it.
    smooth_time : float
        Seconds (>= 0) of critical damping on the goal and the pole, as Roblox
        ``IKControl.SmoothTime``; 0 follows them exactly. Frame-rate independent:
        see :class:`~limbik.rigs.CriticallyDamped`.
    weight : float
        0..1, as ``IKControl.Weight``: the goal is the animated end moved this
        fraction of the way to the target (1: the target, 0: the animation).
    unreachable : str
        As in :func:`limbik.two_bone`.

    Each :meth:`step` returns a :class:`~limbik.Solution` for one limb (positions
    ``(3, 3)``); :attr:`solution` keeps the last one. A step that bends the limb another
    way than the last (a pole given or dropped, ``root_frame`` given or dropped) eases
    the mid joint from where it was to where the new way puts it, over 2.5 ×
    ``smooth_time``, keeping its speed (no pop and no kink).
    """

    def __init__(self, rest: Any, *, smooth_time: float = 0.0, weight: float = 1.0,
                 unreachable: str = "extend") -> None:
        r = as_float_array(rest, "rest", (3,))
        if r.shape != (3, 3):
            raise InvalidInputError(f"rest must have shape (3, 3), got {r.shape}",
                                    argument="rest")
        self.rest = r.copy()
        self.upper = float(np.linalg.norm(r[1] - r[0]))
        self.lower = float(np.linalg.norm(r[2] - r[1]))
        if self.upper <= 0 or self.lower <= 0:
            raise InvalidInputError("rest must have two bones of non-zero length",
                                    argument="rest")
        self.smooth_time = as_float(smooth_time, "smooth_time", minimum=0.0)
        self.weight = as_float(weight, "weight", minimum=0.0)
        if self.weight > 1.0:
            raise InvalidInputError(f"weight must be <= 1, got {self.weight}", argument="weight")
        self.unreachable = choice(unreachable, "unreachable", ("extend", "push_root", "stretch"))
        self._goal: CriticallyDamped | None = None
        self._pole: CriticallyDamped | None = None
        self._mode: str | None = None
        self._mid_offset: _OffsetDecay | None = None
        self._last: _LastStep | None = None
        self.solution: Solution | None = None

    def step(self, dt: float, target: Any, *, root: Any = None, pole: Any = None,
             root_frame: Frame | None = None, animated: Any = None) -> Solution:
        """Advance ``dt`` seconds and solve.

        Parameters
        ----------
        dt : float
            Seconds since the last step (>= 0).
        target : array_like, shape (3,)
            Where the end should go.
        root : array_like, shape (3,), optional
            The root this frame (default: the animated or rest root).
        pole : array_like, shape (3,), optional
            The bend side (``IKControl.Pole``). Without one the limb keeps its animated
            bend: it bends about the hinge axis of the animated pose (a knee forward,
            whichever way the foot swings; :func:`limbik.two_bone`'s ``bend_axis``),
            refined toward the animated mid joint where that lies clearly off the
            root→target line. A straight animated pose has no hinge: then the mid joint
            alone is the reference.
        root_frame : Frame, optional
            Bend by seed 000's rolled plane of this frame instead (the shoulder or hip
            CFrame, as :func:`limbik.two_bone`'s ``root_frame``); not with ``pole``.
        animated : array_like, shape (3, 3), optional
            This frame's animated pose (default: the rest pose moved to ``root``).
        """
        dt = as_float(dt, "dt", minimum=0.0)
        tgt = as_point(target, "target")
        if animated is None:
            anim = self.rest
            if root is not None:
                anim = self.rest + (as_point(root, "root") - self.rest[0])
        else:
            anim = as_float_array(animated, "animated", (3,))
            if anim.shape != (3, 3):
                raise InvalidInputError(f"animated must have shape (3, 3), got {anim.shape}",
                                        argument="animated")
        base = anim[0] if root is None else as_point(root, "root")
        goal = anim[2] + self.weight * (tgt - anim[2])
        if self._goal is None:
            self._goal = CriticallyDamped(goal, self.smooth_time)
        self._goal.smooth_time = self.smooth_time
        smoothed = self._goal.step(goal, dt)
        if root_frame is not None and pole is not None:
            raise InvalidInputError("pass at most one of pole and root_frame",
                                    argument="root_frame")
        if pole is not None:
            p = as_point(pole, "pole")
            if self._pole is None:
                self._pole = CriticallyDamped(p, self.smooth_time)
            self._pole.smooth_time = self.smooth_time
            bend: Any = self._pole.step(p, dt)
        else:
            self._pole = None
            bend = root_frame
        mode = ("root_frame" if root_frame is not None else
                "pole" if pole is not None else "animated")
        sol = self._solve(mode, bend, base, smoothed, anim)
        sol = self._ease_mode_change(mode, bend, base, smoothed, anim, sol, dt)
        self.solution = sol
        return sol

    def _solve(self, mode: str, bend: Any, base: np.ndarray, goal: np.ndarray,
               anim: np.ndarray) -> Solution:
        """The limb from ``base`` to ``goal`` bent the ``mode`` way (``bend``: the pole,
        or the root frame)."""
        if mode == "root_frame":
            return two_bone(base, goal, self.upper, self.lower, root_frame=bend,
                            unreachable=self.unreachable)
        if mode == "pole":
            return two_bone(base, goal, self.upper, self.lower, pole=bend,
                            unreachable=self.unreachable)
        return two_bone(base, goal, self.upper, self.lower, reference=anim[1],
                        bend_axis=_hinge_axis(anim), unreachable=self.unreachable)

    def _ease_mode_change(self, mode: str, bend: Any, base: np.ndarray, goal: np.ndarray,
                          anim: np.ndarray, sol: Solution, dt: float) -> Solution:
        """``sol``, or, after a change of the bend ``mode``, the limb solved with its mid
        joint at ``sol``'s plus an offset that decays to zero over ``_EASE_LENGTH ·
        smooth_time`` (inertialization: the new mode's own motion is kept all along).

        The decay starts at the last step, from the old mode's mid joint there minus the
        new mode's (solved on the last step's root, goal and animation), relative to the
        root, with the difference of their velocities: the mid joint keeps its position,
        velocity and acceleration through the change."""
        wanted = np.asarray(sol.positions[1]) - base
        last = self._last
        if (mode != self._mode and last is not None and self.smooth_time > 0.0):
            # from this step on: the old way's mid joint moved on by its velocity, against
            # the new way's; their velocities from the last step (the new way solved there)
            offset, velocity = last.mid - wanted, np.zeros(3)
            if dt > 0.0 and last.velocity is not None:
                before = np.asarray(self._solve(mode, bend, last.base, last.goal,
                                                last.anim).positions[1]) - last.base
                offset = offset + last.velocity * dt
                velocity = last.velocity - (wanted - before) / dt
            # (this step's dt brings it to its start)
            self._mid_offset = _OffsetDecay(offset, velocity, _EASE_LENGTH * self.smooth_time,
                                            elapsed=-dt)
        self._mode = mode
        if self._mid_offset is not None:
            offset = self._mid_offset.step(dt)
            if offset is None:
                self._mid_offset = None
            else:
                sol = two_bone(base, goal, self.upper, self.lower, pole=base + wanted + offset,
                               unreachable=self.unreachable)
        mid = np.asarray(sol.positions[1]) - base
        mid_velocity: np.ndarray | None = None
        if last is not None:  # a step of no time keeps the last velocity
            mid_velocity = (mid - last.mid) / dt if dt > 0.0 else last.velocity
        self._last = _LastStep(base, goal, anim, mid, mid_velocity)
        return sol

    def reset(self) -> None:
        """Forget the smoothing state: the next step starts at its goal."""
        self._goal = None
        self._pole = None
        self._mode = None
        self._mid_offset = None
        self._last = None
        self.solution = None
