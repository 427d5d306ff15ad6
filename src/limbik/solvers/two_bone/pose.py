"""The pose layer of ``two_bone``: input pose, weights, target rotation and offsets.

``two_bone`` computes joint positions in its compiled kernel; these NumPy helpers
prepare its target (position weight, target offset, stretch start ratio) and turn
its positions into a weighted pose with joint rotations, as engines define them:

- ``position_weight`` moves the target from the input end joint toward ``target``;
- ``pole_weight`` turns the bend plane from the input pose's toward the pole's;
- ``rotation_weight`` slerps the end joint from its carried rotation to the target's;
- ``weight`` blends every joint from the input pose (0) to the solve (1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray, as_float_array, as_unit_quaternions, as_weight
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import (
    IDENTITY,
    quaternion_from_axis_angle,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_normalize,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.geometry.vectors import cross, dot, norm, normalize
from limbik.solvers.rotations import _joint_rotations

__all__ = ["as_pose", "as_weight", "blend_bend", "offset_target", "posed", "stretch_scale"]


def as_pose(pose: Any, pose_rotations: Any) -> tuple[FloatArray, FloatArray]:
    """The input pose: positions ``(..., 3, 3)`` and world rotations ``(..., 3, 4)``.

    Rotations already unit to 1e-12 are kept bit for bit, so weight 0 returns them.
    """
    p = as_float_array(pose, "pose", (3, 3))
    if pose_rotations is None:
        return p, np.broadcast_to(IDENTITY, (3, 4))
    q = as_unit_quaternions(pose_rotations, "pose_rotations")
    if q.ndim < 2 or q.shape[-2] != 3:
        raise InvalidInputError(
            f"pose_rotations must have shape (..., 3, 4), got {q.shape}",
            argument="pose_rotations")
    return p, q


def offset_target(target: FloatArray, rotation: FloatArray | None,
                  offset: Frame) -> tuple[FloatArray, FloatArray | None]:
    """Where the end joint should go when it keeps ``offset`` (a Frame in the target's
    frame) from the target: position ``(..., 3)`` and rotation ``(..., 4)`` (None when
    neither the target nor the offset has one)."""
    if not isinstance(offset, Frame):
        raise InvalidInputError(
            f"target_offset must be a limbik Frame, got {type(offset).__name__}",
            argument="target_offset")
    turn = IDENTITY if rotation is None else rotation
    position = target + rotate_vectors(turn, offset.position)
    return position, quaternion_normalize(quaternion_multiply(turn, offset.quaternion))


def stretch_scale(root: FloatArray, target: FloatArray, length: FloatArray,
                  start: float, max_stretch: float) -> FloatArray:
    """Bone scale ``(...)`` of Unreal's stretch start ratio.

    With reach ratio ``r = |target − root| / length``, the bones scale by
    ``1 + (max_stretch − 1) · clip((r − start) / (max_stretch − start), 0, 1)``: they
    start growing at ``r = start`` and reach ``max_stretch`` at ``r = max_stretch``.
    The scale is never below ``r`` there, so targets up to ``max_stretch`` are reached.
    """
    r = norm(target - root) / length
    span = max_stretch - start
    if span <= 0.0:
        return np.ones_like(r)
    return 1.0 + (max_stretch - 1.0) * np.clip((r - start) / span, 0.0, 1.0)


def blend_bend(root: FloatArray, mid_from: FloatArray, mid_to: FloatArray, end: FloatArray,
               t: FloatArray) -> FloatArray:
    """Mid joints ``(..., 3)`` turned about root→end from ``mid_from`` by ``t`` of the way to
    ``mid_to`` (the signed angle between their bend planes, within (−π, π])."""
    axis = normalize(end - root)
    u = mid_from - root
    v = mid_to - root
    up = u - dot(u, axis)[..., None] * axis
    vp = v - dot(v, axis)[..., None] * axis
    angle = np.arctan2(dot(axis, cross(up, vp)), dot(up, vp))
    turned = root + rotate_vectors(quaternion_from_axis_angle(axis, t * angle), u)
    return np.where((t == 1.0)[..., None], mid_to, turned)


def posed(positions: FloatArray, pose: FloatArray, pose_rotations: FloatArray,
          end_rotation: FloatArray | None, rotation_weight: FloatArray,
          weight: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weighted positions ``(..., 3, 3)`` and joint rotations ``(..., 3, 4)``.

    ``positions`` is the full solve. Bone ``j`` turns by ``D_j`` (its minimal turn
    from the input pose), joint ``j`` takes ``D_j · pose_rotations[j]`` and the end
    joint ``D_1 · pose_rotations[2]``, slerped toward ``end_rotation`` by
    ``rotation_weight``. ``weight`` then takes each joint the fraction ``weight`` of
    the way from the input pose: ``slerp(1, D_j, weight)`` on the bones, root and bone
    lengths linearly. Weight 0 returns ``pose`` and ``pose_rotations`` exactly.
    """
    full = _joint_rotations(positions, pose, pose_rotations, np.broadcast_shapes(
        positions.shape[:-2], pose.shape[:-2], pose_rotations.shape[:-2]))
    if end_rotation is not None:
        carried = full[..., 2, :]
        if np.all(rotation_weight == 1.0):
            end = np.broadcast_to(end_rotation, np.broadcast_shapes(
                carried.shape, end_rotation.shape, rotation_weight.shape + (4,)))
        else:
            end = quaternion_slerp(carried, end_rotation, rotation_weight)
            end = np.where((rotation_weight == 1.0)[..., None], end_rotation, end)
        first = np.broadcast_to(full[..., :2, :], end.shape[:-1] + (2, 4))
        full = np.concatenate([first, end[..., None, :]], axis=-2)
    w = weight[..., None]
    shape = np.broadcast_shapes(positions.shape[:-2], pose.shape[:-2],
                                full.shape[:-2], weight.shape)
    if np.all(weight == 1.0):
        return (np.broadcast_to(positions, shape + (3, 3)).copy(),
                np.broadcast_to(full, shape + (3, 4)).copy())
    bones_in = np.diff(pose, axis=-2)
    bones_out = np.diff(positions, axis=-2)
    turn = quaternion_from_two_vectors(bones_in, bones_out)
    partial = quaternion_slerp(IDENTITY, turn, w)
    len_in = norm(bones_in)
    scale = 1.0 + w * (norm(bones_out) / np.where(len_in > 0.0, len_in, 1.0) - 1.0)
    bones = rotate_vectors(partial, bones_in) * scale[..., None]
    root = pose[..., 0, :] + weight[..., None] * (positions[..., 0, :] - pose[..., 0, :])
    mid = root + bones[..., 0, :]
    blended = np.stack([root, mid, mid + bones[..., 1, :]], axis=-2)
    turned = quaternion_slerp(pose_rotations, full, w)
    out_p = np.where((weight == 1.0)[..., None, None], positions, blended)
    out_p = np.where((weight == 0.0)[..., None, None], pose, out_p)
    out_q = np.where((weight == 1.0)[..., None, None], full, turned)
    out_q = np.where((weight == 0.0)[..., None, None], pose_rotations, out_q)
    return (np.broadcast_to(out_p, shape + (3, 3)).copy(),
            np.broadcast_to(out_q, shape + (3, 4)).copy())
