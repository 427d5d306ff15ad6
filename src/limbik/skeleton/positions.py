"""Joint-position motions: the skeletons motion-generation models write, and fitting a
rotational motion to positions.

Text-to-motion and motion-prediction models (HumanML3D, MDM and their descendants)
output joint *positions* ``(T, J, 3)``, not rotations. :data:`POSITION_SKELETONS` holds
the joint orders they use; :func:`position_layout` turns a name or a parents list into
names and parents; :func:`fit_positions` fits one length per bone and local rotations
whose forward kinematics reproduces the positions (``Motion.from_positions`` wraps it).

The fitted skeleton's rest pose is the clip's frame ``rest_frame`` (default the first)
with every bone at its fitted length: in that frame the rotations are the identity.
Each joint with one child turns by the smallest rotation that points its bone where the
positions put it (no twist of its own relative to its parent); a joint with several
children (a pelvis, a chest) takes the rotation that best maps its rest children onto
theirs (the rotation Kabsch's method finds, computed as Horn's unit quaternion), exact
where they keep their shape; a joint with no child keeps its parent's rotation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import FloatArray, as_parents
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_multiply,
    rotate_vectors,
)
from limbik.skeleton._fit_kernels import aim_world_rotations, best_rotations

__all__ = ["POSITION_SKELETONS", "PositionFit", "fit_positions", "position_layout"]

_SMPL22_NAMES = (
    "pelvis", "left_hip", "right_hip", "spine1", "left_knee", "right_knee", "spine2",
    "left_ankle", "right_ankle", "spine3", "left_foot", "right_foot", "neck",
    "left_collar", "right_collar", "head", "left_shoulder", "right_shoulder",
    "left_elbow", "right_elbow", "left_wrist", "right_wrist")
_SMPL22_PARENTS = (-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19)

#: Built-in joint orders of position motions: name → (joint names, parents).
#: ``smpl22`` is HumanML3D's and MDM's order (Y up, metres); ``smpl24`` adds SMPL's
#: two hand joints.
POSITION_SKELETONS: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "smpl22": (_SMPL22_NAMES, _SMPL22_PARENTS),
    "smpl24": (_SMPL22_NAMES + ("left_hand", "right_hand"), _SMPL22_PARENTS + (20, 21)),
}

#: Bones shorter than this fraction of the longest bone have no direction of their own.
_SHORT_BONE = 1e-9


def position_layout(skeleton: Any, names: Sequence[str] | None = None
                    ) -> tuple[tuple[str, ...], np.ndarray]:
    """Joint names and parents ``(J,)`` for a position motion.

    ``skeleton`` is a name from :data:`POSITION_SKELETONS` or a parents list (each
    parent before its child, ``-1`` for the one root at index 0); ``names`` names the
    joints of a parents list (default ``joint0``, ``joint1``, ...).
    """
    if isinstance(skeleton, str):
        if skeleton not in POSITION_SKELETONS:
            raise InvalidInputError(
                f"skeleton must be one of {', '.join(POSITION_SKELETONS)} or a parents list, "
                f"got {skeleton!r}", argument="skeleton")
        if names is not None:
            raise InvalidInputError(f"names must not be given with the built-in skeleton "
                                    f"{skeleton!r}, got {len(names)} names", argument="names")
        known, parents = POSITION_SKELETONS[skeleton]
        return known, np.array(parents, dtype=np.int64)
    par = as_parents(skeleton, "skeleton", min_joints=2)
    if names is None:
        return tuple(f"joint{j}" for j in range(par.size)), par
    named = tuple(names)
    if len(named) != par.size or not all(isinstance(n, str) and n for n in named):
        raise InvalidInputError(f"names must be {par.size} non-empty strings, got {names!r}",
                                argument="names")
    return named, par


@dataclasses.dataclass(frozen=True)
class PositionFit:
    """A rotational fit of a position motion (see :func:`fit_positions`).

    Attributes
    ----------
    offsets : ndarray (J, 3)
        Each joint's rest translation from its parent (the root's: its position in the
        rest frame); bone ``j`` has the fitted length ``lengths[j]``.
    root_positions : ndarray (T, 3)
        The root's positions, as given.
    rotations : ndarray (T, J, 4)
        Local joint rotations (x, y, z, w).
    lengths : ndarray (J,)
        The fitted length of the bone ending at each joint (0 for the root): the median
        of its length over the frames.
    length_variation : ndarray (J,)
        Each bone's length wobble in the input: its standard deviation over the frames
        divided by its fitted length (0 for the root and for zero-length bones).
    residual : float
        The largest distance between the input positions and the fitted motion's
        forward kinematics, in the input's units (0 up to rounding for positions made
        by one skeleton's forward kinematics).
    """

    offsets: FloatArray
    root_positions: FloatArray
    rotations: FloatArray
    lengths: FloatArray
    length_variation: FloatArray
    residual: float


def _check_positions(positions: Any, joints: int) -> FloatArray:
    try:
        array = np.asarray(positions, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"positions must be numbers of shape (T, {joints}, 3), got "
                                f"{type(positions).__name__}", argument="positions") from None
    if array.ndim != 3 or array.shape[1:] != (joints, 3):
        raise InvalidInputError(f"positions must have shape (T, {joints}, 3), got "
                                f"{array.shape}", argument="positions")
    if array.shape[0] < 1:
        raise InvalidInputError("positions must hold at least one frame, got 0",
                                argument="positions")
    if not np.all(np.isfinite(array)):
        frame = int(np.argmax(~np.isfinite(array).all(axis=(1, 2))))
        raise NonFiniteInputError(f"positions must be finite, got NaN or inf in frame {frame}",
                                  argument="positions")
    return array


def fit_positions(positions: Any, parents: Any, *, rest_frame: int = 0) -> PositionFit:
    """Fit bone lengths and local rotations to joint positions ``(T, J, 3)``.

    ``parents`` is a parents list (or a name from :data:`POSITION_SKELETONS`). Every
    bone gets one length (its median over the frames); the rest pose is frame
    ``rest_frame`` with the bones at those lengths. Forward kinematics of the result
    (``Motion.from_positions``) reproduces positions made by one skeleton's forward
    kinematics to rounding; for positions whose bones change length it keeps every
    bone's direction, and :attr:`PositionFit.residual` says how far the joints moved.
    """
    _, par = position_layout(parents) if isinstance(parents, str) else (
        None, as_parents(parents, "parents", min_joints=2))
    joints = par.size
    pos = _check_positions(positions, joints)
    frames = pos.shape[0]
    if isinstance(rest_frame, bool) or not isinstance(rest_frame, int | np.integer) or not (
            -frames <= int(rest_frame) < frames):
        raise InvalidInputError(f"rest_frame must be a frame index in [0, {frames}), got "
                                f"{rest_frame!r}", argument="rest_frame")
    rest_frame = int(rest_frame) % frames
    bones = pos[:, 1:] - pos[:, par[1:]]  # (T, J-1, 3)
    lengths_t = np.linalg.norm(bones, axis=-1)
    lengths = np.concatenate([[0.0], np.median(lengths_t, axis=0)])
    scale = max(float(lengths.max()), float(np.abs(pos).max()), 1e-300)
    short = lengths < _SHORT_BONE * scale
    variation = np.zeros(joints)
    fine = ~short
    fine[0] = False
    variation[fine] = lengths_t[:, fine[1:]].std(axis=0) / lengths[fine]
    # rest directions: the rest frame's, or (a bone of zero length there) its mean
    direction = np.zeros((joints, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        unit_t = bones / lengths_t[..., None]
    unit_t[~np.isfinite(unit_t)] = 0.0
    direction[1:] = unit_t[rest_frame]
    missing = np.linalg.norm(direction, axis=-1) < 0.5
    missing[0] = False
    if missing.any():
        mean = unit_t[:, missing[1:]].sum(axis=0)
        size = np.linalg.norm(mean, axis=-1, keepdims=True)
        direction[missing] = np.where(size > 0, mean / np.where(size > 0, size, 1.0),
                                      [0.0, 1.0, 0.0])
    offsets = direction * lengths[:, None]
    offsets[0] = pos[rest_frame, 0]
    children: list[list[int]] = [[] for _ in range(joints)]
    for j in range(1, joints):
        if not short[j]:
            children[int(par[j])].append(j)
    # joints by depth (for the forward kinematics of the residual below)
    depth = np.zeros(joints, dtype=np.int64)
    for j in range(1, joints):
        depth[j] = depth[par[j]] + 1
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]
    identity = np.zeros((frames, 1, 4))
    identity[..., 3] = 1.0
    world = np.empty((frames, joints, 4))
    # a joint with several children: the rotation that best maps their rest offsets onto
    # their offsets now (best_rotations, all such joints in one batch); one with a single
    # child: aimed down the tree by aim_world_rotations (-1 marks no child, -2 the former)
    child = np.array([kids[0] if len(kids) == 1 else -1 if not kids else -2
                      for kids in children], dtype=np.int64)
    several = [j for j in range(joints) if len(children[j]) > 1]
    if several:
        h = np.stack([np.einsum("kc,tkd->tcd", offsets[children[j]],
                                unit_t[:, [c - 1 for c in children[j]]]
                                * lengths[children[j]][None, :, None]) for j in several])
        world[:, several] = best_rotations(h.reshape(-1, 3, 3)).reshape(
            len(several), frames, 4).swapaxes(0, 1)
    aim_world_rotations(np.ascontiguousarray(par, dtype=np.int64), child,
                        np.ascontiguousarray(direction),
                        np.ascontiguousarray(unit_t), np.ascontiguousarray(lengths_t), world)
    # each joint's rotation in its parent's (the root's parent: the identity)
    parent_world = np.concatenate([identity, world[:, par[1:]]], axis=1)
    local = quaternion_multiply(quaternion_conjugate(parent_world), world)
    # forward kinematics of the fit, for the residual: every bone turned at once, then
    # added up from the root a depth at a time
    bones_now = rotate_vectors(parent_world[:, 1:], offsets[1:])
    fitted = np.empty_like(pos)
    fitted[:, 0] = pos[:, 0]
    for level in levels[1:]:
        fitted[:, level] = fitted[:, par[level]] + bones_now[:, level - 1]
    residual = float(np.abs(fitted - pos).max())
    return PositionFit(offsets=offsets, root_positions=pos[:, 0].copy(), rotations=local,
                       lengths=lengths, length_variation=variation, residual=residual)
