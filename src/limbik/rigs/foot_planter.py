"""``FootPlanter``: seed 000's foot-planting loop for one leg, stepped per frame.

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

from limbik._validation import FloatArray, as_float, as_point
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.rigs.tween import TweenedFrame, TweenInfo
from limbik.roblox import elbow_motor_c0, shoulder_motor_c0, solve_ik

__all__ = ["FootPlanter"]


def _frame(value: Any, name: str) -> Frame:
    if not isinstance(value, Frame) or value.shape != ():
        raise InvalidInputError(f"{name} must be one unbatched Frame, got "
                                f"{type(value).__name__}", argument=name)
    return value


class FootPlanter:
    """One leg planted by seed 000's per-frame loop.

    Parameters
    ----------
    hip_c0, knee_c0 : Frame
        The rest C0s (``HIP_C0_CACHE``, ``KNEE_C0_CACHE``): the hip joint in its
        Part0 (the lower torso) and the knee joint in the upper leg.
    upper, lower : float
        ``UPPER_LENGTH`` and ``LOWER_LENGTH`` for the seed's ``solveIK``.
    raycast : Terrain or callable
        The ground. An object with a ``raycast(origins, directions, max_distance)``
        method returning ``(hit, distance, point, normal)`` (a
        :class:`~limbik.Terrain`), or a callable ``raycast(origin, direction)``
        returning the hit point ``(3,)`` or None; the ray's length is
        ``|direction|``.
    reach : float, optional
        The loop's threshold on ``(hipPosition − position).Magnitude`` (the seed's
        R15 code uses 1.9); default ``upper + lower``.
    ray_length : float
        Length of the ray straight down (the seed's 5).
    plant, release : TweenInfo
        The tweens toward a solution (``TweenInfo.new(0.2)``) and back to rest
        (``TweenInfo.new(0.5)``).

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
        self.upper = as_float(upper, "upper", minimum=0.0, exclusive=True)
        self.lower = as_float(lower, "lower", minimum=0.0, exclusive=True)
        if not (hasattr(raycast, "raycast") or callable(raycast)):
            raise InvalidInputError(
                f"raycast must be a Terrain or a callable, got {type(raycast).__name__}",
                argument="raycast")
        self.raycast = raycast
        self.reach = (self.upper + self.lower if reach is None
                      else as_float(reach, "reach", minimum=0.0, exclusive=True))
        self.ray_length = as_float(ray_length, "ray_length", minimum=0.0, exclusive=True)
        self.plant = TweenInfo(0.2) if plant is None else plant
        self.release = TweenInfo(0.5) if release is None else release
        for name, info in (("plant", self.plant), ("release", self.release)):
            if not isinstance(info, TweenInfo):
                raise InvalidInputError(f"{name} must be a TweenInfo, got "
                                        f"{type(info).__name__}", argument=name)
        self.hip = TweenedFrame(self.hip_rest)
        self.knee = TweenedFrame(self.knee_rest)
        self.planted = False
        self.ground: FloatArray | None = None

    def _cast(self, origin: FloatArray) -> FloatArray:
        direction = np.array([0.0, -self.ray_length, 0.0])
        if hasattr(self.raycast, "raycast"):
            hit, _, point, _ = self.raycast.raycast(origin, direction,
                                                    max_distance=self.ray_length)
            found = np.asarray(point, dtype=np.float64) if bool(hit) else None
        else:
            out = self.raycast(origin.copy(), direction)
            found = None if out is None else as_point(out, "raycast result")
        return origin + direction if found is None else found

    def step(self, dt: float, part0: Frame, *, ray_origin: Any = None) -> tuple[Frame, Frame]:
        """Run the loop once, then let the tweens advance ``dt`` seconds.

        Parameters
        ----------
        dt : float
            Seconds this frame lasts (>= 0).
        part0 : Frame
            The hip joint's Part0 this frame (``lowerTorso.CFrame``).
        ray_origin : array_like, shape (3,), optional
            Where the ray starts (default: the hip joint, ``part0 * hip_c0``).

        Returns
        -------
        hip_c0, knee_c0 : Frame
            The joints' C0s after this frame.
        """
        dt = as_float(dt, "dt", minimum=0.0)
        part0 = _frame(part0, "part0")
        hip_cf = part0 @ self.hip_rest
        origin = hip_cf.position if ray_origin is None else as_point(ray_origin, "ray_origin")
        position = self._cast(np.array(origin, dtype=np.float64))
        if float(np.linalg.norm(origin - position)) <= self.reach:
            plane, hip_angle, knee_angle = solve_ik(hip_cf, position, self.upper, self.lower)
            self.hip.play(shoulder_motor_c0(part0, plane, hip_angle), self.plant)
            self.knee.play(elbow_motor_c0(self.knee_rest, knee_angle), self.plant)
            self.planted = True
            self.ground = position
        else:
            self.hip.play(self.hip_rest, self.release)
            self.knee.play(self.knee_rest, self.release)
            self.planted = False
            self.ground = None
        return self.hip.advance(dt), self.knee.advance(dt)

    def joints(self, part0: Frame) -> FloatArray:
        """Hip, knee and ankle positions ``(3, 3)`` for the current C0s.

        The upper leg hangs from ``part0 * hip.C0`` and the knee joint sits at
        ``hip * knee.C0``; the ankle is ``lower`` down the lower leg's −Y (C1s at
        the joints, as the seed's lengths assume).
        """
        part0 = _frame(part0, "part0")
        hip = part0 @ self.hip.value
        knee = hip @ self.knee.value
        ankle = knee.apply(np.array([0.0, -self.lower, 0.0]))
        return np.stack([hip.position, knee.position, ankle])
