"""``fabrik``: Forward And Backward Reaching IK on batches of point chains (seed 003).

Each iteration sets the end effector on the target and walks back to the root
keeping bone lengths (backward reaching), then puts the root back and walks out
again (forward reaching), applying joint constraints on the way out. A target
beyond the chain's total length gives the straight chain pointing at it, with
no iterations, as in the seed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik._runtime.batch_threads import run_batch
from limbik._runtime.validation import (
    FloatArray,
    as_directions,
    as_flag,
    as_float,
    as_float_array,
    as_int,
    as_joint_rotations,
    as_points,
    as_real_array,
    broadcast_shapes,
    choice,
)
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.geometry.frame import Frame
from limbik.solvers._scale import element_units, unit_groups
from limbik.solvers.constraints import Constraint, encode_constraints
from limbik.solvers.fabrik import _kernels as K
from limbik.solvers.fabrik.polish import can_polish, polish
from limbik.solvers.solution import Solution, chain_out_fields, detached, out_arrays, written
from limbik.tolerances import ITERATIVE_RTOL, MAX_ITERATIONS

__all__ = ["fabrik"]

_IDENTITY_FRAME = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
_NO_DIRECTION = np.zeros((1, 3))
_NO_ROTATION = np.array([0.0, 0.0, 0.0, 1.0])


#: Chains per chunk at least where a batch is spread over threads (a chain takes about a
#: microsecond, so a chunk 0.05 ms or more). Smaller batches run on the calling thread.
SMALLEST_CHUNK = 64

#: Polish elliptical-cone chains the arcs leave short (off only to measure without it)
_POLISH = True


def root_frame_rows(root_frame: Frame | None) -> tuple[FloatArray, bool]:
    """Rows (look, up, right) of ``root_frame`` and whether bone 0 is constrained."""
    if root_frame is None:
        return _IDENTITY_FRAME, False
    if not isinstance(root_frame, Frame) or root_frame.shape != ():
        raise InvalidInputError(
            "root_frame must be a single (unbatched) Frame or None, got "
            f"{type(root_frame).__name__}"
            + (f" of shape {root_frame.shape}" if isinstance(root_frame, Frame) else ""),
            argument="root_frame")
    rows = np.array([root_frame.look, root_frame.up, root_frame.right], dtype=np.float64)
    return rows, True


def kernel_limits(kinds: np.ndarray, params: FloatArray, axes: FloatArray,
                  constrain_root: bool, seed_frames: bool, from_root: np.ndarray
                  ) -> tuple[np.ndarray, FloatArray, FloatArray, bool, bool] | None:
    """The kernels' ``limits`` argument: None when no constraint applies, so that an
    unconstrained solve compiles and runs no constraint code.

    ``from_root`` (n_bones,) bool marks the bones that leave the root: their
    constraints apply only with a root frame (``constrain_root``); without one a
    ``UserWarning`` names them and ``root_frame``.
    """
    ignored = np.flatnonzero((kinds != K.FREE) & from_root) if not constrain_root else ()
    if len(ignored):
        warnings.warn(
            f"constraints[{', '.join(map(str, ignored))}] limit bones leaving the root "
            "against root_frame, and are ignored without one: pass root_frame= (e.g. "
            "Frame.identity()) to apply them, or None in their place", UserWarning,
            stacklevel=3)
    if not np.any((kinds != K.FREE) & (constrain_root | ~from_root)):
        return None
    return kinds, params, axes, bool(constrain_root), bool(seed_frames)


def _as_array(value: Any, name: str) -> FloatArray:
    """``value`` as a float64 array, without the finiteness scan (the kernels check that)."""
    return as_real_array(value, name)


def _close_gaps(p: FloatArray, t: FloatArray, tol_abs: float, tol_rel: float,
                reached: np.ndarray, error: FloatArray) -> None:
    """``fabrik(..., close_gap=True)``: reshape, in place, the chains of ``p (B, n, 3)``
    that stopped short of targets ``t (B, 3)`` within their reach."""
    from limbik.solvers.fabrik.close_gap import close_gap

    short = np.flatnonzero(~reached)
    if short.size == 0:
        return
    shaped, closed = close_gap(p[short], t[short], tol_abs, tol_rel)
    done = short[closed]
    p[done] = shaped[closed]
    error[done] = np.linalg.norm(p[done, -1] - t[done], axis=-1)
    reached[done] = True


def check_tolerance(tolerance: Any) -> tuple[float, float]:
    """(absolute tolerance or -1, relative tolerance) for the kernels."""
    if tolerance is None:
        return -1.0, ITERATIVE_RTOL
    return as_float(tolerance, "tolerance", minimum=0.0), 0.0


def check_cone_frames(value: Any) -> bool:
    """True for seed 003's look-at cone frames, False for carried frames."""
    return choice(value, "cone_frames", ("carried", "seed")) == "seed"


def check_min_improvement(value: Any) -> float:
    """A finite float, or ``-inf`` (never stop early)."""
    if isinstance(value, float | int | np.floating) and value == -np.inf:
        return -np.inf
    return as_float(value, "min_improvement")


def fabrik(positions: Any, target: Any, *, tolerance: float | None = None,
           max_iterations: int = MAX_ITERATIONS, min_improvement: float = 0.0,
           constraints: Sequence[Constraint | None] | None = None, fixed_root: bool = True,
           direction: Any = None, root_frame: Frame | None = None,
           cone_frames: str = "carried", return_rotations: bool = False,
           rotations: Any = None, close_gap: bool = False,
           out: Solution | None = None) -> Solution:
    """Solve point chains with FABRIK, batched over leading dimensions.

    Parameters
    ----------
    positions : array_like, shape (..., n, 3)
        Current joint positions, root first (n >= 2). Bone lengths are taken
        from them, and they are the starting pose.
    target : array_like, shape (..., 3)
        End-effector targets; batch shapes broadcast with ``positions``.
    tolerance : float, optional
        Reach tolerance, a distance in the data's units. Default:
        ``ITERATIVE_RTOL`` (1e-6) times each chain's total length.
    max_iterations : int
        Cap on backward+forward iterations per chain.
    min_improvement : float
        Stop when one iteration lowers the error by less than this (a
        distance). The default 0 stops only when an iteration makes it worse;
        ``-inf`` never stops early.
    constraints : sequence of Constraint or None, optional
        One entry per bone (n − 1), ``None`` for a free bone. Entry i limits
        bone i relative to bone i − 1's frame; entry 0 is relative to
        ``root_frame``, and without one it is ignored with a ``UserWarning`` (see
        :mod:`limbik.solvers.constraints`).
    fixed_root : bool
        Keep the root in place (default). When False the root follows the
        backward pass, so the chain translates and always reaches.
    direction : array_like, shape (..., 3), optional
        Desired direction of the last bone. The backward pass lays the last
        bone along it, and the error becomes the larger of the end-effector
        distance and the distance of the last bone's start from
        ``target − length · direction``.
    root_frame : Frame, optional
        One unbatched frame that starts the bone frames carried along the chain
        (default: identity) and against which bone 0 is constrained.
    cone_frames : {"carried", "seed"}
        The frame each constraint is measured in. ``"carried"`` (default): the bone
        frames carried along the chain with minimal twist (see
        :mod:`limbik.solvers.constraints`). ``"seed"``: seed 003's
        ``CFrame.new(joint[i − 1], joint[i])``, the look-at frame of the parent bone
        with world +Y as up, rebuilt at every joint. Bone 0 uses ``root_frame``
        either way.
    return_rotations : bool
        Also fill ``Solution.rotations`` ``(..., n, 4)``: the joints' world rotations,
        each bone turned from its input pose by its minimal rotation, so it keeps its
        input twist (the rule of ``two_bone`` and ``ccd``; see
        :func:`limbik.joint_rotations`). With ``constraints`` each bone's turn is
        instead carried down the chain like the frames the limits are measured in
        (``Q_i = swing(Q_{i−1} · input_dir → solved_dir) · Q_{i−1}``, see
        :func:`limbik.rotations_from_positions`): every joint's rotation relative to
        its parent differs from its input one by a swing alone, so no joint twists
        and a ``SwingTwistLimit``'s twist range (which includes 0) holds. The end joint
        turns with the last bone. Without ``rotations`` the input rotations are the
        identity, so row ``j < n − 1`` is bone ``j``'s turn from the input pose.
    rotations : array_like, shape (..., n, 4), optional
        World rotations (x, y, z, w) of the joints in the input pose; implies
        ``return_rotations``.
    close_gap : bool
        Off by default, so results are FABRIK's own. Near the edges of a chain's reach
        (nearly straight, or folded) FABRIK converges slowly, and after
        ``max_iterations`` a few percent of random reachable targets are still short.
        With ``close_gap`` such a chain is then reshaped to reach the target: every bend
        angle is scaled by the one factor nearest 1 that puts the end at the target's
        distance, and the chain is turned about the root onto it (bone lengths kept;
        the change is a modest multiple of the gap). A chain reaching more than 4 times
        the target's distance from the root is left as it is (the turn would swing it
        wide). For chains with a fixed root and no ``constraints`` or ``direction``.
    out : Solution, optional
        A Solution of an earlier call with the same batch shape, joint count and
        ``return_rotations`` (e.g. the previous frame's), whose ``positions``,
        ``reached``, ``error``, ``iterations`` (and ``rotations``) arrays are
        overwritten in place: a per-frame loop allocates no outputs. ``positions`` may
        be ``out.positions`` itself (warm start from the last frame). The returned
        Solution holds the same arrays.

    Returns
    -------
    Solution
        ``positions`` ``(..., n, 3)``; ``reached``, ``error``, ``iterations``
        ``(...)``. A target out of reach (with a fixed root) gives the straight
        chain toward it, zero iterations, ``reached`` False unless the end is
        within tolerance anyway.
    """
    pos = _as_array(positions, "positions")
    if pos.ndim < 2 or pos.shape[-1] != 3 or pos.shape[-2] < 2:
        raise InvalidInputError(
            f"positions must have shape (..., n, 3) with n >= 2, got {pos.shape}",
            argument="positions")
    tgt = _as_array(target, "target")
    if tgt.ndim < 1 or tgt.shape[-1] != 3:
        raise InvalidInputError(f"target must have shape (..., 3), got {tgt.shape}",
                                argument="target")
    n = pos.shape[-2]
    has_dir = direction is not None
    if has_dir:
        dvec, dn = as_directions(direction, "direction")
        dvec = dvec / dn[..., None]
        shape = broadcast_shapes(("positions", pos.shape[:-2]), ("target", tgt.shape[:-1]),
                                 ("direction", dvec.shape[:-1]))
    else:
        shape = broadcast_shapes(("positions", pos.shape[:-2]), ("target", tgt.shape[:-1]))
    tol_abs, tol_rel = check_tolerance(tolerance)
    max_it = as_int(max_iterations, "max_iterations", minimum=0)
    min_imp = check_min_improvement(min_improvement)
    fixed_root = as_flag(fixed_root, "fixed_root")
    frame0, constrain_root = root_frame_rows(root_frame)
    seed_frames = check_cone_frames(cone_frames)
    # None when no constraint applies: an unconstrained solve compiles no constraint code
    limits = None if constraints is None else kernel_limits(
        *encode_constraints(constraints, n - 1), constrain_root, seed_frames,
        np.arange(n - 1) == 0)

    closing = as_flag(close_gap, "close_gap")
    if closing and (limits is not None or has_dir or not fixed_root):
        raise InvalidInputError(
            "close_gap is for chains with a fixed root and no constraints or direction, "
            "got it with " + ", ".join(name for name, used in (
                ("constraints", limits is not None), ("direction", has_dir),
                ("fixed_root=False", not fixed_root)) if used), argument="close_gap")

    size = math.prod(shape)
    want_rotations = as_flag(return_rotations, "return_rotations") or rotations is not None
    given = _NO_ROTATION  # the input rotations, checked before anything is solved or written
    if rotations is not None:
        given = as_joint_rotations(rotations, "rotations", n, shape)
    fields = chain_out_fields(n, want_rotations)
    if out is None:
        p = np.empty((size, n, 3))
        reached = np.empty(size, dtype=np.bool_)
        error = np.empty(size)
        iterations = np.empty(size, dtype=np.int64)
    else:
        views = out_arrays(out, shape, fields)
        p, reached, error, iterations = views[:4]
        # inputs in out's memory are read before it is written: the pose for the
        # rotations, the target (out.end_effector, say)
        tgt = detached([tgt], views)[0]
        if want_rotations:
            pos = detached([pos], views)[0]
    np.copyto(p.reshape(shape + (n, 3)), pos)  # the kernel solves in place
    # writeable, contiguous inputs keep the kernel to a single compiled signature
    t = (tgt if tgt.shape[:-1] == shape else np.broadcast_to(tgt, shape + (3,))).reshape(
        size, 3)
    if not (t.flags.c_contiguous and t.flags.writeable):
        t = np.array(t, order="C")
    d = np.array(np.broadcast_to(dvec, shape + (3,)).reshape(size, 3), order="C") if has_dir \
        else _NO_DIRECTION
    # each chain in units of its own size (exact, 2^k): the kernel scales each chain, in
    # one run, where nothing else works on the solved rows in their units; else (arcs and
    # polish under limits, closing the gap) one run per unit
    skipped = 0
    if not (closing or (_arc_bends(limits) if fixed_root and not has_dir and n > 2 else [])):
        skipped = _solve_rows(p, t, d, has_dir, tol_abs, tol_rel, max_it, min_imp, fixed_root,
                              frame0, limits, closing, 1.0, reached, error, iterations, n,
                              own_units=True)
    else:
        for unit, rows in unit_groups(element_units(p, t)):
            if rows is None:
                skipped += _solve_rows(p, t, d, has_dir, tol_abs, tol_rel, max_it, min_imp,
                                       fixed_root, frame0, limits, closing, unit, reached,
                                       error, iterations, n)
                continue
            part = p[rows]
            r, e, i = reached[rows], error[rows], iterations[rows]
            skipped += _solve_rows(part, t[rows], d[rows] if has_dir else d, has_dir, tol_abs,
                                   tol_rel, max_it, min_imp, fixed_root, frame0, limits,
                                   closing, unit, r, e, i, n)
            p[rows], reached[rows], error[rows], iterations[rows] = part, r, e, i
    if skipped:  # the kernel found NaN or inf: raise the error that names it
        as_float_array(positions, "positions", ())
        as_points(target, "target")
        raise NonFiniteInputError("positions and target must be finite")  # pragma: no cover
    solved = p.reshape(shape + (n, 3))
    turned = None
    if want_rotations:  # joint_rotations on arrays checked above
        from limbik.solvers.rotations import _carried_joint_rotations, _joint_rotations

        # with limits, the frames they are measured in: no joint twists about its bone
        turned = (_joint_rotations if limits is None else _carried_joint_rotations)(
            solved, pos, given, shape)
    if out is not None:
        if turned is not None:
            np.copyto(views[4].reshape(turned.shape), turned)
        return Solution._trusted(**written(out, shape, fields, views))
    return Solution._trusted(solved, reached.reshape(shape), error.reshape(shape),
                             iterations.reshape(shape), rotations=turned)


def _solve_rows(p: np.ndarray, t: np.ndarray, d: np.ndarray, has_dir: bool, tol_abs: float,
                tol_rel: float, max_it: int, min_imp: float, fixed_root: bool,
                frame0: np.ndarray, limits: Any, closing: bool, unit: float,
                reached: np.ndarray, error: np.ndarray, iterations: np.ndarray, n: int,
                own_units: bool = False) -> int:
    """FABRIK on rows ``p (B, n, 3)`` (in place) toward ``t (B, 3)``, solved in units of
    ``unit`` (a power of two: exact), or with ``own_units`` each row in its own (the
    kernel's), and written back in the caller's units. Returns the number of rows
    holding NaN or inf (then nothing is written back)."""
    if unit != 1.0:
        p /= unit  # the solver's own copy
        t = t / unit
        tol_abs = tol_abs / unit if tol_abs >= 0 else tol_abs
        min_imp = min_imp / unit
    size = p.shape[0]
    args = (p, t, d, has_dir, tol_abs, tol_rel, max_it, min_imp, bool(fixed_root), frame0,
            limits, reached, error, iterations)
    skipped = run_batch(K.solve_chain_range, size,
                        lambda: (*args, K.chain_workspace(n), bool(own_units)),
                        smallest=SMALLEST_CHUNK)
    if skipped:  # the kernel found NaN or inf: the caller raises the error that names it
        return int(skipped)
    arcs_to_try = _arc_bends(limits) if fixed_root and not has_dir and n > 2 else []
    for bends, spin in arcs_to_try:
        if max_it == 0 or reached.all():
            break
        # cones stopped FABRIK short: again from the arc whose end is on the target
        rows = np.flatnonzero(~reached)
        # bone 0 limited against root_frame: the arc leans it toward the frame's look
        look = frame0[0] if limits[3] and limits[0][0] != K.FREE else None
        arcs = _arc_poses(p[rows], t[rows], bends, look, spin)
        if arcs is not None:
            rows, start = rows[arcs[0]], arcs[1]
            r, e, i = reached[rows], error[rows], iterations[rows]
            more = (start, np.ascontiguousarray(t[rows]), d, has_dir, tol_abs, tol_rel, max_it,
                    min_imp, bool(fixed_root), frame0, limits, r, e, i)

            def again(more: tuple[Any, ...] = more) -> tuple[Any, ...]:
                return (*more, K.chain_workspace(n), False)

            run_batch(K.solve_chain_range, rows.size, again, smallest=SMALLEST_CHUNK)
            better = e < error[rows]
            rows = rows[better]
            p[rows], reached[rows], error[rows] = start[better], r[better], e[better]
            iterations[rows] += i[better]
    if arcs_to_try and max_it and not reached.all() and _POLISH and can_polish(limits):
        _polish_rows(p, t, d, tol_abs, tol_rel, max_it, min_imp, frame0, limits, reached, error,
                     iterations, n)
    if closing:
        _close_gaps(p, t, tol_abs, tol_rel, reached, error)  # in the problem's units
    if unit != 1.0:
        p *= unit
        error *= unit
    return 0


def _polish_rows(p: np.ndarray, t: np.ndarray, d: np.ndarray, tol_abs: float, tol_rel: float,
                 max_it: int, min_imp: float, frame0: np.ndarray, limits: Any,
                 reached: np.ndarray, error: np.ndarray, iterations: np.ndarray, n: int) -> None:
    """Chains still short after the arcs: polished within their limits (see
    :mod:`limbik.solvers.fabrik.polish`), then FABRIK again from there; kept where the
    error is smaller."""
    rows = np.flatnonzero(~reached)
    total = np.linalg.norm(np.diff(p[rows], axis=1), axis=-1).sum(axis=-1)
    inside = np.linalg.norm(t[rows] - p[rows, 0], axis=-1) <= total
    rows, total = rows[inside], total[inside]
    if rows.size == 0:
        return
    tol = np.full(rows.size, tol_abs) if tol_abs >= 0 else tol_rel * total
    start = polish(p[rows], t[rows], limits, frame0, tol)
    r, e, i = reached[rows], error[rows], iterations[rows]
    more = (start, np.ascontiguousarray(t[rows]), d, False, tol_abs, tol_rel, max_it, min_imp,
            True, frame0, limits, r, e, i)
    run_batch(K.solve_chain_range, rows.size, lambda: (*more, K.chain_workspace(n), False),
              smallest=SMALLEST_CHUNK)
    better = e < error[rows]
    rows = rows[better]
    p[rows], reached[rows], error[rows] = start[better], r[better], e[better]
    iterations[rows] += i[better]


def _arc_bends(limits: Any) -> list[tuple[np.ndarray, float]]:
    """The arcs to start again from, in order: per bone, bends (rad) (bone 0: 0, it turns
    about the root) and the turn of the arc's plane about the root→target line (rad). A
    cone's angle, π/2 for a free bone (and at most π/2 for any). With elliptical cones,
    their smallest angle (allowed about any axis), then their largest (which the
    forward pass then projects) in 16 planes 22.5° apart. No arc where a constraint has
    no such bend (hinges, seed cones)."""
    if limits is None:
        return []
    kinds, params = limits[0], limits[1]
    if np.any((kinds == K.HINGE) | (kinds == K.SEED)):
        return []
    bends = np.full(kinds.size, np.pi / 2)
    cone = kinds == K.CONE
    bends[cone] = np.minimum(params[cone, 0], np.pi / 2)
    ellipse = kinds == K.ELLIPSE
    bends[0] = 0.0
    if not ellipse.any():
        return [(bends, 0.0)]
    widest = bends.copy()
    bends[ellipse] = np.minimum(np.arctan(params[ellipse].min(axis=-1)), np.pi / 2)
    widest[ellipse] = np.minimum(np.arctan(params[ellipse].max(axis=-1)), np.pi / 2)
    widest[0] = 0.0
    return [(bends, 0.0)] + [(widest, k * np.pi / 8) for k in range(16)]


def _arc_poses(p: np.ndarray, t: np.ndarray, bends: np.ndarray, look: np.ndarray | None,
               spin: float = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """Chains that end on their targets: for rows ``p (B, n, 3)`` a planar arc, bone ``i``
    turned ``s · bends[i]`` from bone ``i − 1`` in the plane of the root→target direction
    ``u`` and ``w`` (``u × x``, or ``u × y`` near x; with ``look``, the plane of ``u`` and
    ``look``, bone 0 on the side of ``look``), with the smallest ``s`` in [0, 1] that puts
    the end at the target's distance (a scan of 64 steps, then bisection), turned about
    the root onto the target. The bends keep every bone but bone 0 within ``bends``.
    ``spin`` turns the plane about ``u`` by that angle (rad). Returns the rows where such
    an ``s`` exists and their poses ``(m, n, 3)``, or None where there are none."""
    root = p[:, 0]
    lengths = np.linalg.norm(np.diff(p, axis=1), axis=-1)  # (B, n - 1)
    u = t - root
    dist = np.linalg.norm(u, axis=-1)
    total = lengths.sum(axis=-1)
    ok = (dist > 1e-9 * total) & (dist <= total)
    u = u / np.where(ok, dist, 1.0)[:, None]
    turned = np.cumsum(bends)  # each bone's angle from bone 0, at s = 1

    def reach(s: np.ndarray) -> np.ndarray:  # (B, k) → end distances
        angle = s[..., None] * turned
        return np.hypot((lengths[:, None] * np.cos(angle)).sum(-1),
                        (lengths[:, None] * np.sin(angle)).sum(-1))

    grid = np.broadcast_to(np.linspace(0.0, 1.0, 65), (p.shape[0], 65))
    inside = reach(grid) <= dist[:, None]
    ok &= inside.any(axis=-1)
    if not ok.any():
        return None
    first = np.argmax(inside, axis=-1)
    hi = grid[0][first]
    lo = grid[0][np.maximum(first - 1, 0)]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        far = reach(mid[:, None])[:, 0] > dist
        lo = np.where(far, mid, lo)
        hi = np.where(far, hi, mid)
    angle = hi[:, None] * turned  # (B, n - 1)
    ex = (lengths * np.cos(angle)).sum(-1)
    ey = (lengths * np.sin(angle)).sum(-1)
    angle = angle - np.arctan2(ey, ex)[:, None]  # the end along u
    side = np.where((np.abs(u[:, 0]) < 0.9)[:, None], np.cross(u, [1.0, 0.0, 0.0]),
                    np.cross(u, [0.0, 1.0, 0.0]))
    if look is not None:  # bone 0 turns toward -w: w away from look
        away = (u * look).sum(-1, keepdims=True) * u - look
        size = np.linalg.norm(away, axis=-1, keepdims=True)
        side = np.where(size > 1e-9, away, side)
    size = np.linalg.norm(side, axis=-1, keepdims=True)
    w = side / np.where(size > 0.0, size, 1.0)  # 0 only for a target on the root (not ok)
    if spin:  # the plane turned about u
        w = np.cos(spin) * w + np.sin(spin) * np.cross(u, w)
    bones = lengths[..., None] * (np.cos(angle)[..., None] * u[:, None]
                                  + np.sin(angle)[..., None] * w[:, None])
    poses = np.concatenate([root[:, None], root[:, None] + np.cumsum(bones, axis=1)], axis=1)
    rows = np.flatnonzero(ok)
    return rows, np.ascontiguousarray(poses[rows])
