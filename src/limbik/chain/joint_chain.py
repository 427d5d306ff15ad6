"""``JointChain``: a serial chain of revolute, continuous, prismatic and fixed joints.

Conventions (the URDF ones):

- Joint ``i`` has an ``origin`` frame, expressed in the frame of joint ``i - 1``
  after its motion (joint 0: in the chain's base frame).
- A revolute or continuous joint rotates by ``q`` radians about its unit ``axis``
  (expressed in the joint's origin frame); a prismatic joint translates by ``q``
  length units along it; a fixed joint has no coordinate.
- The frame of joint ``i`` after its motion is the frame of its child link. The
  last joint's child is the chain's tip.

Joint coordinates ``q`` have shape ``(..., dof)``, one entry per movable joint,
base first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    MAX_MAGNITUDE,
    FloatArray,
    as_float_array,
    as_points,
    as_sequence,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import quaternion_from_matrix
from limbik.geometry.vectors import cross

__all__ = ["JOINT_TYPES", "Joint", "JointChain"]

#: The joint types a :class:`JointChain` holds.
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")


#: Kernel codes of the joint types: rotation, translation, none.
KIND_REVOLUTE = 0
KIND_PRISMATIC = 1
KIND_FIXED = 2


def _rotation_about(axis: FloatArray, angle: FloatArray) -> FloatArray:
    """Rodrigues rotation matrices ``(..., 3, 3)`` about a unit ``axis`` (3,) by ``angle`` (...)."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


@dataclasses.dataclass(frozen=True, eq=False)
class Joint:
    """One joint of a :class:`JointChain`.

    Parameters
    ----------
    name : str
        Joint name.
    type : str
        One of ``"revolute"``, ``"continuous"``, ``"prismatic"``, ``"fixed"``.
    origin : Frame
        Unbatched frame of the joint in its parent's frame (default: identity).
    axis : array_like, shape (3,)
        Motion axis in the origin frame, normalised here (default +X, as in URDF).
        Must be non-zero for movable joints.
    lower, upper : float
        Limits of ``q`` (radians or length units). Continuous joints are always
        unlimited (``-inf``, ``inf``); the defaults leave other joints unlimited too.
    parent, child : str
        Optional link names (set by :func:`limbik.load_urdf`).
    """

    name: str
    type: str = "revolute"
    origin: Frame = dataclasses.field(default_factory=Frame.identity)
    axis: Any = (1.0, 0.0, 0.0)
    lower: float = -np.inf
    upper: float = np.inf
    parent: str = ""
    child: str = ""

    def __post_init__(self) -> None:
        if self.type not in JOINT_TYPES:
            listed = ", ".join(repr(t) for t in JOINT_TYPES)
            raise InvalidInputError(
                f"type of joint {self.name!r} must be one of {listed}, got {self.type!r}",
                argument="type")
        if not isinstance(self.origin, Frame) or self.origin.shape != ():
            raise InvalidInputError(
                f"origin of joint {self.name!r} must be an unbatched Frame, got "
                f"{type(self.origin).__name__}"
                + (f" of shape {self.origin.shape}" if isinstance(self.origin, Frame) else ""),
                argument="origin")
        axis = as_float_array(self.axis, "axis", (3,))
        if axis.shape != (3,):
            raise InvalidInputError(f"axis must have shape (3,), got {axis.shape}",
                                    argument="axis")
        big = float(np.max(np.abs(axis)))
        if big > 0.0 and not 1e-150 <= big <= 1e150:  # the norm would under- or overflow
            axis = axis / big
        n = float(np.linalg.norm(axis))
        if self.type != "fixed" and n < 1e-150:
            raise InvalidInputError(
                f"axis of joint {self.name!r} must be non-zero, got (0, 0, 0)", argument="axis")
        axis = axis / n if n >= 1e-150 else np.array([1.0, 0.0, 0.0])
        axis.flags.writeable = False
        object.__setattr__(self, "axis", axis)
        for name in ("lower", "upper"):
            value = getattr(self, name)
            numeric = isinstance(value, int | float | np.integer | np.floating) or (
                isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf")
            if isinstance(value, bool | np.bool_) or not numeric:
                raise InvalidInputError(f"{name} limit of joint {self.name!r} must be a number, "
                                        f"got {type(value).__name__} {value!r:.40}",
                                        argument=name)
        lower, upper = float(self.lower), float(self.upper)
        if np.isnan(lower) or np.isnan(upper):
            raise InvalidInputError(f"limits of joint {self.name!r} must not be NaN",
                                    argument="lower")
        offset = float(np.max(np.abs(self.origin.position)))
        if offset > MAX_MAGNITUDE or (self.type == "prismatic" and any(
                MAX_MAGNITUDE < abs(v) < np.inf for v in (lower, upper))):
            raise InvalidInputError(
                f"origin and prismatic limits of joint {self.name!r} must be within "
                f"±{MAX_MAGNITUDE:g} (limits may be infinite), got origin {offset:g}, limits "
                f"({lower:g}, {upper:g})", argument="origin" if offset > MAX_MAGNITUDE
                else "lower")
        if self.type == "continuous":
            lower, upper = -np.inf, np.inf
        elif self.type == "fixed":
            lower, upper = 0.0, 0.0
        elif lower > upper:
            raise InvalidInputError(
                f"lower limit of joint {self.name!r} must be <= upper, got {lower} > {upper}",
                argument="lower")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @property
    def movable(self) -> bool:
        """True unless the joint is fixed."""
        return self.type != "fixed"

    def __repr__(self) -> str:
        return (f"Joint({self.name!r}, {self.type}, axis={self.axis.tolist()}, "
                f"limits=({self.lower:g}, {self.upper:g}))")


class JointChain:
    """A serial chain of joints with batched forward kinematics and Jacobians.

    Parameters
    ----------
    joints : sequence of Joint
        Base to tip. At least one joint.
    name : str
        Optional name (URDF import sets ``"base_link->tip_link"``).

    Build one in code with :meth:`from_joints` or :meth:`from_points`, or from a
    URDF file with :func:`limbik.load_urdf`.
    """

    __slots__ = (
        "_arrays",
        "_bounds",
        "_dof",
        "_joints",
        "_lower",
        "_merged",
        "_middle",
        "_name",
        "_position_map",
        "_reach",
        "_upper",
    )

    def __init__(self, joints: Sequence[Joint], *, name: str = "") -> None:
        joints = as_sequence(joints, "joints", "Joint")
        if not joints:
            raise InvalidInputError("joints must hold at least one Joint, got none",
                                    argument="joints")
        for j in joints:
            if not isinstance(j, Joint):
                raise InvalidInputError(
                    f"joints must be Joint objects, got {type(j).__name__}", argument="joints")
        self._joints = joints
        self._name = str(name)
        n = len(joints)
        rot = np.empty((n, 3, 3))
        trans = np.empty((n, 3))
        axis = np.empty((n, 3))
        kind = np.empty(n, dtype=np.int64)
        for i, j in enumerate(joints):
            rot[i] = j.origin.rotation_matrix
            trans[i] = j.origin.position
            axis[i] = j.axis
            kind[i] = (KIND_FIXED if j.type == "fixed"
                       else KIND_PRISMATIC if j.type == "prismatic" else KIND_REVOLUTE)
        self._arrays = (rot, trans, axis, kind)
        self._dof = int(np.sum(kind != KIND_FIXED))
        self._lower = np.array([j.lower for j in joints if j.movable], dtype=np.float64)
        self._upper = np.array([j.upper for j in joints if j.movable], dtype=np.float64)
        self._lower.flags.writeable = False
        self._upper.flags.writeable = False
        self._merged = self._merge()
        self._position_map = self._map_positions()
        # a length scale: sum of origin offsets (never zero)
        reach = float(np.sum(np.linalg.norm(trans, axis=-1)))
        prismatic_range = [min(abs(j.lower), abs(j.upper)) if np.isfinite(j.lower)
                           and np.isfinite(j.upper) else 0.0 for j in joints
                           if j.type == "prismatic"]
        reach += float(np.sum(prismatic_range)) if prismatic_range else 0.0
        self._reach = reach if reach > 0 else 1.0
        wide = np.where(self._merged[3] == KIND_PRISMATIC, self._reach, np.pi)
        lo = np.where(np.isfinite(self._lower), self._lower, -wide).astype(np.float64)
        hi = np.where(np.isfinite(self._upper), self._upper, wide).astype(np.float64)
        lo.flags.writeable = False
        hi.flags.writeable = False
        self._bounds = (lo, hi)
        finite = np.isfinite(self._lower) & np.isfinite(self._upper)
        middle = np.where(finite, 0.5 * (np.where(finite, self._lower, 0.0)
                                         + np.where(finite, self._upper, 0.0)), 0.0)
        middle.flags.writeable = False
        self._middle = middle

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_joints(cls, joints: Sequence[Joint | Mapping[str, Any]], *,
                    name: str = "") -> JointChain:
        """A chain from :class:`Joint` objects or dicts of ``Joint`` arguments.

        A dict may give ``origin`` as a :class:`Frame` or as ``{"xyz": ..., "rpy": ...}``
        (URDF convention, ``R = Rz·Ry·Rx``), e.g.
        ``{"name": "j1", "type": "revolute", "origin": {"xyz": (0, 0, 0.3)},
        "axis": (0, 0, 1), "lower": -2, "upper": 2}``.
        """
        built: list[Joint] = []
        for i, spec in enumerate(joints):
            if isinstance(spec, Joint):
                built.append(spec)
                continue
            if not isinstance(spec, Mapping):
                raise InvalidInputError(
                    f"joints[{i}] must be a Joint or a dict, got {type(spec).__name__}",
                    argument="joints")
            kwargs = dict(spec)
            kwargs.setdefault("name", f"joint{i}")
            origin = kwargs.get("origin")
            if isinstance(origin, Mapping):
                kwargs["origin"] = frame_from_xyz_rpy(origin.get("xyz", (0.0, 0.0, 0.0)),
                                                      origin.get("rpy", (0.0, 0.0, 0.0)))
            elif origin is None:
                kwargs.pop("origin", None)
            try:
                built.append(Joint(**kwargs))
            except TypeError as exc:
                raise InvalidInputError(f"joints[{i}]: {exc}", argument="joints") from None
        return cls(built, name=name)

    @classmethod
    def from_points(cls, positions: Any, *, name: str = "") -> JointChain:
        """A chain of unlimited ball joints through the points of a point chain.

        Parameters
        ----------
        positions : array_like, shape (n, 3)
            Joint positions, root first, end effector last (the ``fabrik`` input form),
            ``n >= 2``.

        Each of the ``n - 1`` points before the end effector gets a ball joint made of
        three continuous joints about its local X, Y and Z axes (``dof = 3 (n - 1)``);
        a fixed joint carries the last bone to the tip. At ``q = 0`` the joints sit at
        ``positions``.
        """
        pts = as_points(positions, "positions")
        if pts.ndim != 2 or pts.shape[0] < 2:
            raise InvalidInputError(
                f"positions must have shape (n, 3) with n >= 2, got {pts.shape}",
                argument="positions")
        if np.max(np.abs(pts)) > MAX_MAGNITUDE:
            raise InvalidInputError(f"positions must be within ±{MAX_MAGNITUDE:g}, got "
                                    f"{np.max(np.abs(pts)):g}", argument="positions")
        joints: list[Joint] = []
        previous = np.zeros(3)
        for i in range(pts.shape[0] - 1):
            offset = pts[i] - previous
            previous = pts[i]
            for k, label in enumerate("xyz"):
                axis = np.zeros(3)
                axis[k] = 1.0
                origin = Frame.from_translation(offset if k == 0 else np.zeros(3))
                joints.append(Joint(f"ball{i}_{label}", "continuous", origin, axis))
        joints.append(Joint("tip", "fixed", Frame.from_translation(pts[-1] - previous)))
        return cls(joints, name=name)

    # ------------------------------------------------------------------ properties
    @property
    def joints(self) -> tuple[Joint, ...]:
        """All joints, base to tip."""
        return self._joints

    @property
    def name(self) -> str:
        return self._name

    @property
    def n_joints(self) -> int:
        """Number of joints, fixed ones included."""
        return len(self._joints)

    @property
    def dof(self) -> int:
        """Number of movable joints: the length of ``q``."""
        return self._dof

    @property
    def movable_joints(self) -> tuple[Joint, ...]:
        """The joints that ``q`` drives, in ``q`` order."""
        return tuple(j for j in self._joints if j.movable)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the movable joints, in ``q`` order."""
        return tuple(j.name for j in self.movable_joints)

    @property
    def lower(self) -> FloatArray:
        """Lower limits ``(dof,)`` (``-inf`` where unlimited)."""
        return self._lower

    @property
    def upper(self) -> FloatArray:
        """Upper limits ``(dof,)`` (``inf`` where unlimited)."""
        return self._upper

    @property
    def middle(self) -> FloatArray:
        """The middle of each joint's range ``(dof,)`` (0 where unlimited): the default start."""
        return self._middle

    @property
    def reach(self) -> float:
        """A length scale: the sum of the joint origin offsets (plus prismatic travel)."""
        return self._reach

    @property
    def kernel_arrays(self) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray,
                                     FloatArray, FloatArray]:
        """The chain in the form the compiled solvers use, fixed joints merged away.

        ``(pre_rot (dof + 1, 3, 3), pre_trans (dof + 1, 3), axis (dof, 3), kind (dof,),
        lower (dof,), upper (dof,))``: entry ``k`` of ``pre_*`` is the fixed transform
        from movable joint ``k - 1`` (after its motion; the base for ``k = 0``) to
        movable joint ``k``; entry ``dof`` leads to the tip.
        """
        return self._merged

    @property
    def position_map(self) -> tuple[np.ndarray, FloatArray]:
        """Where each joint frame sits relative to the merged frames of :attr:`kernel_arrays`.

        ``(frame (n_joints + 1,), offset (n_joints + 1, 3))``: the position of entry ``i``
        of :meth:`joint_positions` (the base, then every joint frame) is
        ``p[frame[i]] + R[frame[i]] @ offset[i]``, where ``R``, ``p`` are the world frames
        of the movable joints after their motion (index ``dof``: the tip) and frame
        ``-1`` is the base.
        """
        return self._position_map

    @property
    def joint_arrays(self) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray]:
        """Every joint, unmerged: ``(rot (n, 3, 3), trans (n, 3), axis (n, 3), kind (n,))``.

        ``rot``/``trans`` are the origins; ``kind`` is 0 rotation, 1 translation, 2 fixed.
        """
        return self._arrays

    def __repr__(self) -> str:
        label = f"{self._name!r}, " if self._name else ""
        return f"JointChain({label}n_joints={self.n_joints}, dof={self.dof})"

    # ------------------------------------------------------------------ kinematics
    def _merge(self) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray,
                              FloatArray, FloatArray]:
        rot, trans, axis, kind = self._arrays
        pre_r: list[FloatArray] = []
        pre_t: list[FloatArray] = []
        axes: list[FloatArray] = []
        kinds: list[int] = []
        acc_r = np.eye(3)
        acc_t = np.zeros(3)
        for i in range(len(kind)):
            acc_t = acc_t + acc_r @ trans[i]
            acc_r = acc_r @ rot[i]
            if kind[i] == KIND_FIXED:
                continue
            pre_r.append(acc_r)
            pre_t.append(acc_t)
            axes.append(axis[i])
            kinds.append(int(kind[i]))
            acc_r = np.eye(3)
            acc_t = np.zeros(3)
        pre_r.append(acc_r)
        pre_t.append(acc_t)
        m = len(kinds)
        lower = np.array([j.lower for j in self._joints if j.movable], dtype=np.float64)
        upper = np.array([j.upper for j in self._joints if j.movable], dtype=np.float64)
        return (np.ascontiguousarray(np.array(pre_r)), np.ascontiguousarray(np.array(pre_t)),
                np.ascontiguousarray(np.array(axes).reshape(m, 3)),
                np.array(kinds, dtype=np.int64), lower, upper)

    def _map_positions(self) -> tuple[np.ndarray, FloatArray]:
        rot, trans, _, kind = self._arrays
        n = len(kind)
        frame = np.full(n + 1, -1, dtype=np.int64)
        offset = np.zeros((n + 1, 3))
        acc_r = np.eye(3)
        acc_t = np.zeros(3)
        last = -1
        for i in range(n):
            acc_t = acc_t + acc_r @ trans[i]
            acc_r = acc_r @ rot[i]
            if kind[i] == KIND_FIXED:
                frame[i + 1] = last
                offset[i + 1] = acc_t
                continue
            last += 1
            frame[i + 1] = last
            acc_r = np.eye(3)
            acc_t = np.zeros(3)
        if kind[n - 1] == KIND_FIXED:  # the tip is the merged frame ``dof``, offset 0
            frame[n] = last + 1
            offset[n] = 0.0
        frame.flags.writeable = False
        offset.flags.writeable = False
        return frame, offset

    def check_q(self, q: Any, name: str = "q") -> FloatArray:
        """Validate joint coordinates: finite float64 of shape ``(..., dof)``."""
        return as_float_array(q, name, (self.dof,))

    def _world(self, q: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Rotations ``(..., n + 1, 3, 3)`` and positions ``(..., n + 1, 3)`` of every frame."""
        rot, trans, axis, kind = self._arrays
        batch = q.shape[:-1]
        n = len(kind)
        rs = np.empty(batch + (n + 1, 3, 3))
        ps = np.empty(batch + (n + 1, 3))
        r = np.broadcast_to(np.eye(3), batch + (3, 3))
        p = np.zeros(batch + (3,))
        rs[..., 0, :, :] = r
        ps[..., 0, :] = p
        k = 0
        for i in range(n):
            p = p + r @ trans[i]
            r = r @ rot[i]
            if kind[i] == KIND_REVOLUTE:
                r = r @ _rotation_about(axis[i], q[..., k])
                k += 1
            elif kind[i] == KIND_PRISMATIC:
                p = p + (r @ axis[i]) * q[..., k, None]
                k += 1
            rs[..., i + 1, :, :] = r
            ps[..., i + 1, :] = p
        return rs, ps

    def forward(self, q: Any) -> Frame:
        """Tip frames for joint coordinates ``q`` ``(..., dof)``: a Frame of shape ``(...)``."""
        qa = self.check_q(q)
        rs, ps = self._world(qa)
        return Frame._make(quaternion_from_matrix(rs[..., -1, :, :]), ps[..., -1, :])

    def joint_frames(self, q: Any) -> Frame:
        """Frames ``(..., n_joints + 1)``: the base, then each joint's frame after its motion.

        Entry ``i + 1`` is the child link frame of joint ``i``; the last entry is the tip.
        Positions of a revolute joint's frame are its rotation centre.
        """
        qa = self.check_q(q)
        rs, ps = self._world(qa)
        return Frame._make(quaternion_from_matrix(rs), ps)

    def joint_positions(self, q: Any) -> FloatArray:
        """Positions ``(..., n_joints + 1, 3)`` of :meth:`joint_frames` (cheaper)."""
        qa = self.check_q(q)
        return self._world(qa)[1]

    def jacobian(self, q: Any) -> FloatArray:
        """Geometric Jacobian of the tip ``(..., 6, dof)``, in the base (world) frame.

        Rows 0-2 are the tip's linear velocity, rows 3-5 its angular velocity, per unit
        ``dq``: for a revolute joint with world axis ``a`` at ``p``, column
        ``(a × (p_tip − p), a)``; for a prismatic joint ``(a, 0)``.
        """
        qa = self.check_q(q)
        rs, ps = self._world(qa)
        axis, kind = self._arrays[2], self._arrays[3]
        jac = np.zeros(qa.shape[:-1] + (6, self.dof))
        tip = ps[..., -1, :]
        k = 0
        for i in range(len(kind)):
            if kind[i] == KIND_FIXED:
                continue
            # the joint's own frame: its axis is the same before and after its motion
            a = rs[..., i + 1, :, :] @ axis[i]
            if kind[i] == KIND_REVOLUTE:
                jac[..., :3, k] = cross(a, tip - ps[..., i + 1, :])
                jac[..., 3:, k] = a
            else:
                jac[..., :3, k] = a
            k += 1
        return jac

    # ------------------------------------------------------------------ helpers
    def random_q(self, shape: int | tuple[int, ...], rng: np.random.Generator) -> FloatArray:
        """Joint coordinates ``(*shape, dof)`` uniform within the limits.

        Unlimited rotations are drawn from ``[-π, π]``, unlimited translations from
        ``[-reach, reach]``.
        """
        shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
        lo, hi = self.sampling_bounds()
        return lo + (hi - lo) * rng.random(shape + (self.dof,))

    def sampling_bounds(self) -> tuple[FloatArray, FloatArray]:
        """Finite bounds ``(dof,)`` for sampling: the limits, or ±π / ±reach where unlimited."""
        return self._bounds

    def within_limits(self, q: Any, atol: float = 1e-12) -> np.ndarray:
        """Bool ``(...)``: every coordinate of ``q`` ``(..., dof)`` is within its limits."""
        qa = self.check_q(q)
        return np.all((qa >= self.lower - atol) & (qa <= self.upper + atol), axis=-1)

    def clip(self, q: Any) -> FloatArray:
        """``q`` ``(..., dof)`` clipped to the joint limits."""
        return np.clip(self.check_q(q), self.lower, self.upper)


def frame_from_xyz_rpy(xyz: Any, rpy: Any) -> Frame:
    """A frame at ``xyz`` rotated by fixed-axis roll-pitch-yaw: ``R = Rz(y)·Ry(p)·Rx(r)``.

    This is the URDF ``<origin xyz=... rpy=...>`` convention (radians).
    """
    p = as_float_array(xyz, "xyz", (3,))
    r, pitch, y = as_float_array(rpy, "rpy", (3,))
    cr, sr = np.cos(r), np.sin(r)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(y), np.sin(y)
    m = np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])
    return Frame._make(quaternion_from_matrix(m), p)
