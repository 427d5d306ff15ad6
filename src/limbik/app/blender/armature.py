"""Blender armatures as limbik motions and back, with NumPy only (no ``bpy``).

The add-on samples an armature into arrays and hands them here:

- ``rest`` ``(J, 4, 4)``: each bone's rest matrix in armature space
  (``bone.matrix_local``);
- ``pose`` ``(F, J, 4, 4)``: each pose bone's matrix in armature space per frame
  (``pose_bone.matrix``);
- ``world`` ``(4, 4)``: the armature object's ``matrix_world``.

Joints are the bones' heads. A joint's world rotation is its bone's world rotation
relative to the bone's rest (``R_bone · R_rest⁻¹``), so the rest pose is all
identity rotations, as in BVH, and the skeleton's offsets are the rest heads'
differences; local rotations and translations come from the bones' and their
parents' world matrices, so the motion's forward kinematics puts every head exactly
where Blender does. Blender's world is
Z up; :func:`motion_from_armature` returns limbik's Y-up frame
(:func:`~limbik.io.units.import_axes` with ``up="z"``).

:func:`pose_bases` turns a motion back into pose-bone ``matrix_basis`` values
(location, quaternion (w, x, y, z) as Blender stores it, scale), for bones that
inherit rotation and scale from their parents (Blender's default).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from limbik._runtime.validation import FloatArray, as_float, as_float_array, as_quaternions
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    matrix_from_quaternion,
    quaternion_conjugate,
    quaternion_from_matrix,
    quaternion_multiply,
    rotate_vectors,
)
from limbik.io.units import export_axes, import_axes
from limbik.skeleton.motion import Motion
from limbik.skeleton.skeleton import Skeleton
from limbik.tolerances import ANIMATED_TRANSLATION_RTOL

__all__ = ["bone_order", "euler_from_quaternions", "motion_from_armature", "pose_bases"]


def bone_order(names: Sequence[str], parents: Sequence[str | None]) -> list[int]:
    """Indices of bones with every parent before its children (one root).

    ``parents[k]`` is bone k's parent's name, or None for a root.
    """
    index = {n: k for k, n in enumerate(names)}
    roots = [k for k, p in enumerate(parents) if p is None]
    if len(roots) != 1:
        raise InvalidInputError(
            "armature must have one root bone, got "
            f"{', '.join(names[k] for k in roots) or 'none'}", argument="armature")
    children: dict[int, list[int]] = {}
    for k, p in enumerate(parents):
        if p is not None:
            if p not in index:
                raise InvalidInputError(f"bone {names[k]!r}'s parent must be a bone of the "
                                        f"armature, got {p!r}", argument="armature")
            children.setdefault(index[p], []).append(k)
    order, stack = [], [roots[0]]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children.get(k, [])))
    return order


def _rotation_and_position(m: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Quaternions (x, y, z, w), positions and column scales of matrices ``(..., 4, 4)``."""
    scale = np.linalg.norm(m[..., :3, :3], axis=-2)
    if np.any(scale <= 0):
        raise InvalidInputError("bone matrices must have non-zero scale", argument="pose")
    q = quaternion_from_matrix(m[..., :3, :3] / scale[..., None, :])
    return q, m[..., :3, 3].copy(), scale


def motion_from_armature(names: Sequence[str], parents: Sequence[int], rest: FloatArray,
                         pose: FloatArray, world: FloatArray, frame_time: float, *,
                         tails: FloatArray | None = None) -> Motion:
    """The armature's animation as a Y-up :class:`Motion` of its bone heads.

    ``names`` and ``parents`` (indices, -1 for the root, parents first) describe the
    J bones; ``rest``, ``pose`` and ``world`` are as in the module docstring;
    ``frame_time`` is seconds per frame. ``tails`` ``(J, 3)``, the bones' rest tails
    in armature space (``bone.tail_local``), give bones without children an End Site
    at their tail (a BVH import's end sites, toe tips for foot planting). Non-root
    bones whose head moves in its parent's frame keep that as joint translations.
    """
    rest = np.asarray(rest, dtype=np.float64)
    pose = np.asarray(pose, dtype=np.float64)
    w = np.asarray(world, dtype=np.float64)
    J = len(names)
    if rest.shape != (J, 4, 4) or pose.ndim != 4 or pose.shape[1:] != (J, 4, 4) or (
            w.shape != (4, 4)):
        raise InvalidInputError(
            f"rest must be ({J}, 4, 4), pose (frames, {J}, 4, 4) and world (4, 4), got "
            f"{rest.shape}, {pose.shape} and {w.shape}", argument="pose")
    ft = as_float(frame_time, "frame_time", minimum=0.0, exclusive=True)
    par = np.asarray(parents, dtype=np.int64)
    q_bone, p, _ = _rotation_and_position(w @ pose)
    q_rest, p_rest, _ = _rotation_and_position(w @ rest)
    q = quaternion_multiply(q_bone, quaternion_conjugate(q_rest))

    def local(qq: FloatArray, pp: FloatArray) -> tuple[FloatArray, FloatArray]:
        inverse = quaternion_conjugate(qq[..., par[1:], :])
        q_local = qq.copy()
        q_local[..., 1:, :] = quaternion_multiply(inverse, qq[..., 1:, :])
        t_local = pp.copy()
        t_local[..., 1:, :] = rotate_vectors(inverse, pp[..., 1:, :] - pp[..., par[1:], :])
        return q_local, t_local

    q_local, t_local = local(q, p)
    _, offsets = local(np.broadcast_to([0.0, 0.0, 0.0, 1.0], q_rest.shape).copy(), p_rest)
    size = max(float(np.max(np.linalg.norm(offsets[1:], axis=-1), initial=0.0)), 1e-300)
    moving = {k: t_local[:, k] for k in range(1, J)
              if np.max(np.abs(t_local[:, k] - offsets[k])) > ANIMATED_TRANSLATION_RTOL * size}
    end_sites: dict[int, FloatArray] = {}
    if tails is not None:
        tail = np.asarray(tails, dtype=np.float64)
        if tail.shape != (J, 3):
            raise InvalidInputError(f"tails must have shape ({J}, 3), got {tail.shape}",
                                    argument="tails")
        leaves = set(range(J)) - set(par[1:].tolist())
        ends = (w[:3, :3] @ (tail - rest[:, :3, 3]).T).T  # world vectors: rest frames are
        end_sites = {k: ends[k] for k in sorted(leaves)}  # the world's axes
    motion = Motion(Skeleton(list(names), par, offsets, end_sites=end_sites), t_local[:, 0],
                    q_local, ft, moving)
    return import_axes(motion, up="z")


def pose_bases(motion: Motion, parents: Sequence[int], rest: FloatArray, pose: FloatArray,
               world: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Pose-bone ``matrix_basis`` values that make Blender show ``motion``.

    ``motion`` is Y up, of the bones given to :func:`motion_from_armature`; ``pose``
    is the source pose (its bone scales are kept). Returns locations ``(F, J, 3)``,
    quaternions ``(F, J, 4)`` in Blender's (w, x, y, z) order, continuous in sign
    along the frames, and scales ``(F, J, 3)``.
    """
    rest = np.asarray(rest, dtype=np.float64)
    pose = np.asarray(pose, dtype=np.float64)
    w = np.asarray(world, dtype=np.float64)
    par = np.asarray(parents, dtype=np.int64)
    m = export_axes(motion, up="z")
    F, J = m.num_frames, m.num_joints
    if pose.shape[:2] != (F, J):
        raise InvalidInputError(f"pose must have shape ({F}, {J}, 4, 4), got {pose.shape}",
                                argument="pose")
    frames = m.world_frames()
    _, _, scale = _rotation_and_position(w @ pose)
    q_rest, _, _ = _rotation_and_position(w @ rest)
    q_bone = quaternion_multiply(frames.quaternion, q_rest)
    world_new = np.zeros((F, J, 4, 4))
    world_new[..., :3, :3] = matrix_from_quaternion(q_bone) * scale[..., None, :]
    world_new[..., :3, 3] = frames.position
    world_new[..., 3, 3] = 1.0
    arm_space = np.linalg.solve(w, world_new)  # armature space: inv(W) @ M
    rest_rel = rest.copy()  # each bone's rest in its parent's rest: inv(L_p) @ L
    rest_rel[1:] = np.linalg.solve(rest[par[1:]], rest[1:])
    parent_pose = np.broadcast_to(np.eye(4), (F, J, 4, 4)).copy()
    parent_pose[:, 1:] = arm_space[:, par[1:]]
    basis = np.linalg.solve(parent_pose @ rest_rel, arm_space)
    q, loc, s = _rotation_and_position(basis)
    # keep consecutive quaternions in one hemisphere, so keys interpolate the short way
    flips = np.sum(q[1:] * q[:-1], axis=-1) < 0
    sign = np.concatenate([np.ones((1, J)), np.cumprod(np.where(flips, -1.0, 1.0), axis=0)])
    q = q * sign[..., None]
    return loc, np.concatenate([q[..., 3:], q[..., :3]], axis=-1), s


def euler_from_quaternions(q_wxyz: FloatArray, order: str) -> FloatArray:
    """Blender Euler angles ``(F, ..., 3)`` (X, Y, Z slots, radians) of quaternions
    ``(F, ..., 4)`` (w, x, y, z), for a rotation mode such as ``"XYZ"`` (X applied
    first), unwrapped along the frames so keys interpolate without jumps.

    With the axes ``i, j, k`` of ``order``, ``R = R_k(γ) R_j(β) R_i(α)`` and
    ``β ∈ [-π/2, π/2]``; at gimbal lock (``cos β < 1e-7``) ``γ`` is 0.
    """
    if not isinstance(order, str) or sorted(order) != ["X", "Y", "Z"]:
        raise InvalidInputError(f"order must be a permutation of XYZ, got {order!r}",
                                argument="order")
    q = as_float_array(q_wxyz, "q_wxyz", (4,))
    r = matrix_from_quaternion(as_quaternions(q.reshape(-1, 4)[:, [1, 2, 3, 0]], "q_wxyz"))
    i, j, k = ("XYZ".index(axis) for axis in order)
    sign = 1.0 if (j - i) % 3 == 1 else -1.0  # +1 for the cyclic orders XYZ, YZX, ZXY
    cos_beta = np.hypot(r[:, k, j], r[:, k, k])
    beta = np.arctan2(-sign * r[:, k, i], cos_beta)
    locked = cos_beta < 1e-7
    alpha = np.where(locked, np.arctan2(-sign * r[:, j, k], r[:, j, j]),
                     np.arctan2(sign * r[:, k, j], r[:, k, k]))
    gamma = np.where(locked, 0.0, np.arctan2(sign * r[:, j, i], r[:, i, i]))
    slots = np.empty((len(r), 3))
    slots[:, i], slots[:, j], slots[:, k] = alpha, beta, gamma
    return np.unwrap(slots.reshape(q.shape[:-1] + (3,)), axis=0)
