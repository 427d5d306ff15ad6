"""``TwoBoneRig``: a two-bone limb solved every frame, with weight and smoothing.

Like Roblox's ``IKControl`` (``Target``, ``Pole``, ``Weight``, ``SmoothTime``) on a
hip–knee–ankle or shoulder–elbow–hand chain, solved by :func:`limbik.two_bone`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from limbik._validation import as_float, as_float_array, as_point, choice
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.rigs.smoothing import CriticallyDamped
from limbik.solvers.solution import Solution
from limbik.solvers.two_bone import two_bone

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
    the mid joint from where it was to where the new way puts it, over ``smooth_time``.
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
        self._mid_offset: CriticallyDamped | None = None
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
        if root_frame is not None:
            if pole is not None:
                raise InvalidInputError("pass at most one of pole and root_frame",
                                        argument="root_frame")
            sol = two_bone(base, smoothed, self.upper, self.lower, root_frame=root_frame,
                           unreachable=self.unreachable)
        elif pole is not None:
            p = as_point(pole, "pole")
            if self._pole is None:
                self._pole = CriticallyDamped(p, self.smooth_time)
            self._pole.smooth_time = self.smooth_time
            sol = two_bone(base, smoothed, self.upper, self.lower,
                           pole=self._pole.step(p, dt), unreachable=self.unreachable)
        else:
            self._pole = None
            sol = two_bone(base, smoothed, self.upper, self.lower, reference=anim[1],
                           bend_axis=_hinge_axis(anim), unreachable=self.unreachable)
        mode = ("root_frame" if root_frame is not None else
                "pole" if pole is not None else "animated")
        sol = self._ease_mode_change(mode, base, smoothed, sol, dt)
        self.solution = sol
        return sol

    def _ease_mode_change(self, mode: str, base: np.ndarray, goal: np.ndarray, sol: Solution,
                          dt: float) -> Solution:
        """``sol``, or, after a change of the bend ``mode``, the limb solved with its mid
        joint at ``sol``'s plus an offset that starts at the jump the change made (the last
        step's mid joint minus ``sol``'s, relative to the root) and decays to zero,
        critically damped over ``smooth_time``, until it is within 1e-4 of the limb's
        length (inertial blending: the new mode's own motion is kept all along)."""
        wanted = np.asarray(sol.positions[1]) - base
        if (mode != self._mode and self.solution is not None and self.smooth_time > 0.0):
            last = np.asarray(self.solution.positions)
            self._mid_offset = CriticallyDamped((last[1] - last[0]) - wanted, self.smooth_time)
        self._mode = mode
        if self._mid_offset is None:
            return sol
        self._mid_offset.smooth_time = self.smooth_time
        offset = self._mid_offset.step(np.zeros(3), dt)
        if float(np.linalg.norm(offset)) <= 1e-4 * (self.upper + self.lower):
            self._mid_offset = None
            return sol
        return two_bone(base, goal, self.upper, self.lower, pole=base + wanted + offset,
                        unreachable=self.unreachable)

    def reset(self) -> None:
        """Forget the smoothing state: the next step starts at its goal."""
        self._goal = None
        self._pole = None
        self._mode = None
        self._mid_offset = None
        self.solution = None
