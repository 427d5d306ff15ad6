"""``FabrikTree``: FABRIK on joint trees with several end effectors (seed 003).

Backward stage: each targeted effector goes to its target and its branch is
walked back to the nearest sub-base (a joint where branches meet). A sub-base
takes the weighted centroid of the positions its branches proposed for it,
then its own branch is walked back, and so on to the root, at any depth.
Forward stage: the root goes back in place and every branch is walked out from
its sub-base, parents before children, applying joint constraints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.batch_threads import run_batch
from limbik._runtime.validation import (
    FloatArray,
    as_flag,
    as_float_array,
    as_int,
    as_joint_rotations,
    as_parents,
    as_points,
    broadcast_shapes,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.solvers._scale import element_units, unit_groups
from limbik.solvers.constraints import Constraint, encode_constraints
from limbik.solvers.fabrik import _kernels as K
from limbik.solvers.fabrik.chain import (
    check_cone_frames,
    check_min_improvement,
    check_tolerance,
    kernel_limits,
    root_frame_rows,
)
from limbik.solvers.solution import Solution, chain_out_fields, out_arrays, written
from limbik.tolerances import MAX_TREE_ITERATIONS

__all__ = ["FabrikTree"]


#: Trees per chunk at least where a batch is spread over threads (a tree takes several
#: microseconds, so a chunk 0.05 ms or more). Smaller batches run on the calling thread.
SMALLEST_CHUNK = 16


class FabrikTree:
    """A joint tree for multi-effector FABRIK.

    Parameters
    ----------
    parents : sequence of int, shape (n,)
        ``parents[0] = -1`` (joint 0 is the root) and ``0 <= parents[j] < j``.
        Bone ``j − 1`` joins joint ``parents[j]`` to joint ``j``.
    positions : array_like, shape (..., n, 3)
        Joint positions: the bone lengths and the starting pose.
    constraints : sequence of Constraint or None, optional
        One entry per bone (n − 1); entry ``j − 1`` limits bone ``j`` relative to
        the frame of the bone ending at ``parents[j]``. Bones leaving the root
        are measured in ``root_frame`` and only constrained when it is given.
        Frames are carried down every branch with minimal twist (see
        :mod:`limbik.solvers.constraints`).
    root_frame : Frame, optional
        One unbatched frame starting the carried bone frames (default identity).
    cone_frames : {"carried", "seed"}
        As in :func:`limbik.fabrik`: ``"seed"`` measures a bone's constraint in seed
        003's ``CFrame.new(grandparent, parent)`` look-at frame of its parent bone.

    Besides :meth:`solve`, :meth:`backward` and :meth:`forward` run one stage each,
    so seed 003's per-frame ``update()`` (backward once, forward once) can be
    written with them.
    """

    def __init__(self, parents: Any, positions: Any, *,
                 constraints: Sequence[Constraint | None] | None = None,
                 root_frame: Frame | None = None, cone_frames: str = "carried") -> None:
        self.parents = as_parents(parents)
        self.parents.flags.writeable = False
        n = self.parents.size
        pos = as_float_array(positions, "positions", ())
        if pos.ndim < 2 or pos.shape[-2:] != (n, 3):
            raise InvalidInputError(
                f"positions must have shape (..., {n}, 3) for {n} joints, got {pos.shape}",
                argument="positions")
        self.positions = pos
        kinds, params, axes = encode_constraints(constraints, n - 1)
        self._frame0, constrain_root = root_frame_rows(root_frame)
        self._limits = kernel_limits(kinds, params, axes, constrain_root,
                                     check_cone_frames(cone_frames), self.parents[1:] == 0)
        children = np.bincount(self.parents[1:], minlength=n)
        self.leaves = tuple(int(j) for j in np.flatnonzero(children == 0) if j != 0)

    @property
    def n_joints(self) -> int:
        return int(self.parents.size)

    def solve(self, targets: Mapping[int, Any], *, weights: Mapping[int, Any] | None = None,
              tolerance: float | None = None, max_iterations: int = MAX_TREE_ITERATIONS,
              min_improvement: float = 0.0, fixed_root: bool = True,
              start: Any = None, return_rotations: bool = False,
              rotations: Any = None, out: Solution | None = None) -> Solution:
        """Move the targeted joints toward their targets.

        Parameters
        ----------
        targets : mapping of int to array_like (..., 3), or array_like (..., n_leaves, 3)
            Joint index → target. Usually leaves; any non-root joint works (its
            own children then just follow). Untargeted branches are carried
            along by the forward pass, keeping their lengths. An array gives
            a target to every leaf, in the order of :attr:`leaves`.
        weights : mapping of int to array_like (...), optional
            Effector weight (1e-100 to 1e100, default 1). A sub-base takes the centroid of
            its branches' proposals weighted by the total weight of the
            effectors in each branch.
        start : array_like, shape (..., n, 3), optional
            Pose to start from instead of the constructor's ``positions``, e.g.
            the previous frame's solution. Bone lengths are taken from the
            pose the solve starts from.
        tolerance, max_iterations, min_improvement, fixed_root
            As in :func:`limbik.fabrik`; ``tolerance`` defaults to 1e-6 times
            the tree's total bone length and ``max_iterations`` to
            ``MAX_TREE_ITERATIONS`` (1000): when branches pull apart, sub-bases
            at centroids converge more slowly than a chain does.
        return_rotations : bool
            Also fill ``Solution.rotations`` ``(..., n, 4)``: the joints' world
            rotations, each turned from the starting pose with minimal twist, and
            joints where branches start by the best fit of their child bones
            (:func:`limbik.joint_rotations` with ``parents``).
        rotations : array_like, shape (..., n, 4), optional
            World rotations (x, y, z, w) of the joints in the starting pose; implies
            ``return_rotations``.
        out : Solution, optional
            A Solution of an earlier solve of this tree with the same batch shape and
            ``return_rotations`` (e.g. the previous frame's), whose arrays are
            overwritten in place; the returned Solution holds them. ``start`` may be
            ``out.positions``.

        Returns
        -------
        Solution
            ``positions`` ``(..., n, 3)``. ``error`` is the largest distance of
            an effector from its target, so ``reached`` means every effector is
            within tolerance.
        """
        fixed_root = as_flag(fixed_root, "fixed_root")
        shape, size, effectors, tg, wt, p = self._prepare(targets, weights, start)
        tol_abs, tol_rel = check_tolerance(tolerance)
        max_it = as_int(max_iterations, "max_iterations", minimum=0)
        min_imp = check_min_improvement(min_improvement)
        n = self.n_joints
        want_rotations = as_flag(return_rotations, "return_rotations") or rotations is not None
        if rotations is not None:
            rotations = as_joint_rotations(rotations, "rotations", n, shape)

        fields = chain_out_fields(n, want_rotations)
        if out is None:
            reached = np.empty(size, dtype=np.bool_)
            error = np.empty(size)
            iterations = np.empty(size, dtype=np.int64)
        else:
            # the kernel solves _prepare's copy of the pose, and views[0] is written only
            # after the rotations have read ``start``: ``start=out.positions`` is safe
            views = out_arrays(out, shape, fields)
            reached, error, iterations = views[1:4]
        eff = np.array(effectors, dtype=np.int64)
        parents = self.parents
        # each tree in units of its own size (exact, 2^k): one kernel run per unit
        for unit, rows in unit_groups(element_units(p, tg)):
            part, goal, w = (p, tg, wt) if rows is None else (p[rows], tg[rows], wt[rows])
            r, e, i = ((reached, error, iterations) if rows is None
                       else (reached[rows], error[rows], iterations[rows]))
            tol_u, imp_u = tol_abs, min_imp
            if unit != 1.0:
                part /= unit
                goal = goal / unit
                tol_u = tol_abs / unit if tol_abs >= 0 else tol_abs
                imp_u = min_imp / unit
            args = (part, parents, goal, eff, w, tol_u, tol_rel, max_it, imp_u, fixed_root,
                    self._frame0, self._limits, r, e, i)

            def arguments(args: tuple[Any, ...] = args) -> tuple[Any, ...]:
                return (*args, K.tree_workspace(parents, eff))

            run_batch(K.solve_tree_range, part.shape[0], arguments, smallest=SMALLEST_CHUNK)
            part *= unit
            e *= unit
            if rows is not None:
                p[rows], reached[rows], error[rows], iterations[rows] = part, r, e, i
        solved = p.reshape(shape + (n, 3))
        turned = None
        if want_rotations:
            from limbik.solvers.rotations import _tree_joint_rotations

            # the start pose and rotations were checked (and the rotations normalised) above
            begin = self.positions if start is None else as_float_array(start, "start", ())
            rest = np.array([0.0, 0.0, 0.0, 1.0]) if rotations is None else rotations
            turned = _tree_joint_rotations(solved, begin, rest, self.parents, shape)
        if out is not None:
            np.copyto(views[0].reshape(solved.shape), solved)
            if turned is not None:
                np.copyto(views[4].reshape(turned.shape), turned)
            return Solution._trusted(**written(out, shape, fields, views))
        return Solution(positions=solved, reached=reached.reshape(shape),
                        error=error.reshape(shape), iterations=iterations.reshape(shape),
                        rotations=turned)

    def _prepare(self, targets: Any, weights: Mapping[int, Any] | None, start: Any
                 ) -> tuple[tuple[int, ...], int, list[int], FloatArray, FloatArray, FloatArray]:
        """Validate and broadcast: (shape, size, effectors, targets (size, k, 3),
        weights (size, k), pose (size, n, 3), a C-contiguous copy)."""
        n = self.n_joints
        if not isinstance(targets, Mapping):
            targets = self._leaf_targets(targets)
        if not targets:
            raise InvalidInputError(
                "targets must be a non-empty mapping {joint index: (..., 3) target}, "
                f"got {type(targets).__name__}", argument="targets")
        effectors = []
        arrays = []
        for key, value in targets.items():
            j = as_int(key, "targets key", minimum=1)
            if j >= n:
                raise InvalidInputError(f"targets key must be a joint index in [1, {n}), got {j}",
                                        argument="targets")
            effectors.append(j)
            arrays.append(as_points(value, f"targets[{j}]"))
        w_arrays = []
        if weights is not None:
            unknown = set(weights) - set(effectors)
            if unknown:
                raise InvalidInputError(
                    f"weights keys must be targeted joints {sorted(effectors)}, got "
                    f"{sorted(unknown)}", argument="weights")
        for j in effectors:
            if weights is not None and j in weights:
                wj = as_float_array(weights[j], f"weights[{j}]")
                if np.any(wj <= 0):
                    raise InvalidInputError(f"weights[{j}] must be > 0, got {wj.min()!r}",
                                            argument="weights")
                outside = (wj < 1e-100) | (wj > 1e100)  # sums and centroids stay finite
                if np.any(outside):
                    bad = wj[outside].flat[0]
                    raise InvalidInputError(f"weights[{j}] must be within [1e-100, 1e100], "
                                            f"got {bad!r}", argument="weights")
            else:
                wj = np.ones(())
            w_arrays.append(wj)
        pose = self.positions
        if start is not None:
            pose = as_float_array(start, "start", ())
            if pose.ndim < 2 or pose.shape[-2:] != (n, 3):
                raise InvalidInputError(
                    f"start must have shape (..., {n}, 3) for {n} joints, got {pose.shape}",
                    argument="start")
        pairs = [("positions" if start is None else "start", pose.shape[:-2])]
        pairs += [(f"targets[{j}]", a.shape[:-1]) for j, a in zip(effectors, arrays, strict=True)]
        pairs += [(f"weights[{j}]", a.shape) for j, a in zip(effectors, w_arrays, strict=True)]
        shape = broadcast_shapes(*pairs)
        size = int(np.prod(shape, dtype=np.int64))
        k = len(effectors)
        if pose.shape[:-2] != shape:
            pose = np.broadcast_to(pose, shape + (n, 3))
        p = np.array(pose, dtype=np.float64, order="C").reshape(size, n, 3)
        tg = np.empty((size, k, 3))
        wt = np.empty((size, k))
        for e in range(k):  # assignment broadcasts each target and weight to the batch
            tg.reshape(shape + (k, 3))[..., e, :] = arrays[e]
            wt.reshape(shape + (k,))[..., e] = w_arrays[e]
        return shape, size, effectors, tg, wt, p

    def backward(self, positions: Any, targets: Any, *,
                 weights: Mapping[int, Any] | None = None) -> FloatArray:
        """One backward stage: effectors onto their targets, each sub-base to the weighted
        centroid of its branches' proposals, down to the root (which moves too).

        Seed 003's ``chain:backward()`` on every branch, with the centroid step of its
        ``update()``. ``positions`` ``(..., n, 3)`` is the pose to start from (bone
        lengths are taken from it); ``targets`` and ``weights`` as in :meth:`solve`.
        Returns the new pose ``(..., n, 3)``.
        """
        shape, _, effectors, tg, wt, p = self._prepare(targets, weights,
                                                          self._pose(positions))
        eff = np.array(effectors, dtype=np.int64)
        K.tree_backward_pass(p, self.parents, tg, eff, wt, p.copy(),
                             K.tree_workspace(self.parents, eff))
        return p.reshape(shape + (self.n_joints, 3))

    def forward(self, positions: Any, *, root: Any = None, lengths_from: Any = None
                ) -> FloatArray:
        """One forward stage: the root to ``root`` (default: the constructor's root), then
        every branch walked out from its sub-base, parents first, with the constraints.

        Seed 003's ``chain:forward()`` on every chain. ``positions`` ``(..., n, 3)``;
        bone lengths come from ``lengths_from`` (default: the constructor's pose), since
        a backward stage keeps them only approximately at sub-bases. Returns the new
        pose ``(..., n, 3)``.
        """
        n = self.n_joints
        pose = self._pose(positions)
        ref = self.positions if lengths_from is None else self._pose(lengths_from)
        r = self.positions[..., 0, :] if root is None else as_points(root, "root")
        shape = broadcast_shapes(("positions", pose.shape[:-2]), ("lengths_from", ref.shape[:-2]),
                                 ("root", r.shape[:-1]))
        size = int(np.prod(shape, dtype=np.int64))
        p = np.array(np.broadcast_to(pose, shape + (n, 3)), order="C").reshape(size, n, 3)
        lf = np.array(np.broadcast_to(ref, shape + (n, 3)), order="C").reshape(size, n, 3)
        roots = np.array(np.broadcast_to(r, shape + (3,)), order="C").reshape(size, 3)
        K.tree_forward_pass(p, self.parents, lf, roots, self._frame0, self._limits,
                            K.tree_workspace(self.parents, np.zeros(0, dtype=np.int64)))
        return p.reshape(shape + (n, 3))

    def _pose(self, positions: Any) -> FloatArray:
        pose = as_float_array(positions, "positions", ())
        n = self.n_joints
        if pose.ndim < 2 or pose.shape[-2:] != (n, 3):
            raise InvalidInputError(
                f"positions must have shape (..., {n}, 3) for {n} joints, got {pose.shape}",
                argument="positions")
        return pose

    def _leaf_targets(self, targets: Any) -> dict[int, Any]:
        """An array ``(..., n_leaves, 3)`` of targets for every leaf, in ``leaves`` order."""
        try:
            arr = np.asarray(targets, dtype=np.float64)
        except (TypeError, ValueError):
            arr = np.zeros(0)
        k = len(self.leaves)
        if arr.ndim < 2 or arr.shape[-2:] != (k, 3):
            raise InvalidInputError(
                "targets must be a non-empty mapping {joint index: (..., 3) target} or an "
                f"array of shape (..., {k}, 3) for the leaves {list(self.leaves)}, got "
                f"{type(targets).__name__}" + (f" of shape {arr.shape}" if arr.ndim else ""),
                argument="targets")
        return {leaf: arr[..., e, :] for e, leaf in enumerate(self.leaves)}

    def __repr__(self) -> str:
        return f"FabrikTree(n_joints={self.n_joints}, leaves={list(self.leaves)})"
