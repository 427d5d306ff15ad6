"""``Solution``: the result type every limbik solver returns."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Solution", "chain_out_fields", "detached", "out_arrays", "written",
           "zero_iterations"]


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


def out_arrays(out: Any, shape: tuple[int, ...],
               fields: tuple[tuple[str, tuple[int, ...], Any], ...]) -> list[np.ndarray]:
    """Flat views ``(N, *trailing)`` (N = prod(shape)) of the arrays of a preallocated
    ``out`` Solution of batch ``shape``, for a solver to write into: one per
    ``(name, trailing shape, dtype)`` in ``fields``, e.g. ``("positions", (n, 3),
    np.float64)``.

    ``out`` must come from an earlier solve of the same batch shape, joint count and
    options: each named array must be a writable C-contiguous array of that dtype and
    shape ``shape + trailing``. A single solve's NumPy scalar (``reached``, ``error``
    of batch shape ``()``) cannot be written: a new array of one element stands in for
    it, and :func:`written` returns its value.
    """
    if not isinstance(out, Solution):
        from limbik.errors import InvalidInputError

        raise InvalidInputError(f"out must be a Solution, got {type(out).__name__}",
                                argument="out")
    count = 1
    for size in shape:
        count *= size
    flat = len(shape) == 1
    views = []
    for name, trailing, dtype in fields:
        array = getattr(out, name)
        want = shape + trailing
        if not want and isinstance(array, np.generic) and array.dtype == dtype:
            views.append(np.empty(1, dtype=dtype))
            continue
        if type(array) is not np.ndarray or array.shape != want or array.dtype != dtype:
            _refuse_out(name, array, want, dtype)
        flags = array.flags
        if not (flags.c_contiguous and flags.writeable):
            _refuse_out(name, array, want, dtype)
        views.append(array if flat else array.reshape((count,) + trailing))
    return views


@functools.lru_cache(maxsize=64)
def chain_out_fields(n_joints: int, rotations: bool = False
                     ) -> tuple[tuple[str, tuple[int, ...], Any], ...]:
    """The :func:`out_arrays` fields of an iterative chain solve (FABRIK, CCD): positions
    ``(n_joints, 3)``, reached, error, iterations, and rotations ``(n_joints, 4)``."""
    fields = (("positions", (n_joints, 3), np.float64), ("reached", (), np.bool_),
              ("error", (), np.float64), ("iterations", (), np.int64))
    return fields + ((("rotations", (n_joints, 4), np.float64),) if rotations else ())


def detached(inputs: list[Any], outputs: list[np.ndarray]) -> list[Any]:
    """``inputs`` with each array that may share memory with one of ``outputs`` (the
    views of an ``out``) copied: a solver then reads what the caller passed even where
    it writes into the same memory (``target=out.end_effector``, say)."""
    result = []
    for value in inputs:
        if isinstance(value, np.ndarray):
            owner = value.base is None
            for array in outputs:
                # two arrays that each own their memory overlap only if they are one
                if value is array or ((not owner or array.base is not None)
                                      and np.may_share_memory(value, array)):
                    value = value.copy()
                    break
        result.append(value)
    return result


def written(out: Solution, shape: tuple[int, ...],
            fields: tuple[tuple[str, tuple[int, ...], Any], ...],
            views: list[np.ndarray]) -> dict[str, Any]:
    """The results of a solve into ``out`` by name, for a new Solution: ``out``'s own
    arrays, which the ``views`` of :func:`out_arrays` were written into, or the new
    value where ``out`` held a NumPy scalar."""
    result = {}
    for (name, trailing, _), view in zip(fields, views, strict=True):
        array = getattr(out, name)
        result[name] = (array if isinstance(array, np.ndarray)
                        else view.reshape(shape + trailing)[()])
    return result


def _refuse_out(name: str, array: Any, want: tuple[int, ...], dtype: Any) -> None:
    from limbik.errors import InvalidInputError

    got = (f"{'read-only ' if not array.flags.writeable else ''}"
           f"{'' if array.flags.c_contiguous else 'non-contiguous '}{array.dtype} {array.shape}"
           if isinstance(array, np.ndarray) else type(array).__name__)
    raise InvalidInputError(
        f"out.{name} must be a writable C-contiguous {np.dtype(dtype)} array of shape "
        f"{want}, got {got}", argument="out")


@functools.lru_cache(maxsize=64)
def zero_iterations(shape: tuple[int, ...]) -> np.ndarray:
    """A read-only int64 zero array of ``shape`` (no memory per element; the same array
    for the same shape), the ``iterations`` of analytic solves into ``out``."""
    return np.broadcast_to(np.zeros((), dtype=np.int64), shape)
