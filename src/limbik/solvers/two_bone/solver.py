"""``two_bone``: the analytic two-bone (law of cosines) solver, batched.

The engine-agnostic form of seeds 000/001 (two joints, two limbs), 002 (single joint) and
004 (pose-preserving leg IK); ``docs/sources.md`` lists those tutorials. See
``docs/two_bone.md`` for the math and pictures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from limbik._runtime.batch_threads import run_range
from limbik._runtime.validation import (
    FloatArray,
    as_float,
    as_float_array,
    as_points,
    as_positive,
    as_quaternions,
    as_real_array,
    broadcast_shapes,
    check_finite,
    choice,
    read_only,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.vectors import norm, normalize
from limbik.solvers._scale import COMFORT_HIGH as _COMFORT_HIGH
from limbik.solvers._scale import COMFORT_LOW as _COMFORT_LOW
from limbik.solvers._scale import problem_units
from limbik.solvers.solution import Solution, detached, out_arrays, written, zero_iterations
from limbik.solvers.two_bone import _kernels as _k
from limbik.solvers.two_bone import pose as _pose
from limbik.tolerances import ANALYTIC_REACH_RTOL

__all__ = ["UNREACHABLE_POLICIES", "two_bone"]

#: The largest ``max_stretch``: stretched bones stay far from overflow at any target.
MAX_STRETCH = 1e6

#: ``max_stretch`` under ``unreachable="stretch"`` when none is given: Unreal's Two Bone
#: IK cap, 1.25 times the limb's length.
DEFAULT_MAX_STRETCH = 1.25

#: Accepted values of ``two_bone(..., unreachable=...)``.
UNREACHABLE_POLICIES = ("extend", "push_root", "stretch")
_POLICY = {"extend": _k.POLICY_EXTEND, "push_root": _k.POLICY_PUSH_ROOT,
           "stretch": _k.POLICY_STRETCH}
_NO_POINT = np.zeros((1, 3))
_NO_QUAT = np.array([[0.0, 0.0, 0.0, 1.0]])
_NO_POINT_ROWS = read_only(_NO_POINT)
_NO_QUAT_ROWS = read_only(_NO_QUAT)
_ITER0 = zero_iterations(())
_NDARRAY = np.ndarray
_F64 = np.dtype(np.float64)
#: The arrays a plain solve writes into ``out``.
_OUT_FIELDS = (("positions", (3, 3), _F64), ("error", (), _F64), ("reached", (), np.bool_))
_SHAPE3 = (3,)
_FLOAT_TYPES = (float, int, np.float64)
_NO_POINT3 = np.zeros(3)
_single: list[Any] = []


def _single_entry() -> Any:
    _single.append(_k.single_entry())
    return _single[0]


def two_bone(root: Any, target: Any, upper: Any, lower: Any, *, pole: Any = None,
             reference: Any = None, root_frame: Frame | None = None,
             unreachable: str = "extend", max_stretch: float | None = None,
             bend_axis: Any = None,
             reference_offsets: tuple[float, float] | None = None,
             softness: Any = 0.0, pose: Any = None,
             pose_rotations: Any = None, target_rotation: Any = None,
             target_offset: Frame | None = None, weight: Any = None,
             position_weight: Any = None, rotation_weight: Any = None,
             pole_weight: Any = None, stretch_start: float | None = None,
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
    max_stretch : float, 1 to ``MAX_STRETCH`` (1e6), optional
        Largest bone scale for ``"stretch"`` (other policies do not scale bones);
        default ``DEFAULT_MAX_STRETCH`` (1.25, Unreal's cap).
    pose : array_like, shape (..., 3, 3), optional
        The input (animated) pose: root, mid and end joint positions. Needed by the
        weights and rotations below; with it and no ``pole``/``reference``/``root_frame``
        the limb keeps the input pose's bend plane (``reference = pose[..., 1, :]``).
    pose_rotations : array_like, shape (..., 3, 4), optional
        World rotations (x, y, z, w) of the three joints in ``pose`` (default identity).
    target_rotation : array_like, shape (..., 4), optional
        World rotation for the end joint (hand, foot); needs ``pose``.
    target_offset : Frame, optional
        Maintain offset: the end joint's frame in the target's frame (batch shape
        broadcasting), e.g. ``Frame(target_rotation, target).inverse() @ Frame(end
        rotation, end)`` taken once when the target is attached. The end joint then goes
        to ``target + target_rotation · offset.position`` with rotation
        ``target_rotation · offset.quaternion`` (identity target rotation when none).
    weight : array_like, shape (...), in [0, 1], optional
        Overall weight: each joint moves this fraction of the way from ``pose`` to the
        solve (bones turn by slerp, the root and bone scale linearly). 0 returns
        ``pose`` and ``pose_rotations`` exactly; default 1.
    position_weight : array_like, shape (...), in [0, 1], optional
        The end joint aims at ``pose_end + position_weight · (target − pose_end)``.
    rotation_weight : array_like, shape (...), in [0, 1], optional
        The end joint's rotation is ``slerp(carried, target_rotation, rotation_weight)``,
        where ``carried`` is its input rotation turned with the lower bone.
    pole_weight : array_like, shape (...), in [0, 1], optional
        With a ``pole`` (without one it is refused): the bend plane turns this fraction
        of the (signed, within ±π) angle from the input pose's plane to the pole's;
        default 1.
    stretch_start : float, optional
        Unreal's stretch start ratio, with ``unreachable="stretch"``, in
        ``(0, max_stretch]``: bones start to scale when ``|target − root|`` exceeds
        ``stretch_start · (upper + lower)`` and reach ``max_stretch`` at
        ``max_stretch · (upper + lower)``, growing linearly in between.
    out : Solution, optional
        A Solution of an earlier call with the same batch shape (e.g. the previous
        frame's) whose ``positions``, ``error`` and ``reached`` arrays are overwritten
        in place, so a per-frame loop allocates no outputs (a single limb's ``error``
        and ``reached`` are new scalars). The returned Solution shares them; its
        ``iterations`` is a read-only zero view. With any pole mode, ``bend_axis`` and
        ``softness``; not with ``pose``, weights or rotations.

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
        distance from the target to the end of the limb, and ``reached`` is
        ``error <= 1e-9 * (upper + lower)``: the end is on the target. Under
        ``"push_root"`` every element is reached (the root moves instead) and
        ``root_offset`` ``(..., 3)`` is how far the root moved (zero where the target was
        in reach); other policies leave ``root_offset`` None. ``iterations`` is 0.
        ``rotations`` ``(..., 3, 4)`` is set when ``pose`` is given: the world rotations
        of the root, mid and end joints, each bone turned from ``pose`` by its minimal
        rotation (it keeps its input twist, see :func:`limbik.solvers.rotations.joint_rotations`)
        and the end joint taking ``target_rotation`` when given. With weights,
        ``error``/``reached`` are those of the full solve toward the weighted target.
        For a single limb (batch shape ``()``) ``reached`` and ``error`` are NumPy scalars
        (``np.bool_``, ``np.float64``); a single limb given as float64 ``(3,)`` arrays and
        float lengths takes a compiled fast path.

    Notes
    -----
    Out of reach, with ``d = |target - root|``:

    - ``"extend"`` (default): the root stays. Too far (``d > upper + lower``): the limb
      is straight, pointing at the target. Too close (``d < |upper - lower|``): the limb
      folds flat along the root→target line with its end at ``|upper - lower|`` toward
      the target (the longer bone points at it, the shorter folds back), which is the
      closest reachable point.
    - ``"push_root"``: the same shapes, moved along the line so the end is on the
      target (seed 000); the moved root is ``positions[..., 0, :]`` and the move is
      ``root_offset``. Too far moves the root forward, too close moves it back.
    - ``"stretch"``: too far scales both bones by up to ``max_stretch`` (Unreal's
      AllowStretching), then extends; too close folds as in ``"extend"``.

    A target at the root (``d <= 1e-15 (upper + lower)``) uses the direction −Z of
    ``root_frame`` (world −Z without one). Every result is finite for finite input.

    Anatomical bend and soft reach (see ``docs/two_bone.md``):

    bend_axis : array_like, shape (..., 3), optional
        The mid joint's hinge axis (a knee's or elbow's rotation axis, e.g. from the
        animated thigh's frame). The mid joint bends toward ``u × axis`` for the unit
        root→target direction ``u``: for a character facing +Z with its left at +X,
        ``bend_axis=(1, 0, 0)`` bends knees forward. Continuous in the target, and it
        never flips while the axis stays off the root→target line. With ``reference``
        too, the reference is followed where its offset from the root→target line is
        meaningful: below ``reference_offsets[0]`` of ``upper + lower`` the hinge alone
        sets the bend, above ``reference_offsets[1]`` the reference alone, and in
        between the bend turns smoothly (smoothstep) from one to the other. A noisy
        nearly straight reference thus cannot flip the bend.
    reference_offsets : (float, float), optional
        Default ``(0.03, 0.1)``; only with ``bend_axis`` and ``reference``.
    softness : float or array_like (...), within [0, 1]
        Soft IK near full extension (Unreal's Leg IK): beyond
        ``(1 - softness)·(upper + lower)`` the end's distance from the root approaches
        full reach exponentially, ``d' = r - s + s(1 - exp(-(d - r + s)/s))`` with
        ``r = upper + lower`` and ``s = softness·r``, so the limb never snaps straight.
        The end stops short of such targets (``error`` says by how much). 0 (default)
        is off; ignored where ``"stretch"`` stretches.
    """
    if max_stretch is None:
        max_stretch = DEFAULT_MAX_STRETCH if unreachable == "stretch" else 1.0
    if not (type(max_stretch) is float and 1.0 <= max_stretch <= MAX_STRETCH):
        max_stretch = as_float(max_stretch, "max_stretch", minimum=1.0, maximum=MAX_STRETCH)
    # from here on a Python float within [1, MAX_STRETCH]
    posed = not (pose is None and pose_rotations is None and target_rotation is None
                 and target_offset is None and weight is None and position_weight is None
                 and rotation_weight is None and pole_weight is None
                 and stretch_start is None)
    hinged = bend_axis is not None or reference_offsets is not None or not (
        type(softness) in _FLOAT_TYPES and softness == 0.0)
    if out is not None and posed:
        raise InvalidInputError("out is for solves without a pose, weights or rotations, "
                                "got it with those options", argument="out")
    if posed:
        return _two_bone_posed(root, target, upper, lower, pole, reference, root_frame,
                               unreachable, max_stretch, pose, pose_rotations,
                               target_rotation, target_offset, weight, position_weight,
                               rotation_weight, pole_weight, stretch_start,
                               {"bend_axis": bend_axis, "reference_offsets": reference_offsets,
                                "softness": softness})
    if hinged:
        return _two_bone_hinge(root, target, upper, lower, pole=pole, reference=reference,
                               root_frame=root_frame, unreachable=unreachable,
                               max_stretch=max_stretch, bend_axis=bend_axis,
                               reference_offsets=reference_offsets, softness=softness,
                               out=out)
    point = reference if pole is None else pole
    if (root_frame is None and (pole is None or reference is None)
            and type(root) is _NDARRAY and type(target) is _NDARRAY
            and root.shape == _SHAPE3 and target.shape == _SHAPE3
            and root.dtype is _F64 and target.dtype is _F64
            and (point is None or (type(point) is _NDARRAY and point.shape == _SHAPE3
                                   and point.dtype is _F64))
            and type(upper) in _FLOAT_TYPES and type(lower) in _FLOAT_TYPES
            and type(unreachable) is str and _comfortable(upper, lower)):
        # lean path for one limb given as float64 (3,) arrays and float lengths; anything
        # unusual (bad policy, non-finite input, bad lengths) falls through to the
        # batched path, which reports it
        policy = _POLICY.get(unreachable)
        if policy is not None:
            positions, err, ok, check = (_single[0] if _single else _single_entry())(
                root, target, _NO_POINT3 if point is None else point, float(upper),
                float(lower), _k.MODE_ROLLED if point is None else _k.MODE_POINT, policy,
                max_stretch, ANALYTIC_REACH_RTOL)
            if check == 0.0:
                solved = (_pushed(positions, root, target) if policy == _k.POLICY_PUSH_ROOT
                          else Solution._trusted(positions, np.bool_(ok), np.float64(err),
                                                 _ITER0))
                return solved if out is None else _into(out, solved)
    if root_frame is None and (pole is None or reference is None):
        lean = _lean_rows(root, target, point, upper, lower, unreachable, max_stretch, out)
        if lean is not None:
            return lean
    given = [name for name, value in (("pole", pole), ("reference", reference),
                                      ("root_frame", root_frame)) if value is not None]
    if len(given) > 1:
        raise InvalidInputError(
            f"pass at most one of pole, reference and root_frame, got {' and '.join(given)}")
    if type(unreachable) is not str or unreachable not in _POLICY:
        choice(unreachable, "unreachable", UNREACHABLE_POLICIES)  # raises
    policy = _POLICY[unreachable]
    stretch = max_stretch

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
    shape = broadcast_shapes(*pairs)
    count = math.prod(shape)
    (positions, error, reached), (root_a, target_a, hint, upper_a, lower_a) = _outputs(
        out, shape, [root_a, target_a, hint, upper_a, lower_a])
    units = _Units(root_a, target_a, upper_a, lower_a)
    scaled = units.points(root_a, target_a, hint if point is not None else None)
    rows = (_rows(scaled[0], shape, 3), _rows(scaled[1], shape, 3),
            _rows(hint if point is None else scaled[2], shape, 3),
            _rows(quat, shape, 4), _rows(units.lengths(upper_a), shape, 0),
            _rows(units.lengths(lower_a), shape, 0),
            mode, policy, stretch, ANALYTIC_REACH_RTOL, positions, error, reached)
    check = sum(run_range(_k.solve_rows, count, lambda: rows, smallest=_k.CHUNK,
                          granule=_k.GRANULE))
    if check != 0.0:
        _raise_for_bad_input(root_a, target_a, upper_a, lower_a, hint, point_name)
    return _solved(positions, error, reached, shape, policy, root_a, target_a, units, out)


def _outputs(out: Solution | None, shape: tuple[int, ...], inputs: list[Any]
             ) -> tuple[list[np.ndarray], list[Any]]:
    """``positions (N, 3, 3)``, ``error (N,)`` and ``reached (N,)`` to solve into: new, or
    ``out``'s own (N = prod(shape)); and ``inputs``, those in out's memory copied so they
    are read as they were given."""
    if out is None:
        count = math.prod(shape)
        return [np.empty((count, 3, 3)), np.empty(count),
                np.empty(count, dtype=np.bool_)], inputs
    views = out_arrays(out, shape, _OUT_FIELDS)
    return views, detached(inputs, views[:2])


def _written(out: Solution, shape: tuple[int, ...], arrays: list[np.ndarray],
             root_offset: Any = None) -> Solution:
    """The Solution of a solve into ``out`` through the ``arrays`` of :func:`_outputs`."""
    return Solution._trusted(**written(out, shape, _OUT_FIELDS, arrays),
                             iterations=zero_iterations(shape), root_offset=root_offset)


def _into(out: Any, solved: Solution) -> Solution:
    """A single limb's ``solved`` copied into ``out`` (its positions array; the scalars
    ``error`` and ``reached`` are new, as for any single limb)."""
    views = out_arrays(out, (), _OUT_FIELDS)
    views[0][...] = solved.positions
    views[1][...] = solved.error
    views[2][...] = solved.reached
    return Solution._trusted(**written(out, (), _OUT_FIELDS, views),
                             iterations=solved.iterations, root_offset=solved.root_offset)


def _comfortable(upper: Any, lower: Any) -> bool:
    """Whether the reach ``upper + lower`` (numbers) lies in the range solved unscaled."""
    try:
        return bool(_COMFORT_LOW <= upper + lower <= _COMFORT_HIGH)
    except OverflowError:  # an int beyond the float range: the general path reports it
        return False


def _lean_rows(root: Any, target: Any, point: Any, upper: Any, lower: Any, unreachable: Any,
               max_stretch: Any, out: Any) -> Solution | None:
    """The plain solve of a small batch given as C-contiguous float64 ``(B, 3)`` rows
    (``point`` None or the same), lengths as floats or ``(B,)`` float64 arrays of a
    comfortable size, the "extend" or "stretch" policy: the kernel on the calling thread,
    without broadcasting or rescaling (a per-frame loop over a few limbs). None when the
    call is not of that form or an input is bad: the general path then solves or reports
    it, with the same bits."""
    if not (type(root) is _NDARRAY and type(target) is _NDARRAY and root.ndim == 2
            and root.shape == target.shape and root.shape[1] == 3
            and 0 < root.shape[0] < 2 * _k.CHUNK and root.dtype is _F64
            and target.dtype is _F64 and root.flags.c_contiguous
            and target.flags.c_contiguous and type(unreachable) is str):
        return None
    policy = _POLICY.get(unreachable)
    if policy is None or policy == _k.POLICY_PUSH_ROOT:
        return None
    count = root.shape[0]
    if not (point is None or (type(point) is _NDARRAY and point.shape == root.shape
                              and point.dtype is _F64 and point.flags.c_contiguous)):
        return None
    lengths = []
    try:
        for value in (upper, lower):
            if type(value) in _FLOAT_TYPES:
                lengths.append(np.array((value,), dtype=_F64))
            elif (type(value) is _NDARRAY and value.shape == (count,) and value.dtype is _F64
                  and value.flags.c_contiguous):
                lengths.append(value)
            else:
                return None
        reach = upper + lower
    except OverflowError:  # an int beyond the float range: the general path reports it
        return None
    if type(reach) is _NDARRAY:
        if not (_COMFORT_LOW <= reach.min() and reach.max() <= _COMFORT_HIGH):
            return None
    elif not _COMFORT_LOW <= reach <= _COMFORT_HIGH:
        return None
    if out is None:
        positions, error, reached = (np.empty((count, 3, 3)), np.empty(count),
                                     np.empty(count, dtype=np.bool_))
    else:  # inputs in out's memory are read as they were given
        positions, error, reached = out_arrays(out, (count,), _OUT_FIELDS)
        root, target, point, lengths[0], lengths[1] = detached(
            [root, target, point, lengths[0], lengths[1]], [positions, error])
    hint = _NO_POINT_ROWS if point is None else read_only(point)
    check = _k.solve_rows(0, count, read_only(root), read_only(target), hint, _NO_QUAT_ROWS,
                          read_only(lengths[0]), read_only(lengths[1]),
                          _k.MODE_ROLLED if point is None
                          else _k.MODE_POINT, policy, max_stretch, ANALYTIC_REACH_RTOL,
                          positions, error, reached)
    if check != 0.0:
        return None
    if out is not None:
        return Solution._trusted(out.positions, out.reached, out.error,
                                 zero_iterations((count,)))
    return Solution._trusted(positions, reached, error, np.zeros(count, dtype=np.int64))


def _pushed(positions: FloatArray, root: FloatArray, target: FloatArray) -> Solution:
    """The ``push_root`` result: the end is placed on the target, so every element is
    reached; ``error`` is the end's distance from the target (rounding only) and
    ``root_offset`` how far the root moved."""
    error = norm(positions[..., 2, :] - target)  # finite at any finite scale
    shape = error.shape
    return Solution._trusted(positions, np.ones(shape, dtype=np.bool_)[()], error[()],
                             np.zeros(shape, dtype=np.int64),
                             root_offset=positions[..., 0, :] - root)


def _array(value: Any, name: str, points: int) -> FloatArray:
    """float64 array, of points ``(..., 3)`` when ``points`` else of scalars; finiteness
    is checked in the kernel."""
    if type(value) is np.ndarray and value.dtype is _F64:
        array = value
    else:
        array = as_real_array(value, name, (3,) if points else ())
    if points and (array.ndim == 0 or array.shape[-1] != 3):
        return as_points(array, name)  # raises the standard shape message
    return array


def _rows(array: FloatArray, shape: tuple[int, ...], width: int) -> FloatArray:
    """``array`` as read-only contiguous rows ``(N or 1, width)`` (``(N or 1,)`` when
    width is 0)."""
    if array.size == (width or 1):
        return read_only(array.reshape((1, width) if width else (1,)))
    batch = array.shape[:-1] if width else array.shape
    if batch != shape:
        array = np.broadcast_to(array, shape + ((width,) if width else ()))
    return read_only(np.ascontiguousarray(array).reshape((-1, width) if width else (-1,)))


def _raise_for_bad_input(root: FloatArray, target: FloatArray, upper: FloatArray,
                         lower: FloatArray, hint: FloatArray, point_name: str) -> None:
    check_finite(root, "root")
    check_finite(target, "target")
    as_positive(upper, "upper")
    as_positive(lower, "lower")
    if point_name:
        check_finite(hint, point_name)


def _two_bone_posed(root: Any, target: Any, upper: Any, lower: Any, pole: Any,
                    reference: Any, root_frame: Frame | None, unreachable: str,
                    max_stretch: float, pose: Any, pose_rotations: Any,
                    target_rotation: Any, target_offset: Frame | None, weight: Any,
                    position_weight: Any, rotation_weight: Any, pole_weight: Any,
                    stretch_start: float | None, bend: dict[str, Any]) -> Solution:
    """``two_bone`` with an input pose, weights, a target rotation or a stretch start;
    ``bend`` holds the ``bend_axis``/``reference_offsets``/``softness`` keywords."""
    if pole_weight is not None and pole is None:
        raise InvalidInputError("pole_weight turns the bend plane toward pole=, got no pole",
                                argument="pole_weight")
    goal = _array(target, "target", 1)
    goal_rotation = (None if target_rotation is None
                     else as_quaternions(target_rotation, "target_rotation"))
    if target_offset is not None:
        goal, goal_rotation = _pose.offset_target(goal, goal_rotation, target_offset)
    upper_a, lower_a = _array(upper, "upper", 0), _array(lower, "lower", 0)
    if stretch_start is not None:
        if unreachable != "stretch":
            raise InvalidInputError(
                f"stretch_start needs unreachable='stretch', got {unreachable!r}",
                argument="stretch_start")
        top = max_stretch  # checked by two_bone
        start = as_float(stretch_start, "stretch_start", minimum=0.0, exclusive=True)
        if start > top:
            raise InvalidInputError(
                f"stretch_start must be <= max_stretch ({top}), got {start}",
                argument="stretch_start")
        check_finite(goal, "target")
        as_positive(upper_a, "upper")
        as_positive(lower_a, "lower")
        scale = _pose.stretch_scale(_array(root, "root", 1), goal, upper_a + lower_a,
                                    start, top)
        upper_a, lower_a = upper_a * scale, lower_a * scale
        unreachable, max_stretch = "extend", 1.0
    if pose is None:
        needs = [name for name, value in (
            ("pose_rotations", pose_rotations), ("target_rotation", target_rotation),
            ("weight", weight), ("position_weight", position_weight),
            ("rotation_weight", rotation_weight), ("pole_weight", pole_weight))
            if value is not None]
        if needs:
            raise InvalidInputError(
                f"{needs[0]} needs pose= (the input joint positions, shape (..., 3, 3))",
                argument=needs[0])
        return two_bone(root, goal, upper_a, lower_a, pole=pole, reference=reference,
                        root_frame=root_frame, unreachable=unreachable,
                        max_stretch=max_stretch, **bend)
    start_pose, start_rotations = _pose.as_pose(pose, pose_rotations)
    broadcast_shapes(("root", _array(root, "root", 1).shape[:-1]),  # errors name pose=
                     ("target", np.shape(goal)[:-1]), ("pose", start_pose.shape[:-2]))
    if position_weight is not None:
        w = _pose.as_weight(position_weight, "position_weight")[..., None]
        end = start_pose[..., 2, :]
        goal = np.where(w == 1.0, goal, end + w * (goal - end))
    bend_given = pole is not None or reference is not None or root_frame is not None
    solved = two_bone(root, goal, upper_a, lower_a, pole=pole,
                      reference=reference if bend_given else start_pose[..., 1, :],
                      root_frame=root_frame, unreachable=unreachable,
                      max_stretch=max_stretch, **bend)
    positions = solved.positions
    # the blends below in units of the reach (exact, 2^k): their epsilons are absolute
    reach = np.asarray(upper_a + lower_a, dtype=np.float64)
    # per limb (exact, 2^k): a limb's blends do not depend on what it is batched with
    unit = np.where((reach > 0.0) & np.isfinite(reach),
                    np.ldexp(1.0, np.frexp(reach)[1] - 1), 1.0)[..., None, None]
    mid_pose = start_pose[..., 1, :]  # as given: the pole blend's own solve follows it
    positions, start_pose = positions / unit, start_pose / unit
    if pole is not None and pole_weight is not None:
        t = _pose.as_weight(pole_weight, "pole_weight")
        own = two_bone(root, goal, upper_a, lower_a, reference=mid_pose,
                       unreachable=unreachable, max_stretch=max_stretch, **bend).positions / unit
        mid = _pose.blend_bend(positions[..., 0, :], own[..., 1, :], positions[..., 1, :],
                               positions[..., 2, :], t)
        positions = np.stack(np.broadcast_arrays(
            positions[..., 0, :], mid, positions[..., 2, :]), axis=-2)
    turn_weight = (np.ones(()) if rotation_weight is None
                   else _pose.as_weight(rotation_weight, "rotation_weight"))
    blend = np.ones(()) if weight is None else _pose.as_weight(weight, "weight")
    out_p, out_q = _pose.posed(positions, start_pose, start_rotations, goal_rotation,
                               turn_weight, blend)
    out_p *= unit
    shape = out_p.shape[:-2]
    return Solution._trusted(out_p, np.broadcast_to(solved.reached, shape).copy(),
                             np.broadcast_to(solved.error, shape).copy(),
                             np.zeros(shape, dtype=np.int64), out_q)


def _two_bone_hinge(root: Any, target: Any, upper: Any, lower: Any, *, pole: Any,
                    reference: Any, root_frame: Frame | None, unreachable: str,
                    max_stretch: float, bend_axis: Any,
                    reference_offsets: tuple[float, float] | None, softness: Any,
                    out: Solution | None = None) -> Solution:
    """:func:`two_bone` with ``bend_axis`` and/or ``softness`` (into ``out``'s arrays)."""
    if type(softness) is float and 0.0 <= softness <= 1.0:  # the usual case, checked
        soft = np.array(softness)
    else:
        soft = as_float_array(softness, "softness")  # finite, or it raises
        if not np.all((soft >= 0.0) & (soft <= 1.0)):
            raise InvalidInputError("softness must be within [0, 1] (a fraction of upper + "
                                    f"lower), got {softness!r}", argument="softness")
    if bend_axis is None:
        if reference_offsets is not None:
            raise InvalidInputError("reference_offsets needs bend_axis, got bend_axis=None",
                                    argument="reference_offsets")
        # soft reach alone: move the target along the root→target line, then solve
        root_a = as_points(root, "root")
        target_a = as_points(target, "target")
        if out is not None:  # read as given, though the solve writes into out
            out_arrays(out, (), ())  # out must be a Solution (its shapes: checked below)
            mine = [a for a in (out.positions, out.error) if isinstance(a, np.ndarray)]
            root_a, target_a = detached([root_a, target_a], mine)
        reach = as_positive(upper, "upper") + as_positive(lower, "lower")
        delta = target_a - root_a
        dist = norm(delta)  # finite at any finite distance
        s = soft * reach
        start = reach - s
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            eased = start + s * (1.0 - np.exp(-(dist - start) / np.where(s > 0, s, 1.0)))
            goal = np.where((s > 0) & (dist > start), eased, dist)
            scale = np.where(dist > 0, goal / np.where(dist > 0, dist, 1.0), 1.0)
        if unreachable == "stretch" and max_stretch > 1.0:
            scale = np.ones_like(scale)
        solved = two_bone(root_a, root_a + delta * scale[..., None], upper, lower, pole=pole,
                          reference=reference, root_frame=root_frame, unreachable=unreachable,
                          max_stretch=max_stretch, out=out)
        return _remeasure(solved, root_a, target_a, reach)
    given = [name for name, value in (("pole", pole), ("root_frame", root_frame))
             if value is not None]
    if given:
        raise InvalidInputError(f"bend_axis cannot be combined with {given[0]}",
                                argument="bend_axis")
    if type(unreachable) is not str or unreachable not in _POLICY:
        choice(unreachable, "unreachable", UNREACHABLE_POLICIES)  # raises
    stretch = max_stretch  # checked by two_bone
    lo, hi = _k.REFERENCE_OFFSETS if reference_offsets is None else reference_offsets
    lo = as_float(lo, "reference_offsets", minimum=0.0)
    hi = as_float(hi, "reference_offsets", minimum=0.0)
    if hi < lo:
        raise InvalidInputError(f"reference_offsets must be (low, high) with low <= high, "
                                f"got {reference_offsets!r}", argument="reference_offsets")
    root_a = _array(root, "root", 1)
    target_a = _array(target, "target", 1)
    upper_a = _array(upper, "upper", 0)
    lower_a = _array(lower, "lower", 0)
    # unit axes (at any length from 1e-12 up; a shorter one is refused below as zero)
    axis_a = normalize(_array(bend_axis, "bend_axis", 1))
    pairs = [("root", root_a.shape[:-1]), ("target", target_a.shape[:-1]),
             ("upper", upper_a.shape), ("lower", lower_a.shape),
             ("bend_axis", axis_a.shape[:-1]), ("softness", soft.shape)]
    ref_a = _NO_POINT
    if reference is not None:
        ref_a = _array(reference, "reference", 1)
        pairs.append(("reference", ref_a.shape[:-1]))
    shape = broadcast_shapes(*pairs)
    (positions, error, reached), (root_a, target_a, axis_a, ref_a, upper_a, lower_a) = _outputs(
        out, shape, [root_a, target_a, axis_a, ref_a, upper_a, lower_a])
    units = _Units(root_a, target_a, upper_a, lower_a)
    scaled = units.points(root_a, target_a, ref_a if reference is not None else None)
    check = _k.solve_batch_hinge(
        _rows(scaled[0], shape, 3), _rows(scaled[1], shape, 3), _rows(axis_a, shape, 3),
        _rows(ref_a if reference is None else scaled[2], shape, 3),
        _rows(units.lengths(upper_a), shape, 0), _rows(units.lengths(lower_a), shape, 0),
        reference is not None, lo, hi, _rows(np.ascontiguousarray(soft, dtype=np.float64),
                                             shape, 0),
        _POLICY[unreachable], stretch, ANALYTIC_REACH_RTOL, positions, error, reached)
    if check != 0.0:
        _raise_for_bad_input(root_a, target_a, upper_a, lower_a, ref_a,
                             "reference" if reference is not None else "")
        check_finite(axis_a, "bend_axis")
        raise InvalidInputError("bend_axis must be non-zero vectors (norm >= 1e-12), got a "
                                "shorter one", argument="bend_axis")
    return _solved(positions, error, reached, shape, _POLICY[unreachable], root_a, target_a,
                   units, out)


class _Units:
    """Per limb, the power of two near its reach ``upper + lower`` where that lies outside
    [2^-100, 2^100] (exact, 2^k), to solve each limb in units of its own size whatever it
    is batched with. A limb whose scaled points would pass 2^600 (or overflow) is solved
    relative to its root, and a target (or bend point) whose scaled offset from the root
    still would is moved, along its direction from the root, to 2^600 units away (such a
    target is far out of reach, and a bend point counts by its direction only); its
    limb's error is then measured from the real target."""

    def __init__(self, root: FloatArray, target: FloatArray, upper: FloatArray,
                 lower: FloatArray) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            unit = problem_units(upper + lower) if upper.size and lower.size else np.ones(())
        self.scaled = bool((unit != 1.0).any())
        self.unit = unit
        self.far: np.ndarray | None = None  # limbs whose target was moved nearer
        self.origin: np.ndarray | None = None  # limbs solved relative to their root

    def lengths(self, length: FloatArray) -> FloatArray:
        """``length`` in each limb's units."""
        return length / self.unit if self.scaled else length

    def points(self, root: FloatArray, target: FloatArray, hint: FloatArray | None
               ) -> list[FloatArray]:
        """root, target (and hint where given) in each limb's units; a limb whose scaled
        points would overflow is solved relative to its root."""
        if not self.scaled:
            return [root, target] if hint is None else [root, target, hint]
        u3 = self.unit[..., None]
        points = [target] if hint is None else [target, hint]
        with np.errstate(over="ignore", invalid="ignore"):
            out = [root / u3] + [point / u3 for point in points]
            # where a scaled point is huge (or overflowed) though the input is finite
            huge = np.zeros(np.broadcast_shapes(*(a.shape[:-1] for a in out)), dtype=bool)
            for given, scaled in zip([root, *points], out, strict=True):
                huge |= (np.max(np.abs(scaled), axis=-1) > _FAR) & np.isfinite(given).all(-1)
            if not huge.any():
                return out
            self.origin = huge  # these limbs: relative to the root
            for k, point in enumerate(points):
                offset = (point - root) / u3
                size = np.sqrt((offset * offset).sum(axis=-1))
                big = huge & ~(size <= _FAR) & np.isfinite(point).all(-1) \
                    & np.isfinite(root).all(-1)
                if big.any():
                    # the direction, from the offset scaled down first (no overflow)
                    top = np.max(np.abs(point - root), axis=-1, keepdims=True)
                    small = (point - root) / np.where(top > 0.0, top, 1.0)
                    small = small / np.sqrt((small * small).sum(axis=-1, keepdims=True))
                    offset = np.where(big[..., None], small * _FAR, offset)
                    if k == 0:
                        self.far = big
                out[k + 1] = np.where(huge[..., None], offset, out[k + 1])
            out[0] = np.where(huge[..., None], 0.0, out[0])
        return out

    def restore(self, positions: FloatArray, error: FloatArray, shape: tuple[int, ...],
                root: FloatArray, target: FloatArray) -> None:
        """Kernel rows ``positions (N, 3, 3)`` and ``error (N,)`` back in the caller's
        units, in place."""
        if not self.scaled:
            return
        unit = np.broadcast_to(self.unit, shape).reshape(-1)
        positions *= unit[:, None, None]
        if self.origin is not None:
            moved = np.broadcast_to(self.origin, shape).reshape(-1)
            positions[moved] += np.broadcast_to(root, shape + (3,)).reshape(-1, 3)[moved, None]
        error *= unit
        if self.far is not None:
            far = np.broadcast_to(self.far, shape).reshape(-1)
            if far.any():
                goal = np.broadcast_to(target, shape + (3,)).reshape(-1, 3)[far]
                with np.errstate(over="ignore"):
                    gap = positions[far, 2] - goal
                top = np.max(np.abs(gap), axis=-1)
                top = np.where(top > 0.0, top, 1.0)
                error[far] = top * np.sqrt(((gap / top[:, None]) ** 2).sum(axis=-1))


#: How far (in a limb's units) a target too far to scale is placed: beyond any reach,
#: and its square still finite.
_FAR = 2.0**600


def _solved(positions: FloatArray, error: FloatArray, reached: np.ndarray,
            shape: tuple[int, ...], policy: int, root: FloatArray, target: FloatArray,
            units: _Units, out: Solution | None) -> Solution:
    """The Solution of a batched solve's kernel outputs (rows, in the limbs' units of
    ``units``; ``root`` and ``target`` as given), or ``out`` filled with them; under
    ``push_root`` every element is reached, with its ``root_offset``."""
    units.restore(positions, error, shape, root, target)
    if policy == _k.POLICY_PUSH_ROOT:
        pushed = _pushed(positions.reshape(shape + (3, 3)), root, target)
        if out is None:
            return pushed
        error[:] = np.ravel(pushed.error)
        reached[:] = True
        return _written(out, shape, [positions, error, reached], pushed.root_offset)
    if out is not None:  # no allocation: the caller's arrays, iterations a zero view
        return _written(out, shape, [positions, error, reached])
    # a single limb gets NumPy scalars, as on the fast path
    return Solution._trusted(positions.reshape(shape + (3, 3)), reached.reshape(shape)[()],
                             error.reshape(shape)[()], np.zeros(shape, dtype=np.int64))


def _remeasure(solved: Solution, root: FloatArray, target: FloatArray, reach: Any
               ) -> Solution:
    """``solved`` with ``error``/``reached`` measured from the real ``target`` (written into
    ``solved``'s own arrays where it has them: an ``out``)."""
    end = solved.positions[..., 2, :] - (solved.positions[..., 0, :] - root)
    error = norm(end - target)
    reached = error <= ANALYTIC_REACH_RTOL * np.asarray(reach)
    if (isinstance(solved.error, np.ndarray) and solved.error.shape == error.shape
            and solved.error.flags.writeable):
        solved.error[...] = error
        solved.reached[...] = reached
        return solved
    return Solution._trusted(solved.positions, reached, error, solved.iterations)
