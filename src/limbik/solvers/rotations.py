"""``rotations_from_positions``: bone rotations (joint angles) from solved joint positions.

Point solvers such as FABRIK return joint positions only. A bone's direction
fixes its rotation up to a twist about the bone; here the twist is chosen as
small as possible: each bone is turned by the minimal rotation (swing) that
takes its rest direction, already carried by its parent's rotation, onto its
solved direction. A bone whose direction did not change relative to its parent
therefore keeps its parent's rotation, and no bone spins about itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_flag,
    as_float_array,
    as_parents,
    as_quaternions,
    broadcast_shapes,
    read_only,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_matrix,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_normalize,
    rotate_vectors,
)
from limbik.solvers import _rotation_kernels as _rk
from limbik.solvers._scale import length_scale

__all__ = ["joint_rotations", "rotations_from_positions"]


def _joint_array(value: Any, name: str) -> FloatArray:
    arr = as_float_array(value, name, ())
    if arr.ndim < 2 or arr.shape[-1] != 3 or arr.shape[-2] < 2:
        raise InvalidInputError(
            f"{name} must have shape (..., n, 3) with n >= 2, got {arr.shape}", argument=name)
    return arr


def rotations_from_positions(positions: Any, rest_positions: Any, *, parents: Any = None,
                             rest_rotations: Any = None, local: bool = False) -> FloatArray:
    """Bone rotations ``(..., n − 1, 4)`` (x, y, z, w) posing ``rest_positions`` as ``positions``.

    Parameters
    ----------
    positions : array_like, shape (..., n, 3)
        Solved joint positions (e.g. ``Solution.positions``).
    rest_positions : array_like, shape (..., n, 3)
        The same joints in the rest (or previous) pose; batch shapes broadcast.
    parents : sequence of int, shape (n,), optional
        Joint tree (``parents[0] = -1``, ``parents[j] < j``); default a chain.
        Bone ``j − 1`` joins ``parents[j]`` to ``j``.
    rest_rotations : array_like (..., n − 1, 4) or Frame of shape (..., n − 1), optional
        World rotations of the bones' own frames in the rest pose (a Frame's
        positions are ignored). When given, the result is those frames' world
        rotations in the solved pose.
    local : bool
        Return each bone's rotation relative to its parent bone (bones leaving
        the root: relative to the world) instead of world rotations: the joint
        angles.

    Returns
    -------
    ndarray, shape (..., n − 1, 4)
        Without ``rest_rotations``: for each bone the world rotation ``Q``
        with ``Q · rest_bone = solved_bone`` (directions), built down the tree
        as ``Q_bone = swing(Q_parent · rest_dir → solved_dir) · Q_parent``.
        Zero-length bones take their parent's rotation.
    """
    pos = _joint_array(positions, "positions")
    rest = _joint_array(rest_positions, "rest_positions")
    n = pos.shape[-2]
    if rest.shape[-2] != n:
        raise InvalidInputError(
            f"rest_positions must have {n} joints like positions, got {rest.shape[-2]}",
            argument="rest_positions")
    par = (np.arange(-1, n - 1, dtype=np.int64) if parents is None
           else as_parents(parents))
    if par.size != n:
        raise InvalidInputError(f"parents must have {n} entries, got {par.size}",
                                argument="parents")
    pairs = [("positions", pos.shape[:-2]), ("rest_positions", rest.shape[:-2])]
    rest_q = None
    if rest_rotations is not None:
        if isinstance(rest_rotations, Frame):
            rest_rotations = rest_rotations.quaternion
        rest_q = as_quaternions(rest_rotations, "rest_rotations")
        if rest_q.ndim < 2 or rest_q.shape[-2] != n - 1:
            raise InvalidInputError(
                f"rest_rotations must have shape (..., {n - 1}, 4), got {rest_q.shape}",
                argument="rest_rotations")
        pairs.append(("rest_rotations", rest_q.shape[:-2]))
    shape = broadcast_shapes(*pairs)
    identity = np.broadcast_to(np.array([0.0, 0.0, 0.0, 1.0]), shape + (4,))
    out = np.empty(shape + (n - 1, 4))
    for j in range(1, n):
        q = par[j]
        parent_q = identity if q == 0 else out[..., q - 1, :]
        r = rest[..., j, :] - rest[..., q, :]
        d = pos[..., j, :] - pos[..., q, :]
        swing = quaternion_from_two_vectors(rotate_vectors(parent_q, r), d)
        out[..., j - 1, :] = quaternion_normalize(quaternion_multiply(swing, parent_q))
    if rest_q is not None:
        out = quaternion_normalize(quaternion_multiply(out, rest_q))
    if as_flag(local, "local"):
        world = out.copy()
        for j in range(1, n):
            q = par[j]
            if q != 0:
                out[..., j - 1, :] = quaternion_multiply(quaternion_conjugate(world[..., q - 1, :]),
                                                         world[..., j - 1, :])
    return out


def joint_rotations(positions: Any, input_positions: Any, *,
                    input_rotations: Any = None, parents: Any = None) -> FloatArray:
    """World rotations ``(..., n, 4)`` of a chain's (or tree's) joints after a solve,
    with minimal twist.

    Each bone ``j`` (joint ``j`` → ``j + 1``) is turned by the smallest rotation
    ``D_j`` that takes its input direction onto its solved direction, so joint
    ``j``'s rotation is ``D_j · input_rotations[j]``: of all rotations that carry
    the bone's input direction onto its solved one, the nearest to the input
    rotation (the bone keeps its input twist). The end joint (``n − 1``) turns with
    its bone: ``D_{n−2} · input_rotations[n − 1]``. This is how ``two_bone`` and
    ``ccd`` fill ``Solution.rotations``.

    Parameters
    ----------
    positions, input_positions : array_like, shape (..., n, 3)
        Solved and input joint positions, root first; batch shapes broadcast.
    input_rotations : array_like, shape (..., n, 4), optional
        World rotations (x, y, z, w) of the joints in the input pose (default:
        the identity, so the result is each bone's turn from the input pose).
    parents : sequence of int, shape (n,), optional
        A joint tree as :class:`~limbik.FabrikTree` takes it (default: a chain).
        A joint with one child turns by that bone's smallest rotation, a leaf
        with the bone that ends at it, and a joint where branches start (a
        pelvis, a chest) by the rotation that best carries all its child bones'
        input directions onto their solved ones (least squares over unit
        directions); when those bones all lie on one line it is the smallest
        rotation of the first of them. On a chain, ``parents`` changes nothing.

    Returns
    -------
    ndarray, shape (..., n, 4)
        Unit quaternions. A bone of zero length (input or solved) keeps its input
        rotation.
    """
    pos = _joint_array(positions, "positions")
    start = _joint_array(input_positions, "input_positions")
    n = pos.shape[-2]
    if start.shape[-2] != n:
        raise InvalidInputError(
            f"input_positions must have {n} joints like positions, got {start.shape[-2]}",
            argument="input_positions")
    pairs = [("positions", pos.shape[:-2]), ("input_positions", start.shape[:-2])]
    if input_rotations is None:
        rot = np.array([0.0, 0.0, 0.0, 1.0])
    else:
        rot = as_quaternions(input_rotations, "input_rotations")
        if rot.ndim < 2 or rot.shape[-2] != n:
            raise InvalidInputError(
                f"input_rotations must have shape (..., {n}, 4), got {rot.shape}",
                argument="input_rotations")
        pairs.append(("input_rotations", rot.shape[:-2]))
    shape = broadcast_shapes(*pairs)
    if parents is None:
        return _joint_rotations(pos, start, rot, shape)
    par = as_parents(parents)
    if par.size != n:
        raise InvalidInputError(f"parents must have {n} entries, got {par.size}",
                                argument="parents")
    return _tree_joint_rotations(pos, start, rot, par, shape)


def _tree_joint_rotations(pos: FloatArray, start: FloatArray, rot: FloatArray,
                          parents: np.ndarray, shape: tuple[int, ...]) -> FloatArray:
    """:func:`joint_rotations` with ``parents``: joints with one bone to follow go through
    the chain kernel as two-joint chains; branching joints take the best-fit rotation."""
    n = parents.size
    unit = length_scale(pos, start)  # as in _joint_rotations
    if unit != 1.0:
        pos, start = pos / unit, start / unit
    pos = np.broadcast_to(pos, shape + (n, 3))
    start = np.broadcast_to(start, shape + (n, 3))
    rot = np.broadcast_to(rot, shape + (n, 4))
    children: list[list[int]] = [[] for _ in range(n)]
    for j in range(1, n):
        children[int(parents[j])].append(j)
    # the bone each joint turns with: (from, to), or None for a branching joint
    follow = [((j, kids[0]) if len(kids) == 1 else (int(parents[j]), j) if not kids else None)
              for j, kids in enumerate(children)]
    out = np.empty(shape + (n, 4))
    single = [j for j in range(n) if follow[j] is not None]
    if single:
        ends = np.array([follow[j] for j in single], dtype=np.int64)  # (m, 2)
        pair_rot = np.repeat(rot[..., single, None, :], 2, axis=-2)   # (..., m, 2, 4)
        turned = _joint_rotations(pos[..., ends, :], start[..., ends, :], pair_rot,
                                  shape + (len(single),))
        out[..., single, :] = turned[..., 0, :]
    for j in range(n):
        if follow[j] is None:
            out[..., j, :] = _best_fit_turn(pos, start, rot[..., j, :], j, children[j])
    return out


def _best_fit_turn(pos: FloatArray, start: FloatArray, rot: FloatArray, j: int,
                   kids: list[int]) -> FloatArray:
    """``R · rot`` ``(..., 4)``, with ``R`` the rotation that best carries the unit input
    directions of the bones ``j → kids`` onto their solved ones (Kabsch, by SVD)."""
    a = start[..., kids, :] - start[..., j, None, :]
    b = pos[..., kids, :] - pos[..., j, None, :]
    na = np.linalg.norm(a, axis=-1, keepdims=True)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    # zero-length bones (relative to the longest of these) do not vote
    tiny = 1e-12 * np.maximum(np.max(na, axis=-2, keepdims=True),
                              np.max(nb, axis=-2, keepdims=True))
    keep = (na > tiny) & (nb > tiny)
    a = np.where(keep, a / np.where(keep, na, 1.0), 0.0)
    b = np.where(keep, b / np.where(keep, nb, 1.0), 0.0)
    h = np.einsum("...ki,...kj->...ij", a, b)  # (..., 3, 3)
    u, sv, vt = np.linalg.svd(h)
    v = np.swapaxes(vt, -1, -2)
    flip = np.sign(np.linalg.det(v @ np.swapaxes(u, -1, -2)))
    v[..., :, 2] *= np.where(flip == 0, 1.0, flip)[..., None]
    fitted = quaternion_from_matrix(v @ np.swapaxes(u, -1, -2))
    # bones on one line fix no twist: the smallest turn of the first of them instead
    line = sv[..., 1] <= 1e-9 * np.maximum(sv[..., 0], 1e-300)
    first = np.argmax(keep[..., 0], axis=-1)[..., None, None]
    swing = quaternion_from_two_vectors(np.take_along_axis(a, first, axis=-2)[..., 0, :],
                                        np.take_along_axis(b, first, axis=-2)[..., 0, :])
    turn = np.where(line[..., None], swing, fitted)
    return quaternion_normalize(quaternion_multiply(turn, rot))


def _joint_rotations(pos: FloatArray, start: FloatArray, rot: FloatArray,
                     shape: tuple[int, ...]) -> FloatArray:
    """:func:`joint_rotations` on checked float64 arrays whose batch shapes broadcast to
    ``shape``."""
    n = pos.shape[-2]
    count = math.prod(shape)
    # coordinates far from unit size in units of their size (exact, 2^k): no squares overflow
    unit = length_scale(pos, start)
    if unit != 1.0:
        pos, start = pos / unit, start / unit
    rows = _rows(pos, shape, n, 3, count)
    start_rows = _rows(start, shape, n, 3, count)
    rot_rows = (np.ascontiguousarray(np.broadcast_to(rot, (1, n, 4))) if rot.ndim < 2
                or rot.shape[:-2] in ((), (1,)) else _rows(rot, shape, n, 4, count))
    out = np.empty((count, n, 4))
    _rk.joint_rotations_kernel(rows, start_rows, read_only(rot_rows.reshape(-1, n, 4)), out)
    return out.reshape(shape + (n, 4))


def _rows(array: FloatArray, shape: tuple[int, ...], n: int, width: int, count: int
          ) -> FloatArray:
    """``array`` broadcast to ``shape + (n, width)`` as read-only contiguous rows
    ``(count, n, width)``."""
    return read_only(np.ascontiguousarray(np.broadcast_to(array, shape + (n, width))).reshape(
        count, n, width))


def _carried_joint_rotations(pos: FloatArray, start: FloatArray, rot: FloatArray,
                             shape: tuple[int, ...]) -> FloatArray:
    """World rotations ``(..., n, 4)`` of a chain's joints after a solve, each bone turned
    from its input pose by ``Q_i = swing(Q_{i−1} · input_dir → solved_dir) · Q_{i−1}``
    (:func:`rotations_from_positions`), times its input rotation ``rot``; the end joint
    turns with the last bone. A joint's rotation relative to its parent then differs
    from its input one by a swing alone: no joint twists about its bone."""
    n = pos.shape[-2]
    unit = length_scale(pos, start)  # as in _joint_rotations
    if unit != 1.0:
        pos, start = pos / unit, start / unit
    turn = rotations_from_positions(np.broadcast_to(pos, shape + (n, 3)),
                                    np.broadcast_to(start, shape + (n, 3)))
    turn = np.concatenate([turn, turn[..., -1:, :]], axis=-2)
    return quaternion_normalize(quaternion_multiply(turn, np.broadcast_to(rot, shape + (n, 4))))
