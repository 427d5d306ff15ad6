"""``two_bone``: the analytic two-bone (law of cosines) solver, batched.

The engine-agnostic form of seeds 000/001 (two joints, two limbs), 002 (single joint) and
004 (pose-preserving leg IK). See ``docs/two_bone.md`` for the math and pictures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from limbik._validation import (
    FloatArray,
    as_float,
    as_points,
    as_positive,
    broadcast_shapes,
    check_finite,
    choice,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.solvers import _two_bone_kernels as _k
from limbik.solvers.solution import Solution, out_arrays
from limbik.tolerances import ANALYTIC_REACH_RTOL

__all__ = ["UNREACHABLE_POLICIES", "two_bone"]

#: Accepted values of ``two_bone(..., unreachable=...)``.
UNREACHABLE_POLICIES = ("extend", "push_root", "stretch")
_POLICY = {"extend": _k.POLICY_EXTEND, "push_root": _k.POLICY_PUSH_ROOT,
           "stretch": _k.POLICY_STRETCH}
_NO_POINT = np.zeros((1, 3))
_NO_QUAT = np.array([[0.0, 0.0, 0.0, 1.0]])
_ITER0 = np.zeros((), dtype=np.int64)
_ITER0.flags.writeable = False
_NDARRAY = np.ndarray
_F64 = np.dtype(np.float64)
_SHAPE3 = (3,)
_FLOAT_TYPES = (float, int, np.float64)
_NO_POINT3 = np.zeros(3)
_single: list[Any] = []


def _single_entry() -> Any:
    _single.append(_k.single_entry())
    return _single[0]


def two_bone(root: Any, target: Any, upper: Any, lower: Any, *, pole: Any = None,
             reference: Any = None, root_frame: Frame | None = None,
             unreachable: str = "extend", max_stretch: float = 1.0,
             out: Solution | None = None) -> Solution:
    """Place a two-bone limb (root → mid → end) so its end reaches ``target``.

    Parameters
    ----------
    root, target : array_like, shape (..., 3)
        The root joint (shoulder, hip) and the goal for the end joint (hand, ankle).
    upper, lower : array_like, shape (...)
        Bone lengths root→mid and mid→end, > 0.
    pole : array_like, shape (..., 3), optional
        A point. The mid joint lies in the plane of root, target and pole, on the
        pole's side (Unity's hint, Unreal's joint target).
    reference : array_like, shape (..., 3), optional
        The animated mid-joint position. Of all rotations of the limb about the
        root→target axis, the mid joint is the one closest to it (seed 004's θ).
    root_frame : Frame, batch shape (...), optional
        The seed's rolled plane about this frame (its −Z forward, −Y the mid joint's
        side for a target straight ahead): the mid joint is the elbow of
        :func:`limbik.roblox.solve_ik` with ``origin = root_frame`` placed at ``root``.
        Only the frame's rotation is used.
    unreachable : {"extend", "push_root", "stretch"}
        What to do with targets out of reach (see Notes).
    max_stretch : float, >= 1
        Largest bone scale for ``"stretch"``.
    out : Solution, optional
        A Solution of an earlier call with the same batch shape (e.g. the previous
        frame's) whose ``positions``, ``error`` and ``reached`` arrays are overwritten
        in place, so a per-frame loop allocates nothing. The returned Solution shares
        them; its ``iterations`` is a read-only zero view.

    At most one of ``pole``, ``reference`` and ``root_frame`` may be given. With none,
    the bend follows the rolled plane of the world axes (``root_frame`` = identity):
    a target straight ahead (−Z) bends the mid joint down (−Y), other directions roll
    smoothly from there, and only a target exactly behind (+Z) is singular (mid joint
    up, +Y). When a ``pole``/``reference`` lies on the root→target line (within 1e-9
    rad), or at the root, the bend falls back to that default.

    Returns
    -------
    Solution
        ``positions`` ``(..., 3, 3)``: root, mid, end. ``error`` ``(...)`` is the
        distance from the target to the end of the limb anchored at the *input* root,
        and ``reached`` is ``error <= 1e-9 * (upper + lower)``. ``iterations`` is 0.
        ``rotations`` is not set. A single limb given as float64 ``(3,)`` arrays and float
        lengths takes a compiled fast path; its ``reached``/``error`` are NumPy scalars.

    Notes
    -----
    Out of reach, with ``d = |target - root|``:

    - ``"extend"`` (default): the root stays. Too far (``d > upper + lower``): the limb
      is straight, pointing at the target. Too close (``d < |upper - lower|``): the limb
      folds flat along the root→target line with its end at ``|upper - lower|`` toward
      the target (the longer bone points at it, the shorter folds back), which is the
      closest reachable point.
    - ``"push_root"``: the same shapes, moved along the line so the end is on the
      target (seed 000); the moved root is ``positions[..., 0, :]``. Too far moves
      the root forward, too close moves it back.
    - ``"stretch"``: too far scales both bones by up to ``max_stretch`` (Unreal's
      AllowStretching), then extends; too close folds as in ``"extend"``.

    A target at the root (``d <= 1e-15 (upper + lower)``) uses the direction −Z of
    ``root_frame`` (world −Z without one). Every result is finite for finite input.
    """
    point = reference if pole is None else pole
    if (out is None and root_frame is None and (pole is None or reference is None)
            and type(root) is _NDARRAY and type(target) is _NDARRAY
            and root.shape == _SHAPE3 and target.shape == _SHAPE3
            and root.dtype is _F64 and target.dtype is _F64
            and (point is None or (type(point) is _NDARRAY and point.shape == _SHAPE3
                                   and point.dtype is _F64))
            and type(upper) in _FLOAT_TYPES and type(lower) in _FLOAT_TYPES
            and type(max_stretch) in _FLOAT_TYPES and type(unreachable) is str):
        # lean path for one limb given as float64 (3,) arrays and float lengths; anything
        # unusual (bad policy, non-finite input, bad lengths) falls through to the
        # batched path, which reports it
        policy = _POLICY.get(unreachable)
        if policy is not None:
            positions, err, ok, check = (_single[0] if _single else _single_entry())(
                root, target, _NO_POINT3 if point is None else point, float(upper),
                float(lower), _k.MODE_ROLLED if point is None else _k.MODE_POINT, policy,
                float(max_stretch), ANALYTIC_REACH_RTOL)
            if check == 0.0:
                return Solution._trusted(positions, np.bool_(ok), np.float64(err), _ITER0)
    given = [name for name, value in (("pole", pole), ("reference", reference),
                                      ("root_frame", root_frame)) if value is not None]
    if len(given) > 1:
        raise InvalidInputError(
            f"pass at most one of pole, reference and root_frame, got {' and '.join(given)}")
    if type(unreachable) is not str or unreachable not in _POLICY:
        choice(unreachable, "unreachable", UNREACHABLE_POLICIES)  # raises
    policy = _POLICY[unreachable]
    stretch = float(max_stretch) if type(max_stretch) is float else as_float(
        max_stretch, "max_stretch", minimum=1.0)
    if not (stretch >= 1.0 and math.isfinite(stretch)):
        as_float(max_stretch, "max_stretch", minimum=1.0)  # raises

    root_a = _array(root, "root", 1)
    target_a = _array(target, "target", 1)
    upper_a = _array(upper, "upper", 0)
    lower_a = _array(lower, "lower", 0)
    pairs = [("root", root_a.shape[:-1]), ("target", target_a.shape[:-1]),
             ("upper", upper_a.shape), ("lower", lower_a.shape)]
    mode = _k.MODE_ROLLED
    hint = _NO_POINT
    quat = _NO_QUAT
    point_name = ""
    if point is not None:
        point_name = "pole" if pole is not None else "reference"
        hint = _array(point, point_name, 1)
        pairs.append((point_name, hint.shape[:-1]))
        mode = _k.MODE_POINT
    elif root_frame is not None:
        if not isinstance(root_frame, Frame):
            raise InvalidInputError(
                f"root_frame must be a limbik Frame, got {type(root_frame).__name__}",
                argument="root_frame")
        quat = root_frame.quaternion
        pairs.append(("root_frame", quat.shape[:-1]))
        mode = _k.MODE_FRAME
    shape = max((pair[1] for pair in pairs), key=len)
    if any(pair[1] != shape and pair[1] != () for pair in pairs):
        shape = broadcast_shapes(*pairs)
    count = math.prod(shape)

    if out is None:
        positions = np.empty((count, 3, 3))
        error = np.empty(count)
        reached = np.empty(count, dtype=np.bool_)
    else:
        positions, error, reached = out_arrays(out, shape, 3)
    rows = (_rows(root_a, shape, 3), _rows(target_a, shape, 3), _rows(hint, shape, 3),
            _rows(quat, shape, 4), _rows(upper_a, shape, 0), _rows(lower_a, shape, 0),
            mode, policy, stretch, ANALYTIC_REACH_RTOL, positions, error, reached)
    # up to one chunk stays on the calling thread: no parallel kernel to compile or start
    check = (_k.solve_rows(0, count, *rows) if count <= _k.CHUNK else _k.solve_batch(*rows))
    if check != 0.0:
        _raise_for_bad_input(root_a, target_a, upper_a, lower_a, hint, point_name)
    if out is not None:  # no allocation: the caller's arrays, iterations a zero view
        return Solution._trusted(out.positions, out.reached, out.error,
                                 np.broadcast_to(_ITER0, shape))
    return Solution._trusted(positions.reshape(shape + (3, 3)), reached.reshape(shape),
                     error.reshape(shape), np.zeros(shape, dtype=np.int64))


def _array(value: Any, name: str, points: int) -> FloatArray:
    """float64 array, of points ``(..., 3)`` when ``points`` else of scalars; finiteness
    is checked in the kernel."""
    if type(value) is np.ndarray and value.dtype is _F64:
        array = value
    else:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return as_points(value, name) if points else as_positive(value, name)
    if points and (array.ndim == 0 or array.shape[-1] != 3):
        return as_points(array, name)  # raises the standard shape message
    return array


def _rows(array: FloatArray, shape: tuple[int, ...], width: int) -> FloatArray:
    """``array`` as contiguous rows ``(N or 1, width)`` (``(N or 1,)`` when width is 0)."""
    if array.size == (width or 1):
        return array.reshape((1, width) if width else (1,))
    batch = array.shape[:-1] if width else array.shape
    if batch != shape:
        array = np.broadcast_to(array, shape + ((width,) if width else ()))
    return np.ascontiguousarray(array).reshape((-1, width) if width else (-1,))


def _raise_for_bad_input(root: FloatArray, target: FloatArray, upper: FloatArray,
                         lower: FloatArray, hint: FloatArray, point_name: str) -> None:
    check_finite(root, "root")
    check_finite(target, "target")
    as_positive(upper, "upper")
    as_positive(lower, "lower")
    if point_name:
        check_finite(hint, point_name)
