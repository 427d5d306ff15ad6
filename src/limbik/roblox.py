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

import math
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_point,
    as_points,
    as_positive,
    as_scalars,
    broadcast_shapes,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import quaternion_from_axis_angle
from limbik.solvers._scale import problem_units
from limbik.solvers.fabrik import _kernels as _fabrik_kernels

__all__ = [
    "DEGENERATE_AXIS_TOL",
    "FabrikChain",
    "build_arm",
    "build_planar",
    "compensate_c1_origin",
    "compensate_c1_plane",
    "elbow_motor_c0",
    "fabrik_update",
    "look_at_axes",
    "motor6d_part1",
    "seed_constrain",
    "shoulder_motor_c0",
    "solve_ik",
    "solve_ik_planar",
]

_HALF_PI = np.pi / 2

#: Below this length of ``(0, 0, -1) x localizedUnit`` the target counts as straight
#: ahead or straight behind (the thread's degenerate-axis fix). Rounding in a rotated
#: origin frame leaves about 1e-16 there; 1e-12 rad of roll is far below float32.
DEGENERATE_AXIS_TOL = 1e-12


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
        if axis == Vector3.new() then   -- the thread's degenerate-axis fix (tolerance)
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
      (−1, 0, 0); straight ahead gives no roll (the thread's fix). The fix applies
      whenever the axis is shorter than ``DEGENERATE_AXIS_TOL`` (1e-12) rather than
      exactly zero, so a rotated origin frame, whose ``pointToObjectSpace`` leaves
      about 1e-16 of rounding in x and y, rolls exactly as the identity frame does.
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
    # the thread's fix, with a tolerance: a rotated origin frame leaves ~1e-16 in x, y
    zero_axis = axis_norm <= DEGENERATE_AXIS_TOL
    safe = np.where(zero_axis, 1.0, axis_norm)
    axis = np.stack([uy / safe, -ux / safe, np.zeros_like(ux)], axis=-1)
    behind = zero_axis & (uz > 0.0)
    angle = np.where(behind, np.pi, np.where(zero_axis, 0.0, angle))
    fallback = np.where(behind[..., None], np.array([-1.0, 0.0, 0.0]),
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


# ----------------------------------------------------------------------------- C1 offset
def compensate_c1_origin(origin_cf: Frame, c1_x: Any) -> Frame:
    """The thread's first C1 fix: ``originCF`` moved out by the shoulder C1's X offset.

    An R15 upper arm hangs beside its joint: ``Part1 = Part0 · C0 · C1⁻¹`` puts the
    arm's centre line at ``−C1.X`` on the joint's X axis, so the seed's solve (which
    aims the joint itself at the target) leaves the hand ``C1.X`` to the side.
    "Offsetting the originCF by the shoulder C1 offset outward (c1.X)" gives::

        originCF * CFrame.new(-c1.X, 0, 0)

    the start of the arm's centre line, which :func:`solve_ik` then aims at the
    target. The hand lands on the target exactly when the joint is put back beside
    that line, ``c1_x`` along the solved plane's X axis::

        plane, s, e = solve_ik(compensate_c1_origin(origin, c1x), target, l1, l2)
        shoulder.C0 = shoulder_motor_c0(torso, plane.translated((c1x, 0, 0)), s)

    (``CFrame.new(c1x, 0, 0)`` commutes with ``CFrame.Angles(s, 0, 0)``.) The joint
    then sits ``c1x · |plane.X − origin.X|`` from the rest shoulder: not at all for
    targets in the origin's YZ plane (where the plane does not turn its X axis),
    up to ``2 c1x`` for a target straight to the side.

    Parameters
    ----------
    origin_cf : Frame, batch shape (...)
        ``originCF``, the shoulder joint (``upperTorso.CFrame * shoulder.C0``).
    c1_x : array_like, shape (...)
        ``shoulder.C1.X``.

    Returns
    -------
    Frame, batch shape (...)
        The frame to use in place of ``originCF``.
    """
    origin_cf = _check_frame(origin_cf, "origin_cf")
    c1_x = as_scalars(c1_x, "c1_x")
    return origin_cf.translated(_offset(-c1_x, 0.0, 0.0))


def compensate_c1_plane(plane_cf: Frame, c1_x: Any, l1: Any, l2: Any, *,
                        reach: Any = None) -> Frame:
    """The thread's second C1 fix: turn ``planeCF`` by the offset's right triangle and move it.

    With the C1 offset the hand sits at ``planeCF * (−c1x, 0, −R)`` instead of
    ``planeCF * (0, 0, −R)``, where ``R`` is the hand's reach along the plane's look
    (``l1 + l2`` for the straight arm the comment describes: :func:`solve_ik`'s
    too-far case and exactly full reach). "Think of the offset + arm lengths as a
    right angle triangle": its legs are ``c1x`` and ``R``, its hypotenuse
    ``h = √(R² + c1x²)`` runs from the joint to the offset hand, and its angle at
    the joint is ``atan(c1x / R)``. Turning the plane by that angle about its Y axis
    lays the hand on the plane's old look line, ``h`` from the joint; moving the
    plane by ``R − h`` along that line (the comment's "push", here ``h − R`` back,
    because the offset hand reaches further than the bare one) puts it on the
    target::

        planeCF * CFrame.new(0, 0, h - R) * CFrame.Angles(0, -math.atan(c1x / R), 0)

    The hand, ``part1 = plane' · Angles(s) · C1⁻¹ · …``, lands exactly where the
    uncompensated solve aimed, for any ``R`` that is the hand's true reach.

    Parameters
    ----------
    plane_cf : Frame, batch shape (...)
        ``planeCF`` from :func:`solve_ik`.
    c1_x : array_like, shape (...)
        ``shoulder.C1.X``.
    l1, l2 : array_like, shape (...)
        The arm's segment lengths, > 0.
    reach : array_like, shape (...), optional
        The hand's distance from ``planeCF`` along its look, default ``l1 + l2``
        (the straight arm). For a bent arm pass the solved distance (``l3`` for a
        reachable target) to make the fix exact there too.

    Returns
    -------
    Frame, batch shape (...)
        The frame to use in place of ``planeCF``.
    """
    plane_cf = _check_frame(plane_cf, "plane_cf")
    c1_x = as_scalars(c1_x, "c1_x")
    l1 = as_positive(l1, "l1")
    l2 = as_positive(l2, "l2")
    r = l1 + l2 if reach is None else as_positive(reach, "reach")
    h = np.hypot(r, c1_x)
    turn = Frame.from_euler_xyz(0.0, -np.arctan2(c1_x, r), 0.0)
    return plane_cf.translated(_offset(0.0, 0.0, h - r)) @ turn


# ----------------------------------------------------------------------------- FABRIK
Vec = tuple[float, float, float]


def _v(p: Any) -> Vec:
    return (float(p[0]), float(p[1]), float(p[2]))


def _mag(a: Vec) -> float:
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def _lerp_points(a: Vec, b: Vec, l: float) -> Vec:
    """``(1 - l) * a + l * b``, as the Lua writes it."""
    m = 1.0 - l
    return (m * a[0] + l * b[0], m * a[1] + l * b[1], m * a[2] + l * b[2])


def look_at_axes(eye: Vec, target: Vec) -> tuple[Vec, Vec, Vec]:
    """(look, up, right) of ``CFrame.new(eye, target)``, as :meth:`Frame.look_at` builds them.

    Same documented choices: ``eye == target`` looks down −Z; a look straight up or
    down takes world +X (less its look part) as its right vector.
    """
    lx, ly, lz, ux, uy, uz, rx, ry, rz = _fabrik_kernels.look_at(*eye, *target)
    return (lx, ly, lz), (ux, uy, uz), (rx, ry, rz)


def seed_constrain(calc: Vec, line: Vec, up: Vec, right: Vec, left_a: float, right_a: float,
                   up_a: float, down_a: float) -> Vec:
    """Seed 003's ``chain:constrain(calc, line, cf)`` on plain floats, line by line.

    The compiled port shared with ``EllipticalCone(method="seed")``. ``up``/``right``
    are ``cf``'s UpVector and RightVector; ``line`` need not be a unit vector. Where
    the Lua would divide by zero (``calc`` exactly perpendicular to ``line``, so the
    cone's cross-section has no size), the result is the limit from either side,
    ``line.unit · |calc|``; a zero ``line`` leaves ``calc`` as it is.
    """
    return _fabrik_kernels.constrain_seed(*calc, *line, *up, *right, left_a, right_a, up_a,
                                          down_a)


class FabrikChain:
    """Seed 003's FABRIK chain class, ``chain.new(joints, target)``, as its Lua reads.

    Fields (the seed's names): ``n``, ``tolerance`` (0.1), ``target`` (3,), ``joints``
    ``(n, 3)`` (solved in place), ``lengths`` ``(n − 1,)``, ``origin`` (a
    :class:`Frame` at ``joints[0]``, identity rotation: ``CFrame.new(joints[1])``),
    ``totallength``, ``constrained`` (False) and the cone half-angles ``left``,
    ``right``, ``up``, ``down`` in radians, each in [0, π/2] when ``constrained``. A
    zero angle closes that side of the cone: the Lua's division by a zero bound
    gives ``inf`` (or ``0/0``), never "in bounds", so the bone is put on the
    cone's axis side, as here.
    All fields may be reassigned between calls, as the seed's ``update()`` does
    (``origin`` to a Frame or a point).

    Methods: :meth:`backward`, :meth:`forward`, :meth:`solve` (up to 11 iterations:
    ``bcount > 10``) and :meth:`constrain`. When ``constrained`` is True,
    :meth:`forward` ("we simply run our constraint during our forward cycle")
    constrains each bone that has a parent bone: the bone from ``joints[i]`` is
    ``calc``, the parent bone ``joints[i] − joints[i−1]`` is ``line``, and
    ``cf = CFrame.new(joints[i−1], joints[i])``. The first bone has no parent bone
    and stays free. As in the seed, an out-of-reach target gives the straight line
    with no constraint.

    The arithmetic follows the Lua expression by expression in float64 (Roblox
    itself computes in float32). Where the Lua divides by zero (two coincident
    joints) the bone keeps its length along the previous bone's direction instead
    of going NaN.
    """

    def __init__(self, joints: Any, target: Any) -> None:
        pts = as_points(joints, "joints")
        if pts.ndim != 2 or pts.shape[0] < 2:
            raise InvalidInputError(f"joints must have shape (n, 3) with n >= 2, got {pts.shape}",
                                    argument="joints")
        tgt = as_points(target, "target")
        if tgt.shape != (3,):
            raise InvalidInputError(f"target must have shape (3,), got {tgt.shape}",
                                    argument="target")
        self.joints = np.array(pts, dtype=np.float64)
        self.lengths = np.sqrt(np.sum((self.joints[:-1] - self.joints[1:]) ** 2, axis=-1))
        self.n = int(self.joints.shape[0])
        self.tolerance = 0.1
        self.target = np.array(tgt, dtype=np.float64)
        self.origin = Frame.from_translation(self.joints[0])
        self.totallength = float(sum(float(v) for v in self.lengths))
        self.constrained = False
        self.left = self.right = self.up = self.down = math.pi / 4

    # -- the passes, on plain floats ---------------------------------------------------
    def _read(self) -> list[Vec]:
        j = np.asarray(self.joints, dtype=np.float64)
        if j.shape != (self.n, 3):
            raise InvalidInputError(f"joints must have shape ({self.n}, 3), got {j.shape}",
                                    argument="joints")
        return [_v(p) for p in j]

    def _root(self) -> Vec:
        """``self.origin.p``; ``origin`` may also be set to a point (3,)."""
        if isinstance(self.origin, Frame):
            if self.origin.shape != ():
                raise InvalidInputError("origin must be one unbatched Frame or a point (3,)",
                                        argument="origin")
            return _v(self.origin.position)
        return _v(as_point(self.origin, "origin"))

    def _write(self, pts: list[Vec]) -> None:
        self.joints = np.array(pts, dtype=np.float64)

    def _angles(self) -> tuple[float, float, float, float]:
        out = []
        for name in ("left", "right", "up", "down"):
            a = float(getattr(self, name))
            if not 0.0 <= a <= math.pi / 2:
                raise InvalidInputError(
                    f"{name} must be in [0, pi/2] radians when constrained, got {a!r}",
                    argument=name)
            out.append(a)
        return out[0], out[1], out[2], out[3]

    def _backward(self, j: list[Vec], target: Vec) -> None:
        j[self.n - 1] = target
        for i in range(self.n - 2, -1, -1):
            r = (j[i + 1][0] - j[i][0], j[i + 1][1] - j[i][1], j[i + 1][2] - j[i][2])
            rm = _mag(r)
            if rm == 0.0:  # coincident joints: the Lua's 0/0; keep the bone's length
                j[i] = (j[i + 1][0], j[i + 1][1] - float(self.lengths[i]), j[i + 1][2])
                continue
            j[i] = _lerp_points(j[i + 1], j[i], float(self.lengths[i]) / rm)

    def _forward(self, j: list[Vec], root: Vec) -> None:
        j[0] = root
        angles = self._angles() if self.constrained else None
        for i in range(self.n - 1):
            r = (j[i + 1][0] - j[i][0], j[i + 1][1] - j[i][1], j[i + 1][2] - j[i][2])
            rm = _mag(r)
            if rm == 0.0:
                pos = (j[i][0], j[i][1] + float(self.lengths[i]), j[i][2])
            else:
                pos = _lerp_points(j[i], j[i + 1], float(self.lengths[i]) / rm)
            if angles is not None and i > 0:
                calc = (pos[0] - j[i][0], pos[1] - j[i][1], pos[2] - j[i][2])
                line = (j[i][0] - j[i - 1][0], j[i][1] - j[i - 1][1], j[i][2] - j[i - 1][2])
                _, up, right = look_at_axes(j[i - 1], j[i])
                f = seed_constrain(calc, line, up, right, *angles)
                pos = (j[i][0] + f[0], j[i][1] + f[1], j[i][2] + f[2])
            j[i + 1] = pos

    # -- the seed's methods ---------------------------------------------------------------
    def backward(self) -> None:
        """Backward reaching: the end on ``target``, then each joint toward its child."""
        j = self._read()
        self._backward(j, _v(self.target))
        self._write(j)

    def forward(self) -> None:
        """Forward reaching: the root on ``origin``'s position, then each joint outward."""
        j = self._read()
        self._forward(j, self._root())
        self._write(j)

    def solve(self) -> None:
        """``chain:solve()``: the straight line out of reach, else up to 11 iterations."""
        j = self._read()
        t = _v(self.target)
        d = (j[0][0] - t[0], j[0][1] - t[1], j[0][2] - t[2])
        if _mag(d) > self.totallength:
            for i in range(self.n - 1):
                r = _mag((t[0] - j[i][0], t[1] - j[i][1], t[2] - j[i][2]))
                j[i + 1] = _lerp_points(j[i], t, float(self.lengths[i]) / r)
        else:
            root = self._root()
            bcount = 0
            e = j[self.n - 1]
            dif = _mag((e[0] - t[0], e[1] - t[1], e[2] - t[2]))
            while dif > self.tolerance:
                self._backward(j, t)
                self._forward(j, root)
                e = j[self.n - 1]
                dif = _mag((e[0] - t[0], e[1] - t[1], e[2] - t[2]))
                bcount += 1
                if bcount > 10:
                    break
        self._write(j)

    def constrain(self, calc: Any, line: Any, cf: Frame) -> FloatArray:
        """``chain:constrain(calc, line, cf)``: ``calc`` moved into the chain's cone.

        ``calc`` (3,) is the bone vector, ``line`` (3,) the cone's axis and ``cf`` the
        frame whose up/down and right/left axes measure the cone (the seed uses
        ``CFrame.new(joint[i], joint[i+1])``). Returns the constrained vector (3,),
        as long as ``calc``.
        """
        c = as_points(calc, "calc")
        ln = as_points(line, "line")
        cf = _check_frame(cf, "cf")
        if c.shape != (3,) or ln.shape != (3,) or cf.shape != ():
            raise InvalidInputError(
                f"calc and line must have shape (3,) and cf be one Frame, got {c.shape}, "
                f"{ln.shape} and {cf.shape}", argument="calc")
        out = seed_constrain(_v(c), _v(ln), _v(cf.up), _v(cf.right), *self._angles())
        return np.array(out)

    def __repr__(self) -> str:
        return f"FabrikChain(n={self.n}, totallength={self.totallength:.6g})"


def fabrik_update(trunk: FabrikChain, branches: Any, start: Any) -> None:
    """Seed 003's multiple-end-effector ``update()``, in place, for any number of branches.

    Implements (the branches' targets are set by the caller beforehand)::

        chainA.origin = CFrame.new(start.Position)
        chainA.joints[1] = start.Position
        chainA1:backward(); chainA2:backward()
        local centroid = (chainA1.joints[1] + chainA2.joints[1]) / 2
        chainA.target = centroid
        chainA:solve()
        chainA1.origin = CFrame.new(chainA.joints[chainA.n])
        chainA2.origin = CFrame.new(chainA.joints[chainA.n])
        chainA1:forward(); chainA2:forward()

    The centroid sums the branches' first joints in order and divides by their count.
    """
    if not isinstance(trunk, FabrikChain):
        raise InvalidInputError(f"trunk must be a FabrikChain, got {type(trunk).__name__}",
                                argument="trunk")
    branches = list(branches)
    if not branches or not all(isinstance(b, FabrikChain) for b in branches):
        raise InvalidInputError("branches must be a non-empty sequence of FabrikChain",
                                argument="branches")
    s = as_point(start, "start")
    trunk.origin = Frame.from_translation(s)
    trunk.joints = np.array(trunk.joints, dtype=np.float64)
    trunk.joints[0] = s
    for b in branches:
        b.backward()
    total = np.array(branches[0].joints[0], dtype=np.float64)
    for b in branches[1:]:
        total = total + b.joints[0]
    trunk.target = total / len(branches)
    trunk.solve()
    end = Frame.from_translation(np.array(trunk.joints[trunk.n - 1]))
    for b in branches:
        b.origin = end
    for b in branches:
        b.forward()
