"""Jacobian IK on a :class:`~limbik.chain.JointChain`: LM, transpose, pseudo-inverse, DLS, SVD-DLS.

Each iteration linearises the tip pose with the geometric Jacobian ``J`` (rows:
linear then angular velocity, world frame) and takes one step ``dq``:

- ``"transpose"``: ``dq = α Jᵀ e`` with Buss's step ``α = ⟨e, JJᵀe⟩ / |JJᵀe|²``.
- ``"pinv"``: ``dq = J⁺ e`` (singular values below ``1e-6 σ_max`` dropped).
- ``"dls"``: damped least squares, ``dq = Jᵀ (JJᵀ + λ² I)⁻¹ e``.
- ``"lm"``: Levenberg–Marquardt, ``dq = Jᵀ (JJᵀ + λ I)⁻¹ e`` with the adaptive damping
  ``λ = μ ½|e|² + λ_min``: a step is kept only if it lowers the error (then ``μ``
  halves), else ``μ`` grows and the step is retried. Joints held at a limit by the
  gradient drop out of the step. An attempt is abandoned when the squared error has
  not halved for ``patience`` steps, so hopeless starts give way to restarts early.
- ``"svd-dls"``: DLS through the singular value decomposition, damping only the
  singular values below ``2λ`` (``λᵢ² = λ² (1 − σᵢ²/4λ²)``; numerical filtering as in
  Maciejewski & Klein), so it takes full Gauss-Newton steps away from singularities.

Every step is limited to ``max_step`` per joint and clipped to the joint limits.
An attempt stops when the target is reached, after ``max_iterations`` steps, or when
the error has not dropped by 0.1 % for ``patience`` steps; then the next start
(random restarts within the limits) is tried.

A given ``q0`` is a warm start (the last frame's answer when tracking): when it does not
reach the target, it first runs on from where it stopped, which gives the best effort
nearest to it (for a target out of reach, the chain stretched toward it). The restarts
then start near ``q0`` and widen (restart ``r`` of ``R`` within ``r / R`` of the joint
ranges around it), and replace that answer only when one reaches the target, or when
one's error plus a charge for its jump (``limbik.tolerances.WARM_START_JUMP_COST`` ·
reach per radian of its largest joint move from ``q0``) is smaller. So tracking keeps
its branch beyond reach (see ``docs/jacobian.md``).
"""

from __future__ import annotations

from typing import Any

from limbik._runtime.validation import as_float, choice
from limbik.chain.joint_chain import JointChain
from limbik.solvers.joint import _jacobian_kernels as _k
from limbik.solvers.joint.problem import check_chain, joint_problem
from limbik.solvers.solution import Solution
from limbik.tolerances import (
    ITERATIVE_ANGLE_TOL,
    JACOBIAN_DAMPING,
    JACOBIAN_MAX_STEP,
    JACOBIAN_PATIENCE,
    JACOBIAN_RESTARTS,
    LM_PATIENCE,
    LM_RESTARTS,
    MAX_JACOBIAN_ITERATIONS,
)

__all__ = ["JACOBIAN_METHODS", "jacobian_ik"]

#: The largest ``damping`` (relative to the reach; useful values are far below 1).
MAX_DAMPING = 1e6

#: The step rules of :func:`jacobian_ik`.
JACOBIAN_METHODS = ("transpose", "pinv", "dls", "svd-dls", "lm")
_METHOD_CODES = {"transpose": _k.METHOD_TRANSPOSE, "pinv": _k.METHOD_PINV,
                 "dls": _k.METHOD_DLS, "svd-dls": _k.METHOD_SVD_DLS, "lm": _k.METHOD_LM}


def jacobian_ik(chain: JointChain, target: Any, *, method: str = "lm",
                damping: float = JACOBIAN_DAMPING, q0: Any = None,
                tolerance: float | None = None, angle_tolerance: float = ITERATIVE_ANGLE_TOL,
                max_iterations: int = MAX_JACOBIAN_ITERATIONS,
                max_step: float = JACOBIAN_MAX_STEP, patience: int | None = None,
                position_weight: float = 1.0, orientation_weight: float = 1.0,
                restarts: int | None = None, rng: Any = None,
                out: Solution | None = None) -> Solution:
    """Solve joint coordinates so the chain's tip reaches ``target``.

    Parameters
    ----------
    chain : JointChain
    target : array_like (..., 3) or Frame (...)
        Tip positions, or tip poses (position and orientation) as a Frame batch.
    method : {"lm", "transpose", "pinv", "dls", "svd-dls"}
        ``"lm"`` (the default) is Levenberg–Marquardt with adaptive damping.
    damping : float
        λ of DLS and SVD-DLS relative to ``chain.reach`` (λ = damping · reach, at most
        ``MAX_DAMPING`` = 1e6); LM's
        damping floor is ``(damping · reach / 10)²``.
    q0 : array_like (..., dof), optional
        Warm start, e.g. the previous frame's ``q`` (see Notes); default a cold start from
        the middle of the joint ranges. Broadcasts with ``target``.
    tolerance : float, optional
        Reach distance (length units); default ``ITERATIVE_RTOL · chain.reach``.
    angle_tolerance : float
        Orientation tolerance (radians) for pose targets.
    max_iterations : int
        Step cap per attempt (LM's last run from its best point, when no attempt reached
        the target, has a cap of its own).
    max_step : float
        Largest change of one joint coordinate in one step (radians or length units).
    patience : int, optional
        Steps without progress before an attempt is abandoned: for LM, steps without
        halving the squared error (default ``LM_PATIENCE``); for the others, steps
        without a 0.1 % error drop (default ``JACOBIAN_PATIENCE``).
    position_weight, orientation_weight : float
        Row weights of a pose target (metres-to-radians trade-off), from 0 to 1e10;
        ignored for points.
        With ``orientation_weight=0`` only the position counts (also for ``reached``).
    restarts : int, optional
        Extra attempts from random configurations within the limits, used only while
        the target is not reached (default ``LM_RESTARTS`` for LM, ``JACOBIAN_RESTARTS``
        for the others). After a warm start they begin near ``q0``, and an unreached
        restart's answer is taken only when it beats the warm start's best effort by
        more than its jump costs (``WARM_START_JUMP_COST``).
    rng : None, int or numpy Generator
        Source of the restarts; None means seed 0, so results are reproducible. None
        and an int seed give every target of a batch the same restarts, so a batched
        solve returns for each target what solving it alone returns; a Generator draws
        each target's restarts from its own seed.
    out : Solution, optional
        A Solution of an earlier call on the same chain with the same batch shape
        (e.g. the previous frame's), whose ``q``, ``positions``, ``reached``, ``error``
        and ``iterations`` arrays are overwritten in place; the returned Solution holds
        them. ``q0`` may be ``out.q`` (warm start).

    Returns
    -------
    Solution
        ``q (..., dof)`` within the limits, ``positions (..., n_joints + 1, 3)`` (base,
        every joint frame, tip; see :meth:`JointChain.joint_frames`), ``reached``,
        ``error`` (tip distance; for pose targets the weighted pose error
        ``√(w_p²|Δp|² + w_o²θ²)``) and ``iterations`` (steps over all attempts). The
        best attempt is returned when none reaches the target (after a warm start: the
        warm start's own best effort unless a restart beats it by more than its jump
        costs).

    Notes
    -----
    Choosing and tuning:

    - ``"lm"`` reaches pose targets fastest. An attempt ends once the squared error
      stops halving; when no attempt reaches the target, one more run from the best
      point goes on while each step still brings the tip closer by more than the
      tolerance, so a chain reaches out fully toward a target out of reach.
    - DLS and SVD-DLS damp with a fixed λ, so multiplying both weights by the same factor
      changes their answer (LM's damping scales with the error and does not).
    - ``"transpose"`` and joint-chain ``ccd`` seldom meet pose targets within the
      default tolerances; use them for positions.
    - Tracking a moving target: pass the last frame's ``q`` as ``q0`` (and its Solution
      as ``out``). A frame whose target is out of reach gets the warm start's best
      effort, continued from it: the chain stretches toward the target and follows it
      back without jumping to another branch (a restart takes over only if it reaches
      the target, or lowers the error by more than ``WARM_START_JUMP_COST`` · reach per
      radian it jumps). A reachable target that the warm start cannot reach (its branch
      ends at joint limits) is still reached by a restart, the nearest one found first,
      which may lie on another branch. ``restarts=0`` never leaves the warm start's
      branch, and may leave such a target unreached. See ``docs/jacobian.md``.
    """
    chain = check_chain(chain)
    method = choice(method, "method", JACOBIAN_METHODS)
    lam = as_float(damping, "damping", minimum=0.0, maximum=MAX_DAMPING) * chain.reach
    if patience is None:
        patience = LM_PATIENCE if method == "lm" else JACOBIAN_PATIENCE
    if restarts is None:
        restarts = LM_RESTARTS if method == "lm" else JACOBIAN_RESTARTS
    problem = joint_problem(chain, target, tolerance=tolerance, angle_tolerance=angle_tolerance,
                            max_iterations=max_iterations, patience=patience, restarts=restarts,
                            position_weight=position_weight,
                            orientation_weight=orientation_weight, q0=q0, rng=rng,
                            max_step=max_step)
    if method == "lm":
        # the adaptive damping needs only a small floor: λ_min = (damping · reach / 10)²
        return problem.solve(_k.METHOD_LM, (0.1 * lam) ** 2, out=out)
    return problem.solve(_METHOD_CODES[method], lam, 1e-6, out=out)
