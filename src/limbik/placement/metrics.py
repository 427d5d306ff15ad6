"""Motion-quality metrics: foot skate and slide, penetration, floating and stance gap, knee pops,
backward-bent knees, knee jumps, foot turns, bone-length drift.

All functions take world-space arrays, so they measure any motion, whatever produced it.
Lengths are in the motion's units; speeds in units per second; angles in degrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from limbik._runtime.validation import FloatArray, as_float, as_float_array, broadcast_shapes
from limbik.errors import InvalidInputError
from limbik.geometry.vectors import cross
from limbik.solvers._scale import length_scale

__all__ = [
    "backward_knee_frames",
    "bone_length_drift",
    "bone_length_variation",
    "contact_speed",
    "floating",
    "foot_skate",
    "foot_skating_ratio",
    "foot_turn",
    "horizontal_speed_of",
    "jitter",
    "knee_angles",
    "knee_bend_angles",
    "knee_displacement",
    "knee_pop",
    "penetration",
    "pivot_slide",
    "score_motion",
    "score_positions",
    "speed_near_floor",
    "stance_gap",
]


class _Ground(Protocol):
    """Anything with ``height(x, z)``, such as :class:`~limbik.placement.terrain.Terrain`."""

    def height(self, x: Any, z: Any) -> FloatArray: ...


def _trajectory(positions: Any, name: str = "positions") -> FloatArray:
    p = as_float_array(positions, name, (3,))
    if p.ndim < 2:
        raise InvalidInputError(f"{name} must have shape (frames, ..., 3), got {p.shape}",
                                argument=name)
    return p


def _check_ground(ground: Any) -> _Ground:
    if not callable(getattr(ground, "height", None)):
        raise InvalidInputError("ground must have a height(x, z) method (a Terrain), got "
                                f"{type(ground).__name__}", argument="ground")
    return ground


def _height_of(ground: _Ground) -> Callable[[Any, Any], FloatArray]:
    """``ground.height``; a Terrain's without checking the arrays (for callers whose
    arrays are valid positions)."""
    from limbik.placement.terrain import Terrain

    return ground._height_unchecked if isinstance(ground, Terrain) else ground.height


def _dt(dt: Any) -> float:
    return as_float(dt, "dt", minimum=0.0, exclusive=True)


def _leg(hip: Any, knee: Any, ankle: Any | None = None
         ) -> tuple[tuple[FloatArray, ...], float]:
    """Hip, knee (and ankle) trajectories of one shape, divided by a unit (a power of two,
    1 for ordinary sizes) that keeps their differences from overflowing; and the unit."""
    arrays = [_trajectory(hip, "hip"), _trajectory(knee, "knee")]
    if ankle is not None:
        arrays.append(_trajectory(ankle, "ankle"))
    shape = broadcast_shapes(*zip(("hip", "knee", "ankle"), (a.shape[:-1] for a in arrays),
                                  strict=False))
    unit = length_scale(*arrays)
    return tuple(np.broadcast_to(a / unit if unit != 1.0 else a, shape + (3,))
                 for a in arrays), unit


def _mask(contact: Any, n: int) -> np.ndarray:
    m = np.asarray(contact, dtype=bool)
    if m.shape[:1] != (n,):
        raise InvalidInputError(f"contact must have shape ({n}, ...), got {m.shape}",
                                argument="contact")
    return m


def foot_skate(positions: Any, contact: Any) -> tuple[FloatArray, float]:
    """Horizontal foot displacement during contact.

    Parameters
    ----------
    positions : (frames, 3) foot (toe or ankle) world positions.
    contact : (frames,) bool.

    Returns
    -------
    per_frame : (frames,) horizontal move from the previous frame where both frames
        are in contact, else 0.
    total : the sum of ``per_frame``.
    """
    p = _trajectory(positions)
    return _foot_skate(p, _mask(contact, len(p)))


def _foot_skate(p: FloatArray, c: np.ndarray) -> tuple[FloatArray, float]:
    """:func:`foot_skate` of a validated trajectory ``(frames, 3)`` and mask."""
    step = np.zeros(len(p))
    if len(p) > 1:
        d = np.hypot(*(np.diff(p[:, [0, 2]], axis=0).T))
        step[1:] = np.where(c[1:] & c[:-1], d, 0.0)
    return step, float(step.sum())


def penetration(positions: Any, ground: _Ground) -> FloatArray:
    """Depth below the ground, ``max(0, ground - y)``: shape of ``positions`` without the 3."""
    return _penetration(_trajectory(positions), _check_ground(ground).height)


def _penetration(p: FloatArray, height: Callable[[Any, Any], FloatArray]) -> FloatArray:
    """:func:`penetration` of validated positions, with the ground's ``height(x, z)``."""
    return np.maximum(0.0, height(p[..., 0], p[..., 2]) - p[..., 1])


def floating(positions: Any, ground: _Ground, contact: Any, clearance: float = 0.0) -> FloatArray:
    """Height above ``ground + clearance`` during contact (0 elsewhere): ``(frames,)``.

    ``clearance`` is the foot joint's expected rest height (e.g. ankle above sole).
    """
    p = _trajectory(positions)
    c = _mask(contact, len(p))
    clearance = as_float(clearance, "clearance")
    return _floating(p, _check_ground(ground).height, c, clearance)


def _floating(p: FloatArray, height: Callable[[Any, Any], FloatArray], c: np.ndarray,
              clearance: float = 0.0) -> FloatArray:
    """:func:`floating` of validated arguments, with the ground's ``height(x, z)``."""
    above = p[..., 1] - height(p[..., 0], p[..., 2]) - clearance
    return np.where(c, np.maximum(above, 0.0), 0.0)


def knee_angles(hip: Any, knee: Any, ankle: Any) -> FloatArray:
    """Interior knee angle in degrees (180 = straight): ``(frames,)``."""
    (h, k, a), _ = _leg(hip, knee, ankle)
    return _knee_angles(h, k, a)


def _knee_angles(h: FloatArray, k: FloatArray, a: FloatArray) -> FloatArray:
    """:func:`knee_angles` of trajectories already through :func:`_leg`."""
    u = h - k
    v = a - k
    cos = np.einsum("...i,...i->...", u, v) / np.maximum(
        np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1), 1e-300)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def knee_pop(hip: Any, knee: Any, ankle: Any) -> float:
    """The largest per-frame change of the knee angle, degrees."""
    angles = knee_angles(hip, knee, ankle)
    return float(np.max(np.abs(np.diff(angles)), initial=0.0))


def foot_turn(ankle: Any, toe: Any) -> float:
    """The largest per-frame turn of the ankle→toe direction, degrees (``ankle``, ``toe``
    ``(frames, 3)``): a foot that snaps round between two frames."""
    a = _trajectory(ankle, "ankle")
    t = _trajectory(toe, "toe")
    broadcast_shapes(("ankle", a.shape[:-1]), ("toe", t.shape[:-1]))
    return _foot_turn(a, t)


def _foot_turn(a: FloatArray, t: FloatArray) -> float:
    """:func:`foot_turn` of validated trajectories."""
    unit = length_scale(a, t)  # a power of two: the directions keep their bits
    foot = t / unit - a / unit
    size = np.linalg.norm(foot, axis=-1, keepdims=True)
    foot = foot / np.maximum(size, 1e-300)
    cos = np.einsum("...i,...i->...", foot[1:], foot[:-1])
    # a foot of no length has no direction: no turn to or from it
    cos = np.where((size[1:, ..., 0] > 0) & (size[:-1, ..., 0] > 0), cos, 1.0)
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))).max(initial=0.0))


def bone_length_drift(world_positions: Any, parents: Any, reference: Any | None = None) -> float:
    """Largest relative change of any bone's length over the frames.

    ``world_positions`` is ``(frames, joints, 3)``; bones join each joint to its parent
    (``parents[j] < 0`` for roots). Lengths are compared with ``reference``
    ``(joints, 3)`` positions (default: the first frame). Zero-length bones are skipped.
    """
    p = as_float_array(world_positions, "world_positions", (3,))
    par = np.asarray(parents)
    if p.ndim != 3 or p.shape[0] == 0 or par.shape != (p.shape[1],):
        raise InvalidInputError(
            f"world_positions must be (frames >= 1, joints, 3) with one parent per joint, "
            f"got {p.shape} and {par.shape}", argument="world_positions")
    if par.dtype.kind == "f" and np.all(np.isfinite(par)) and np.all(par == np.round(par)):
        par = par.astype(np.intp)  # whole numbers as floats
    if par.dtype.kind not in "iu" or np.any(par >= p.shape[1]):
        raise InvalidInputError(f"parents must be joint indices below {p.shape[1]} (negative "
                                f"for roots), got {par.tolist()[:20]}", argument="parents")
    par = par.astype(np.intp, copy=False)
    ref = p[0] if reference is None else as_float_array(reference, "reference", (3,))
    if ref.shape != p.shape[1:]:
        raise InvalidInputError(f"reference must have shape {p.shape[1:]}, got {ref.shape}",
                                argument="reference")
    return _bone_length_drift(p, par, ref)


def _bone_length_drift(p: FloatArray, par: np.ndarray, ref: FloatArray) -> float:
    """:func:`bone_length_drift` of validated positions ``(frames, joints, 3)``, parents
    ``(joints,)`` (intp) and reference ``(joints, 3)``."""
    child = np.flatnonzero(par >= 0)
    rest = np.linalg.norm(ref[child] - ref[par[child]], axis=-1)
    keep = rest > 1e-9 * max(float(rest.max(initial=0.0)), 1e-300)
    if not np.any(keep):
        return 0.0
    lengths = np.linalg.norm(p[:, child] - p[:, par[child]], axis=-1)
    return float(np.max(np.abs(lengths[:, keep] / rest[keep] - 1.0), initial=0.0))


def speed_near_floor(positions: Any, ground: _Ground, dt: float, near: float) -> float:
    """Mean horizontal speed of a point while it is within ``near`` of the ground.

    Frames pairs are counted when the point is near the ground at both ends.
    Returns 0 when it never is.
    """
    p = _trajectory(positions)
    dt = _dt(dt)
    if isinstance(near, bool | np.bool_) or not (
            isinstance(near, float | int | np.floating | np.integer) and near == near):
        as_float(near, "near")  # raises: not a number, or NaN (+inf: every frame is near)
    return _speed_near_floor(p, _check_ground(ground).height, dt, near)


def _speed_near_floor(p: FloatArray, height: Callable[[Any, Any], FloatArray], dt: float,
                      near: float) -> float:
    """:func:`speed_near_floor` of validated arguments, with the ground's
    ``height(x, z)``."""
    gap = p[:, 1] - height(p[:, 0], p[:, 2])
    close = gap <= near
    if len(p) < 2:
        return 0.0
    both = close[1:] & close[:-1]
    if not np.any(both):
        return 0.0
    step = np.hypot(*(np.diff(p[:, [0, 2]], axis=0).T))
    return float(np.mean(step[both]) / dt)


def knee_bend_angles(hip: Any, knee: Any, ankle: Any, forward: Any) -> FloatArray:
    """Signed knee flexion in degrees ``(frames,)``: positive where the knee lies on the
    ``forward`` side of the hip–ankle line, negative where it lies behind it.

    The magnitude is ``180 - knee_angles``; the sign is that of the knee's offset from
    the hip–ankle line along ``forward`` ``(frames, 3)`` or ``(3,)`` (the character's
    facing, e.g. ``left × up`` from the hips).
    """
    (h, k, a), _ = _leg(hip, knee, ankle)
    f = as_float_array(forward, "forward", (3,))
    return _signed_flexion(*_knee_offset_flexion(h, k, a), f)


def _knee_offset_flexion(h: FloatArray, k: FloatArray, a: FloatArray
                         ) -> tuple[FloatArray, FloatArray]:
    """Of trajectories already through :func:`_leg`: the knee's offset from the hip–ankle
    line ``(..., 3)`` and its flexion (degrees) ``(...)``."""
    line = a - h
    u = line / np.maximum(np.linalg.norm(line, axis=-1, keepdims=True), 1e-300)
    offset = (k - h) - np.einsum("...i,...i->...", k - h, u)[..., None] * u
    return offset, 180.0 - _knee_angles(h, k, a)


def _signed_flexion(offset: FloatArray, flexion: FloatArray, forward: FloatArray
                    ) -> FloatArray:
    """:func:`knee_bend_angles` from :func:`_knee_offset_flexion`'s offset and flexion."""
    side = np.einsum("...i,...i->...", offset, forward)
    return np.where(side < 0.0, -flexion, flexion)


#: Per leg side, a knee's offset from its hip–ankle line ``(F, 3)``, its flexion ``(F,)``
#: and :func:`knee_displacement`.
_Knees = dict[str, tuple[FloatArray, FloatArray, float]]


def _knees(world: FloatArray, legs: Sequence[Any]) -> _Knees:
    """What the clip measures of each leg's knee, from its world positions ``(F, J, 3)``:
    :func:`knee_bend_angles` less the sign (which depends on the facing taken), and
    :func:`knee_displacement` (all legs through one :func:`_leg`)."""
    hip, knee, ankle = (world[:, [getattr(leg, name) for leg in legs]]
                        for name in ("hip", "knee", "ankle"))
    (h, k, a), unit = _leg(hip, knee, ankle)
    offset, flexion = _knee_offset_flexion(h, k, a)
    moves = _knee_displacement(k - h, unit)
    return {leg.side: (offset[:, i], flexion[:, i], float(moves[i]))
            for i, leg in enumerate(legs)}


def backward_knee_frames(hip: Any, knee: Any, ankle: Any, forward: Any, *,
                         min_angle: float = 2.0) -> int:
    """How many frames bend the knee backward by more than ``min_angle`` degrees
    (see :func:`knee_bend_angles`)."""
    return int(np.count_nonzero(knee_bend_angles(hip, knee, ankle, forward) < -min_angle))


def knee_displacement(hip: Any, knee: Any) -> float:
    """The largest per-frame move of the knee relative to the hip (length units): a
    flipping bend shows here even when the flexion angle changes smoothly."""
    (hip_, knee_), unit = _leg(hip, knee)
    return float(_knee_displacement(knee_ - hip_, unit))


def _knee_displacement(rel: FloatArray, unit: float) -> FloatArray:
    """:func:`knee_displacement` of the knee relative to the hip ``rel`` ``(frames, ...,
    3)`` in ``unit`` (:func:`_leg`'s): ``(...)``."""
    if len(rel) < 2:
        return np.zeros(rel.shape[1:-1])
    return np.max(np.linalg.norm(np.diff(rel, axis=0), axis=-1), axis=0) * unit


def stance_gap(points: Any, ground: _Ground, contact: Any) -> float:
    """Mean height of a foot's lowest point above the ground over contact frames.

    ``points`` is ``(frames, k, 3)`` (say heel, toe and toe tip). Below-ground frames
    count as negative. Returns 0 without contact frames.
    """
    p = _trajectory(points, "points")
    c = _mask(contact, len(p))
    return _stance_gap(p, _check_ground(ground).height, c)


def _stance_gap(p: FloatArray, height: Callable[[Any, Any], FloatArray], c: np.ndarray
                ) -> float:
    """:func:`stance_gap` of validated arguments, with the ground's ``height(x, z)``."""
    if not np.any(c):
        return 0.0
    gap = p[..., 1] - height(p[..., 0], p[..., 2])
    lowest = gap.reshape(len(p), -1).min(axis=1)
    return float(lowest[c].mean())


def pivot_slide(heel: Any, toe: Any, contact: Any) -> tuple[FloatArray, float]:
    """Horizontal slide of the point a planted foot stands on.

    A planted foot rolls about its heel or its toe, whichever carries it, so the one of
    the two that moves less is taken to carry it: per frame, the smaller of the heel's
    and the toe's horizontal moves from the previous frame, where both frames are in
    contact (a foot held still or rolling about a held point scores 0; a sliding foot
    scores its slide).

    Parameters
    ----------
    heel, toe : (frames, 3) world positions (the ankle and the toe joint).
    contact : (frames,) bool.

    Returns
    -------
    per_frame : (frames,) the slower point's horizontal move, 0 outside contact pairs.
    total : the sum of ``per_frame``.
    """
    h, t = _trajectory(heel, "heel"), _trajectory(toe, "toe")
    if h.shape != t.shape:
        raise InvalidInputError(f"heel and toe must have the same shape (frames, 3), got "
                                f"{h.shape} and {t.shape}", argument="toe")
    c = _mask(contact, len(h))
    return _pivot_slide(h, t, c)


def _pivot_slide(h: FloatArray, t: FloatArray, c: np.ndarray) -> tuple[FloatArray, float]:
    """:func:`pivot_slide` of validated trajectories ``(frames, 3)`` and mask."""
    heel_steps, _ = _foot_skate(h, c)
    toe_steps, _ = _foot_skate(t, c)
    step = np.minimum(heel_steps, toe_steps)
    return step, float(step.sum())


def contact_speed(positions: Any, contact: Any, dt: float) -> float:
    """Mean speed (units/s, 3-D) of a point between consecutive contact frames: heel or
    toe slide. Returns 0 without such frame pairs."""
    p = _trajectory(positions)
    c = _mask(contact, len(p))
    return _contact_speed(p, c, _dt(dt))


def _contact_speed(p: FloatArray, c: np.ndarray, dt: float) -> float:
    """:func:`contact_speed` of validated arguments."""
    if len(p) < 2:
        return 0.0
    both = c[1:] & c[:-1]
    if not np.any(both):
        return 0.0
    step = np.linalg.norm(np.diff(p, axis=0), axis=-1)
    return float(np.mean(step[both]) / dt)


# ------------------------------------------------------------------ position motions

#: GMD's foot-skating thresholds: a toe within 5 cm of the floor moving faster than
#: 0.5 m/s, in the frame and on average over 5 frames.
SKATE_HEIGHT_M = 0.05
SKATE_SPEED_M_S = 0.5
SKATE_WINDOW = 5


def foot_skating_ratio(positions: Any, feet: Sequence[int], fps: float, *, floor: float = 0.0,
                       metres_per_unit: float = 1.0, height: float = SKATE_HEIGHT_M,
                       speed: float = SKATE_SPEED_M_S, window: int = SKATE_WINDOW) -> float:
    """The share of frame steps on which a foot skates, as motion-generation papers
    (GMD and its followers) measure it.

    ``positions (T, J, 3)`` are Y up; ``feet`` the joints that touch the floor (SMPL's
    toes, 10 and 11). A step ``t → t + 1`` skates where a foot joint is below
    ``floor + height`` (metres) in both frames and its horizontal speed is above
    ``speed`` (m/s) both over that step and on average over ``window`` steps centred on
    it; heights and speeds convert through ``metres_per_unit`` and ``fps``. Returns a
    fraction in [0, 1] (0 for fewer than two frames).
    """
    p = np.asarray(positions, dtype=np.float64)[:, list(feet)] * metres_per_unit
    if p.shape[0] < 2:
        return 0.0
    step = np.linalg.norm(np.diff(p[..., [0, 2]], axis=0), axis=-1) * fps  # (T-1, F)
    # the mean over ``window`` steps centred on each, the clip padded with zero speed
    before = window // 2
    padded = np.concatenate([np.zeros((before, step.shape[1])), step,
                             np.zeros((window - 1 - before, step.shape[1]))])
    sums = np.concatenate([np.zeros((1, step.shape[1])), np.cumsum(padded, axis=0)])
    average = (sums[window:] - sums[:-window]) / window
    low = p[..., 1] < floor * metres_per_unit + height
    contact = low[:-1] & low[1:]
    skating = contact & (step > speed) & (average > speed)
    return float(np.mean(skating.any(axis=1)))


def bone_length_variation(positions: Any, parents: Any) -> np.ndarray:
    """Each bone's length wobble ``(J,)``: the standard deviation of its length over the
    frames divided by its median (0 for the root and for bones of zero length)."""
    p = np.asarray(positions, dtype=np.float64)
    par = np.asarray(parents)
    lengths = np.linalg.norm(p[:, 1:] - p[:, par[1:]], axis=-1)
    median = np.median(lengths, axis=0)
    out = np.zeros(par.size)
    fine = median > 0
    out[1:][fine] = lengths[:, fine].std(axis=0) / median[fine]
    return out


def jitter(positions: Any, fps: float, *, metres_per_unit: float = 1.0) -> float:
    """Mean joint jerk: the mean magnitude of the third time derivative of every joint's
    position (m/s³ through ``metres_per_unit`` and ``fps``); 0 for fewer than 4 frames."""
    p = np.asarray(positions, dtype=np.float64) * metres_per_unit
    if p.shape[0] < 4:
        return 0.0
    jerk = np.diff(p, n=3, axis=0) * fps ** 3
    return float(np.linalg.norm(jerk, axis=-1).mean())


def score_positions(positions: Any, skeleton: Any = "smpl22", *, fps: float = 20.0,
                    names: Sequence[str] | None = None, floor: float | None = None,
                    metres_per_unit: float = 1.0, reference: Any | None = None
                    ) -> dict[str, float]:
    """The scores motion-generation papers report, for joint positions ``(T, J, 3)``
    (Y up) of ``skeleton`` (a name from
    :data:`~limbik.skeleton.positions.POSITION_SKELETONS`, or a parents list with
    ``names``), at ``fps`` frames per second, in units of ``metres_per_unit`` metres.

    Returns ``skate_ratio`` (:func:`foot_skating_ratio` on the toes, a fraction),
    ``penetration`` (deepest foot joint below the floor, metres), ``floating`` (mean
    height of the lower foot joint above the floor on the frames where a foot is within
    5 cm of it, metres), ``bone_variation`` and ``bone_variation_mean`` (largest and
    mean bone-length wobble, :func:`bone_length_variation`), ``jitter`` (:func:`jitter`,
    m/s³) and ``leg_length`` (metres). ``floor`` is the floor's height (default: the
    lowest foot joint's 5th-percentile height). With ``reference`` (positions of the
    same shape, say the clean original or another clean-up): ``joint_change``, the
    mean distance of every joint from the reference's after the one vertical offset
    that fits best, metres.
    """
    from limbik.skeleton.limbs import find_legs
    from limbik.skeleton.positions import position_layout
    from limbik.skeleton.skeleton import Skeleton

    joint_names, parents = position_layout(skeleton, names)
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 3 or p.shape[1:] != (parents.size, 3):
        raise InvalidInputError(f"positions must have shape (T, {parents.size}, 3), got "
                                f"{p.shape}", argument="positions")
    rate = as_float(fps, "fps", minimum=0.0, exclusive=True)
    scale = as_float(metres_per_unit, "metres_per_unit", minimum=0.0, exclusive=True)
    offsets = np.zeros((parents.size, 3))
    offsets[1:] = p[0, 1:] - p[0, parents[1:]]
    legs = find_legs(Skeleton(joint_names, parents, offsets))
    toes = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
    feet = sorted({j for leg in legs for j in (leg.ankle, leg.toe) if j is not None})
    heights = p[:, feet, 1]
    ground = float(np.percentile(heights.min(axis=1), 5)) if floor is None else float(floor)
    lowest = heights.min(axis=1) - ground
    near = lowest < SKATE_HEIGHT_M / scale
    bones = np.linalg.norm(p[:, 1:] - p[:, parents[1:]], axis=-1)
    leg_length = float(np.mean([np.median(bones[:, leg.knee - 1]) + np.median(
        bones[:, leg.ankle - 1]) for leg in legs])) * scale
    variation = bone_length_variation(p, parents)
    scores = {
        "skate_ratio": foot_skating_ratio(p, toes, rate, floor=ground, metres_per_unit=scale),
        "penetration": float(max(0.0, -lowest.min())) * scale,
        "floating": float(np.mean(np.maximum(lowest[near], 0.0))) * scale if near.any()
        else 0.0,
        "bone_variation": float(variation.max()),
        "bone_variation_mean": float(variation[1:].mean()),
        "jitter": jitter(p, rate, metres_per_unit=scale),
        "leg_length": leg_length,
    }
    if reference is not None:
        r = np.asarray(reference, dtype=np.float64)
        if r.shape != p.shape:
            raise InvalidInputError(f"reference must have the shape of positions {p.shape}, "
                                    f"got {r.shape}", argument="reference")
        lift = float(np.mean(p[..., 1] - r[..., 1]))
        moved = p - r
        moved[..., 1] -= lift
        scores["joint_change"] = float(np.linalg.norm(moved, axis=-1).mean()) * scale
    return scores


# ------------------------------------------------------------------ scoring a clip

#: Leg length (hip to ankle, metres) taken for a clip whose unit is not given, to convert
#: :func:`score_motion`'s thresholds in metres into the clip's units.
DEFAULT_LEG_METRES = 0.8


def _yaw(ankle: np.ndarray, toe: np.ndarray) -> np.ndarray:
    """Unwrapped heading (degrees) ``(frames,)`` of the horizontal ankle→toe direction."""
    f = toe - ankle
    return np.degrees(np.unwrap(np.arctan2(f[:, 0], f[:, 2])))


def _f1(found: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    hits = float(np.count_nonzero(found & truth))
    precision = hits / max(float(np.count_nonzero(found)), 1.0)
    recall = hits / max(float(np.count_nonzero(truth)), 1.0)
    f1 = 2 * precision * recall / max(precision + recall, 1e-300)
    return precision, recall, f1


def score_motion(motion: Any, *, source: Any | None = None, terrain: _Ground | None = None,
                 floor: float | None = None, legs: Any | None = None,
                 contacts: Any | None = None, labels: Any | None = None,
                 metres_per_unit: float | None = None, skate_height: float = 0.05,
                 skate_speed: float = 0.5) -> dict[str, float]:
    """The standard foot-contact scores of a clip: any clip (a source, a clean-up of it,
    a reference clean-up), each measured the same way.

    Parameters
    ----------
    motion : the clip (a :class:`~limbik.Motion`).
    source : the clip ``motion`` was made from (same skeleton and frames), for the scores
        of change against it; contacts are then found on the source.
    terrain : the ground under ``motion``; default: flat at ``motion``'s own floor
        (:func:`limbik.placement.footplant.estimate_floor`). The source is measured on its
        own floor.
    floor : ``motion``'s floor height where ``terrain`` is None (default: estimated).
    legs : the legs (default: :func:`limbik.find_legs`).
    contacts : per leg side, the frames ``(frames,)`` (bool) at which the foot is planted,
        or ``(frames, k)`` per foot joint (heel/ankle, then toe); default: found by
        :func:`limbik.placement.contacts.joint_contacts` on the source (or ``motion``).
    labels : per leg side, reference contact frames ``(frames,)`` (bool), such as the
        frames on which a reference clean-up holds the foot still.
    metres_per_unit : the clip's unit in metres (default: a leg is ``DEFAULT_LEG_METRES``).
    skate_height, skate_speed : the foot-skating thresholds, metres and metres/s.

    Returns
    -------
    A dictionary; lengths in % of the mean leg length (thigh plus shin), speeds in the
    clip's units/s, angles in degrees:

    - ``skate_ratio``: % of foot-frames on which a foot joint (ankle or toe) is within
      ``skate_height`` of the ground and moves horizontally faster than ``skate_speed``
      (converted through the unit and frame time);
    - ``slide_speed``: mean horizontal speed of the ankles and toes from one contact frame
      to the next;
    - ``penetration``: deepest foot point (ankle, toe, toe tips) below the ground;
    - ``float``: mean height of a foot's lowest point (ankle, toe, toe tips) above the
      ground on its contact frames;
    - ``swing_clearance``: the lowest height of a foot's lower joint above the ground on
      swing frames (more than ``MIN_CONTACT_TIME`` from any of that foot's contacts);
    - ``foot_turn``: the largest change of a foot's heading (ankle→toe) within one span on
      which both its ankle and its toe are in contact;
    - ``knee_pop``: largest per-frame change of a knee's angle; ``knee_move``: largest
      per-frame move of a knee relative to its hip (% leg); ``backward_knee_frames``:
      frames whose knee bends behind the hip–ankle line by more than 2°.

    With ``source``: ``joint_change`` (mean distance of every joint from the source's after
    the one vertical offset that fits best, % leg), ``root_change`` (the same for the root
    alone), ``stance_height_p99`` (99th percentile of the change of a foot joint's height
    above the ground on the frames where it is in contact in the source, % leg) and
    ``swing_accel_ratio`` (RMS vertical acceleration of the foot joints on swing frames,
    over the source's). With ``labels``: ``labelled_speed`` (mean ankle and toe speed on
    the labelled frames), ``contact_precision``, ``contact_recall`` and ``contact_f1`` of
    the contacts against the labels.
    """
    return _score_motion(motion, source=source, terrain=terrain, floor=floor, legs=legs,
                         contacts=contacts, labels=labels, metres_per_unit=metres_per_unit,
                         skate_height=skate_height, skate_speed=skate_speed)


def _score_motion(motion: Any, *, source: Any | None = None, terrain: _Ground | None = None,
                  floor: float | None = None, legs: Any | None = None,
                  contacts: Any | None = None, labels: Any | None = None,
                  metres_per_unit: float | None = None, skate_height: float = 0.05,
                  skate_speed: float = 0.5, positions: np.ndarray | None = None,
                  source_positions: np.ndarray | None = None,
                  source_floor: float | None = None,
                  knees: _Knees | None = None) -> dict[str, float]:
    """:func:`score_motion` on world positions with End Sites ``(F, J + E, 3)`` of the
    motion and of the source, where the caller has them (``positions``,
    ``source_positions``), and the source's :func:`estimate_floor` (``source_floor``) and
    the motion's :func:`_knees` (``knees``)."""
    from limbik.placement.contacts import (
        MIN_CONTACT_TIME,
        feet_contacts,
        runs,
        window_reduce,
    )
    from limbik.placement.feet import estimate_floor, foot_joints, leg_lengths, world_pose
    from limbik.placement.terrain import Terrain
    from limbik.skeleton.limbs import find_legs
    from limbik.skeleton.motion import check_motion

    check_motion(motion)
    if source is not None:
        check_motion(source)
        if source.rotations.shape != motion.rotations.shape:
            raise InvalidInputError(f"source must have the motion's frames and joints "
                                    f"{motion.rotations.shape[:2]}, got "
                                    f"{source.rotations.shape[:2]}", argument="source")
    legs = tuple(legs) if legs is not None else find_legs(motion.skeleton)
    dt = float(motion.frame_time)
    leg_length = float(np.mean([sum(leg_lengths(motion, leg)) for leg in legs]))
    pct = 100.0 / leg_length
    unit = (DEFAULT_LEG_METRES / leg_length if metres_per_unit is None
            else as_float(metres_per_unit, "metres_per_unit", minimum=0.0, exclusive=True))
    near = as_float(skate_height, "skate_height", minimum=0.0) / unit
    fast = as_float(skate_speed, "skate_speed", minimum=0.0) / unit
    full = world_pose(motion)[1] if positions is None else positions
    if terrain is None:
        level = (estimate_floor(motion, legs, leg_length, positions=full) if floor is None
                 else as_float(floor, "floor"))
        ground: _Ground = Terrain.flat(level)
    else:
        ground = _check_ground(terrain)
    src_full = (None if source is None else world_pose(source)[1]
                if source_positions is None else source_positions)
    src_ground = ground
    if source is not None:
        src_ground = Terrain.flat(estimate_floor(source, legs, leg_length, positions=src_full)
                                  if source_floor is None else source_floor)
    basis, basis_ground = (src_full, src_ground) if src_full is not None else (full, ground)
    n = motion.num_frames
    slide, held, skate, floats, clear, turns, stance = [], [], [], [], [], [], []
    accel_new, accel_src, found_all, truth_all = [], [], [], []
    pops, moves, backward = [], [], 0.0
    world = full[:, :motion.skeleton.num_joints]
    # the contacts of the legs not given, found on the source as footplant finds them
    # (one speed threshold and one noise low-pass for all the clip's feet)
    feet = [[leg.ankle] + ([leg.toe] if leg.toe is not None else []) for leg in legs]
    found: list[np.ndarray | None] = [None] * len(legs)
    if contacts is None or any(contacts.get(leg.side) is None for leg in legs):
        paths = [basis[:, joints] for joints in feet]
        found = list(feet_contacts(
            paths, [b[..., 1] - _height_of(basis_ground)(b[..., 0], b[..., 2]) for b in paths],
            leg_length, dt))
    left = world[:, legs[0].hip] - world[:, legs[-1].hip]
    facing = cross(left, np.array([0.0, 1.0, 0.0]))  # (np.cross's bits)
    knees = _knees(world, legs) if knees is None else knees
    height_of, src_height_of = _height_of(ground), _height_of(src_ground)
    for leg, joints, detected in zip(legs, feet, found, strict=True):
        points = full[:, joints]
        height = points[..., 1] - height_of(points[..., 0], points[..., 2])
        speed = np.stack([horizontal_speed_of(points[:, k], dt) for k in range(len(joints))],
                         axis=1)
        given = None if contacts is None else contacts.get(leg.side)
        if given is None:
            assert detected is not None
            mask = detected
        else:
            mask = np.asarray(given, dtype=bool)
            if mask.ndim == 1:
                mask = np.repeat(mask[:, None], len(joints), axis=1)
            if mask.shape != (n, len(joints)):
                raise InvalidInputError(f"contacts[{leg.side!r}] must have shape ({n},) or "
                                        f"({n}, {len(joints)}), got {mask.shape}",
                                        argument="contacts")
        foot = mask.any(axis=1)
        skate.append(np.mean((height <= near) & (speed > fast), axis=0))
        inner = mask.copy()
        inner[1:] &= mask[:-1]
        inner[0] = False
        if np.any(inner):
            slide.append(speed[inner])
        lowest = height.min(axis=1)
        if np.any(foot):
            sole = full[:, foot_joints(motion, leg)]
            sole_height = (sole[..., 1] - height_of(sole[..., 0], sole[..., 2])).min(axis=1)
            floats.append(np.maximum(sole_height[foot], 0.0))
        gap = max(1, round(MIN_CONTACT_TIME / dt))
        # (contacts widened by ``gap`` frames each way; "full" then cut, since "same"
        # returns the kernel's length on a clip shorter than it)
        padded = np.convolve(foot.astype(float), np.ones(2 * gap + 1))[gap:gap + n] > 0
        swing = ~padded
        if np.any(swing):
            clear.append(lowest[swing].min())
        if leg.toe is not None:
            first, stop = runs(mask.all(axis=1))
            if first.size:  # (each span's peak-to-peak heading)
                yaw = _yaw(world[:, leg.ankle], world[:, leg.toe])
                turns.extend((window_reduce(np.maximum, yaw, first, stop)
                              - window_reduce(np.minimum, yaw, first, stop)).tolist())
        offset, flexion, move = knees[leg.side]
        bend = _signed_flexion(offset, flexion, facing)
        pops.append(float(np.max(np.abs(np.diff(np.abs(bend))), initial=0.0)))
        moves.append(move)
        backward += float(np.count_nonzero(bend < -2.0))
        if labels is not None and labels.get(leg.side) is not None:
            truth = np.asarray(labels[leg.side], dtype=bool)
            if truth.shape != (n,):
                raise InvalidInputError(f"labels[{leg.side!r}] must have shape ({n},), got "
                                        f"{truth.shape}", argument="labels")
            held.append(speed[truth])
            found_all.append(foot)
            truth_all.append(truth)
        if src_full is not None:
            src_points = src_full[:, joints]
            src_height = src_points[..., 1] - src_height_of(src_points[..., 0],
                                                            src_points[..., 2])
            stance.append(np.abs(height - src_height)[mask])
            if np.count_nonzero(swing) > 2 and n > 2:
                acc = np.zeros((n, len(joints)))
                acc_src = np.zeros((n, len(joints)))
                acc[1:-1] = np.diff(points[..., 1], 2, axis=0) / (dt * dt)
                acc_src[1:-1] = np.diff(src_points[..., 1], 2, axis=0) / (dt * dt)
                accel_new.append(acc[swing])
                accel_src.append(acc_src[swing])
    out: dict[str, float] = {
        "skate_ratio": 100.0 * float(np.mean(skate)) if skate else 0.0,
        "slide_speed": float(np.mean(np.concatenate(slide))) if slide else 0.0,
        "penetration": pct * float(np.max(
            [_penetration(full[:, foot_joints(motion, leg)], height_of).max(initial=0.0)
             for leg in legs])),
        "float": pct * float(np.mean(np.concatenate(floats))) if floats else 0.0,
        "swing_clearance": pct * float(min(clear)) if clear else 0.0,
        "foot_turn": max(turns, default=0.0),
        "knee_pop": max(pops, default=0.0),
        "knee_move": pct * max(moves, default=0.0),
        "backward_knee_frames": backward,
    }
    if src_full is not None:
        joints_now = full[:, :motion.skeleton.num_joints]
        joints_src = src_full[:, :motion.skeleton.num_joints]
        delta = joints_now - joints_src
        delta[..., 1] -= float(np.mean(delta[..., 1]))
        out["joint_change"] = pct * float(np.mean(np.linalg.norm(delta, axis=-1)))
        root = joints_now[:, 0] - joints_src[:, 0]
        root[:, 1] -= float(np.mean(root[:, 1]))
        out["root_change"] = pct * float(np.mean(np.linalg.norm(root, axis=-1)))
        heights = np.concatenate(stance) if stance else np.zeros(0)
        out["stance_height_p99"] = (pct * float(np.percentile(heights, 99)) if heights.size
                                    else 0.0)
        if accel_new:
            a_new = float(np.sqrt(np.mean(np.concatenate(accel_new) ** 2)))
            a_src = float(np.sqrt(np.mean(np.concatenate(accel_src) ** 2)))
            out["swing_accel_ratio"] = a_new / a_src if a_src > 0 else 1.0
        else:
            out["swing_accel_ratio"] = 1.0
    if found_all:
        out["labelled_speed"] = (float(np.mean(np.concatenate(held)))
                                 if sum(h.size for h in held) else 0.0)
        p, r, f = _f1(np.concatenate(found_all), np.concatenate(truth_all))
        out.update(contact_precision=p, contact_recall=r, contact_f1=f)
    return out


def horizontal_speed_of(positions: np.ndarray, dt: float) -> np.ndarray:
    """Horizontal speed ``(frames,)`` of ``positions`` ``(frames, 3)`` by backward
    differences (0 on the first frame), units/s."""
    out = np.zeros(len(positions))
    if len(positions) > 1:
        out[1:] = np.hypot(*np.diff(positions[:, [0, 2]], axis=0).T) / dt
    return out
