"""Aim and look-at: turn a bone (or a chain of bones) so a local axis points at a target.

``aim`` turns one bone (a head, a gun arm): the smallest rotation that takes its aim
axis onto the direction of the target, limited to a cone, weighted, then a twist about
the aim direction that brings its up axis toward a world up. ``aim_chain`` shares the
turn over a chain (spine, neck, head) by per-bone weights, as Final IK's AimIK does:
in each pass, from the first bone to the last, bone ``i`` turns the rest of the chain by
a fraction ``f_i`` of the turn still missing, measured at the aim bone (the last joint);
passes repeat until the aim axis is on its target. With all joints at one point, bone
``i`` takes ``s_i = weights[i] · Π_{k<i} (1 − weights[k]) / (1 − Π_k (1 − weights[k]))``
of the turn: the shares that repeated passes of ``weights`` themselves converge to.
The fractions ``f_i = s_i / (1 − Σ_{k<i} s_k)`` give them in one pass and end at 1, so
one pass points the axis exactly, whatever the last weight; weights ending in 1 are
their own fractions.

The aim axis defaults to −Z (limbik's forward, as ``Frame.look_at``) in ``aim`` and
``aim_chain``, which take arrays; :func:`limbik.look_at`, which takes a ``Motion``,
defaults to +Z, a BVH character's forward. Pass ``axis`` to be explicit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_directions,
    as_float,
    as_float_array,
    as_int,
    as_point,
    as_points,
    as_unit_quaternions,
    as_weight,
    broadcast_shapes,
)
from limbik.errors import InvalidInputError
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
from limbik.solvers._scale import length_scale
from limbik.solvers.solution import Solution
from limbik.tolerances import AIM_ANGLE_TOL

__all__ = ["aim", "aim_chain", "limit_to_cone"]


def _angle(a: FloatArray, b: FloatArray) -> FloatArray:
    """Angles (rad) between unit vectors ``(..., 3)``, accurate near 0 and π."""
    return np.arctan2(norm(cross(a, b)), dot(a, b))


def limit_to_cone(direction: Any, cone_axis: Any, angle: float) -> FloatArray:
    """Unit directions ``(..., 3)`` within ``angle`` (rad) of ``cone_axis``: inside, the
    direction itself; outside, the nearest direction on the cone (``cone_axis`` turned
    toward ``direction`` by ``angle`` in their plane). A direction exactly opposite the
    axis turns toward a stable perpendicular."""
    d = normalize(as_points(direction, "direction"))
    c = normalize(as_points(cone_axis, "cone_axis"))
    limit = as_float(angle, "angle", minimum=0.0)
    d, c = np.broadcast_arrays(d, c)
    between = _angle(c, d)
    turn = quaternion_from_two_vectors(c, d)
    axis_angle = np.where(between > limit, limit, between)
    side = normalize(turn[..., :3])
    boundary = rotate_vectors(quaternion_from_axis_angle(side, axis_angle), c)
    return np.where((between > limit)[..., None], boundary, d)


def _aim_rotation(current: FloatArray, goal: FloatArray, weight: FloatArray) -> FloatArray:
    """``weight`` of the smallest turn from direction ``current`` onto ``goal``."""
    turn = quaternion_from_two_vectors(current, goal)
    partial = quaternion_slerp(IDENTITY, turn, weight)
    return np.where((weight == 1.0)[..., None], turn, partial)


def _check_inputs(rotation: Any, position: Any, target: Any, axis: Any, rot_name: str,
                  pos_name: str) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    q = as_unit_quaternions(rotation, rot_name)
    p = as_points(position, pos_name)
    t = as_points(target, "target")
    a, length = as_directions(as_point(axis, "axis"), "axis")
    return q, p, t, a / length


def _nonzero(value: Any, name: str) -> FloatArray:
    """Direction vectors ``(..., 3)``, none of them shorter than ``EPS_DIRECTION``."""
    return as_directions(value, name)[0]


def _twist_up(rotation: FloatArray, aim_dir: FloatArray, up: FloatArray,
              world_up: FloatArray, weight: FloatArray) -> FloatArray:
    """Twist ``rotation`` about ``aim_dir`` so its local ``up`` turns toward ``world_up``."""
    current = rotate_vectors(rotation, up)
    cur = current - dot(current, aim_dir)[..., None] * aim_dir
    want = world_up - dot(world_up, aim_dir)[..., None] * aim_dir
    angle = np.arctan2(dot(aim_dir, cross(cur, want)), dot(cur, want))
    ok = (norm(cur) > 1e-12) & (norm(want) > 1e-12)
    twist = quaternion_from_axis_angle(aim_dir, np.where(ok, weight * angle, 0.0))
    return quaternion_normalize(quaternion_multiply(twist, rotation))


def aim(rotation: Any, position: Any, target: Any, *, axis: Any = (0.0, 0.0, -1.0),
        up: Any = None, world_up: Any = (0.0, 1.0, 0.0), weight: Any = 1.0,
        limit: float | None = None, cone_axis: Any = None) -> FloatArray:
    """World rotations ``(..., 4)`` that point a bone's local ``axis`` at ``target``.

    Parameters
    ----------
    rotation : array_like, shape (..., 4)
        The bone's world rotation (x, y, z, w) in the input pose.
    position : array_like, shape (..., 3)
        The bone's position (the origin of the aim, e.g. the eyes' joint).
    target : array_like, shape (..., 3)
        What to look at. Batch shapes broadcast.
    axis : array_like, shape (3,)
        The aim axis in the bone's local frame (default −Z, this library's forward).
    up : array_like, shape (3,), optional
        A local axis to keep toward ``world_up`` by a twist about the aim direction
        (Unity's world-up, Final IK's pole); without it the turn is the smallest one.
    world_up : array_like, shape (..., 3)
        World direction for ``up`` (default +Y).
    weight : array_like, shape (...), in [0, 1]
        Fraction of the turn (slerp from the input rotation): 0 returns ``rotation``.
    limit : float, optional
        Cone half-angle (rad, >= 0) around ``cone_axis`` that the aim direction may
        not leave; a target outside is aimed at the nearest direction on the cone.
    cone_axis : array_like, shape (..., 3), optional
        World axis of the cone (default: the bone's input aim direction).

    Returns
    -------
    ndarray, shape (..., 4)
        Unit quaternions. A target at ``position`` leaves the aim direction as it was.
    """
    q, p, t, a = _check_inputs(rotation, position, target, axis, "rotation", "position")
    w = as_weight(weight, "weight")
    shape = broadcast_shapes(("rotation", q.shape[:-1]), ("position", p.shape[:-1]),
                             ("target", t.shape[:-1]), ("weight", w.shape))
    current = rotate_vectors(q, a)
    unit = length_scale(p, t)  # only the direction counts: far points without overflow
    goal = normalize(t / unit - p / unit if unit != 1.0 else t - p, fallback=current)
    if limit is not None:
        goal = limit_to_cone(goal, current if cone_axis is None
                             else _nonzero(cone_axis, "cone_axis"), limit)
    out = quaternion_normalize(quaternion_multiply(_aim_rotation(current, goal, w), q))
    if up is not None:
        u = _nonzero(up, "up")
        out = _twist_up(out, rotate_vectors(out, a), u, _nonzero(world_up, "world_up"), w)
    out = np.where((w == 0.0)[..., None], q, out)
    return np.broadcast_to(out, shape + (4,)).copy()


def aim_chain(positions: Any, rotations: Any, target: Any, *, weights: Any = None,
              axis: Any = (0.0, 0.0, -1.0), up: Any = None,
              world_up: Any = (0.0, 1.0, 0.0), weight: Any = 1.0, limit: float | None = None,
              cone_axis: Any = None, tolerance: float = AIM_ANGLE_TOL,
              max_iterations: int = 10) -> Solution:
    """Share the turn that points the last joint's ``axis`` at ``target`` over a chain.

    Parameters
    ----------
    positions : array_like, shape (..., n, 3)
        Joint positions, root first; the last joint is the aim bone (head, muzzle).
        Each joint's turn carries every joint after it (they are its descendants).
    rotations : array_like, shape (..., n, 4)
        World rotations (x, y, z, w) of the joints.
    target : array_like, shape (..., 3)
        What the aim bone looks at.
    weights : array_like, shape (n,) or (..., n), in [0, 1], optional
        Per-bone share of the turn (see the module notes: bone ``i`` takes
        ``weights[i]`` of what the bones before it leave, and what the last bone
        leaves is shared again in the same proportions). Default: ``1 / (n − i)`` for
        bone ``i``, which spreads the turn evenly when the joints are close together.
    axis, up, world_up, limit, cone_axis
        As in :func:`aim`, for the aim bone; the cone axis defaults to its input aim
        direction. ``up`` twists only the aim bone, about its aim direction.
    weight : array_like, shape (...), in [0, 1]
        Overall weight: every joint turns by slerp from the input pose; 0 returns it.
    tolerance : float
        Angle (rad) below which the aim counts as reached and passes stop.
    max_iterations : int
        Passes at most (one points the axis when the joints are at one point; more
        follow the aim bone's move around the earlier pivots).

    Returns
    -------
    Solution
        ``positions (..., n, 3)``, ``rotations (..., n, 4)``, ``error`` the angle (rad)
        between the aim axis and the (cone-limited) target direction, ``reached``
        ``error <= tolerance`` and ``iterations`` the passes used.
    """
    pos = as_float_array(positions, "positions", (3,))
    if pos.ndim < 2 or pos.shape[-2] < 1:
        raise InvalidInputError(f"positions must have shape (..., n, 3), got {pos.shape}",
                                argument="positions")
    n = pos.shape[-2]
    rot = as_unit_quaternions(rotations, "rotations")
    if rot.ndim < 2 or rot.shape[-2] != n:
        raise InvalidInputError(f"rotations must have shape (..., {n}, 4), got {rot.shape}",
                                argument="rotations")
    _, _, goal_point, a = _check_inputs(rot[..., -1, :], pos[..., -1, :], target, axis,
                                        "rotations", "positions")
    share = (1.0 / (n - np.arange(n, dtype=np.float64)) if weights is None
             else as_weight(weights, "weights"))
    if share.ndim < 1 or share.shape[-1] != n:
        raise InvalidInputError(f"weights must have shape (..., {n}), got {share.shape}",
                                argument="weights")
    w = as_weight(weight, "weight")
    tol = as_float(tolerance, "tolerance", minimum=0.0)
    passes = as_int(max_iterations, "max_iterations", minimum=1)
    shape = broadcast_shapes(("positions", pos.shape[:-2]), ("rotations", rot.shape[:-2]),
                             ("target", goal_point.shape[:-1]), ("weights", share.shape[:-1]),
                             ("weight", w.shape))
    unit = length_scale(pos, goal_point)  # solved in units of the problem (exact, 2^k)
    p = np.broadcast_to(pos / unit if unit != 1.0 else pos, shape + (n, 3)).copy()
    q = np.broadcast_to(rot, shape + (n, 4)).copy()
    goal_point = np.broadcast_to(goal_point / unit if unit != 1.0 else goal_point,
                                 shape + (3,))
    share = np.broadcast_to(_pass_shares(share), shape + (n,))
    cone = rotate_vectors(q[..., -1, :], a) if cone_axis is None else _nonzero(
        cone_axis, "cone_axis")
    if up is not None:  # checked before the passes
        up_local, up_world = _nonzero(up, "up"), _nonzero(world_up, "world_up")
    iterations = np.zeros(shape, dtype=np.int64)
    error = np.zeros(shape)
    for _ in range(passes):
        error = _chain_error(p, q, goal_point, a, limit, cone)
        active = error > tol
        if not np.any(active):
            break
        iterations += active
        for i in range(n):
            current = rotate_vectors(q[..., -1, :], a)
            goal = normalize(goal_point - p[..., -1, :], fallback=current)
            if limit is not None:
                goal = limit_to_cone(goal, cone, limit)
            turn = _aim_rotation(current, goal, np.where(active, share[..., i], 0.0))
            pivot = p[..., i:i + 1, :]
            p[..., i + 1:, :] = pivot + rotate_vectors(turn[..., None, :],
                                                       p[..., i + 1:, :] - pivot)
            q[..., i:, :] = quaternion_normalize(quaternion_multiply(turn[..., None, :],
                                                                     q[..., i:, :]))
    error = _chain_error(p, q, goal_point, a, limit, cone)
    if up is not None:
        q[..., -1, :] = _twist_up(q[..., -1, :], rotate_vectors(q[..., -1, :], a), up_local,
                                  up_world, np.ones(shape))
    if unit != 1.0:
        p *= unit
    if np.any(w != 1.0):
        start_p = np.broadcast_to(pos, shape + (n, 3))
        start_q = np.broadcast_to(rot, shape + (n, 4))
        p, q = _blend_chain(start_p, start_q, p, q, np.broadcast_to(w, shape))
    return Solution._trusted(p, error <= tol, error, iterations, q)


def _pass_shares(weights: FloatArray) -> FloatArray:
    """The fractions ``(..., n)`` of the missing turn that joint ``i`` takes in a pass:
    with all joints at one point one pass gives each joint the share that passes of
    ``weights`` would converge to, ``weights[i] · Π_{k<i}(1 − weights[k]) / (1 −
    Π_k(1 − weights[k]))``, and aims exactly (the last fraction is 1). Weights ending in
    1 are their own fractions; all-zero weights turn nothing."""
    before = np.cumprod(1.0 - weights, axis=-1)  # Π_{k<=i}
    before = np.concatenate([np.ones(weights.shape[:-1] + (1,)), before[..., :-1]], axis=-1)
    left = np.prod(1.0 - weights, axis=-1, keepdims=True)  # Π over all
    room = before - left
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(room > 0.0, weights * before / room, weights)
    return np.where(weights[..., -1:] == 1.0, weights, np.clip(fraction, 0.0, 1.0))


def _chain_error(p: FloatArray, q: FloatArray, goal_point: FloatArray, a: FloatArray,
                 limit: float | None, cone: FloatArray) -> FloatArray:
    current = rotate_vectors(q[..., -1, :], a)
    goal = normalize(goal_point - p[..., -1, :], fallback=current)
    if limit is not None:
        goal = limit_to_cone(goal, cone, limit)
    return _angle(current, goal)


def _blend_chain(start_p: FloatArray, start_q: FloatArray, p: FloatArray, q: FloatArray,
                 w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Joints a fraction ``w`` of the way from the input chain: each joint's local turn
    (relative to its parent joint) slerped, positions rebuilt down the chain."""
    n = p.shape[-2]
    out_p = start_p.copy()
    out_q = start_q.copy()
    previous_in = np.broadcast_to(IDENTITY, start_q.shape[:-2] + (4,))
    previous_out = previous_in
    for i in range(n):
        # the joint's turn relative to its parent's turn, slerped from the identity
        local_delta = quaternion_multiply(
            quaternion_multiply(previous_out * np.array([-1, -1, -1, 1.0]), q[..., i, :]),
            start_q[..., i, :] * np.array([-1, -1, -1, 1.0]))
        partial = quaternion_slerp(IDENTITY, local_delta, w)
        out_q[..., i, :] = quaternion_normalize(quaternion_multiply(
            quaternion_multiply(previous_in, partial), start_q[..., i, :]))
        if i + 1 < n:
            turn_here = quaternion_multiply(out_q[..., i, :],
                                            start_q[..., i, :] * np.array([-1, -1, -1, 1.0]))
            out_p[..., i + 1, :] = out_p[..., i, :] + rotate_vectors(
                turn_here, start_p[..., i + 1, :] - start_p[..., i, :])
        previous_in = quaternion_multiply(out_q[..., i, :],
                                          start_q[..., i, :] * np.array([-1, -1, -1, 1.0]))
        previous_out = quaternion_multiply(q[..., i, :],
                                           start_q[..., i, :] * np.array([-1, -1, -1, 1.0]))
    zero = (w == 0.0)[..., None, None]
    return np.where(zero, start_p, out_p), np.where(zero, start_q, out_q)
