"""``Solution``: the result type every limbik solver returns."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Solution", "out_arrays"]


@dataclasses.dataclass(frozen=True, eq=False)
class Solution:
    """The outcome of a (batched) IK solve. An unreachable target is a result, not an error.

    Attributes
    ----------
    positions : ndarray, shape (..., n_joints, 3)
        Solved joint positions, root first, end effector last.
    reached : ndarray of bool, shape (...)
        Whether the end effector is within the solver's tolerance of the target.
    error : ndarray, shape (...)
        End-effector distance to the target (for pose targets: the weighted pose error).
    iterations : ndarray of int, shape (...)
        Iterations used (0 for closed-form solvers).
    rotations : ndarray, shape (..., n_joints, 4), optional
        World rotation (x, y, z, w) of each joint: filled by ``two_bone`` with a pose,
        and by ``fabrik``, ``FabrikTree.solve`` and ``ccd`` on point chains with
        ``return_rotations=True`` (each bone turned from the input pose with minimal
        twist, see :func:`limbik.joint_rotations`). Joint-space solvers leave it None:
        their frames are ``chain.joint_frames(solution.q)``.
    q : ndarray, shape (..., dof), optional
        Joint coordinates, for joint-space solvers (radians or length units).
    root_offset : ndarray, shape (..., 3), optional
        How far the solver moved the root from where it was given, for solvers that may
        move it (``two_bone(..., unreachable="push_root")``); None when the root stays.
    """

    positions: NDArray[np.float64]
    reached: NDArray[np.bool_]
    error: NDArray[np.float64]
    iterations: NDArray[np.int64]
    rotations: NDArray[np.float64] | None = None
    q: NDArray[np.float64] | None = None
    root_offset: NDArray[np.float64] | None = None

    @classmethod
    def _trusted(cls, positions: Any, reached: Any, error: Any, iterations: Any,
                 rotations: Any = None, q: Any = None, root_offset: Any = None) -> Solution:
        """A Solution from arrays a solver has already checked, skipping ``__init__``.

        The class is frozen with no ``__post_init__``, so filling the instance
        dictionary is equivalent; it saves a microsecond or two on single solves.
        """
        out = object.__new__(cls)
        out.__dict__.update(positions=positions, reached=reached, error=error,
                            iterations=iterations, rotations=rotations, q=q,
                            root_offset=root_offset)
        return out

    @property
    def shape(self) -> tuple[int, ...]:
        """Batch shape (``()`` for a single solve)."""
        return tuple(self.error.shape)

    @property
    def end_effector(self) -> NDArray[np.float64]:
        """End-effector positions ``(..., 3)``."""
        return self.positions[..., -1, :]

    def __getitem__(self, index: Any) -> Solution:
        """Index the batch dimensions: ``solution[3]``, ``solution[mask]``."""
        changes: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                changes[field.name] = value[index]
        return Solution(**changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready nested lists, one key per field that is set."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                out[field.name] = np.asarray(value).tolist()
        return out

    def __repr__(self) -> str:
        if self.shape == ():
            return (f"Solution(reached={bool(self.reached)}, error={float(self.error):.3g}, "
                    f"iterations={int(self.iterations)}, n_joints={self.positions.shape[-2]})")
        return (f"Solution(shape={self.shape}, reached={int(np.sum(self.reached))}/"
                f"{self.reached.size}, max_error={float(np.max(self.error, initial=0.0)):.3g})")


def out_arrays(out: Any, shape: tuple[int, ...], n_joints: int
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Flat views ``positions (N, n_joints, 3)``, ``error (N,)``, ``reached (N,)`` of a
    preallocated ``out`` Solution of batch ``shape`` (N = prod(shape)), for a solver
    to write into.

    ``out`` must come from an earlier solve of the same batch shape and joint count:
    its ``positions``, ``error`` and ``reached`` must be writable C-contiguous arrays
    of float64, float64 and bool.
    """
    from limbik.errors import InvalidInputError

    if not isinstance(out, Solution):
        raise InvalidInputError(f"out must be a Solution, got {type(out).__name__}",
                                argument="out")
    count = 1
    for size in shape:
        count *= size
    expected = (("positions", shape + (n_joints, 3), np.float64), ("error", shape, np.float64),
                ("reached", shape, np.bool_))
    views = []
    for name, want, dtype in expected:
        array = getattr(out, name)
        if (not isinstance(array, np.ndarray) or array.shape != want or array.dtype != dtype
                or not array.flags.c_contiguous or not array.flags.writeable):
            got = (f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray)
                   else type(array).__name__)
            raise InvalidInputError(
                f"out.{name} must be a writable C-contiguous {np.dtype(dtype)} array of shape "
                f"{want}, got {got}", argument="out")
        views.append(array.reshape((count,) + want[len(shape):]))
    return views[0], views[1], views[2]
