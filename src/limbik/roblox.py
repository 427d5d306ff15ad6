"""Exact, batched ports of the seed tutorials' Roblox functions, in their conventions.

Y is up and −Z is forward: ``CFrame.new(pos, lookAt)`` faces −Z toward ``lookAt``,
``CFrame.Angles(x, y, z)`` is ``Rx · Ry · Rz``, and a Motor6D places
``Part1 = Part0 · C0 · Transform · C1⁻¹``. Every function here broadcasts over leading
batch dimensions and computes the Lua's numbers in float64 (Roblox itself stores
CFrames and Vector3s in float32, so an engine's values agree to about 1e-7).

Where the Lua would divide by zero or take ``acos`` of a value that rounding pushed
past ±1, these ports clip and document a finite answer instead of producing NaN.

For a general, engine-agnostic solver use :func:`limbik.two_bone`; its ``root_frame``
mode reproduces :func:`solve_ik`'s elbow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._validation import FloatArray, as_points, as_positive, as_scalars, broadcast_shapes
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import quaternion_from_axis_angle
from limbik.solvers._scale import problem_units

__all__ = [
    "build_arm",
    "build_planar",
    "elbow_motor_c0",
    "motor6d_part1",
    "shoulder_motor_c0",
    "solve_ik",
    "solve_ik_planar",
]

_HALF_PI = np.pi / 2


def _check_frame(value: Any, name: str) -> Frame:
    if not isinstance(value, Frame):
        raise InvalidInputError(f"{name} must be a limbik Frame, got {type(value).__name__}",
                                argument=name)
    return value


def _safe_ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """``numerator / denominator`` clipped to [-1, 1]; 0 where the denominator is 0."""
    zero = denominator == 0.0
    ratio = numerator / np.where(zero, 1.0, denominator)
    return np.clip(np.where(zero, 0.0, ratio), -1.0, 1.0)


def _angles_x(angle: FloatArray) -> Frame:
    """``CFrame.Angles(angle, 0, 0)``."""
    q = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), angle)
    return Frame._make(q, np.zeros(3))


def _build_two_parts(plane: Frame, first: FloatArray, second: FloatArray, l1: FloatArray,
                     l2: FloatArray, axis: int) -> tuple[Frame, Frame]:
    """The seeds' build-out of two parts lying along local −Y (``axis=1``) or −Z (2)::

        part1 = plane * Angles(first, 0, 0) * CFrame.new(-l1/2 along axis)
        part2 = part1 * CFrame.new(-l1/2 along axis) * Angles(second, 0, 0)
                * CFrame.new(-l2/2 along axis)
    """

    def along(length: FloatArray) -> FloatArray:
        parts: list[Any] = [0.0, 0.0, 0.0]
        parts[axis] = -length / 2
        return _offset(*parts)

    part1 = (plane @ _angles_x(first)).translated(along(l1))
    part2 = (part1.translated(along(l1)) @ _angles_x(second)).translated(along(l2))
    return part1, part2


def _offset(x: Any, y: Any, z: Any) -> FloatArray:
    """The vector of ``CFrame.new(x, y, z)``, broadcast: ``(..., 3)``."""
    x, y, z = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float),
                                  np.asarray(z, float))
    return np.stack([x, y, z], axis=-1)


def solve_ik(origin: Frame, target: Any, l1: Any, l2: Any
             ) -> tuple[Frame, FloatArray, FloatArray]:
    """Seed 000/001's two-joint solver, "Putting Everything Together", with the thread's fixes.

    Implements::

        local localized = originCF:pointToObjectSpace(targetPos)
        local localizedUnit = localized.unit
        local l3 = localized.magnitude
        local axis = Vector3.new(0, 0, -1):Cross(localizedUnit)
        local angle = math.acos(-localizedUnit.Z)
        if axis == Vector3.new() then           -- the thread's degenerate-axis fix
            axis = (angle == PI and Vector3.new(-1, 0, 0) or Vector3.new(0, 0, -1))
        end
        local planeCF = originCF * CFrame.fromAxisAngle(axis, angle)
        if l3 < math.max(l2, l1) - math.min(l2, l1) then
            return planeCF * CFrame.new(0, 0, math.max(l2, l1) - math.min(l2, l1) - l3),
                   -math.pi/2, math.pi
        elseif l3 > l1 + l2 then
            return planeCF * CFrame.new(0, 0, l1 + l2 - l3), math.pi/2, 0
        else
            local a1 = -math.acos((-(l2 * l2) + (l1 * l1) + (l3 * l3)) / (2 * l1 * l3))
            local a2 = math.acos(((l2 * l2) - (l1 * l1) + (l3 * l3)) / (2 * l2 * l3))
            return planeCF, a1 + math.pi/2, a2 - a1
        end

    Parameters
    ----------
    origin : Frame, batch shape (...)
        The shoulder (or hip) CFrame, ``originCF``.
    target : array_like, shape (..., 3)
        ``targetPos``.
    l1, l2 : array_like, shape (...)
        Upper and lower segment lengths, > 0.

    Returns
    -------
    plane : Frame, batch shape (...)
        ``planeCF``: the rolled plane, pushed back (too close) or forward (too far).
    shoulder_angle, elbow_angle : ndarray, shape (...)
        Radians, for ``CFrame.Angles(angle, 0, 0)`` at the shoulder and the elbow.

    Notes
    -----
    Documented finite answers where the Lua has none:

    - target exactly at the origin: ``localized.unit`` is taken as (0, 0, −1)
      (straight ahead, so no roll). With ``l1 != l2`` this is the too-close branch;
      with ``l1 == l2`` the triangle has ``l3 = 0`` and the angles are the limit
      ``l3 → 0``: shoulder 0, elbow π (fully folded, elbow straight down the −Y axis).
    - target at exactly full reach (``l3 == l1 + l2``): the reachable branch with the
      ``acos`` arguments clipped to [−1, 1]: shoulder π/2, elbow 0, no push.
    - a target straight behind (``localizedUnit == (0, 0, 1)``) gives a half turn about
      (−1, 0, 0); straight ahead gives no roll (the thread's fix).
    """
    origin = _check_frame(origin, "origin")
    target = as_points(target, "target")
    l1 = as_positive(l1, "l1")
    l2 = as_positive(l2, "l2")
    broadcast_shapes(("origin", origin.shape), ("target", target.shape[:-1]),
                     ("l1", l1.shape), ("l2", l2.shape))
    localized = origin.to_local(target)
    # lengths far from unit size are solved in units of the problem (exact, 2^k)
    k = problem_units(np.max(np.abs(localized), axis=-1), l1, l2)
    localized, l1, l2 = localized / k[..., None], l1 / k, l2 / k
    l3 = np.sqrt(np.sum(localized * localized, axis=-1))
    at_origin = (l3 == 0.0)[..., None]
    unit = np.where(at_origin, np.array([0.0, 0.0, -1.0]),
                    localized / np.where(at_origin, 1.0, l3[..., None]))
    ux, uy, uz = unit[..., 0], unit[..., 1], unit[..., 2]
    angle = np.arccos(np.clip(-uz, -1.0, 1.0))
    # (0, 0, -1) x unit = (uy, -ux, 0); normalised without underflow
    axis_norm = np.hypot(ux, uy)
    zero_axis = axis_norm == 0.0
    safe = np.where(zero_axis, 1.0, axis_norm)
    axis = np.stack([uy / safe, -ux / safe, np.zeros_like(ux)], axis=-1)
    fallback = np.where((angle == np.pi)[..., None], np.array([-1.0, 0.0, 0.0]),
                        np.array([0.0, 0.0, -1.0]))
    axis = np.where(zero_axis[..., None], fallback, axis)
    plane = origin @ Frame._make(quaternion_from_axis_angle(axis, angle), np.zeros(3))

    longest = np.maximum(l2, l1)
    shortest = np.minimum(l2, l1)
    close = l3 < longest - shortest
    far = ~close & (l3 > l1 + l2)
    push = np.where(close, longest - shortest - l3, np.where(far, l1 + l2 - l3, 0.0))
    with np.errstate(over="ignore", invalid="ignore"):
        shift = push * k
    if not np.all(np.isfinite(shift)):
        raise InvalidInputError("target must lie within the float range of the origin "
                                "once the arm is pushed to it, got one too far away",
                                argument="target")
    plane = plane.translated(_offset(0.0, 0.0, shift))

    a1 = -np.arccos(_safe_ratio(-(l2 * l2) + (l1 * l1) + (l3 * l3), 2 * l1 * l3))
    a2 = np.arccos(_safe_ratio((l2 * l2) - (l1 * l1) + (l3 * l3), 2 * l2 * l3))
    shoulder = np.where(close, -_HALF_PI, np.where(far, _HALF_PI, a1 + _HALF_PI))
    elbow = np.where(close, np.pi, np.where(far, 0.0, a2 - a1))
    return plane, shoulder, elbow


def solve_ik_planar(origin_position: Any, target_position: Any, a: Any, b: Any,
                    roll_degrees: Any = 0.0) -> tuple[Frame, FloatArray, FloatArray]:
    """Seed 002's final single-joint ``solveIK``, with its too-close and too-far cases.

    Implements::

        local function solveIK(originpos, targetpos, a, b, angle)
            local planeCF = CFrame.new(originpos, targetpos)
                            * CFrame.Angles(0, 0, math.rad(angle or 0))
            local c = (originpos - targetpos).magnitude
            if c < math.max(a, b) - math.min(a, b) then
                local x = 0
                if a < b then x = 1 end
                return planeCF, math.pi*x, math.pi
            elseif c > a + b then
                return planeCF, 0, 0
            else
                local B = -math.acos((a*a + c*c - b*b)/(2*a*c))
                local C = math.pi -math.acos((a*a + b*b - c*c)/(2*a*b))
                return planeCF, B, C
            end
        end

    Parameters
    ----------
    origin_position, target_position : array_like, shape (..., 3)
        ``originpos`` and ``targetpos``.
    a, b : array_like, shape (...)
        Lengths of segment a (at the origin) and segment b, > 0.
    roll_degrees : array_like, shape (...)
        The plane's roll about its −Z axis, in degrees (``angle``).

    Returns
    -------
    plane : Frame, batch shape (...)
        ``planeCF``, at the origin, −Z toward the target, rolled.
    B, C : ndarray, shape (...)
        Radians, for ``CFrame.Angles(B, 0, 0)`` and ``CFrame.Angles(C, 0, 0)``
        (see :func:`build_planar`).

    Notes
    -----
    ``CFrame.new(pos, lookAt)`` is :meth:`Frame.look_at` with up (0, 1, 0), including its
    documented choices when the target is at the origin (identity rotation) or straight
    up or down. With the target at the origin and ``a == b`` the triangle is the limit
    ``c → 0``: ``B = −π/2``, ``C = π``.
    """
    origin_position = as_points(origin_position, "origin_position")
    target_position = as_points(target_position, "target_position")
    a = as_positive(a, "a")
    b = as_positive(b, "b")
    roll = as_scalars(roll_degrees, "roll_degrees")
    broadcast_shapes(("origin_position", origin_position.shape[:-1]),
                     ("target_position", target_position.shape[:-1]),
                     ("a", a.shape), ("b", b.shape), ("roll_degrees", roll.shape))
    plane = Frame.look_at(origin_position, target_position) @ Frame.from_euler_xyz(
        0.0, 0.0, roll * (np.pi / 180.0))
    diff = origin_position - target_position
    k = problem_units(np.max(np.abs(diff), axis=-1), a, b)  # exact, 2^k
    diff, a, b = diff / k[..., None], a / k, b / k
    c = np.sqrt(np.sum(diff * diff, axis=-1))
    close = c < np.maximum(a, b) - np.minimum(a, b)
    far = ~close & (c > a + b)
    x = np.where(a < b, 1.0, 0.0)
    big_b = -np.arccos(_safe_ratio(a * a + c * c - b * b, 2 * a * c))
    big_c = np.pi - np.arccos(_safe_ratio(a * a + b * b - c * c, 2 * a * b))
    big_b = np.where(close, np.pi * x, np.where(far, 0.0, big_b))
    big_c = np.where(close, np.pi, np.where(far, 0.0, big_c))
    return plane, big_b, big_c


def build_arm(plane: Frame, shoulder_angle: Any, elbow_angle: Any, l1: Any, l2: Any
              ) -> tuple[Frame, Frame]:
    """Centre frames of the upper and lower parts: seed 000's "building it out example".

    Implements::

        upperArm.CFrame = basePlane * shoulderAngle * CFrame.new(0, -upperArmLength/2, 0)
        lowerArm.CFrame = upperArm.CFrame * CFrame.new(0, -upperArmLength/2, 0)
                          * elbowAngle * CFrame.new(0, -lowerArmLength/2, 0)

    with ``shoulderAngle = CFrame.Angles(shoulder_angle, 0, 0)`` and
    ``elbowAngle = CFrame.Angles(elbow_angle, 0, 0)``. Parts hang along their −Y axis,
    so the elbow is at ``upper * (0, -l1/2, 0)`` and the hand at ``lower * (0, -l2/2, 0)``.

    Parameters
    ----------
    plane : Frame, batch shape (...)
        The plane from :func:`solve_ik`.
    shoulder_angle, elbow_angle : array_like, shape (...)
        Radians, from :func:`solve_ik`.
    l1, l2 : array_like, shape (...)
        Part lengths.

    Returns
    -------
    upper, lower : Frame, batch shape (...)
    """
    plane = _check_frame(plane, "plane")
    shoulder = as_scalars(shoulder_angle, "shoulder_angle")
    elbow = as_scalars(elbow_angle, "elbow_angle")
    l1 = as_positive(l1, "l1")
    l2 = as_positive(l2, "l2")
    return _build_two_parts(plane, shoulder, elbow, l1, l2, axis=1)


def build_planar(plane: Frame, B: Any, C: Any, a: Any, b: Any) -> tuple[Frame, Frame]:
    """Centre frames of parts a and b: seed 002's part placement.

    Implements::

        pa.CFrame = planeCF * CFrame.Angles(B, 0, 0) * CFrame.new(0, 0, -la/2)
        pb.CFrame = pa.CFrame * CFrame.new(0, 0, -la/2) * CFrame.Angles(C, 0, 0)
                    * CFrame.new(0, 0, -lb/2)

    Parts lie along their −Z axis: the joint is at ``part_a * (0, 0, -a/2)`` and the
    tip at ``part_b * (0, 0, -b/2)``.

    Parameters
    ----------
    plane : Frame, batch shape (...)
        ``planeCF`` from :func:`solve_ik_planar`.
    B, C : array_like, shape (...)
        Radians, from :func:`solve_ik_planar`.
    a, b : array_like, shape (...)
        Segment lengths ``la`` and ``lb``.

    Returns
    -------
    part_a, part_b : Frame, batch shape (...)
    """
    plane = _check_frame(plane, "plane")
    big_b = as_scalars(B, "B")
    big_c = as_scalars(C, "C")
    a = as_positive(a, "a")
    b = as_positive(b, "b")
    return _build_two_parts(plane, big_b, big_c, a, b, axis=2)


def shoulder_motor_c0(part0: Frame, plane: Frame, shoulder_angle: Any) -> Frame:
    """The shoulder Motor6D's C0 for a solved plane: seed 000's "weld/motor example".

    Implements ``shoulder.C0 = upperTorso.CFrame:ToObjectSpace(basePlane) * shoulderAngle``
    with ``shoulderAngle = CFrame.Angles(shoulder_angle, 0, 0)``.

    Parameters
    ----------
    part0 : Frame
        The world CFrame of the joint's Part0 (the upper torso).
    plane : Frame
        The plane from :func:`solve_ik`.
    shoulder_angle : array_like, shape (...)
        Radians.
    """
    part0 = _check_frame(part0, "part0")
    plane = _check_frame(plane, "plane")
    return part0.to_local_frame(plane) @ _angles_x(as_scalars(shoulder_angle, "shoulder_angle"))


def elbow_motor_c0(rest_c0: Frame, elbow_angle: Any) -> Frame:
    """The elbow Motor6D's C0 for a solved angle: seed 000's "weld/motor example".

    Implements ``elbow.C0 = elbowC0Save * elbowAngle`` with
    ``elbowAngle = CFrame.Angles(elbow_angle, 0, 0)``; ``rest_c0`` is the saved C0.
    """
    rest_c0 = _check_frame(rest_c0, "rest_c0")
    return rest_c0 @ _angles_x(as_scalars(elbow_angle, "elbow_angle"))


def motor6d_part1(part0: Frame, c0: Frame, c1: Frame, transform: Frame | None = None) -> Frame:
    """Where a Motor6D puts its Part1: ``Part0 · C0 · Transform · C1⁻¹``.

    ``transform`` (the animator's ``Motor6D.Transform``) defaults to the identity.
    """
    part0 = _check_frame(part0, "part0")
    c0 = _check_frame(c0, "c0")
    c1 = _check_frame(c1, "c1")
    joint = part0 @ c0
    if transform is not None:
        joint = joint @ _check_frame(transform, "transform")
    return joint @ c1.inverse()
