"""Joint constraints for FABRIK chains and trees: ``Cone``, ``EllipticalCone``, ``Hinge``.

A constraint limits the direction of one bone relative to the frame of its parent
bone. FABRIK applies it in the forward pass, right after a bone's unconstrained
direction is found, so every solved pose satisfies every constraint.

Bone frames
-----------
Each bone carries a frame looking down the bone, as ``CFrame.new(joint[i],
joint[i+1])`` in the seed: ``look`` (local −Z) along the bone, ``up`` (local +Y)
and ``right`` (local +X, ``look × up``). The frames are carried along the chain
with minimal twist (parallel transport): bone ``i``'s frame is bone ``i − 1``'s
frame turned by the smallest rotation that takes its ``look`` onto bone ``i``.
The chain starts from ``root_frame`` (default: the identity, look −Z, up +Y,
right +X), turned the same way onto bone 0.

Bone ``i``'s constraint is measured in bone ``i − 1``'s frame: the cone axis is
the parent bone's direction, and "up"/"right" (and a hinge axis) are that
frame's axes. Bone 0's constraint is measured in ``root_frame`` itself, and only
when a ``root_frame`` is given; without one, ``constraints[0]`` is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_directions,
    as_float,
    as_points,
    as_quaternions,
    finite_squares,
    read_only,
)
from limbik.errors import InvalidInputError
from limbik.geometry.vectors import cross
from limbik.solvers import _ccd_kernels as _ccd
from limbik.solvers.fabrik import _kernels as K

__all__ = ["Cone", "Constraint", "EllipticalCone", "Hinge", "SwingTwistLimit", "TwistLimit",
           "ellipse_nearest_point"]

_HALF_PI = 0.5 * np.pi


class Constraint:
    """Base class of the joint constraints. Instances are immutable."""

    __slots__ = ()

    def _encode(self) -> tuple[int, FloatArray, FloatArray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def project(self, direction: Any, look: Any = (0.0, 0.0, -1.0),
                up: Any = (0.0, 1.0, 0.0)) -> FloatArray:
        """Constrain unit ``direction`` ``(..., 3)`` against a parent frame.

        ``look`` is the parent bone's direction and ``up`` its frame's up (made
        perpendicular to ``look``); both broadcast. Returns unit directions
        ``(..., 3)``: unchanged inside the limit, moved onto it outside.
        """
        d = as_points(direction, "direction")
        lk = as_points(look, "look")
        u = as_points(up, "up")
        shape = np.broadcast_shapes(d.shape, lk.shape, u.shape)
        d, lk, u = (np.broadcast_to(a, shape).reshape(-1, 3) for a in (d, lk, u))
        kind, prm, hax = self._encode()
        out = np.empty_like(d)
        for i in range(d.shape[0]):
            frame = _frame_rows(lk[i], u[i])
            di = d[i] / max(float(np.linalg.norm(d[i])), 1e-300)
            out[i] = K.constrain_direction(kind, prm, hax, di, frame)
        return out.reshape(shape)


def _frame_rows(look: FloatArray, up: FloatArray) -> FloatArray:
    """Rows look, up, right of a frame from a look direction and an up hint."""
    lk = look / np.linalg.norm(look)
    u = up - np.dot(up, lk) * lk
    if np.linalg.norm(u) < 1e-9:
        raise InvalidInputError("up must not be parallel to look", argument="up")
    u = u / np.linalg.norm(u)
    return np.array([lk, u, cross(lk, u)])


def _angle(value: Any, name: str, low: float, high: float, *, open_high: bool = False) -> float:
    out = as_float(value, name)
    if out < low or (out >= high if open_high else out > high):
        bracket = ")" if open_high else "]"
        raise InvalidInputError(
            f"{name} must be in [{low:.6g}, {high:.6g}{bracket} radians, got {out!r}",
            argument=name)
    return out


class Cone(Constraint):
    """A circular cone: the bone stays within ``angle`` (rad, 0..π) of its parent bone.

    Outside, the direction turns toward the axis in the plane of axis and bone,
    which is the nearest direction on the cone.
    """

    __slots__ = ("angle",)
    angle: float

    def __init__(self, angle: float) -> None:
        object.__setattr__(self, "angle", _angle(angle, "angle", 0.0, np.pi))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Cone is immutable")

    def _encode(self) -> tuple[int, FloatArray, FloatArray]:
        return K.CONE, np.array([self.angle, 0.0, 0.0, 0.0]), np.zeros(3)

    def __repr__(self) -> str:
        return f"Cone(angle={self.angle!r})"


class EllipticalCone(Constraint):
    """The seed's four-angle cone (radians, each in [0, π/2)).

    At height ``h`` along the parent bone the cone's cross-section is an ellipse
    made of four quarter ellipses with half-axes ``h·tan(right)``,
    ``h·tan(left)`` (along the frame's ±right) and ``h·tan(up)``, ``h·tan(down)``
    (along ±up). A bone outside moves onto the boundary, keeping its length.

    ``method="nearest"`` (default) moves the bone's cross-section point to the
    nearest point of the ellipse (Eberly's robust bisection). ``method="seed"``
    scales it along the ray from the centre with the seed's ``atan2`` formula,
    a port of the seed's Lua: it picks the closer of ±up and ±right as its axes,
    so its 2D coordinates are never negative and only ``right`` and ``up`` shape
    its cone (the seed's behaviour; the left/down angles then have no effect).

    Beyond 90° from the parent bone the bone is always moved onto the boundary,
    as in the seed. The seed flips the height and scales along the ray; the
    default method takes the boundary point whose outward normal is parallel to
    the bone's sideways part, which is where the nearest point goes as the bone
    approaches 90° from the front, so the projection stays continuous there.
    """

    __slots__ = ("down", "left", "method", "right", "up")
    left: float
    right: float
    up: float
    down: float
    method: str

    def __init__(self, left: float, right: float, up: float, down: float, *,
                 method: str = "nearest") -> None:
        for name, value in (("left", left), ("right", right), ("up", up), ("down", down)):
            object.__setattr__(self, name, _angle(value, name, 0.0, _HALF_PI, open_high=True))
        if method not in ("nearest", "seed"):
            raise InvalidInputError(
                f"method must be one of 'nearest', 'seed', got {method!r}", argument="method")
        object.__setattr__(self, "method", method)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("EllipticalCone is immutable")

    def _encode(self) -> tuple[int, FloatArray, FloatArray]:
        angles = np.array([self.left, self.right, self.up, self.down])
        if self.method == "seed":
            return K.SEED, angles, np.zeros(3)
        return K.ELLIPSE, np.tan(angles), np.zeros(3)

    def __repr__(self) -> str:
        return (f"EllipticalCone(left={self.left!r}, right={self.right!r}, up={self.up!r}, "
                f"down={self.down!r}, method={self.method!r})")


class Hinge(Constraint):
    """A hinge: the bone turns about ``axis`` only, by an angle in ``[min_angle, max_angle]``.

    ``axis`` (3,) is given in the parent bone's frame (x right, y up, z back;
    the parent bone points along −z), so it must be perpendicular to z. The
    angle (rad, within [−π, π]) is measured from the parent bone's direction,
    positive by the right-hand rule about ``axis``. Outside the range, the
    bone moves to the nearer end of the arc.
    """

    __slots__ = ("axis", "max_angle", "min_angle")
    axis: FloatArray
    min_angle: float
    max_angle: float

    def __init__(self, axis: Any, min_angle: float, max_angle: float) -> None:
        a = finite_squares(as_points(axis, "axis"))
        if a.shape != (3,):
            raise InvalidInputError(f"axis must have shape (3,), got {a.shape}", argument="axis")
        n = float(np.linalg.norm(a))
        if n < 1e-12 or abs(a[2]) > 1e-9 * n:
            raise InvalidInputError(
                "axis must be a non-zero vector perpendicular to the bone (z component 0 in "
                f"the parent bone's frame), got {a.tolist()}", argument="axis")
        a = a / n
        a.flags.writeable = False
        lo = _angle(min_angle, "min_angle", -np.pi, np.pi)
        hi = _angle(max_angle, "max_angle", -np.pi, np.pi)
        if lo > hi:
            raise InvalidInputError(
                f"min_angle must be <= max_angle, got {lo!r} > {hi!r}", argument="min_angle")
        object.__setattr__(self, "axis", a)
        object.__setattr__(self, "min_angle", lo)
        object.__setattr__(self, "max_angle", hi)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Hinge is immutable")

    def _encode(self) -> tuple[int, FloatArray, FloatArray]:
        return K.HINGE, np.array([self.min_angle, self.max_angle, 0.0, 0.0]), self.axis.copy()

    def __repr__(self) -> str:
        return (f"Hinge(axis={self.axis.tolist()}, min_angle={self.min_angle!r}, "
                f"max_angle={self.max_angle!r})")


class SwingTwistLimit(Constraint):
    """A swing-twist limit: the bone swings at most ``swing`` (rad, 0..π) and twists about
    itself by an angle in ``[min_twist, max_twist]`` (rad, within [−π, π]).

    A joint rotation is split as ``swing · twist``, the twist about the bone and the swing
    about an axis perpendicular to it. :meth:`project_rotation` returns the nearest allowed
    rotation in that split: the twist moves to the nearer end of its range (on the circle)
    and the swing is capped at ``swing`` about its own axis, so the bone's direction goes
    to the nearest direction of its cone.

    Where it applies:

    - ``ccd`` on point chains measures it from each joint's local rotation in the input
      pose (relative to the previous joint; the first joint relative to the world), with
      the twist about the bone's input direction.
    - ``fabrik`` carries bone frames without twist (see the module notes), so there the
      limit acts as a ``Cone(swing)`` about the parent bone and needs
      ``min_twist <= 0 <= max_twist``.
    """

    __slots__ = ("max_twist", "min_twist", "swing")
    swing: float
    min_twist: float
    max_twist: float

    def __init__(self, swing: float = np.pi, min_twist: float = -np.pi,
                 max_twist: float = np.pi) -> None:
        sw = _angle(swing, "swing", 0.0, np.pi)
        lo = _angle(min_twist, "min_twist", -np.pi, np.pi)
        hi = _angle(max_twist, "max_twist", -np.pi, np.pi)
        if lo > hi:
            raise InvalidInputError(
                f"min_twist must be <= max_twist, got {lo!r} > {hi!r}", argument="min_twist")
        object.__setattr__(self, "swing", sw)
        object.__setattr__(self, "min_twist", lo)
        object.__setattr__(self, "max_twist", hi)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _encode(self) -> tuple[int, FloatArray, FloatArray]:
        if not self.min_twist <= 0.0 <= self.max_twist:
            raise InvalidInputError(
                "fabrik carries bone frames without twist, so a twist range must include 0, "
                f"got [{self.min_twist!r}, {self.max_twist!r}]", argument="constraints")
        if self.swing >= np.pi:
            return K.FREE, np.zeros(4), np.zeros(3)
        return K.CONE, np.array([self.swing, 0.0, 0.0, 0.0]), np.zeros(3)

    def limit_row(self) -> FloatArray:
        """``(swing, min_twist, max_twist, 1)``: the row the CCD kernel reads."""
        return np.array([self.swing, self.min_twist, self.max_twist, 1.0])

    def project_rotation(self, rotation: Any, axis: Any = (0.0, 0.0, -1.0)) -> FloatArray:
        """Nearest allowed rotations ``(..., 4)`` (w >= 0) to ``rotation`` ``(..., 4)``, the
        twist measured about ``axis`` ``(..., 3)`` (the bone's direction; default −Z)."""
        q = as_quaternions(rotation, "rotation")
        a = as_directions(axis, "axis")[0]
        na = np.linalg.norm(a, axis=-1, keepdims=True)  # not as_directions' norms: other bits
        shape = np.broadcast_shapes(q.shape[:-1], a.shape[:-1])
        qs = np.ascontiguousarray(np.broadcast_to(q, shape + (4,)).reshape(-1, 4))
        axes = np.ascontiguousarray(np.broadcast_to(a / na, shape + (3,)).reshape(-1, 3))
        out = np.empty_like(qs)
        _ccd.swing_twist_project_batch(read_only(qs), read_only(axes), self.limit_row(), out)
        return out.reshape(shape + (4,))

    def twist_and_swing(self, rotation: Any, axis: Any = (0.0, 0.0, -1.0)
                        ) -> tuple[FloatArray, FloatArray]:
        """Twist angles in (−π, π] and swing angles in [0, π] ``(...)`` of rotations
        ``(..., 4)`` about ``axis`` (what the limit bounds)."""
        q = as_quaternions(rotation, "rotation")
        a = as_points(axis, "axis")
        a = a / np.linalg.norm(a, axis=-1, keepdims=True)
        q = np.where(q[..., 3:4] < 0, -q, q)
        p = np.sum(q[..., :3] * a, axis=-1)
        twist = 2.0 * np.arctan2(p, q[..., 3])
        twist = np.where(twist > np.pi, twist - 2 * np.pi, twist)
        swing = 2.0 * np.arccos(np.clip(np.sqrt(p * p + q[..., 3] ** 2), 0.0, 1.0))
        return twist, swing

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(swing={self.swing!r}, min_twist={self.min_twist!r}, "
                f"max_twist={self.max_twist!r})")


class TwistLimit(SwingTwistLimit):
    """A twist limit alone: the bone twists about itself within ``[min_twist, max_twist]``
    (rad) and swings freely. See :class:`SwingTwistLimit`."""

    __slots__ = ()

    def __init__(self, min_twist: float, max_twist: float) -> None:
        super().__init__(np.pi, min_twist, max_twist)

    def __repr__(self) -> str:
        return f"TwistLimit(min_twist={self.min_twist!r}, max_twist={self.max_twist!r})"


def encode_constraints(constraints: Sequence[Constraint | None] | None, n_bones: int
                       ) -> tuple[np.ndarray, FloatArray, FloatArray]:
    """Kernel arrays (kinds (n_bones,), params (n_bones, 4), axes (n_bones, 3))."""
    kinds = np.zeros(n_bones, dtype=np.int64)
    params = np.zeros((n_bones, 4))
    axes = np.zeros((n_bones, 3))
    if constraints is None:
        return kinds, params, axes
    _check_per_bone(constraints, n_bones)
    for i, c in enumerate(constraints):
        if c is None:
            continue
        if not isinstance(c, Constraint):
            raise InvalidInputError(
                f"constraints[{i}] must be a Cone, EllipticalCone, Hinge, SwingTwistLimit, "
                "TwistLimit or None, "
                f"got {type(c).__name__}", argument="constraints")
        kinds[i], params[i], axes[i] = c._encode()
    return kinds, params, axes


def _check_per_bone(constraints: Any, n_bones: int) -> None:
    """Raise unless ``constraints`` is a sequence with one entry per bone."""
    if isinstance(constraints, Constraint) or not isinstance(constraints, Sequence):
        raise InvalidInputError(
            f"constraints must be a sequence with one entry per bone ({n_bones}), "
            f"got {type(constraints).__name__}", argument="constraints")
    if len(constraints) != n_bones:
        raise InvalidInputError(
            f"constraints must have one entry per bone ({n_bones}), got {len(constraints)}",
            argument="constraints")


def encode_limits(constraints: Any, n_bones: int) -> FloatArray:
    """Rows ``(n_bones, 4)`` of the CCD kernel: swing, min twist, max twist, active."""
    _check_per_bone(constraints, n_bones)
    rows = np.zeros((n_bones, 4))
    for i, limit in enumerate(constraints):
        if limit is None:
            continue
        if not isinstance(limit, SwingTwistLimit):
            raise InvalidInputError(
                f"constraints[{i}] must be a SwingTwistLimit, TwistLimit or None for ccd, "
                f"got {type(limit).__name__}", argument="constraints")
        rows[i] = limit.limit_row()
    return rows


def ellipse_nearest_point(semi_axes: Any, points: Any) -> FloatArray:
    """Nearest points ``(..., 2)`` on axis-aligned ellipses to 2D ``points`` ``(..., 2)``.

    ``semi_axes`` ``(..., 2)`` are (a, b) >= 0 along x and y; zero gives a
    segment. Works inside and outside (Eberly's robust bisection, exact to
    rounding). This is the 2D step of ``EllipticalCone(method="nearest")``.
    """
    ab = np.asarray(semi_axes, dtype=np.float64)
    pts = np.asarray(points, dtype=np.float64)
    if ab.shape[-1:] != (2,) or pts.shape[-1:] != (2,):
        raise InvalidInputError(
            f"semi_axes and points must have shape (..., 2), got {ab.shape} and {pts.shape}")
    if np.any(ab < 0) or not (np.all(np.isfinite(ab)) and np.all(np.isfinite(pts))):
        raise InvalidInputError("semi_axes must be finite and >= 0, points finite")
    shape = np.broadcast_shapes(ab.shape, pts.shape)
    ab2 = np.broadcast_to(ab, shape).reshape(-1, 2)
    p2 = np.broadcast_to(pts, shape).reshape(-1, 2)
    out = np.empty_like(p2)
    for i in range(p2.shape[0]):
        out[i] = K.ellipse_nearest(ab2[i, 0], ab2[i, 1], p2[i, 0], p2[i, 1])
    return out.reshape(shape)
