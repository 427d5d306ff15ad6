"""``full_body_ik``: hands, feet and head targets on a whole clip, solved for the whole body.

Per frame, batched over all frames:

1. **Body pull.** The pelvis (root joint) translates by a small shift that brings
   every limb's root (hip, shoulder) within ``reach`` of its target, as far as the
   effectors' ``pull`` weights allow: the shift is found by cyclic projection onto the
   balls ``|target − limb_root| <= reach · limb_length`` (and, for a head target, the
   point itself), each projection scaled by the effector's pull. Before that the spine
   leans (``spine_weight`` of the hands' missing reach, shared evenly by the spine joints,
   at most 60°), so the pelvis only makes up the rest. ``pelvis_weight`` scales the shift.
2. **Limbs.** Each limb with a target (and each foot without one, which stays planted
   where the clip puts it) is solved with :func:`~limbik.solvers.two_bone.solver.two_bone`
   from the moved limb root, with the effector's rotation and weight. Knees stay in
   the plane nearest the clip's knee nudged forward; elbows bend toward a pole behind
   and below the shoulder.
3. **Hinges.** The upper joint (hip, shoulder) twists about its bone so that the mid
   joint (knee, elbow) only flexes about its hinge, never hyperextends: the clip's own
   bend axis, or for a straight limb the body's left axis (knees) or right axis (elbows).
4. **Back to the clip** with :func:`~limbik.skeleton.apply.apply_ik`, as world rotations
   of the limb joints and the pelvis position, so bones keep their lengths exactly.
   "Smallest shift" is that of the projection, which starts from the clip's pelvis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray, as_directions, as_flag, as_float, as_weight
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    IDENTITY,
    axis_angle_from_quaternion,
    quaternion_from_axis_angle,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_normalize,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.geometry.vectors import cross, norm, normalize
from limbik.skeleton.apply import _per_frame, apply_ik
from limbik.skeleton.limbs import find_arms, find_legs
from limbik.skeleton.motion import Motion, check_motion
from limbik.solvers.two_bone.solver import two_bone

__all__ = ["EFFECTORS", "full_body_ik"]

#: Effector names accepted by ``full_body_ik`` (a limb's end joint name works too).
EFFECTORS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")
#: Cyclic projection passes of the body pull.
_PULL_PASSES = 64
#: The spine leans at most this angle (rad) in all.
_MAX_LEAN = np.pi / 3
#: A limb bent less than about this angle (rad) bends about its anatomical default hinge.
_STRAIGHT = 0.05


def _weights(value: Any, name: str, frames: int) -> FloatArray:
    w = as_weight(value, name)
    if w.shape not in ((), (frames,)):
        raise InvalidInputError(f"{name} must be a number or have shape ({frames},), "
                                f"got {w.shape}", argument=name)
    return np.broadcast_to(w, (frames,))


def full_body_ik(motion: Motion, targets: Mapping[str, Any], *,
                 rotations: Mapping[str, Any] | None = None,
                 weights: Mapping[str, Any] | None = None,
                 pull: Mapping[str, float] | None = None, pelvis_weight: float = 1.0,
                 spine_weight: float = 0.5,
                 plant_feet: bool = True, reach: float = 0.98,
                 forward: Any = (0.0, 0.0, 1.0), left_side: Any = (1.0, 0.0, 0.0),
                 head: int | str | None = None) -> Motion:
    """A copy of ``motion`` whose hands, feet and head go to ``targets``.

    Parameters
    ----------
    motion : Motion
        F frames of a humanoid (legs and arms found by :func:`find_legs`/:func:`find_arms`).
    targets : mapping of effector to array_like, shape (F, 3) or (3,)
        World positions for any of ``"left_hand"``, ``"right_hand"``, ``"left_foot"``,
        ``"right_foot"`` (the wrist and ankle joints; their joint names work too) and
        ``"head"`` (reached by moving the pelvis only).
    rotations : mapping of effector to array_like, shape (F, 4) or (4,), optional
        World rotations (x, y, z, w) for hand and foot effectors.
    weights : mapping of effector to float or (F,), in [0, 1], optional
        Effector weight (default 1): a limb's position, rotation and overall weight.
    pull : mapping of effector to float in [0, 1], optional
        How hard each effector pulls the body (default 1; a planted foot pulls 1).
    pelvis_weight : float in [0, 1]
        Scales the pelvis shift; 0 keeps the pelvis where the clip has it.
    spine_weight : float in [0, 1]
        Share of the hands' missing reach that the spine takes by leaning (default
        0.5) before the pelvis moves; 0 keeps the spine's local pose.
    plant_feet : bool
        Feet without a target stay at their animated positions and rotations (default).
    reach : float in (0, 1]
        The body pull keeps each target within this share of its limb's length.
    forward : array_like, shape (3,)
        The character's forward direction in the root joint's frame (BVH: +Z); its
        heading on the ground (world +Y up) sets "forward", "left" and "back and down"
        for the knees' and elbows' default bend.
    left_side : array_like, shape (3,)
        The skeleton's left side in the rest pose, to tell left limbs from right ones.
    head : joint name or index, optional
        The head joint (default: the joint named ``Head``, case-insensitive).

    Returns
    -------
    Motion
        The solved clip. Bone lengths are the skeleton's; a limb whose target stays out
        of reach points at it, straight.
    """
    check_motion(motion)
    sk = motion.skeleton
    frames = motion.num_frames
    legs = find_legs(sk, left_side=left_side)
    arms = find_arms(sk, left_side=left_side)
    limbs = {"left_foot": legs[0].chain, "right_foot": legs[1].chain,
             "left_hand": arms[0].chain, "right_hand": arms[1].chain}
    aliases = {sk.names[chain[2]]: name for name, chain in limbs.items()}
    goals: dict[str, FloatArray] = {}
    for key, value in dict(targets).items():
        name = aliases.get(key, key) if isinstance(key, str) else key
        if name not in EFFECTORS:
            raise InvalidInputError(
                f"targets keys must be one of {', '.join(EFFECTORS)} or a hand/foot joint "
                f"name, got {key!r}", argument="targets")
        goals[name] = _per_frame(value, f"targets[{key!r}]", frames, 3)
    turns = {aliases.get(k, k): _per_frame(v, f"rotations[{k!r}]", frames, 4)
             for k, v in dict(rotations or {}).items()}
    for name in turns:
        if name not in limbs:
            raise InvalidInputError(f"rotations keys must be hand or foot effectors, got "
                                    f"{name!r}", argument="rotations")
    weight = {aliases.get(k, k): _weights(v, f"weights[{k!r}]", frames)
              for k, v in dict(weights or {}).items()}
    pulls = {aliases.get(k, k): as_float(v, f"pull[{k!r}]", minimum=0.0)
             for k, v in dict(pull or {}).items()}
    if any(p > 1.0 for p in pulls.values()):
        raise InvalidInputError("pull values must be in [0, 1]", argument="pull")
    body = as_float(pelvis_weight, "pelvis_weight", minimum=0.0)
    ratio = as_float(reach, "reach", minimum=0.0, exclusive=True)
    if body > 1.0 or ratio > 1.0:
        raise InvalidInputError(f"pelvis_weight and reach must be <= 1, got {body}, {ratio}",
                                argument="pelvis_weight" if body > 1.0 else "reach")

    heading, _ = as_directions(forward, "forward")
    if heading.shape != (3,):
        raise InvalidInputError(f"forward must have shape (3,), got {heading.shape}",
                                argument="forward")
    plant = as_flag(plant_feet, "plant_feet")

    positions = motion.world_positions()
    world_rot = motion.world_rotations()
    if plant:
        for name in ("left_foot", "right_foot"):
            if name not in goals:
                goals[name] = positions[:, limbs[name][2]]
                turns.setdefault(name, world_rot[:, limbs[name][2]])
    head_joint = None
    if "head" in goals:
        head_joint = _head_index(sk, head)

    lengths = {name: norm(positions[:, c[1]] - positions[:, c[0]])
               + norm(positions[:, c[2]] - positions[:, c[1]]) for name, c in limbs.items()}
    lean = float(as_weight(spine_weight, "spine_weight"))
    hands = [name for name in ("left_hand", "right_hand") if name in goals]
    spine = _spine_joints(sk, arms[0].shoulder, arms[1].shoulder)
    if lean > 0.0 and hands and spine:
        need = np.zeros((frames, 3))
        for name in hands:
            offset = goals[name] - positions[:, limbs[name][0]]
            excess = np.maximum(norm(offset) - ratio * lengths[name], 0.0)
            strength = pulls.get(name, 1.0) * weight.get(name, np.ones(frames))
            need += (strength * excess)[:, None] * normalize(offset) / len(hands)
        base = positions[:, spine[0]]
        top = 0.5 * (positions[:, arms[0].shoulder] + positions[:, arms[1].shoulder])
        bend = quaternion_from_two_vectors(top - base, top + lean * need - base)
        _, angle = axis_angle_from_quaternion(bend)
        bend = quaternion_slerp(IDENTITY, bend, np.minimum(1.0, _MAX_LEAN / np.maximum(
            angle, 1e-300)))
        # every spine joint takes an equal share of the lean
        motion = apply_ik(motion, rotations={
            j: quaternion_normalize(quaternion_multiply(
                quaternion_slerp(IDENTITY, bend, np.full(frames, (k + 1) / len(spine))),
                world_rot[:, j])) for k, j in enumerate(spine)})
        positions = motion.world_positions()
        world_rot = motion.world_rotations()
    shift = np.zeros((frames, 3))
    for _ in range(_PULL_PASSES):
        for name, goal in goals.items():
            strength = pulls.get(name, 1.0) * weight.get(name, np.ones(frames))
            if name == "head":
                assert head_joint is not None
                gap = goal - (positions[:, head_joint] + shift)
                shift += strength[:, None] * gap
                continue
            offset = goal - (positions[:, limbs[name][0]] + shift)
            distance = norm(offset)
            excess = np.maximum(distance - ratio * lengths[name], 0.0)
            shift += (strength * excess)[:, None] * normalize(offset)
    shift *= body

    # the body's heading on the ground (world +Y up): facing, left, up
    up = np.array([0.0, 1.0, 0.0])
    ahead = rotate_vectors(world_rot[:, 0], heading)
    facing = normalize(ahead - ahead[:, 1:2] * up, fallback=np.array([0.0, 0.0, 1.0]))
    left = cross(up, facing)
    new_rotations: dict[int, FloatArray] = {}
    for name, chain in limbs.items():
        if name not in goals:
            continue
        root, mid, end = (positions[:, j] + shift for j in chain)
        upper = norm(mid - root)
        lower = norm(end - mid)
        # knees: the clip's bend plane, nudged forward so a straight leg bends forward;
        # elbows: toward a pole behind and below the shoulder (hands reach anywhere in
        # front, and the plane only turns fast for targets right behind and below)
        foot = name.endswith("foot")
        knee = mid + (_STRAIGHT * (upper + lower))[:, None] * facing
        elbow_pole = root + (upper + lower)[:, None] * normalize(-facing - up)
        limb = two_bone(root, goals[name], upper, lower, reference=knee if foot else None,
                        pole=None if foot else elbow_pole,
                        pose=np.stack([root, mid, end], axis=-2),
                        pose_rotations=world_rot[:, list(chain)],
                        target_rotation=turns.get(name), weight=weight.get(name))
        assert limb.rotations is not None
        # the clip's hinge (for a straight limb: the body's left axis for knees, right
        # for elbows), which the joint must keep flexing about
        hinge = cross(mid - root, end - mid) + (
            _STRAIGHT * upper * lower)[:, None] * (left if foot else -left)
        upper_q, mid_q = _hinged(limb.positions, np.stack([root, mid, end], axis=-2),
                                 world_rot[:, chain[0]], world_rot[:, chain[1]], hinge)
        new_rotations[chain[0]] = upper_q
        new_rotations[chain[1]] = mid_q
        new_rotations[chain[2]] = limb.rotations[:, 2]
    return apply_ik(motion, positions={0: positions[:, 0] + shift}, rotations=new_rotations)


def _hinged(solved: FloatArray, pose: FloatArray, upper_rotation: FloatArray,
            mid_rotation: FloatArray, hinge: FloatArray) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(F, 4)`` of a limb's upper and mid joints for the solved points
    ``(F, 3, 3)`` that keep the mid joint a pure flexion about its hinge.

    The upper joint turns by the smallest rotation onto its solved bone, then twists
    about that bone until the clip's ``hinge`` ``(F, 3)``, carried along, lies on the
    solved bend normal. The mid joint then only flexes: it is carried with the upper
    joint and turned about the hinge onto its solved bone.
    """
    bone = solved[:, 1] - solved[:, 0]
    swing = quaternion_from_two_vectors(pose[:, 1] - pose[:, 0], bone)
    carried = rotate_vectors(swing, hinge)
    bend = cross(bone, solved[:, 2] - solved[:, 1])
    axis = normalize(bone)
    angle = np.arctan2(np.sum(axis * cross(carried, bend), -1), np.sum(carried * bend, -1))
    straight = (norm(bend) < 1e-12) | (norm(carried) < 1e-12)
    turn = quaternion_multiply(quaternion_from_axis_angle(axis, np.where(straight, 0.0, angle)),
                               swing)
    upper_q = quaternion_normalize(quaternion_multiply(turn, upper_rotation))
    forearm = rotate_vectors(turn, pose[:, 2] - pose[:, 1])
    flex = quaternion_from_two_vectors(forearm, solved[:, 2] - solved[:, 1])
    mid_q = quaternion_normalize(quaternion_multiply(quaternion_multiply(flex, turn),
                                                     mid_rotation))
    return upper_q, mid_q


def _spine_joints(skeleton: Any, left_shoulder: int, right_shoulder: int) -> list[int]:
    """The joints from the root's child to the shoulders' nearest common ancestor."""
    left = [left_shoulder, *skeleton.ancestors(left_shoulder)]
    right = set(skeleton.ancestors(right_shoulder))
    common = next((j for j in left if j in right), None)
    if common is None or common == 0:
        return []
    path = [common, *skeleton.ancestors(common)]
    return [j for j in reversed(path) if j != 0]


def _head_index(skeleton: Any, head: int | str | None) -> int:
    if head is not None:
        return int(skeleton.index(head))
    for j, name in enumerate(skeleton.names):
        if name.lower() == "head":
            return j
    raise InvalidInputError("no joint named Head: pass head= to name the head joint",
                            argument="head")
