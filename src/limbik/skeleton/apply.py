"""Applying IK results to a :class:`Motion`: new world positions or rotations → local rotations.

This is the general form of the seeds' Motor6D ``C0`` application: a solver gives
where some joints should be in the world (for example hip, knee and ankle from a
two-bone solve), and the animation's local rotations are changed so forward
kinematics puts them there.

Rules, per frame, batched over all frames:

- A joint whose child is given a new position turns by the *minimal* rotation
  (swing) taking the animated bone direction to the solved one, so the bone keeps
  its animated twist. With several targeted children, the swing aligns the first
  and a twist about it best aligns the others.
- A joint given a new world rotation takes it exactly.
- The root, when given a position, moves there (its rotation is kept).
- Every other joint keeps its local rotation: joints outside the changed subtrees
  keep their animated world transforms, and descendants of changed joints follow.

A target at the bone's length from its (new) parent is met exactly; otherwise the
bone points at it. A target that is already met changes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_float_array,
    as_points,
    as_quaternions,
    read_only,
)
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_from_two_vectors,
    quaternion_multiply,
    rotate_vectors,
)
from limbik.geometry.vectors import cross, dot, norm, normalize, project_off
from limbik.skeleton._fk_kernels import forward_kinematics_frames
from limbik.skeleton.motion import Motion, _forward_kinematics, check_motion

__all__ = ["JointMap", "apply_chain", "apply_ik"]

#: Joints (by index or name) to per-frame values.
JointMap = Mapping[int, Any] | Mapping[str, Any] | Mapping[int | str, Any]

_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
#: A target within this distance (relative to the bone length plus one) counts as met.
_MET_RTOL = 1e-12


def _per_frame(value: Any, name: str, frames: int, width: int) -> FloatArray:
    array = (as_points(value, name) if width == 3 else as_quaternions(value, name))
    if array.shape == (width,):
        array = np.broadcast_to(array, (frames, width))
    if array.shape != (frames, width):
        raise InvalidInputError(
            f"{name} must have shape ({frames}, {width}) or ({width},), got {array.shape}",
            argument=name)
    return array


def apply_ik(motion: Motion, positions: JointMap | None = None,
             rotations: JointMap | None = None) -> Motion:
    """A copy of ``motion`` whose local rotations put joints at new world places.

    Parameters
    ----------
    motion : Motion
        F frames of a skeleton with J joints.
    positions : mapping of joint (name or index) to array_like, shape (F, 3) or (3,)
        New world positions. A joint's position is reached by turning its parent
        (or, for the root, by moving it).
    rotations : mapping of joint to array_like, shape (F, 4) or (4,)
        New world rotations (x, y, z, w) of joints. A joint may not have both a new
        world rotation and a child with a new position.

    Returns
    -------
    Motion
        Same skeleton, frame time and joint translations; new ``rotations`` (and
        ``root_positions`` when the root was given a position).

    See the module docstring for how bones keep their twist and which joints move.
    """
    check_motion(motion)
    sk = motion.skeleton
    F = motion.num_frames
    parents = sk.parents.tolist()
    targets: dict[int, FloatArray] = {}
    for name, given in (("positions", positions), ("rotations", rotations)):
        if given is not None and not isinstance(given, Mapping):
            raise InvalidInputError(f"{name} must be a mapping {{joint name or index: "
                                    f"array}}, got {type(given).__name__}", argument=name)
    for key, value in dict(positions or {}).items():
        j = sk.index(key)
        targets[j] = _per_frame(value, f"positions[{sk.names[j]!r}]", F, 3)
    world_rot: dict[int, FloatArray] = {}
    for key, value in dict(rotations or {}).items():
        j = sk.index(key)
        world_rot[j] = _per_frame(value, f"rotations[{sk.names[j]!r}]", F, 4)
    drivers: dict[int, list[int]] = {}
    for c in sorted(targets):
        if c != 0:
            drivers.setdefault(parents[c], []).append(c)
    for j in drivers:
        if j in world_rot:
            raise InvalidInputError(
                f"rotations must not hold joint {sk.names[j]!r}, whose child "
                f"{sk.names[drivers[j][0]]!r} has a new position", argument="rotations")

    translations = motion.local_translations()
    if drivers:
        q_anim, p_anim = _forward_kinematics(sk.parents, motion.rotations, translations)
    q_local = np.array(motion.rotations, order="C")
    root = targets.get(0, motion.root_positions)
    translations[:, 0] = root
    changed = sorted(set(drivers) | set(world_rot))
    q_world, p_world = _forward_kinematics(sk.parents, q_local, translations)
    parents64 = read_only(np.ascontiguousarray(sk.parents, dtype=np.int64))
    done: list[int] = []
    for j in changed:
        if any(sk.is_ancestor(d, j) for d in done):
            # earlier changes moved this joint: refresh their subtrees' world transforms
            stale = np.zeros(len(parents), dtype=np.bool_)
            for d in done:
                stale |= sk.descendants_mask(d, include_self=True)
            forward_kinematics_frames(parents64, read_only(q_local), read_only(translations),
                                      q_world, p_world, stale)
            done = []
        p = parents[j]
        parent_q = (np.broadcast_to(_IDENTITY, (F, 4)) if p < 0 else q_world[:, p])
        follow = q_world[:, j]
        if j in world_rot:
            new = world_rot[j]
        else:
            new = _aim(follow, q_anim[:, j], p_anim[:, j], p_anim, p_world[:, j], drivers[j],
                       targets, translations)
        local = quaternion_multiply(quaternion_conjugate(parent_q), new)
        unchanged = np.all(new == follow, axis=-1)
        q_local[:, j] = np.where(unchanged[:, None], motion.rotations[:, j], local)
        done.append(j)
    return dataclasses.replace(motion, rotations=q_local, root_positions=root)


def _aim(follow: FloatArray, animated: FloatArray, animated_position: FloatArray,
         p_anim: FloatArray, origin: FloatArray, children: list[int],
         targets: dict[int, FloatArray], translations: FloatArray) -> FloatArray:
    """New world rotation ``(F, 4)`` of a joint at ``origin`` aiming its children at targets.

    The swing is measured from the animated world bone direction, so the bone keeps
    its animated twist; frames whose targets are already met keep ``follow``.
    """
    met = np.ones(follow.shape[0], dtype=bool)
    for c in children:
        here = origin + rotate_vectors(follow, translations[:, c])
        length = norm(translations[:, c])
        met &= norm(targets[c] - here) <= _MET_RTOL * (1.0 + length + norm(origin))
    # the longest bone leads; the others only choose the twist about it
    lengths = [float(np.max(norm(translations[:, c]), initial=0.0)) for c in children]
    order = [children[k] for k in np.argsort(lengths)[::-1]]
    lead = order[0]
    a = p_anim[:, lead] - animated_position
    b = targets[lead] - origin
    swing = quaternion_from_two_vectors(a, b)
    new = quaternion_multiply(swing, animated)
    if len(order) > 1:
        axis = normalize(b)
        num = np.zeros(follow.shape[0])
        den = np.zeros(follow.shape[0])
        for c in order[1:]:
            u = project_off(rotate_vectors(new, translations[:, c]), axis)
            v = project_off(targets[c] - origin, axis)
            num += dot(cross(u, v), axis)
            den += dot(u, v)
        twist = quaternion_from_axis_angle(axis, np.arctan2(num, den))
        new = quaternion_multiply(twist, new)
    return np.where(met[:, None], follow, new)


def apply_chain(motion: Motion, joints: Sequence[int | str], positions: Any,
                rotations: JointMap | None = None) -> Motion:
    """:func:`apply_ik` for a solved chain: ``positions[:, k]`` goes to ``joints[k]``.

    ``positions`` is an array ``(F, n, 3)`` for ``n = len(joints)`` joints, or any
    object with such a ``positions`` attribute (a :class:`~limbik.solvers.Solution`
    of a batch of F solves, e.g. ``two_bone`` for hip, knee and ankle).
    """
    pos = getattr(positions, "positions", positions)
    arr = as_float_array(pos, "positions", (3,))
    n = len(joints)
    if arr.ndim != 3 or arr.shape[1] != n:
        raise InvalidInputError(
            f"positions must have shape (frames, {n}, 3), got {arr.shape}", argument="positions")
    return apply_ik(motion, {j: arr[:, k] for k, j in enumerate(joints)}, rotations)
