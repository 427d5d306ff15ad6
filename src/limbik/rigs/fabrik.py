"""``FabrikChainRig`` and ``FabrikTreeRig``: FABRIK stepped per frame.

By default each step starts from the last frame's solution (moved with the root), so a
few iterations per frame follow a moving target, as seed 003's ``RenderStepped`` loop
does. That memory has a cost: once a target has been out of reach the chain is
straight, and FABRIK pulls a straight chain back in as a zig-zag, bends alternating
from joint to joint, which later frames keep. ``start="rest"`` starts every step
from the rest pose instead (moved with the root), as engines start from the animated
pose: the pose is then a function of the target alone and bends as the rest pose does,
for a few more iterations a frame. Targets can be smoothed with a critically damped
spring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import as_float, as_float_array, as_point, choice
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.rigs.smoothing import CriticallyDamped
from limbik.solvers.constraints import Constraint
from limbik.solvers.fabrik.chain import fabrik
from limbik.solvers.fabrik.tree import FabrikTree
from limbik.solvers.solution import Solution
from limbik.tolerances import MAX_ITERATIONS

__all__ = ["FabrikChainRig", "FabrikTreeRig"]

#: Where a rig's step starts: the last frame's pose or the rest pose.
STARTS = ("last", "rest")


def _starting_pose(start: str, rest: np.ndarray, last: np.ndarray, root: Any) -> np.ndarray:
    """The pose a step starts from ``(n, 3)``: ``last`` or ``rest``, its root moved to
    ``root`` (3,) where one is given, else to the last pose's root."""
    if start == "last" and root is None:
        return last
    pose = last if start == "last" else rest
    anchor = last[0] if root is None else as_point(root, "root")
    return pose + (anchor - pose[0])


class FabrikChainRig:
    """One FABRIK chain stepped per frame.

    Parameters
    ----------
    rest : array_like, shape (n, 3)
        The first pose; bone lengths come from it.
    smooth_time : float
        Seconds of critical damping on the target (0: none).
    tolerance, max_iterations, min_improvement, constraints, root_frame, cone_frames
        Passed to :func:`limbik.fabrik` every step. Seed 003's ``chain:solve()`` per
        frame is ``tolerance=0.1, max_iterations=11, min_improvement=-inf``.
    start : {"last", "rest"}
        Where each step starts: the last frame's pose (default, seed 003's loop) or the
        rest pose; both moved with the root (see the module's notes).
    """

    def __init__(self, rest: Any, *, smooth_time: float = 0.0, tolerance: float | None = None,
                 max_iterations: int = MAX_ITERATIONS, min_improvement: float = 0.0,
                 constraints: Sequence[Constraint | None] | None = None,
                 root_frame: Frame | None = None, cone_frames: str = "carried",
                 start: str = "last") -> None:
        r = as_float_array(rest, "rest", (3,))
        if r.ndim != 2 or r.shape[0] < 2:
            raise InvalidInputError(f"rest must have shape (n, 3) with n >= 2, got {r.shape}",
                                    argument="rest")
        self.start = choice(start, "start", STARTS)
        self.rest = r.copy()
        self.positions = r.copy()
        self.smooth_time = as_float(smooth_time, "smooth_time", minimum=0.0)
        self.options: dict[str, Any] = dict(
            tolerance=tolerance, max_iterations=max_iterations, min_improvement=min_improvement,
            constraints=constraints, root_frame=root_frame, cone_frames=cone_frames)
        fabrik(self.positions, self.positions[-1], **self.options)  # validate the options once
        self._target: CriticallyDamped | None = None
        self.solution: Solution | None = None

    def step(self, dt: float, target: Any, *, root: Any = None) -> Solution:
        """Advance ``dt`` seconds toward ``target`` (3,); ``root`` (3,) moves the chain's root.

        Returns the :class:`~limbik.Solution`; :attr:`positions` is the new pose.
        """
        dt = as_float(dt, "dt", minimum=0.0)
        tgt = as_point(target, "target")
        if self._target is None:
            self._target = CriticallyDamped(tgt, self.smooth_time)
        self._target.smooth_time = self.smooth_time
        goal = self._target.step(tgt, dt)
        start = _starting_pose(self.start, self.rest, self.positions, root)
        sol = fabrik(start, goal, **self.options)
        self.positions = np.array(sol.positions)
        self.solution = sol
        return sol


class FabrikTreeRig:
    """A :class:`~limbik.FabrikTree` stepped per frame.

    Parameters
    ----------
    tree : FabrikTree
        The tree (its ``positions`` are the first pose and the rest pose).
    smooth_time : float
        Seconds of critical damping on every target (0: none).
    tolerance, max_iterations, min_improvement
        Passed to :meth:`FabrikTree.solve` every step.
    start : {"last", "rest"}
        Where each step starts: the last frame's pose (default) or the rest pose; both
        moved with the root (see the module's notes).
    """

    def __init__(self, tree: FabrikTree, *, smooth_time: float = 0.0,
                 tolerance: float | None = None, max_iterations: int = 10,
                 min_improvement: float = 0.0, start: str = "last") -> None:
        if not isinstance(tree, FabrikTree):
            raise InvalidInputError(f"tree must be a FabrikTree, got {type(tree).__name__}",
                                    argument="tree")
        if tree.positions.shape != (tree.n_joints, 3):
            raise InvalidInputError(
                f"tree must hold one pose of shape ({tree.n_joints}, 3), got "
                f"{tree.positions.shape}", argument="tree")
        self.tree = tree
        self.start = choice(start, "start", STARTS)
        self.rest = np.array(tree.positions)
        self.positions = np.array(tree.positions)
        self.smooth_time = as_float(smooth_time, "smooth_time", minimum=0.0)
        self.options: dict[str, Any] = dict(tolerance=tolerance, max_iterations=max_iterations,
                                            min_improvement=min_improvement)
        self._targets: dict[int, CriticallyDamped] = {}
        self.solution: Solution | None = None

    def step(self, dt: float, targets: Mapping[int, Any], *, root: Any = None,
             weights: Mapping[int, Any] | None = None) -> Solution:
        """Advance ``dt`` seconds toward ``targets`` ({joint: (3,)}); ``root`` moves the root."""
        dt = as_float(dt, "dt", minimum=0.0)
        if not isinstance(targets, Mapping) or not targets:
            raise InvalidInputError("targets must be a non-empty mapping {joint: (3,) target}",
                                    argument="targets")
        goals = {}
        for j, value in targets.items():
            tgt = as_point(value, f"targets[{j}]")
            if j not in self._targets:
                self._targets[j] = CriticallyDamped(tgt, self.smooth_time)
            spring = self._targets[j]
            spring.smooth_time = self.smooth_time
            goals[j] = spring.step(tgt, dt)
        start = _starting_pose(self.start, self.rest, self.positions, root)
        sol = self.tree.solve(goals, weights=weights, start=start, **self.options)
        self.positions = np.array(sol.positions)
        self.solution = sol
        return sol
