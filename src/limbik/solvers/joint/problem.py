"""A joint-space IK problem, validated and flattened for the compiled driver.

:func:`~limbik.solvers.joint.jacobian.jacobian_ik` and :func:`~limbik.solvers.ccd.ccd` on a
:class:`~limbik.chain.JointChain` share everything but the step: argument checks,
target parsing, start configurations and restart seeds, broadcasting, output
allocation and the final :class:`Solution`. :func:`joint_problem` does the
preparation once; :meth:`JointProblem.solve` runs
:func:`limbik.solvers.joint._kernels.joint_solve_range` with a method code (or
Levenberg–Marquardt's :func:`limbik.solvers.joint._jacobian_kernels.lm_solve_range`), on
every thread for a large batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from limbik._runtime.batch_threads import run_batch
from limbik._runtime.validation import FloatArray, as_float, as_int, as_points, broadcast_shapes
from limbik.chain.joint_chain import MAX_MAGNITUDE, JointChain
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.solvers.joint import _jacobian_kernels as _jk
from limbik.solvers.joint import _kernels as _k
from limbik.solvers.solution import Solution, out_arrays, written
from limbik.tolerances import ITERATIVE_RTOL, WARM_START_JUMP_COST

#: The largest ``position_weight`` and ``orientation_weight``: weighted errors of chains
#: within the documented magnitudes (±1e100) then stay finite when squared.
MAX_WEIGHT = 1e10

FAR_RATIO = 100.0
"""Targets farther than this many times the chain's reach from the base are solved toward
the same direction at that distance (the chain then points at them; the damped steps
barely move a chain toward a point 10^16 reaches away); error and reached are measured
to the true target."""

#: Targets per chunk at least where a batch is spread over threads (a target takes 5 to
#: 30 µs, so a chunk 0.1 ms or more). Smaller batches run on the calling thread.
SMALLEST_CHUNK = 16



def check_chain(chain: Any) -> JointChain:
    """``chain`` if it is a JointChain with at least one movable joint."""
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
        if target.shape == ():  # one pose: the matrix in scalars, no NumPy round trips
            x, y, z, w = target.quaternion.tolist()
            matrix = np.array([
                1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
                2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
                2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)])
            return (np.array(target.position, dtype=np.float64), matrix.reshape(3, 3), ())
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
        if rng < 0:
            raise InvalidInputError(f"rng must be a seed >= 0, got {int(rng)}", argument="rng")
        return np.random.default_rng(int(rng))
    raise InvalidInputError(
        f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}",
        argument="rng")


def start_configurations(chain: JointChain, q0: Any, batch: tuple[int, ...],
                         rng: Any) -> tuple[FloatArray, np.ndarray, tuple[int, ...]]:
    """First starts ``(B, dof)``, restart seeds ``(B,)`` and the broadcast batch shape.

    The first start is ``q0`` (default: :attr:`JointChain.middle`), clipped to the
    limits. Restarts are uniform within the limits (see :meth:`JointChain.random_q`),
    drawn in the kernel from one seed per batch element. ``rng=None`` (seed 0) and an
    int seed give every element the same seed, so each target of a batch is solved
    exactly as it would be alone; a Generator draws a seed for each element.
    """
    if rng is None and batch == ():
        if q0 is None:  # one target, default start and seed
            return chain.middle.reshape(1, chain.dof).copy(), np.zeros(1, dtype=np.uint64), ()
        if (type(q0) is np.ndarray and q0.shape == (chain.dof,) and q0.dtype == np.float64
                and math.isfinite(q0.sum())):  # a warm start: one finite start (else below)
            return (np.clip(q0, chain.lower, chain.upper).reshape(1, chain.dof),
                    np.zeros(1, dtype=np.uint64), ())
    if q0 is None:
        q_first = chain.middle
    else:
        q_first = chain.clip(chain.check_q(q0, "q0"))
    shape = broadcast_shapes(("target", batch), ("q0", q_first.shape[:-1]))
    count = int(np.prod(shape, dtype=np.int64))
    # always a new, writable array: a read-only one is another type to the kernels
    first = np.array(np.broadcast_to(q_first, shape + (chain.dof,)).reshape(count, chain.dof),
                     dtype=np.float64, order="C")
    if rng is None:
        seeds = np.zeros(count, dtype=np.uint64)
    elif isinstance(rng, np.random.Generator):
        seeds = rng.integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64)
    else:  # an int seed (checked here): one seed for all, as for a single target
        seed = rng_from(rng).integers(0, 2**63, size=1, dtype=np.int64)[0]
        seeds = np.full(count, seed, dtype=np.uint64)
    return first, seeds, shape


@dataclass(slots=True)
class JointProblem:
    """Validated inputs of a batched joint-space solve over ``B = prod(shape)`` elements.

    ``target_p (B, 3)``, ``target_r (B, 3, 3)`` (zeros unless ``use_rot``),
    ``first (B, dof)`` first starts, ``seeds (B,)`` restart seeds (uint64).
    ``jump_cost``: None for a cold start (its kernels compile without the warm start's
    code); for a warm start (``q0`` given) what an unreached
    restart's error is charged per radian (or length unit) of its largest joint move
    from the warm start (:data:`~limbik.tolerances.WARM_START_JUMP_COST` · reach).
    """

    chain: JointChain
    shape: tuple[int, ...]
    target_p: FloatArray
    target_r: FloatArray
    use_rot: bool
    w_pos: float
    w_rot: float
    first: FloatArray
    seeds: np.ndarray
    restarts: int
    tolerance: float
    angle_tolerance: float
    max_iterations: int
    max_step: float
    patience: int
    far_targets: FloatArray | None = None  # (B, 3) true targets where target_p was pulled in
    jump_cost: float | None = None

    def outputs(self) -> tuple[np.ndarray, ...]:
        """New output arrays of the drivers, zeroed, as :meth:`out_fields` lists them:
        ``q (B, dof)``, ``error (B,)``, ``reached (B,)``, ``iterations (B,)`` and
        ``positions (B, n_joints + 1, 3)``."""
        count = self.first.shape[0]
        return tuple(np.zeros((count, *trailing), dtype)
                     for _, trailing, dtype in self.out_fields())

    def _arguments(self, method: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The drivers' arguments before and after the step parameters."""
        chain = self.chain
        # LM on position targets gets no rotations, so it compiles without the rotation error
        target_r: Any = (None if method == _jk.METHOD_LM and not self.use_rot
                         else self.target_r)
        args = (*chain.kernel_arrays, self.target_p, target_r, self.use_rot, self.w_pos,
                self.w_rot, self.first, self.restarts, self.seeds, *chain.sampling_bounds(),
                self.jump_cost)
        limits = (self.tolerance, self.angle_tolerance, self.max_iterations, self.patience,
                  *chain.position_map)
        return args, limits

    def serial_call(self, method: int, lam: float, cutoff: float, outs: tuple[Any, ...]
                    ) -> tuple[Any, Callable[[], tuple[Any, ...]]]:
        """The serial driver of ``method`` and a function giving its arguments after
        ``start, stop`` (writing into ``outs``, from :meth:`outputs`), with the calling
        thread's scratch space."""
        args, limits = self._arguments(method)
        if method == _jk.METHOD_LM:
            m = self.chain.dof
            head = (*args, float(lam), self.max_step, *limits)
            return _jk.lm_solve_range, lambda: (*head, *_jk.lm_scratch(m), *outs)
        every = (*args, method, float(lam), float(cutoff), self.max_step, *limits)
        m = self.chain.dof
        return _k.joint_solve_range, lambda: (*every, *_k.joint_scratch(m, method), *outs)

    def out_fields(self) -> tuple[tuple[str, tuple[int, ...], Any], ...]:
        """The :func:`~limbik.solvers.solution.out_arrays` fields of :meth:`outputs`."""
        chain = self.chain
        return (("q", (chain.dof,), np.float64), ("error", (), np.float64),
                ("reached", (), np.bool_), ("iterations", (), np.int64),
                ("positions", (chain.n_joints + 1, 3), np.float64))

    def solve(self, method: int, lam: float = 0.0, cutoff: float = 0.0,
              out: Solution | None = None) -> Solution:
        """Run the compiled driver with step rule ``method`` (a ``_joint_kernels`` code),
        on every thread for a large batch.

        ``lam`` and ``cutoff`` are the Jacobian step's damping and pseudo-inverse
        cutoff (unused by CCD); for ``METHOD_LM`` ``lam`` is the damping floor.
        ``out``: a Solution of an earlier solve of the same chain and batch shape, whose
        arrays are overwritten (see :func:`~limbik.solvers.solution.out_arrays`).
        """
        chain = self.chain
        count = self.first.shape[0]
        fields = self.out_fields()
        outs: tuple[np.ndarray, ...]
        if out is None:
            outs = self.outputs()
        else:
            outs = tuple(out_arrays(out, self.shape, fields))
            for array in outs[:4]:
                array.fill(0)  # as new outputs start
        q, err, reached, iters, positions = outs
        kernel, arguments = self.serial_call(method, lam, cutoff, outs)
        run_batch(kernel, count, arguments, smallest=SMALLEST_CHUNK)
        if self.far_targets is not None:  # honest error and reached for far targets
            far = np.isfinite(self.far_targets[:, 0])
            miss = positions[far, -1] - self.far_targets[far]
            big = np.max(np.abs(miss), axis=-1)
            err[far] = big * np.linalg.norm(miss / np.where(big > 0, big, 1.0)[:, None], axis=-1)
            reached[far] &= err[far] <= self.tolerance
        shape = self.shape
        if out is not None:
            return Solution._trusted(**written(out, shape, fields, list(outs)))
        return Solution._trusted(positions.reshape(shape + positions.shape[1:]),
                                 reached.reshape(shape), err.reshape(shape),
                                 iters.reshape(shape), q=q.reshape(shape + (chain.dof,)))


def pull_in_far_targets(tp: FloatArray, far_away: float) -> tuple[FloatArray, FloatArray | None]:
    """Targets ``tp (B, 3)`` with a coordinate beyond ``far_away``, moved in to that
    distance along their direction from the base (see :data:`FAR_RATIO`); the error is
    measured to the true one afterwards. Returns the targets to solve for and the true
    targets ``(B, 3)`` where one was moved (NaN rows elsewhere; None if none).
    """
    big = np.max(np.abs(tp), axis=-1)
    far = big > far_away
    if not far.any():
        return tp, None
    far_targets = np.full(tp.shape, np.nan)
    far_targets[far] = tp[far]
    unit = tp[far] / big[far, None]
    tp = tp.copy()
    tp[far] = unit / np.linalg.norm(unit, axis=-1, keepdims=True) * far_away
    return tp, far_targets


def joint_problem(chain: Any, target: Any, *, tolerance: float | None,
                  angle_tolerance: float, max_iterations: int, patience: int, restarts: int,
                  position_weight: float, orientation_weight: float, q0: Any,
                  rng: Any, max_step: float | None = None) -> JointProblem:
    """Validate and flatten the arguments shared by the joint-space solvers.

    The arguments mean what they mean in :func:`~limbik.solvers.joint.jacobian.jacobian_ik`.
    Weights apply to pose targets only; ``orientation_weight=0`` turns a pose target
    into a position target, and ``position_weight=0`` leaves only the orientation to
    decide ``reached``. ``max_step`` (None: no limit) is the largest change of one
    joint coordinate in one step; only the Jacobian step uses it.
    """
    chain = check_chain(chain)
    tol = (ITERATIVE_RTOL * chain.reach if tolerance is None
           else as_float(tolerance, "tolerance", minimum=0.0))
    angle_tol = as_float(angle_tolerance, "angle_tolerance", minimum=0.0)
    max_iterations = as_int(max_iterations, "max_iterations", minimum=0)
    step = (np.inf if max_step is None
            else as_float(max_step, "max_step", minimum=0.0, exclusive=True))
    patience = as_int(patience, "patience", minimum=1)
    restarts = as_int(restarts, "restarts", minimum=0)
    tp, tr, batch = parse_target(target)
    use_rot = tr is not None
    # checked for point targets too, where they do not apply
    w_pos = as_float(position_weight, "position_weight", minimum=0.0, maximum=MAX_WEIGHT)
    w_rot = as_float(orientation_weight, "orientation_weight", minimum=0.0, maximum=MAX_WEIGHT)
    if use_rot and w_pos == 0.0 and w_rot == 0.0:
        raise InvalidInputError("position_weight and orientation_weight must not both be 0 "
                                "(nothing would be solved), got 0 and 0",
                                argument="orientation_weight")
    if not use_rot:
        w_pos, w_rot = 1.0, 0.0
    if w_rot == 0.0:  # orientation ignored: a position target
        use_rot = False
    if use_rot and w_pos == 0.0:  # position ignored: only the orientation decides `reached`
        tol = np.inf
    first, seeds, shape = start_configurations(chain, q0, batch, rng)
    count = first.shape[0]
    far_targets = None
    far_away = (min(FAR_RATIO * chain.reach, MAX_MAGNITUDE) if chain.reach > 0
                else MAX_MAGNITUDE)
    if shape == () and tp.shape == (3,):
        tp = np.array(tp, dtype=np.float64).reshape(1, 3)
        if max(abs(c) for c in tp[0].tolist()) > far_away:
            tp, far_targets = pull_in_far_targets(tp, far_away)
    else:
        tp = np.array(np.broadcast_to(tp, shape + (3,)).reshape(count, 3), dtype=np.float64,
                      order="C")  # writable, as for one target: one type for the kernels
        tp, far_targets = pull_in_far_targets(tp, far_away)
    if tr is None:
        tr_arr = np.zeros((count, 3, 3))
    elif shape == () and tr.shape == (3, 3):
        tr_arr = np.array(tr, dtype=np.float64).reshape(1, 3, 3)
    else:
        tr_arr = np.array(np.broadcast_to(tr, shape + (3, 3)).reshape(count, 3, 3),
                          dtype=np.float64, order="C")
    return JointProblem(chain=chain, shape=shape, target_p=tp, target_r=tr_arr,
                        use_rot=use_rot, w_pos=w_pos, w_rot=w_rot, first=first, seeds=seeds,
                        restarts=restarts, tolerance=tol, angle_tolerance=angle_tol,
                        max_iterations=max_iterations, max_step=step, patience=patience,
                        far_targets=far_targets,
                        jump_cost=None if q0 is None else WARM_START_JUMP_COST * chain.reach)
