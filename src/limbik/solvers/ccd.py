"""Cyclic coordinate descent (CCD) on joint chains and on point chains.

``ccd(chain, target)`` dispatches on ``chain``:

- a :class:`~limbik.chain.JointChain`: each sweep goes from the tip joint to the
  base joint, giving each joint the coordinate within its limits that best moves the
  tip to the target (position, or pose with weights), the others held. Random
  restarts as in :func:`~limbik.solvers.joint.jacobian.jacobian_ik`.
- joint positions ``(..., n, 3)`` (the ``fabrik`` input form): each sweep turns the
  rest of the chain about each joint, from the one next to the end effector to the
  root, toward the target about the axis of the smallest rotation that points the end
  effector at it. Bone lengths are kept; there is no ``q``. Swing-twist limits
  (``constraints``) act on the joint rotations carried along.

Each update is charged for its motion (``damping``): a joint whose lever on the end is
short (a wrist roll next to the wrist's singular pose, an end folded back onto its
joint) turns a little instead of to the far side of its circle for a small gain, so a
smooth target path gets smooth joints. ``damping=0`` is classic CCD.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik._runtime.batch_threads import run_range
from limbik._runtime.validation import (
    as_flag,
    as_float,
    as_int,
    as_joint_rotations,
    as_points,
    broadcast_shapes,
)
from limbik.chain.joint_chain import JointChain
from limbik.errors import InvalidInputError
from limbik.solvers import _ccd_kernels as _k
from limbik.solvers._scale import element_units
from limbik.solvers.constraints import SwingTwistLimit, encode_limits
from limbik.solvers.joint._kernels import METHOD_CCD
from limbik.solvers.joint.jacobian import MAX_DAMPING
from limbik.solvers.joint.problem import joint_problem
from limbik.solvers.rotations import _joint_rotations
from limbik.solvers.solution import Solution, chain_out_fields, out_arrays, written
from limbik.tolerances import (
    CCD_DAMPING,
    ITERATIVE_ANGLE_TOL,
    ITERATIVE_RTOL,
    JACOBIAN_PATIENCE,
    JACOBIAN_RESTARTS,
    MAX_ITERATIONS,
)

__all__ = ["ccd"]


def ccd(chain: JointChain | Any, target: Any, *, tolerance: float | None = None,
        max_iterations: int = MAX_ITERATIONS, q0: Any = None,
        angle_tolerance: float = ITERATIVE_ANGLE_TOL, patience: int = JACOBIAN_PATIENCE,
        position_weight: float = 1.0, orientation_weight: float = 1.0,
        restarts: int | None = None, rng: Any = None,
        min_improvement: float | None = None, damping: float = CCD_DAMPING,
        constraints: Sequence[SwingTwistLimit | None] | None = None,
        rotations: Any = None, return_rotations: bool = False,
        out: Solution | None = None) -> Solution:
    """Cyclic coordinate descent toward ``target``.

    Parameters
    ----------
    chain : JointChain or array_like (..., n, 3)
        A joint chain, or the joint positions of point chains (root first, ``n >= 2``).
    target : array_like (..., 3), or Frame (...) for joint chains
        End-effector positions (or tip poses). Batch shapes broadcast.
    tolerance : float, optional
        Reach distance; default ``ITERATIVE_RTOL`` times the chain length.
    max_iterations : int
        Sweep cap (per attempt for joint chains).
    q0, angle_tolerance, patience, position_weight, orientation_weight, restarts, rng
        Joint chains only; as in :func:`~limbik.solvers.joint.jacobian.jacobian_ik`
        (``restarts`` defaults to ``JACOBIAN_RESTARTS``).
    min_improvement : float, optional
        Point chains only: stop when a sweep brings the end effector less than this
        much closer (default ``tolerance / 1000``), e.g. for unreachable targets.
    damping : float
        Motion cost of each CCD update, relative to ``chain.reach`` (point chains: their
        length; at most ``MAX_DAMPING`` = 1e6): a joint's new angle minimises the
        (weighted) squared error plus the squared move of a point ``damping · reach``
        from its axis (point chains: from the joint). Joints with a long lever on the
        end take their best angle as in classic CCD; a joint that barely moves the end
        (a wrist roll near the wrist's singular pose) turns only a little instead of
        spinning round for a small gain. 0 is classic CCD. See ``docs/jacobian.md``.
    constraints : sequence of SwingTwistLimit, TwistLimit or None, optional
        Point chains only: one entry per bone (n − 1). Each CCD step turns the rest of
        the chain about a joint, then moves that joint's rotation to the nearest one its
        limit allows (measured from its local rotation in the input pose, the twist about
        its bone), carrying the joints below along.
    rotations : array_like, shape (..., n, 4), optional
        Point chains only: world rotations (x, y, z, w) of the joints in the input pose
        (default identity); implies ``return_rotations``.
    return_rotations : bool
        Point chains only: fill ``Solution.rotations`` ``(..., n, 4)``. Without
        constraints these are :func:`~limbik.solvers.rotations.joint_rotations` (each
        bone's minimal turn from the input pose, as ``two_bone`` returns); with
        constraints, the rotations the limited CCD steps produced.
    out : Solution, optional
        A Solution of an earlier call with the same chain, batch shape and options (e.g.
        the previous frame's), whose arrays are overwritten in place; the returned
        Solution holds them. ``chain`` (point chains) or ``q0`` may be its own
        ``positions`` or ``q`` (warm start).

    Returns
    -------
    Solution
        For joint chains, as :func:`~limbik.solvers.joint.jacobian.jacobian_ik` (with ``q``).
        For point chains: ``positions (..., n, 3)``, ``reached``, ``error`` (end-effector
        distance) and ``iterations`` (sweeps); ``q`` is None and ``rotations`` as above.
    """
    max_iterations = as_int(max_iterations, "max_iterations", minimum=0)
    damping = as_float(damping, "damping", minimum=0.0, maximum=MAX_DAMPING)
    if isinstance(chain, JointChain):
        for name, value in (("constraints", constraints), ("rotations", rotations),
                            ("return_rotations", return_rotations or None)):
            if value is not None:
                raise InvalidInputError(f"{name} applies to point chains only, got a "
                                        "JointChain", argument=name)
        if min_improvement is not None:
            raise InvalidInputError("min_improvement applies to point chains only; "
                                    "joint chains use patience", argument="min_improvement")
        problem = joint_problem(
            chain, target, tolerance=tolerance, angle_tolerance=angle_tolerance,
            max_iterations=max_iterations, patience=patience,
            restarts=JACOBIAN_RESTARTS if restarts is None else restarts,
            position_weight=position_weight, orientation_weight=orientation_weight, q0=q0,
            rng=rng)
        return problem.solve(METHOD_CCD, damping * chain.reach, out=out)
    for name, value in (("q0", q0), ("restarts", restarts), ("rng", rng)):
        if value is not None:
            raise InvalidInputError(f"{name} applies to JointChain only, got a point chain",
                                    argument=name)
    # joint-chain options with defaults: not used here, but never silently wrong
    as_float(angle_tolerance, "angle_tolerance", minimum=0.0)
    as_int(patience, "patience", minimum=1)
    as_float(position_weight, "position_weight", minimum=0.0)
    as_float(orientation_weight, "orientation_weight", minimum=0.0)
    wanted = as_flag(return_rotations, "return_rotations") or rotations is not None
    return _ccd_points(chain, target, tolerance, max_iterations, min_improvement, damping,
                       constraints, rotations, wanted, out)


def _ccd_points(positions: Any, target: Any, tolerance: float | None, max_iterations: int,
                min_improvement: float | None, damping: float,
                constraints: Sequence[SwingTwistLimit | None] | None = None,
                rotations: Any = None, return_rotations: bool = False,
                out: Solution | None = None) -> Solution:
    pts = as_points(positions, "positions")
    goal = as_points(target, "target")
    if pts.ndim < 2 or pts.shape[-2] < 2:
        raise InvalidInputError(
            f"positions must have shape (..., n, 3) with n >= 2, got {pts.shape}",
            argument="positions")
    shape = broadcast_shapes(("positions", pts.shape[:-2]), ("target", goal.shape[:-1]))
    n = pts.shape[-2]
    count = int(np.prod(shape, dtype=np.int64))
    if pts.shape[:-2] != shape:
        pts = np.broadcast_to(pts, shape + (n, 3))
    if goal.shape[:-1] != shape:
        goal = np.broadcast_to(goal, shape + (3,))
    flat = np.ascontiguousarray(pts.reshape(count, n, 3))
    goal = np.ascontiguousarray(goal.reshape(count, 3))
    # each chain in units of its own size (exact, 2^k)
    unit = element_units(flat, goal)
    flat, goal = flat / unit[:, None, None], goal / unit[:, None]
    bones = flat[:, 1:] - flat[:, :-1]
    length = np.sqrt((bones * bones).sum(axis=-1)).sum(axis=-1)  # np.linalg.norm's sums
    if tolerance is None:
        tol = ITERATIVE_RTOL * np.where(length > 0, length, 1.0)
    else:
        tol = np.full(count, as_float(tolerance, "tolerance", minimum=0.0) / unit)
    if min_improvement is None:
        improve = tol * 1e-3
    else:
        improve = np.full(count, as_float(min_improvement, "min_improvement",
                                          minimum=0.0) / unit)
    radius2 = (damping * length) ** 2  # the motion cost's radius, squared (B,)
    fields = chain_out_fields(n, return_rotations or constraints is not None)
    if out is None:
        solved, err = np.empty(flat.shape), np.empty(count)
        reached, iters = np.empty(count, dtype=np.bool_), np.empty(count, dtype=np.int64)
    else:  # flat is the solver's own copy: out.positions may be the input pose
        views = out_arrays(out, shape, fields)
        solved, reached, err, iters = views[:4]
    turned = None
    # input rotations checked before anything is solved or written
    start = (_start_rotations(rotations, shape, n, count)
             if return_rotations or constraints is not None else None)
    if constraints is not None:
        limits = encode_limits(constraints, n - 1)
        assert start is not None
        turned = np.empty_like(start) if out is None else views[4]
        _k.ccd_points_limited_solve(flat, start, goal, tol, max_iterations, improve, radius2,
                                    limits, solved, turned, err, reached, iters)
        turned = turned.reshape(shape + (n, 4))
    else:
        arguments = (flat, goal, tol, max_iterations, improve, radius2, solved, err, reached,
                     iters)
        run_range(_k.ccd_points_solve_range, count, lambda: arguments, smallest=_k.CHUNK)
        if start is not None:
            # start holds checked unit quaternions: no second normalisation
            turned = _joint_rotations(solved, flat, start, (count,)).reshape(shape + (n, 4))
            if out is not None:
                np.copyto(views[4].reshape(turned.shape), turned)
    solved *= unit[:, None, None]
    err *= unit
    if out is not None:
        return Solution._trusted(**written(out, shape, fields, views))
    return Solution._trusted(solved.reshape(shape + (n, 3)), reached.reshape(shape),
                             err.reshape(shape), iters.reshape(shape), rotations=turned)


def _start_rotations(rotations: Any, shape: tuple[int, ...], n: int, count: int
                     ) -> np.ndarray:
    """Input joint rotations as contiguous rows ``(count, n, 4)`` (identity by default)."""
    if rotations is None:
        start = np.zeros((count, n, 4))
        start[..., 3] = 1.0
        return start
    q = as_joint_rotations(rotations, "rotations", n, shape)
    return np.ascontiguousarray(np.broadcast_to(q, shape + (n, 4)).reshape(count, n, 4))
