"""Jacobian IK on a :class:`~limbik.chain.JointChain`: transpose, pseudo-inverse, DLS, SVD-DLS.

Each iteration linearises the tip pose with the geometric Jacobian ``J`` (rows:
linear then angular velocity, world frame) and takes one step ``dq``:

- ``"transpose"``: ``dq = α Jᵀ e`` with Buss's step ``α = ⟨e, JJᵀe⟩ / |JJᵀe|²``.
- ``"pinv"``: ``dq = J⁺ e`` (singular values below ``1e-6 σ_max`` dropped).
- ``"dls"``: damped least squares, ``dq = Jᵀ (JJᵀ + λ² I)⁻¹ e``.
- ``"svd-dls"``: DLS through the singular value decomposition, damping only the
  singular values below ``2λ`` (``λᵢ² = λ² (1 − σᵢ²/4λ²)``; numerical filtering as in
  Maciejewski & Klein), so it takes full Gauss-Newton steps away from singularities.

Every step is limited to ``max_step`` per joint and clipped to the joint limits.
An attempt stops when the target is reached, after ``max_iterations`` steps, or when
the error has not dropped by 0.1 % for ``patience`` steps; then the next start
(random restarts within the limits) is tried.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbik._validation import (
    FloatArray,
    as_float,
    as_int,
    as_points,
    broadcast_shapes,
    choice,
)
from limbik.chain.joint_chain import JointChain
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.solvers import _jacobian_kernels as _k
from limbik.solvers.solution import Solution
from limbik.tolerances import (
    ITERATIVE_ANGLE_TOL,
    ITERATIVE_RTOL,
    JACOBIAN_DAMPING,
    JACOBIAN_MAX_STEP,
    JACOBIAN_PATIENCE,
    JACOBIAN_RESTARTS,
    MAX_JACOBIAN_ITERATIONS,
)

__all__ = ["JACOBIAN_METHODS", "jacobian_ik"]

#: The step rules of :func:`jacobian_ik`.
JACOBIAN_METHODS = ("transpose", "pinv", "dls", "svd-dls")
_METHOD_CODES = {"transpose": _k.METHOD_TRANSPOSE, "pinv": _k.METHOD_PINV,
                 "dls": _k.METHOD_DLS, "svd-dls": _k.METHOD_SVD_DLS}


def check_chain(chain: Any) -> JointChain:
    if not isinstance(chain, JointChain):
        raise InvalidInputError(
            f"chain must be a JointChain, got {type(chain).__name__}", argument="chain")
    if chain.dof == 0:
        raise InvalidInputError("chain must have at least one movable joint, got dof 0",
                                argument="chain")
    return chain


def parse_target(target: Any) -> tuple[FloatArray, FloatArray | None, tuple[int, ...]]:
    """Target positions ``(..., 3)`` and rotation matrices ``(..., 3, 3)`` (None for points)."""
    if isinstance(target, Frame):
        return (np.asarray(target.position, dtype=np.float64),
                np.asarray(target.rotation_matrix, dtype=np.float64), target.shape)
    p = as_points(target, "target")
    return p, None, p.shape[:-1]


def rng_from(rng: Any) -> np.random.Generator:
    """``None`` (seed 0: reproducible by default), an int seed or a Generator."""
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise InvalidInputError(
        f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}",
        argument="rng")


def start_configurations(chain: JointChain, q0: Any, batch: tuple[int, ...], restarts: int,
                         rng: Any) -> tuple[FloatArray, np.ndarray, tuple[int, ...]]:
    """First starts ``(B, dof)``, restart seeds ``(B,)`` and the broadcast batch shape.

    The first start is ``q0`` (default: :attr:`JointChain.middle`), clipped to the
    limits. Restarts are uniform within the limits (see :meth:`JointChain.random_q`),
    drawn in the kernel from one seed per batch element: ``rng=None`` uses the seeds
    0, 1, 2, ...; otherwise they come from ``rng``.
    """
    if q0 is None:
        q_first = chain.middle
    else:
        q_first = chain.clip(chain.check_q(q0, "q0"))
    shape = broadcast_shapes(("target", batch), ("q0", q_first.shape[:-1]))
    count = int(np.prod(shape, dtype=np.int64))
    first = np.ascontiguousarray(
        np.broadcast_to(q_first, shape + (chain.dof,)).reshape(count, chain.dof))
    if rng is None:
        seeds = np.arange(count, dtype=np.uint64)
    else:
        seeds = rng_from(rng).integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64)
    return first, seeds, shape


def finish(chain: JointChain, q: FloatArray, reached: np.ndarray, error: FloatArray,
           iterations: np.ndarray, shape: tuple[int, ...]) -> Solution:
    """Reshape kernel outputs to ``shape`` and add joint positions."""
    rot, trans, axis, kind = chain.joint_arrays
    positions = np.empty((q.shape[0], chain.n_joints + 1, 3))
    _k.all_joint_positions(rot, trans, axis, kind, q, positions)
    q = q.reshape(shape + (chain.dof,))
    return Solution(positions=positions.reshape(shape + positions.shape[1:]),
                    reached=reached.reshape(shape),
                    error=error.reshape(shape), iterations=iterations.reshape(shape), q=q)


def jacobian_ik(chain: JointChain, target: Any, *, method: str = "dls",
                damping: float = JACOBIAN_DAMPING, q0: Any = None,
                tolerance: float | None = None, angle_tolerance: float = ITERATIVE_ANGLE_TOL,
                max_iterations: int = MAX_JACOBIAN_ITERATIONS,
                max_step: float = JACOBIAN_MAX_STEP, patience: int = JACOBIAN_PATIENCE,
                position_weight: float = 1.0, orientation_weight: float = 1.0,
                restarts: int = JACOBIAN_RESTARTS, rng: Any = None) -> Solution:
    """Solve joint coordinates so the chain's tip reaches ``target``.

    Parameters
    ----------
    chain : JointChain
    target : array_like (..., 3) or Frame (...)
        Tip positions, or tip poses (position and orientation) as a Frame batch.
    method : {"transpose", "pinv", "dls", "svd-dls"}
    damping : float
        λ of DLS and SVD-DLS relative to ``chain.reach`` (λ = damping · reach).
    q0 : array_like (..., dof), optional
        First start; default the middle of the joint ranges. Broadcasts with ``target``.
    tolerance : float, optional
        Reach distance (length units); default ``ITERATIVE_RTOL · chain.reach``.
    angle_tolerance : float
        Orientation tolerance (radians) for pose targets.
    max_iterations : int
        Step cap per attempt.
    max_step : float
        Largest change of one joint coordinate in one step (radians or length units).
    patience : int
        Steps without a 0.1 % error drop before an attempt is abandoned.
    position_weight, orientation_weight : float
        Row weights of a pose target (metres-to-radians trade-off); ignored for points.
        With ``orientation_weight=0`` only the position counts (also for ``reached``).
    restarts : int
        Extra attempts from random configurations within the limits, used only while
        the target is not reached.
    rng : None, int or numpy Generator
        Source of the restarts; None means seed 0, so results are reproducible.

    Returns
    -------
    Solution
        ``q (..., dof)`` within the limits, ``positions (..., n_joints + 1, 3)`` (base,
        every joint frame, tip; see :meth:`JointChain.joint_frames`), ``reached``,
        ``error`` (tip distance; for pose targets the weighted pose error
        ``√(w_p²|Δp|² + w_o²θ²)``) and ``iterations`` (steps over all attempts). The
        best attempt is returned when none reaches the target.
    """
    chain = check_chain(chain)
    method = choice(method, "method", JACOBIAN_METHODS)
    lam = as_float(damping, "damping", minimum=0.0) * chain.reach
    tol = (ITERATIVE_RTOL * chain.reach if tolerance is None
           else as_float(tolerance, "tolerance", minimum=0.0))
    angle_tol = as_float(angle_tolerance, "angle_tolerance", minimum=0.0)
    max_iterations = as_int(max_iterations, "max_iterations", minimum=0)
    step = as_float(max_step, "max_step", minimum=0.0, exclusive=True)
    patience = as_int(patience, "patience", minimum=1)
    restarts = as_int(restarts, "restarts", minimum=0)
    tp, tr, batch = parse_target(target)
    use_rot = tr is not None
    w_pos = as_float(position_weight, "position_weight", minimum=0.0) if use_rot else 1.0
    w_rot = as_float(orientation_weight, "orientation_weight", minimum=0.0) if use_rot else 0.0
    if w_rot == 0.0:  # orientation ignored: a position target
        use_rot = False
    if use_rot and w_pos == 0.0:  # position ignored: only the orientation decides `reached`
        tol = np.inf
    first, seeds, shape = start_configurations(chain, q0, batch, restarts, rng)
    count = first.shape[0]
    tp = np.ascontiguousarray(np.broadcast_to(tp, shape + (3,)).reshape(count, 3))
    if tr is None:
        tr_arr = np.zeros((count, 3, 3))
    else:
        tr_arr = np.ascontiguousarray(np.broadcast_to(tr, shape + (3, 3)).reshape(count, 3, 3))
    pre_rot, pre_trans, axis, kind, lower, upper = chain.kernel_arrays
    q = np.zeros((count, chain.dof))
    err = np.zeros(count)
    reached = np.zeros(count, dtype=np.bool_)
    iters = np.zeros(count, dtype=np.int64)
    _k.jacobian_solve(pre_rot, pre_trans, axis, kind, lower, upper, tp, tr_arr, use_rot,
                      w_pos, w_rot, first, restarts, seeds, *chain.sampling_bounds(),
                      _METHOD_CODES[method], lam, 1e-6, step, tol,
                      angle_tol, max_iterations, patience, q, err, reached, iters)
    return finish(chain, q, reached, err, iters, shape)
