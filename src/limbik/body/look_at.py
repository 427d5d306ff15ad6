"""``look_at``: a clip's head (or any chain ending in an aim joint) follows a target.

The :class:`Motion` form of :func:`limbik.solvers.aim.aim_chain`, over all frames at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import as_points
from limbik.errors import InvalidInputError
from limbik.skeleton.apply import apply_ik
from limbik.skeleton.motion import Motion, check_motion
from limbik.solvers.aim import aim_chain
from limbik.tolerances import AIM_ANGLE_TOL

__all__ = ["look_at"]


def look_at(motion: Motion, joints: Sequence[int | str], target: Any, *,
            axis: Any = (0.0, 0.0, 1.0), weights: Any = None, up: Any = None,
            world_up: Any = (0.0, 1.0, 0.0), weight: Any = 1.0, limit: float | None = None,
            tolerance: float = AIM_ANGLE_TOL, max_iterations: int = 10) -> Motion:
    """A copy of ``motion`` whose ``joints`` turn so the last one's ``axis`` points at ``target``.

    Parameters
    ----------
    motion : Motion
        F frames.
    joints : sequence of joint names or indices
        The chain that shares the turn, from the first (e.g. a spine joint) to the aim
        joint (e.g. the head); each an ancestor of the next.
    target : array_like, shape (F, 3) or (3,)
        World point to look at, per frame or fixed.
    axis : array_like, shape (3,)
        The aim joint's local forward axis (default +Z, a BVH character's forward;
        note that :func:`~limbik.solvers.aim.aim` and ``aim_chain``, on arrays,
        default to −Z, limbik's forward).
    weights, up, world_up, weight, limit, tolerance, max_iterations
        As in :func:`~limbik.solvers.aim.aim_chain`; ``weight`` may be per frame
        ``(F,)`` and ``limit``'s cone is around the aim joint's animated forward.

    Returns
    -------
    Motion
        The turned clip; joints outside the chain keep their local rotations, so the
        head's children follow and the rest of the body is unchanged.
    """
    check_motion(motion)
    sk = motion.skeleton
    if isinstance(joints, str) or len(joints) == 0:
        raise InvalidInputError(f"joints must be a non-empty sequence of joints, got {joints!r}",
                                argument="joints")
    index = [sk.index(j) for j in joints]
    for a, b in itertools.pairwise(index):
        if not sk.is_ancestor(a, b):
            raise InvalidInputError(
                f"joints must run from ancestor to descendant, got {sk.names[a]!r} before "
                f"{sk.names[b]!r}", argument="joints")
    frames = motion.num_frames
    goal = as_points(target, "target")
    if goal.shape not in ((3,), (frames, 3)):
        raise InvalidInputError(f"target must have shape ({frames}, 3) or (3,), got {goal.shape}",
                                argument="target")
    positions = motion.world_positions()[:, index]
    rotations = motion.world_rotations()[:, index]
    solved = aim_chain(positions, rotations, np.broadcast_to(goal, (frames, 3)), axis=axis,
                       weights=weights, up=up, world_up=world_up, weight=weight, limit=limit,
                       tolerance=tolerance, max_iterations=max_iterations)
    turned = solved.rotations
    assert turned is not None  # aim_chain always fills rotations
    return apply_ik(motion, rotations={j: turned[:, k] for k, j in enumerate(index)})
