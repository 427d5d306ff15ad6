"""``FootPlanter``: seed 000's foot-planting loop for one leg (or a crowd), stepped per frame.

The loop from the seed's comments, run every frame::

    local hit, position = Raycast(Ray.new(hipPosition, Vector3.new(0, -5, 0)))
    if (hipPosition - position).Magnitude <= reach then
        local footCFrame = lowerTorso.CFrame * HIP_C0_CACHE
        local planeCF, hipAngle, kneeAngle = solveIK(footCFrame, position, UPPER, LOWER)
        tween(rightHip, TweenInfo.new(0.2),
              {C0 = lowerTorso.CFrame:ToObjectSpace(planeCF) * CFrame.Angles(hipAngle, 0, 0)})
        tween(rightKnee, TweenInfo.new(0.2), {C0 = KNEE_C0_CACHE * CFrame.Angles(kneeAngle, 0, 0)})
    else
        tween(rightHip, TweenInfo.new(0.5), {C0 = HIP_C0_CACHE})
        tween(rightKnee, TweenInfo.new(0.5), {C0 = KNEE_C0_CACHE})
    end

Each new tween cancels the joint's running one and starts from its current C0
(``TweenInfo.new(t)``: Quad, Out). A ray that hits nothing returns its end point, as
Roblox's ``FindPartOnRay`` does, which is out of reach.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_float,
    as_point,
    as_points,
    as_positive,
    broadcast_shapes,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.rigs.tween import TweenedFrame, TweenInfo, broadcast_frame
from limbik.roblox import elbow_motor_c0, shoulder_motor_c0, solve_ik

__all__ = ["FootPlanter"]


def _frame(value: Any, name: str) -> Frame:
    if not isinstance(value, Frame):
        raise InvalidInputError(f"{name} must be a Frame, got {type(value).__name__}",
                                argument=name)
    return value


def _length(value: Any, name: str) -> float | FloatArray:
    """A positive length: a float, or positive scalars ``(...)`` (one per leg)."""
    if np.ndim(value) == 0:
        return as_float(value, name, minimum=0.0, exclusive=True)
    return as_positive(value, name)


class FootPlanter:
    """One leg planted by seed 000's per-frame loop.

    Parameters
    ----------
    hip_c0, knee_c0 : Frame
        The rest C0s (``HIP_C0_CACHE``, ``KNEE_C0_CACHE``): the hip joint in its
        Part0 (the lower torso) and the knee joint in the upper leg.
    upper, lower : float or array_like, shape (...)
        ``UPPER_LENGTH`` and ``LOWER_LENGTH`` for the seed's ``solveIK``.
    raycast : Terrain or callable
        The ground. An object with a ``raycast(origins, directions, max_distance)``
        method returning ``(hit, distance, point, normal)``, or with a
        ``ground_below(origins, length)`` method returning ``(hit, point)`` for rays
        straight down, used first (a :class:`~limbik.Terrain` has both); or a callable
        ``raycast(origin, direction)`` returning the hit point ``(3,)`` or None; the
        ray's length is ``|direction|``.
    reach : float or array_like, shape (...), optional
        The loop's threshold on ``(hipPosition − position).Magnitude`` (the seed's
        R15 code uses 1.9); default ``upper + lower``.
    ray_length : float
        Length of the ray straight down (the seed's 5).
    plant, release : TweenInfo
        The tweens toward a solution (``TweenInfo.new(0.2)``) and back to rest
        (``TweenInfo.new(0.5)``).

    **Many legs.** A ``part0`` of batch shape ``(...)`` steps that many legs at once (a
    crowd: one call a frame for all of them, each leg exactly as if stepped alone). The
    rest C0s and the lengths broadcast with it; the first step fixes the batch shape.
    Each leg has its own tweens, :attr:`planted` and :attr:`ground` are arrays, and a
    callable ``raycast`` is called once per leg.

    The seed's solver bends the knee toward its origin frame's +Z. With a hip
    frame facing the character's −Z (forward) that knee points backward, the
    "literally backward" leg of the seed's thread; give a rest ``hip_c0`` turned
    half a turn about Y for a forward knee.
    """

    def __init__(self, hip_c0: Frame, knee_c0: Frame, upper: float, lower: float, raycast: Any,
                 *, reach: float | None = None, ray_length: float = 5.0,
                 plant: TweenInfo | None = None, release: TweenInfo | None = None) -> None:
        self.hip_rest = _frame(hip_c0, "hip_c0")
        self.knee_rest = _frame(knee_c0, "knee_c0")
        self.upper = _length(upper, "upper")
        self.lower = _length(lower, "lower")
        if not (hasattr(raycast, "raycast") or callable(raycast)):
            raise InvalidInputError(
                f"raycast must be a Terrain or a callable, got {type(raycast).__name__}",
                argument="raycast")
        self.raycast = raycast
        given = None if reach is None else _length(reach, "reach")
        #: the batch shape of the rest C0s and lengths, which part0's broadcasts with
        self._legs = broadcast_shapes(
            ("hip_c0", self.hip_rest.shape), ("knee_c0", self.knee_rest.shape),
            ("upper", np.shape(self.upper)), ("lower", np.shape(self.lower)),
            ("reach", () if given is None else np.shape(given)))
        self.reach = self.upper + self.lower if given is None else given
        self.ray_length = as_float(ray_length, "ray_length", minimum=0.0, exclusive=True)
        self.plant = TweenInfo(0.2) if plant is None else plant
        self.release = TweenInfo(0.5) if release is None else release
        for name, info in (("plant", self.plant), ("release", self.release)):
            if not isinstance(info, TweenInfo):
                raise InvalidInputError(f"{name} must be a TweenInfo, got "
                                        f"{type(info).__name__}", argument=name)
        self.hip = TweenedFrame(self.hip_rest)
        self.knee = TweenedFrame(self.knee_rest)
        #: whether the leg stood within reach of the ground last step (per leg: bool array)
        self.planted: bool | np.ndarray = False
        #: where the ray met the ground last step (the end of the ray where it met none):
        #: ``(3,)``, or None where the one leg is not planted; per leg ``(..., 3)``,
        #: planted or not
        self.ground: FloatArray | None = None
        self._shape: tuple[int, ...] | None = None

    def _batch(self, part0: Frame) -> tuple[int, ...]:
        """The legs' batch shape: fixed by the first step, the same at every later one."""
        shape = broadcast_shapes(("part0", part0.shape),
                                 ("the rest C0s and lengths", self._legs))
        if self._shape is not None and shape != self._shape:
            raise InvalidInputError(f"part0 must have the batch shape of the first step, "
                                    f"{self._shape}, got {part0.shape}", argument="part0")
        return shape

    def _fix(self, shape: tuple[int, ...]) -> None:
        """The first step's batch shape, once its inputs have passed: the C0s take it."""
        if self._shape is None:
            self.hip.value = broadcast_frame(self.hip.value, shape, "hip.value")
            self.knee.value = broadcast_frame(self.knee.value, shape, "knee.value")
            self._shape = shape

    def _cast(self, origin: FloatArray) -> FloatArray:
        """Where the rays straight down from ``origin (..., 3)`` meet the ground (the end
        of the ray where they do not): ``(..., 3)``."""
        direction = np.array([0.0, -self.ray_length, 0.0])
        if hasattr(self.raycast, "ground_below"):  # a Terrain: the straight-down query
            hit, point = self.raycast.ground_below(origin, self.ray_length)
        elif hasattr(self.raycast, "raycast"):
            hit, _, point, _ = self.raycast.raycast(origin, direction,
                                                    max_distance=self.ray_length)
        else:  # a callable, once per leg
            found = (origin + direction).reshape(-1, 3)
            for leg, start in enumerate(origin.reshape(-1, 3)):
                out = self.raycast(start.copy(), direction.copy())
                if out is not None:
                    found[leg] = as_point(out, "raycast result" if origin.ndim == 1
                                          else f"raycast result of leg {leg} (flat index)")
            return found.reshape(origin.shape)
        return np.where(np.asarray(hit, dtype=bool)[..., None],
                        np.asarray(point, dtype=np.float64), origin + direction)

    def step(self, dt: float, part0: Frame, *, ray_origin: Any = None) -> tuple[Frame, Frame]:
        """Run the loop once, then let the tweens advance ``dt`` seconds.

        Parameters
        ----------
        dt : float
            Seconds this frame lasts (>= 0).
        part0 : Frame, batch shape (...)
            The hip joint's Part0 this frame (``lowerTorso.CFrame``), one per leg.
        ray_origin : array_like, shape (..., 3), optional
            Where the rays start (default: the hip joints, ``part0 * hip_c0``).

        Returns
        -------
        hip_c0, knee_c0 : Frame, batch shape (...)
            The joints' C0s after this frame.
        """
        dt = as_float(dt, "dt", minimum=0.0)
        part0 = _frame(part0, "part0")
        shape = self._batch(part0)
        hip_cf = broadcast_frame(part0 @ self.hip_rest, shape, "part0")
        if ray_origin is None:
            origin = hip_cf.position
        else:
            origin = as_point(ray_origin, "ray_origin") if not shape else as_points(
                ray_origin, "ray_origin")
            broadcast_shapes(("ray_origin", origin.shape[:-1]), ("part0", shape))
            origin = np.array(np.broadcast_to(origin, shape + (3,)), dtype=np.float64)
        position = self._cast(origin)
        with np.errstate(over="ignore"):  # a gap whose square overflows is out of reach
            near = np.linalg.norm(origin - position, axis=-1) <= self.reach
        self._fix(shape)
        if near.any():
            plane, hip_angle, knee_angle = solve_ik(hip_cf, position, self.upper, self.lower)
            self._play(shoulder_motor_c0(part0, plane, hip_angle),
                       elbow_motor_c0(self.knee_rest, knee_angle), self.plant, near)
        if not near.all():
            self._play(self.hip_rest, self.knee_rest, self.release, ~near)
        if shape:
            self.planted = near
            self.ground = position
        else:
            self.planted = bool(near)
            self.ground = position if self.planted else None
        return self.hip.advance(dt), self.knee.advance(dt)

    def _play(self, hip: Frame, knee: Frame, info: TweenInfo, legs: np.ndarray) -> None:
        """Tween the hip and knee C0s of ``legs`` (bool, the batch shape) to these goals."""
        where = None if legs.all() else legs
        self.hip.play(hip, info, where=where)
        self.knee.play(knee, info, where=where)

    def joints(self, part0: Frame) -> FloatArray:
        """Hip, knee and ankle positions ``(..., 3, 3)`` for the current C0s.

        The upper leg hangs from ``part0 * hip.C0`` and the knee joint sits at
        ``hip * knee.C0``; the ankle is ``lower`` down the lower leg's −Y (C1s at
        the joints, as the seed's lengths assume).
        """
        part0 = _frame(part0, "part0")
        hip = part0 @ self.hip.value
        knee = hip @ self.knee.value
        down = np.zeros(np.shape(self.lower) + (3,))
        down[..., 1] = -np.asarray(self.lower)
        ankle = knee.apply(down)
        return np.stack(np.broadcast_arrays(hip.position, knee.position, ankle), axis=-2)
