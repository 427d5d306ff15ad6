"""Foot placement on terrain for whole clips: contacts, locking, pelvis, leg IK, metrics.

The method, per frame and per leg (all of it vectorised over frames):

1. The source clip's floor is estimated (or given); the terrain is in world coordinates,
   so the motion's floor is carried onto the terrain (``FootplantReport.lift``).
   Contacts come from the foot's height above its local minimum and its speed, with
   hysteresis (or are given).
2. In a contact the whole foot is held: the point that carries the weight (the one
   of heel and toe that stands still and low in the source) does not move, a flat
   foot keeps both where they landed, and the foot rolls about the heel at heel
   strike and about the toe at toe-off (the source's own foot rotation, turned about
   the held point). The lock is released with a smooth blend after the contact.
3. The ground under the heel and the toe is found. Each keeps the source's height above
   its floor, minus the source's float in stance (the lowest point rests on the
   ground; a floating, nearly flat stance foot is laid flat), so the sole follows the
   ground along the foot within ``max_tilt`` while planted or near the ground (a foot
   swinging higher keeps the source's pitch); the foot's length is kept, and the foot
   rolls with the ground across it.
4. The foot offsets are smoothed with a zero-lag critically damped spring.
5. The pelvis follows the lower foot's ground and is lowered further where a leg could
   not reach (Final IK's Grounder), never pushed through the ground, and smoothed; the
   drop that holds a foot leaving the ground down (at the end of its contact and eased
   out after it) is taken up by that foot's own leg, not by the pelvis.
6. Each leg is solved with :func:`limbik.two_bone` about the knee's own hinge axis
   (estimated from the clip in the thigh's frame), following the animated knee where
   the source leg is clearly bent, with soft reach near full extension; the result is
   turned into local rotations by :func:`limbik.apply_ik`'s rule (minimal swing, twist
   kept); per-leg weights blend with the source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import as_flag, as_float, read_only
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.geometry.vectors import cross
from limbik.io.units import import_height_field
from limbik.placement import metrics
from limbik.placement._footplant_kernels import limit_rate, settle_pitch
from limbik.placement.contacts import (
    contact_spans,
    contacts_from_ranges,
    detect_contacts,
    horizontal_speed,
    local_minimum,
)
from limbik.placement.feet import (
    estimate_floor,
    foot_joints,
    foot_point,
    leg_lengths,
    world_pose,
)
from limbik.placement.spring import smooth_zero_lag
from limbik.placement.terrain import Terrain
from limbik.skeleton._fk_kernels import forward_kinematics_frames
from limbik.skeleton.apply import apply_ik
from limbik.skeleton.limbs import Leg, find_legs
from limbik.skeleton.motion import Motion, check_motion
from limbik.solvers.two_bone.solver import two_bone

__all__ = ["FootplantReport", "estimate_floor", "evaluate", "footplant", "knee_hinge_axes"]

Progress = Callable[[int, int, str], None]
#: Stance float (leg lengths) below which a planted foot keeps the source's height.
FLOAT_KEPT = 0.005
_UP = np.array([0.0, 1.0, 0.0])
#: Degrees per frame by which a leg's knee may bend faster than the source's off contacts.
KNEE_RATE_SLACK = 1.5
#: Heights (leg lengths) of a foot's lowest point above where it stands: up to the first,
#: the foot's pitch follows the ground along it (within ``max_tilt`` of the source's);
#: from the second up it keeps the source's pitch; between, the allowed change shrinks
#: smoothly. A steep foot over a slope has two pitches that follow the ground (pointing
#: down, and turned by twice the slope), and a swing would jump between them.
SWING_FOLLOW = (0.01, 0.04)
#: Radians by which a foot is pitched down from its rest, rolled onto its toe, past which
#: a contact that the foot leaves upward has ended (a toe-off: the foot is lifting off).
LIFT_OFF_ROLL = np.radians(30.0)
#: Seconds ahead within which a foot that still gets lower (by more than half of
#: ``FLOAT_KEPT``) is still landing: a contact starts where it has come down.
LANDING_AHEAD = 0.2
#: Share of the way from the source leg's reach to where the soft reach starts by which a
#: leg whose foot is leaving the ground may end up straighter than the source's to take
#: up the stance drop that holds the rising foot down at the end of its contact and eases
#: out after it, rather than the pelvis going down with it onto the other leg.
LEAVING_REACH = 0.5


@dataclasses.dataclass(frozen=True, repr=False)
class FootplantReport:
    """What :func:`footplant` did and how the motion measures before and after.

    Attributes
    ----------
    floor : the source clip's floor height.
    legs : leg names (``"left"``, ``"right"``).
    contacts : per leg, the contact spans as half-open ``(start, stop)`` frame ranges.
    before, after : metric name → value (see :func:`evaluate`).
    pelvis_offset : ``(frames,)`` vertical root offset applied.
    lift : how far the clip's floor was moved up to lie on the terrain (the terrain's
        median height under the root's path minus ``floor``); 0 without a terrain.
    heel_weight : per leg side, ``(frames,)`` how much the heel is the planted foot's
        pivot (1 heel, 0 toe): in a contact the point ``w·ankle + (1 − w)·toe`` is held
        still horizontally.
    """

    floor: float
    legs: tuple[str, ...]
    contacts: dict[str, list[tuple[int, int]]]
    before: dict[str, float]
    after: dict[str, float]
    pelvis_offset: np.ndarray
    lift: float = 0.0
    heel_weight: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return {
            "floor": self.floor,
            "lift": self.lift,
            "legs": list(self.legs),
            "contacts": {k: [list(s) for s in v] for k, v in self.contacts.items()},
            "before": self.before,
            "after": self.after,
            "pelvis_offset": {"min": float(self.pelvis_offset.min(initial=0.0)),
                              "max": float(self.pelvis_offset.max(initial=0.0))},
        }

    def __repr__(self) -> str:
        spans = sum(len(v) for v in self.contacts.values())
        return (f"FootplantReport(legs={self.legs}, frames={self.pelvis_offset.shape[0]}, "
                f"contacts={spans}, floor={self.floor:.4g}, lift={self.lift:.4g}; "
                f"summary() tabulates the {len(self.before)} metrics)")

    def summary(self) -> str:
        """A table of every metric before and after."""
        width = max(len(k) for k in self.before) if self.before else 10
        lines = [f"{'metric'.ljust(width)}  {'before':>12}  {'after':>12}"]
        for key, value in self.before.items():
            lines.append(f"{key.ljust(width)}  {value:12.5g}  {self.after[key]:12.5g}")
        return "\n".join(lines)


def _legs_world_pose(planted: Motion, source_rotations: np.ndarray, source_world: np.ndarray,
                     legs: Sequence[Leg], lift: np.ndarray) -> np.ndarray:
    """World positions with End Sites ``(F, J + E, 3)`` of ``planted``, a clip that differs
    from the source (world rotations ``(F, J, 4)``, positions with End Sites
    ``(F, J + E, 3)``) only in its legs and its root moved by ``lift`` ``(F, 3)``: forward
    kinematics runs over the legs alone."""
    sk = planted.skeleton
    joints = sk.num_joints
    q = np.array(source_rotations, order="C")
    p = source_world[:, :joints] + lift[:, None]
    stale = np.zeros(joints, dtype=np.bool_)
    for leg in legs:
        stale |= sk.descendants_mask(leg.hip, include_self=True)
    forward_kinematics_frames(read_only(np.ascontiguousarray(sk.parents, dtype=np.int64)),
                              read_only(np.ascontiguousarray(planted.rotations)),
                              read_only(planted.local_translations()), q, p, stale)
    ends = p[:, sk.end_site_parents] + rotate_vectors(q[:, sk.end_site_parents],
                                                      sk.end_site_offsets)
    return np.concatenate([p, ends], axis=1)


def _rest_heights(motion: Motion, full_world: np.ndarray, legs: Sequence[Leg], floor: float,
                  leg_length: float) -> dict[str, np.ndarray]:
    """Per leg, the resting heights above the floor of its foot points (see
    :func:`foot_joints`): each point's 5th percentile, never below the floor, and no
    more than 0.5% of a leg above the same point of the other foot (both feet stand on
    one floor, so a foot that never comes down that far was hovering)."""
    own = {leg.side: np.maximum(np.percentile(
        full_world[:, foot_joints(motion, leg), 1] - floor, 5, axis=0), 0.0) for leg in legs}
    out = {}
    for leg in legs:
        rest = own[leg.side]
        for other in legs:
            if other.side != leg.side and own[other.side].shape == rest.shape:
                rest = np.minimum(rest, own[other.side] + 0.005 * leg_length)
        out[leg.side] = rest
    return out


def _foot_signals(world: np.ndarray, leg: Leg, floor: float, leg_length: float, dt: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Contact height (leg lengths) and speed (leg lengths/s) of a foot ``(frames,)``.

    A planted foot pivots on its heel (ankle) or its toe, so per frame the foot's
    height is the lower of the two and its speed the slower. Each point's height is
    measured from its own resting height (a low percentile, never below the floor).
    The height used for contacts is the height above the foot's local minimum (±0.4 s),
    so stances that hover at different heights from step to step are still found; a
    foot at or below its resting height reads as at or below 0 (grounded).
    """
    heights, speeds = [], []
    for j in dict.fromkeys((leg.ankle, foot_point(leg))):
        point = world[:, j]
        above = point[:, 1] - floor
        rest = max(float(np.percentile(above, 5)), 0.0)
        heights.append((above - rest) / leg_length)
        speeds.append(horizontal_speed(point, dt) / leg_length)
    height = np.min(heights, axis=0)
    local = height - local_minimum(height, max(1, round(0.4 / dt)))
    return np.where(height <= 0.0, height, local), np.min(speeds, axis=0)


def _sole_heights(full_world: np.ndarray, motion: Motion, leg: Leg, floor: float,
                  rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A foot's points (see :func:`foot_joints`) above the floor ``(frames, k)``, and the
    heights above their resting heights ``rest`` ``(k,)`` of its heel and of its lowest
    toe point ``(frames, 2)`` (``(frames, 1)`` without a toe): what stance float is
    measured on."""
    above = full_world[:, foot_joints(motion, leg), 1] - floor
    relative = above - rest
    if leg.toe is None:
        return above, relative[:, :1]
    return above, np.stack([relative[:, 0], relative[:, 1:].min(axis=1)], axis=1)


def _landing(sole: np.ndarray, leg_length: float, ahead: int) -> np.ndarray:
    """Frames ``(n,)`` at which a foot whose heel and toe are ``sole`` ``(n, k)`` above
    their rests (:func:`_sole_heights`) is still coming down: its lowest point is higher
    than ``FLOAT_KEPT`` of a leg (the float that stance keeps), and lower by more than
    half of that within the next ``ahead`` frames."""
    height = sole.min(axis=1)
    padded = np.concatenate([height, np.full(ahead, np.inf)])
    lowest = np.lib.stride_tricks.sliding_window_view(padded, ahead + 1).min(axis=1)
    keep = FLOAT_KEPT * leg_length
    return (height > keep) & (height - lowest > 0.5 * keep)


def _rolled_onto_toe(world: np.ndarray, leg: Leg, rest: np.ndarray) -> np.ndarray | None:
    """Frames ``(n,)`` at which a foot is rolled onto its toe: pitched down by more than
    ``LIFT_OFF_ROLL`` radians from its pitch at rest (heel and toe at their resting
    heights ``rest``, heel first). None for a leg without a toe."""
    if leg.toe is None:
        return None
    foot = world[:, leg.toe] - world[:, leg.ankle]
    length = np.maximum(np.linalg.norm(foot, axis=1), 1e-300)
    pitch = np.arcsin(np.clip(foot[:, 1] / length, -1.0, 1.0))
    at_rest = np.arcsin(np.clip((rest[1] - rest[0]) / length, -1.0, 1.0))
    return at_rest - pitch > LIFT_OFF_ROLL


def contact_speed_threshold(speeds: np.ndarray) -> float:
    """A clip's planted-versus-swinging speed threshold (leg lengths/s).

    Foot speeds are bimodal: slow while planted (or skating), fast in swing. The
    threshold is the geometric mean of the 10th and 90th percentiles, within [0.1, 2].
    """
    low, high = np.percentile(speeds, [10, 90])
    return float(np.clip(np.sqrt(max(low, 1e-3) * max(high, 1e-3)), 0.1, 2.0))


def _ease_after(offset: np.ndarray, spans: list[tuple[int, int]], blend_frames: int, *,
                keep_rate: bool = False) -> None:
    """After each span, ease ``offset`` ``(n, k)`` from its last value to 0 (in place).

    With ``keep_rate`` the ease starts at the rate of change of the span's last frames
    (a cubic Hermite curve), so that what follows ``offset`` keeps its velocity.
    """
    n = len(offset)
    for k, (start, stop) in enumerate(spans):
        end = offset[stop - 1].copy()
        rate = (end - offset[stop - 2] if keep_rate and stop - start >= 2
                else np.zeros_like(end))
        next_start = spans[k + 1][0] if k + 1 < len(spans) else n
        length = min(blend_frames, next_start - stop)
        if length > 0:
            s = (np.arange(1, length + 1) / (length + 1))[:, None]
            offset[stop:stop + length] = (end * (1 - s * s * (3 - 2 * s))
                                          + rate * (length + 1) * s * (1 - s) ** 2)


def _ease_around(values: np.ndarray, spans: list[tuple[int, int]], blend_frames: int, *,
                 keep_rate: bool = False) -> np.ndarray:
    """``values`` ``(n, k)``, set inside ``spans`` and zero outside, eased in before each
    span and out after it over ``blend_frames`` (within the gaps, the two eases add)."""
    before = np.zeros_like(values)
    for k, (start, _stop) in enumerate(spans):
        previous_stop = spans[k - 1][1] if k > 0 else 0
        length = min(blend_frames, start - previous_stop)
        if length > 0:
            s = (np.arange(length, 0, -1) / (length + 1))[:, None]
            before[start - length:start] = values[start] * (1 - s * s * (3 - 2 * s))
    after = values.copy()
    _ease_after(after, spans, blend_frames, keep_rate=keep_rate)
    return after + before


def _leaving(drop: np.ndarray, contact: np.ndarray, release_frames: int) -> np.ndarray:
    """Where a foot leaves the ground ``(n,)``: 1 there, else 0.

    That is, in each contact that ends before the clip does, from where the foot's stance
    drop ``drop`` ``(n,)`` (:func:`_stance_drop`, units) last starts to grow to the
    contact's end (the foot rises out of the float that stance keeps and is held down),
    and over the ``release_frames`` after it outside contacts (the drop easing out).
    """
    n = len(drop)
    c = np.asarray(contact, dtype=bool)
    out = np.zeros(n)
    release = np.zeros(n, dtype=bool)
    for start, stop in contact_spans(c):
        if stop == n:
            continue
        steady = np.flatnonzero(np.diff(drop[start:stop]) <= 0.0)
        rise = start + (int(steady[-1]) + 1 if steady.size else 0)
        if drop[stop - 1] > drop[rise]:
            out[rise:stop] = 1.0
        release[stop:stop + release_frames] = True
    out[release & ~c] = 1.0
    return out


def _ramp(x: np.ndarray) -> np.ndarray:
    """Smoothstep of ``x`` clipped to [0, 1]."""
    s = np.clip(x, 0.0, 1.0)
    return s * s * (3 - 2 * s)


def _stance_drop(relative: np.ndarray, contact: np.ndarray, keep: float, blend_frames: int,
                 dt: float, smooth_time: float) -> np.ndarray:
    """How far to lower each point of a planted foot ``(n, k)``, from the points' heights
    above their resting heights ``relative`` ``(n, k)`` (heel first, then the toe).

    In a contact the foot's float (its lowest point's height above rest) beyond ``keep``
    (capture noise) is removed. A foot that floated more than ``2·keep`` was not standing
    on anything; where it is also nearly flat (its points' heights above rest within
    ``5·keep`` of each other) it is laid flat on the ground, every point at its rest:
    fully where it floated ``3·keep`` or more and its points are within ``3·keep`` of
    each other, smoothly less toward those bounds, spring-smoothed over ``smooth_time``
    seconds within the contact; over its approach the contact's first value holds (a
    foot in the air is no stance, and a flat one would read as floating). The drops ease
    in before each contact and out after it over ``blend_frames``, starting out at the
    rate they changed at the end of the contact (a foot lifting off keeps its speed).
    """
    spans = contact_spans(contact)
    hover = relative.min(axis=1)
    float_removed = np.maximum(hover - keep, 0.0)
    spread = relative.max(axis=1) - hover
    flat_float = _ramp((5 * keep - spread) / (2 * keep)) * _ramp((hover - 2 * keep) / keep)
    # the approach to a contact (up to blend_frames, the later half of the gap after
    # another) takes the value the foot lands with: the smoothing then carries no swing
    # into the contact (a flat foot in the air reads as floating)
    for k, (start, _stop) in enumerate(spans):
        gap = start - spans[k - 1][1] if k > 0 else 2 * start
        length = min(blend_frames, gap // 2)
        flat_float[start - length:start] = flat_float[start]
    flatten = smooth_zero_lag(flat_float, dt, smooth_time)[:, None]
    drop = float_removed[:, None] + flatten * np.maximum(relative - float_removed[:, None], 0.0)
    drop[~np.asarray(contact, dtype=bool)] = 0.0
    return np.maximum(_ease_around(drop, spans, blend_frames, keep_rate=True), 0.0)


def _heel_weight(heel: np.ndarray, toe: np.ndarray, dt: float, leg_length: float,
                 speed_gate: float) -> tuple[np.ndarray, np.ndarray]:
    """How much the heel carries the foot ``(n,)`` (1 heel, 0 toe), and how flat the foot
    stands ``(n,)`` (1: heel and toe both carry it), from the source's heel (ankle) and toe
    positions ``(n, 3)``.

    The point that carries the weight is the one that stands still and low: each point
    scores its height above its local minimum (±0.4 s) in units of 1.5% of a leg plus its
    speed (smoothed over 0.05 s) in units of half the clip's contact speed threshold
    ``speed_gate`` (leg lengths/s; at least 0.15, more where the source's planted feet
    skate); the lower score wins, with a smooth blend where the two are within half a unit. A
    heel strike (the toe still coming down) goes to the heel, a toe-off (the heel rising) to
    the toe, and a turn on the ball of the foot to the toe even when the heel is as low. A
    point carries weight with a score up to 1 and none from 2 on; the foot stands flat where
    both carry it.
    """
    unit = max(0.15, 0.5 * speed_gate)
    kernel = np.ones(max(1, round(0.05 / dt)) | 1)
    kernel /= kernel.sum()
    scores = []
    for point in (heel, toe):
        velocity = np.gradient(point, dt, axis=0) if len(point) > 1 else np.zeros_like(point)
        speed = np.convolve(np.pad(np.linalg.norm(velocity, axis=1), len(kernel) // 2,
                                   mode="edge"), kernel, mode="valid")
        height = point[:, 1] - local_minimum(point[:, 1], max(1, round(0.4 / dt)))
        scores.append(height / (0.015 * leg_length) + speed / (unit * leg_length))
    s = np.clip(scores[1] - scores[0] + 0.5, 0.0, 1.0)
    carries = [np.clip(2.0 - score, 0.0, 1.0) for score in scores]
    flat = carries[0] * carries[1]
    return s * s * (3 - 2 * s), flat * flat * (3 - 2 * flat)


def _lock_offsets(ankle: np.ndarray, foot: np.ndarray, contact: np.ndarray,
                  heel: np.ndarray, flat: np.ndarray, blend_frames: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Horizontal (x, z) offsets of the ankle ``(frames, 2)`` and of the foot vector
    ``(frames, 2)`` that hold the foot during contacts.

    ``ankle`` is ``(frames, 3)`` and ``foot`` the ankle→toe vectors ``(frames, 3)`` (zeros
    without a toe); ``heel`` and ``flat`` are :func:`_heel_weight`'s. Inside a contact:

    - where the foot stands flat (heel and toe both carry it) neither moves: the foot
      vector keeps the value it had when the foot came down flat;
    - otherwise the foot turns as the source's does (its vector changes by the source's
      change, ``(1 - flat)·Δfoot``) about the point that carries it: the ankle moves by
      the toe-pivoted share of that change, ``-(1 - heel)·Δfoot``, and the toe is the
      ankle plus the foot vector. A heel strike rolls over the heel, a toe-off over the
      toe, and neither point slides while it carries the foot.

    Without a toe the ankle is held. The foot is held where the source foot is on average
    during the contact (a skating source then strains the legs half as much as a lock
    where the contact began); both offsets ease in over ``blend_frames`` before the
    contact and back to zero over as many after it (within the gaps between contacts).
    """
    n = len(ankle)
    spans = contact_spans(contact)
    if not spans:
        return np.zeros((n, 2)), np.zeros((n, 2))
    a = ankle[:, [0, 2]]
    v = foot[:, [0, 2]]
    c = np.asarray(contact, dtype=bool)
    starts = np.array([start for start, _ in spans])
    first = np.zeros(n, dtype=bool)
    first[starts] = True
    owner = np.maximum.accumulate(np.where(first, np.arange(n), 0))

    def since_start(step: np.ndarray) -> np.ndarray:
        """Per contact, the sum of ``step`` since its first frame (one cumulative sum)."""
        step[first | ~c] = 0.0
        total = np.cumsum(step, axis=0)
        return total - total[owner]

    turn = np.zeros((n, 2))
    turn[1:] = (1.0 - flat[1:, None]) * np.diff(v, axis=0)
    held_foot = v[owner] + since_start(turn.copy())
    moved = np.zeros((n, 2))
    moved[1:] = (1.0 - heel[1:, None]) * np.diff(held_foot, axis=0)
    held = a[owner] - since_start(moved)
    gap = np.where(c[:, None], a - held, 0.0)
    sums = np.add.reduceat(gap, starts, axis=0)[:len(spans)]
    inside = np.add.reduceat(c.astype(np.float64), starts)[:len(spans)]
    shift = sums / np.maximum(inside, 1.0)[:, None]
    span_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    offset = np.where(c[:, None], held + shift[np.maximum(span_of, 0)] - a, 0.0)
    foot_offset = np.where(c[:, None], held_foot - v, 0.0)
    return _ease_around(offset, spans, blend_frames), _ease_around(foot_offset, spans,
                                                                  blend_frames)


def _place_foot(ankle: np.ndarray, toe: np.ndarray | None, lock: np.ndarray,
                heights: tuple[np.ndarray, np.ndarray | None], heel: np.ndarray,
                terrain: Terrain, max_tilt: np.ndarray, full_tilt: float,
                foot: np.ndarray | None = None, rounds: int = 12
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """Ankle (and toe) targets on the terrain at the given heights above it.

    ``lock`` moves the ankle; the toe starts at the ankle plus ``foot`` (default: the
    source's ankle→toe vector), as the lock assumed. ``rounds`` bounds the resampling
    of the ground.

    The foot keeps its length; its pitch follows the ground along the foot, changed by
    at most ``max_tilt`` ``(n,)`` (radians) from the source's, a limit whose corner is
    eased (``_footplant_kernels.eased_limit``; ``full_tilt`` is the largest limit, at
    which the ground is followed exactly); it pivots on the heel (weight ``heel``) or
    the toe.
    """
    a = ankle.copy()
    a[:, [0, 2]] += lock
    ha, ht = heights
    if toe is None or ht is None:
        a[:, 1] = terrain.height(a[:, 0], a[:, 2]) + ha
        return a, None
    t = toe.copy()
    t[:, [0, 2]] = a[:, [0, 2]] + (toe - ankle if foot is None else foot)[:, [0, 2]]
    source = toe - ankle
    length = np.linalg.norm(source, axis=1)
    horizontal = np.hypot(source[:, 0], source[:, 2])
    source_pitch = np.arctan2(source[:, 1], np.maximum(horizontal, 1e-300))
    along = (source if foot is None else foot)[:, [0, 2]]
    along_size = np.linalg.norm(along, axis=1)
    heading = np.where(along_size[:, None] > 1e-9 * np.maximum(length, 1e-300)[:, None],
                       along / np.maximum(along_size, 1e-300)[:, None], 0.0)
    w = heel[:, None]
    # the pivot (heel or toe, as weighted) stays where the lock put it; the ground is
    # sampled again where the new pitch moves the other end, until that settles
    pivot = w * a[:, [0, 2]] + (1 - w) * t[:, [0, 2]]
    # (compiled: settle_pitch also bisects where the plain iteration does not settle)
    pitch, ay, ty = settle_pitch(
        terrain.heights, terrain.cell_size, terrain.origin[0], terrain.origin[1],
        np.ascontiguousarray(pivot), np.ascontiguousarray(heading),
        np.ascontiguousarray(heel, dtype=np.float64), length, along_size,
        np.ascontiguousarray(ha, dtype=np.float64), np.ascontiguousarray(ht, dtype=np.float64),
        np.ascontiguousarray(source_pitch), np.ascontiguousarray(max_tilt, dtype=np.float64),
        full_tilt, rounds)
    reach = (length * np.cos(pitch))[:, None] * heading
    rise = length * np.sin(pitch)
    base_y = heel * ay + (1 - heel) * (ty - rise)
    a[:, [0, 2]] = pivot - (1 - w) * reach
    a[:, 1] = base_y
    t[:, [0, 2]] = pivot + w * reach
    t[:, 1] = base_y + rise
    return a, t


def _knee_angles(distance: np.ndarray, thigh: float, shin: float) -> np.ndarray:
    """Interior knee angles (degrees) ``(n,)`` of a leg whose ankle is ``distance``
    ``(n,)`` from its hip."""
    cos = (thigh * thigh + shin * shin - distance * distance) / (2.0 * thigh * shin)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _knee_continuity(world: np.ndarray, leg: Leg, lengths: tuple[float, float],
                     lift: np.ndarray, ankle: np.ndarray, toe: np.ndarray | None,
                     contact: np.ndarray, ground: Terrain, dt: float, smooth_time: float
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """Ankle and toe targets ``(n, 3)`` moved along the hip→ankle line off contacts so
    that the knee angle changes per frame by at most the source's change plus
    ``KNEE_RATE_SLACK`` degrees; a foot moved into the ground is lifted onto it.

    A foot leaving a flank or swinging over a crest otherwise bends the knee faster than
    the source does (the planted leg's knee catches up with the source's within a few
    frames); here the change is spread over the frames around it. Contact frames are
    kept exactly.
    """
    thigh, shin = lengths
    hip = world[:, leg.hip] + lift
    reach = ankle - hip
    distance = np.linalg.norm(reach, axis=1)
    lowest, full = abs(thigh - shin) + 1e-9 * (thigh + shin), thigh + shin
    angle = _knee_angles(np.clip(distance, lowest, full), thigh, shin)
    source = _knee_angles(np.linalg.norm(world[:, leg.ankle] - world[:, leg.hip], axis=1),
                          thigh, shin)
    rate = np.empty_like(source)
    rate[0] = np.inf
    rate[1:] = np.abs(np.diff(source)) + KNEE_RATE_SLACK
    free = ~np.asarray(contact, dtype=bool)
    limited = limit_rate(angle, rate, free)
    # the limit's corners smoothed (zero-lag spring over smooth_time), then limited again
    corner = np.where(free, smooth_zero_lag(limited - angle, dt, smooth_time), 0.0)
    limited = limit_rate(angle + corner, rate, free)
    changed = np.flatnonzero(np.abs(limited - angle) > 1e-9)
    if changed.size == 0:
        return ankle, toe
    cos = np.cos(np.radians(limited[changed]))
    wanted = np.sqrt(np.maximum(thigh * thigh + shin * shin - 2.0 * thigh * shin * cos, 0.0))
    move = reach[changed] * (wanted / np.maximum(distance[changed], 1e-300) - 1.0)[:, None]
    a = ankle.copy()
    a[changed] += move
    t = None
    if toe is not None:
        t = toe.copy()
        t[changed] += move
        # a toe moved into the ground pitches up onto it about the ankle
        length = np.linalg.norm(toe - ankle, axis=1)[:, None]
        _pitch_toes_onto_ground(a, t, length, changed, ground, rounds=4)
    # what is left in the ground lifts the foot
    depth = ground.height(a[changed, 0], a[changed, 2]) - a[changed, 1]
    if t is not None:
        depth = np.maximum(depth, ground.height(t[changed, 0], t[changed, 2]) - t[changed, 1])
    up = np.maximum(depth, 0.0)
    a[changed, 1] += up
    if t is not None:
        t[changed, 1] += up
    return a, t


def _at_length(ankle: np.ndarray, toe: np.ndarray, length: np.ndarray) -> np.ndarray:
    """``toe`` ``(n, 3)`` moved along ``ankle → toe`` to ``length`` ``(n, 1)`` from ``ankle``."""
    f = toe - ankle
    return ankle + f * length / np.maximum(np.linalg.norm(f, axis=1, keepdims=True), 1e-300)


def _pitch_toes_onto_ground(ankle: np.ndarray, toe: np.ndarray, length: np.ndarray,
                            rows: np.ndarray, ground: Terrain, *, rounds: int) -> None:
    """In place: each toe of ``rows`` that is in the ground goes up onto it and back to its
    ``length`` ``(F, 1)`` from the ankle (the foot pitches about the ankle), up to
    ``rounds`` times, as long as one is still in the ground."""
    for _ in range(rounds):
        under = ground.height(toe[rows, 0], toe[rows, 2])
        sunk = under > toe[rows, 1]
        if not np.any(sunk):
            break
        moved = rows[sunk]
        toe[moved, 1] = under[sunk]
        toe[moved] = _at_length(ankle[moved], toe[moved], length[moved])


def _direct_chain(skeleton: Any, leg: Leg) -> bool:
    """Whether the knee is the hip's child, the ankle the knee's and the toe the ankle's."""
    parents = skeleton.parents
    return bool(parents[leg.knee] == leg.hip and parents[leg.ankle] == leg.knee
                and (leg.toe is None or parents[leg.toe] == leg.ankle))


def _apply_legs(motion: Motion, source_rotations: np.ndarray, world: np.ndarray,
                legs: Sequence[Leg], lift: np.ndarray, positions: dict[int, np.ndarray],
                rotations: dict[int, np.ndarray]) -> Motion:
    """The clip with its root moved by ``lift`` ``(F, 3)`` and each leg's local rotations
    set so that its knee and ankle reach ``positions`` and its ankle (and toe) take the
    world ``rotations`` ``(F, 4)``.

    The rule is :func:`limbik.apply_ik`'s (each bone turns by the smallest rotation from
    its animated direction to its new one, so it keeps its twist), composed directly
    along the known chain hip → knee → ankle → toe from the clip's world pose
    ``source_rotations`` ``(F, J, 4)`` and ``world`` ``(F, J, 3)``: only the root moves
    above the hips, and only vertically, so the hips' parents keep their world rotations.
    """
    sk = motion.skeleton
    q_local = np.array(motion.rotations)
    translations = motion.local_translations()
    for leg in legs:
        parent = int(sk.parents[leg.hip])
        hip = world[:, leg.hip] + lift
        hip_q = quaternion_multiply(
            quaternion_from_two_vectors(world[:, leg.knee] - world[:, leg.hip],
                                        positions[leg.knee] - hip),
            source_rotations[:, leg.hip])
        knee = hip + rotate_vectors(hip_q, translations[:, leg.knee])
        knee_q = quaternion_multiply(
            quaternion_from_two_vectors(world[:, leg.ankle] - world[:, leg.knee],
                                        positions[leg.ankle] - knee),
            source_rotations[:, leg.knee])
        q_local[:, leg.hip] = quaternion_multiply(
            quaternion_conjugate(source_rotations[:, parent]), hip_q)
        q_local[:, leg.knee] = quaternion_multiply(quaternion_conjugate(hip_q), knee_q)
        ankle_q = rotations[leg.ankle]
        q_local[:, leg.ankle] = quaternion_multiply(quaternion_conjugate(knee_q), ankle_q)
        if leg.toe is not None and leg.toe in rotations:
            q_local[:, leg.toe] = quaternion_multiply(quaternion_conjugate(ankle_q),
                                                      rotations[leg.toe])
    return dataclasses.replace(motion, rotations=q_local,
                               root_positions=motion.root_positions + lift)


def _contact_distances(contact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Frames since the last contact frame at or before each frame, and until the next one
    at or after it: ``(n,)`` each, inf where there is none."""
    n = len(contact)
    idx = np.arange(n)
    inside = np.flatnonzero(contact)
    if inside.size == 0:
        return np.full(n, np.inf), np.full(n, np.inf)
    pos = np.searchsorted(inside, idx)  # the first contact frame at or after each frame
    after = np.where(pos < inside.size, inside[np.minimum(pos, inside.size - 1)] - idx, np.inf)
    last = np.searchsorted(inside, idx, side="right") - 1
    before = np.where(last >= 0, idx - inside[np.maximum(last, 0)], np.inf)
    return before, after


def _approach(contact: np.ndarray, frames: int) -> np.ndarray:
    """0 to 1 over the ``frames`` before each contact starts, 1 inside, 0 after: ``(n,)``."""
    _, after = _contact_distances(contact)
    return _ramp(1.0 - after / (frames + 1))


def _pin_weight(contact: np.ndarray, frames: int) -> np.ndarray:
    """1 inside contacts, easing to 0 over ``frames`` on either side: ``(n,)``."""
    before, after = _contact_distances(contact)
    return _ramp(1.0 - np.minimum(before, after) / (frames + 1))


def _dilate(mask: np.ndarray, frames: int) -> np.ndarray:
    """``mask`` ``(n,)`` widened by ``frames`` on either side."""
    if frames <= 0 or not np.any(mask):
        return mask.copy()
    return local_minimum(np.where(mask, 0.0, 1.0), frames) == 0.0


def _pinned_smooth(exact: np.ndarray, pin: np.ndarray, dt: float, smooth_time: float
                   ) -> np.ndarray:
    """Spring-smoothed ``exact`` ``(n, ...)``, equal to it where ``pin`` ``(n,)`` is 1."""
    smoothed = smooth_zero_lag(exact, dt, smooth_time)
    weight = pin.reshape(pin.shape + (1,) * (exact.ndim - 1))
    return smoothed + weight * (exact - smoothed)


def _smooth_below(bound: np.ndarray, half_width: int) -> np.ndarray:
    """A smooth curve that never exceeds ``bound`` ``(frames,)``: erode, then average.

    Each output is a Hann-weighted mean of running minima over ``±half_width``
    frames, and each of those minima is at most the bound at the output frame.
    Infinite entries (no bound) stay infinite.
    """
    finite = np.isfinite(bound)
    if not np.any(finite):
        return bound
    big = float(np.max(np.abs(bound[finite]))) * 4 + 1.0
    b = np.where(finite, bound, big)
    w = 2 * half_width + 1
    padded = np.pad(b, half_width, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, w)
    eroded = windows.min(axis=1)
    kernel = np.hanning(w + 2)[1:-1]
    kernel /= kernel.sum()
    smooth = np.convolve(np.pad(eroded, half_width, mode="edge"), kernel, mode="valid")
    return np.where(smooth >= big * 0.999, np.inf, smooth)


def _tilt_rotation(normal: np.ndarray, max_tilt: float) -> np.ndarray:
    """Rotations ``(frames, 4)`` taking world up toward ``normal``, at most ``max_tilt``."""
    cos = np.clip(normal[:, 1], -1.0, 1.0)
    angle = np.arccos(cos)
    q = quaternion_from_two_vectors(_UP, normal)
    scale = np.where(angle > max_tilt, max_tilt / np.maximum(angle, 1e-300), 1.0)
    identity = np.broadcast_to(np.array([0.0, 0.0, 0.0, 1.0]), q.shape)
    return quaternion_slerp(identity, q, scale)


def knee_hinge_axes(motion: Motion, legs: Sequence[Leg], *,
                    pose: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> dict[str, np.ndarray]:
    """Each knee's hinge axis in its thigh's frame ``(3,)``, estimated from the clip.

    On frames where the knee is bent by more than 15°, the bend plane's normal
    ``(hip→knee) × (knee→ankle)`` is taken into the thigh (hip joint) frame and averaged,
    weighted by how bent the knee is. A clip that never bends a knee that much uses the
    hips' left-right line instead (knees bend forward). The world axis on a frame is the
    thigh's world rotation applied to it; ``two_bone(..., bend_axis=...)`` bends toward
    ``(hip→ankle) × axis``. ``pose`` is the clip's world rotations and positions, when
    already at hand.
    """
    rotations, world = pose if pose is not None else world_pose(motion)
    left_hip = world[:, legs[0].hip] - world[:, legs[-1].hip]
    out: dict[str, np.ndarray] = {}
    for leg in legs:
        thigh = world[:, leg.knee] - world[:, leg.hip]
        shin = world[:, leg.ankle] - world[:, leg.knee]
        normal = cross(thigh, shin)
        sine = np.linalg.norm(normal, axis=1) / np.maximum(
            np.linalg.norm(thigh, axis=1) * np.linalg.norm(shin, axis=1), 1e-300)
        inverse = quaternion_conjugate(rotations[:, leg.hip])
        bent = sine > np.sin(np.radians(15.0))
        if np.count_nonzero(bent) >= 3:
            local = rotate_vectors(inverse[bent], normal[bent])
            axis = (local / np.linalg.norm(local, axis=1, keepdims=True)
                    * sine[bent, None]).sum(axis=0)
        else:
            axis = rotate_vectors(inverse, left_hip).sum(axis=0)
        size = float(np.linalg.norm(axis))
        if not size > 0:
            axis, size = np.array([1.0, 0.0, 0.0]), 1.0
        out[leg.side] = axis / size
    return out


def _roll_rotation(foot: np.ndarray, normal: np.ndarray, max_tilt: float) -> np.ndarray:
    """Rotations ``(n, 4)`` about the foot direction ``(n, 3)`` that roll the sole with
    the ground's cross slope (``normal`` ``(n, 3)``), by at most ``max_tilt``."""
    f = foot / np.maximum(np.linalg.norm(foot, axis=1, keepdims=True), 1e-300)
    up = _UP - f[:, 1:2] * f
    n = normal - np.sum(normal * f, axis=1, keepdims=True) * f
    angle = np.arctan2(np.sum(cross(up, n) * f, axis=1), np.sum(up * n, axis=1))
    return quaternion_from_axis_angle(f, np.clip(angle, -max_tilt, max_tilt))


def _toe_tip_lift(tips: np.ndarray, turn: np.ndarray, toe: np.ndarray, ground: Terrain
                  ) -> np.ndarray | None:
    """Rotations ``(n, 4)`` of the toe joint that lift its tips out of the ground, or None.

    ``tips`` ``(n, k, 3)`` are the source toe tips relative to the source toe, ``turn``
    ``(n, 4)`` the foot's change of rotation and ``toe`` ``(n, 3)`` the placed toe. A tip
    below the ground turns up about the foot's lateral axis (the toes bend) until it
    rests on it; other frames get the identity.
    """
    if tips.shape[1] == 0:
        return None
    d = rotate_vectors(turn[:, None], tips)
    length = np.linalg.norm(d, axis=2)
    if not np.any(length > 0):
        return None
    deepest = np.argmin(toe[:, None, 1] + d[..., 1] - ground.height(
        toe[:, None, 0] + d[..., 0], toe[:, None, 2] + d[..., 2]), axis=1)
    frames = np.arange(len(toe))
    v = d[frames, deepest]
    tip = toe + v
    sunk = np.flatnonzero((ground.height(tip[:, 0], tip[:, 2]) > tip[:, 1])
                          & (length[frames, deepest] > 0))
    if sunk.size == 0:
        return None
    v = v[sunk]
    size = length[sunk, deepest[sunk]]
    axis = cross(v, _UP)
    angle = np.zeros(sunk.size)
    for _ in range(4):  # the ground under the tip moves as it turns
        turned = rotate_vectors(quaternion_from_axis_angle(axis, angle), v)
        tip = toe[sunk] + turned
        depth = ground.height(tip[:, 0], tip[:, 2]) - tip[:, 1]
        if not np.any(depth > 0):
            break
        goal = np.arcsin(np.clip((turned[:, 1] + np.maximum(depth, 0.0)) / size, -1.0, 1.0))
        angle += np.where(depth > 0, goal - np.arcsin(np.clip(turned[:, 1] / size, -1, 1)), 0.0)
    out = np.zeros((len(toe), 4))
    out[:, 3] = 1.0
    out[sunk] = quaternion_from_axis_angle(axis, angle)
    return out


def _facing(world: np.ndarray, legs: Sequence[Leg]) -> np.ndarray:
    """The hips' horizontal facing ``(frames, 3)``: (left hip − right hip) × up."""
    left = world[:, legs[0].hip] - world[:, legs[-1].hip]
    forward = cross(left, _UP)
    return forward / np.maximum(np.linalg.norm(forward, axis=1, keepdims=True), 1e-300)


def evaluate(motion: Motion, terrain: Terrain, legs: Sequence[Leg],
             contacts: Mapping[str, np.ndarray], *,
             reference: Motion | None = None) -> dict[str, float]:
    """Foot-contact quality metrics of ``motion`` on ``terrain``.

    Keys, per leg side ``S``: ``S_skate`` (total horizontal foot travel during
    contact), ``S_skate_max`` (largest per-frame slide), ``S_penetration`` (deepest
    ankle, toe or toe tip below the ground), ``S_floating`` (mean foot height above the
    ground during contact), ``S_stance_gap`` (mean height of the foot's lowest point
    above the ground during contact), ``S_heel_slide`` and ``S_toe_slide`` (mean speed
    of the ankle and the toe during contact, units/s), ``S_toe_speed_near_ground``
    (mean horizontal speed of the foot point while within 5% of a leg length of the
    ground), ``S_knee_pop`` (largest per-frame knee angle change, degrees),
    ``S_backward_knee_frames`` (frames whose knee bends behind the hip–ankle line,
    against the hips' facing, by more than 2°), ``S_knee_jump`` (largest per-frame
    knee move relative to the hip), ``S_foot_turn`` (largest per-frame turn of the
    ankle→toe direction, degrees; 0 without a toe joint); and ``bone_length_drift``
    (largest relative bone length change against ``reference``'s first frame, default
    ``motion``'s).
    Heights are measured from ``terrain``; to measure a source clip on its own floor,
    pass ``Terrain.flat(floor)``.
    """
    return _evaluate(motion, world_pose(motion)[1], terrain, legs, contacts,
                     None if reference is None else world_pose(reference)[1][0])


def _evaluate(motion: Motion, full: np.ndarray, terrain: Terrain, legs: Sequence[Leg],
              contacts: Mapping[str, np.ndarray], reference: np.ndarray | None
              ) -> dict[str, float]:
    """:func:`evaluate` on world positions with End Sites ``full`` ``(F, J + E, 3)``;
    ``reference`` is the reference pose ``(J + E, 3)`` (default: ``full[0]``)."""
    world = full[:, :motion.skeleton.num_joints]
    out: dict[str, float] = {}
    dt = motion.frame_time
    forward = _facing(world, legs)
    for leg in legs:
        point = world[:, foot_point(leg)]
        thigh, shin = leg_lengths(motion, leg)
        c = contacts[leg.side]
        per_frame, skate = metrics.foot_skate(point, c)
        feet = full[:, foot_joints(motion, leg)]
        out[f"{leg.side}_skate"] = skate
        out[f"{leg.side}_skate_max"] = float(per_frame.max(initial=0.0))
        out[f"{leg.side}_penetration"] = float(metrics.penetration(feet, terrain).max(initial=0))
        fl = metrics.floating(point, terrain, c)
        out[f"{leg.side}_floating"] = float(fl[c].mean()) if np.any(c) else 0.0
        out[f"{leg.side}_stance_gap"] = metrics.stance_gap(feet, terrain, c)
        out[f"{leg.side}_pivot_slide"] = metrics.pivot_slide(world[:, leg.ankle], point, c)[1]
        out[f"{leg.side}_heel_slide"] = metrics.contact_speed(world[:, leg.ankle], c, dt)
        out[f"{leg.side}_toe_slide"] = metrics.contact_speed(point, c, dt)
        out[f"{leg.side}_toe_speed_near_ground"] = metrics.speed_near_floor(
            point, terrain, dt, near=0.05 * (thigh + shin))
        hip, knee, ankle = world[:, leg.hip], world[:, leg.knee], world[:, leg.ankle]
        bend = metrics.knee_bend_angles(hip, knee, ankle, forward)
        out[f"{leg.side}_knee_pop"] = float(np.max(np.abs(np.diff(np.abs(bend))), initial=0.0))
        out[f"{leg.side}_backward_knee_frames"] = float(np.count_nonzero(bend < -2.0))
        out[f"{leg.side}_knee_jump"] = metrics.knee_displacement(hip, knee)
        out[f"{leg.side}_foot_turn"] = (0.0 if leg.toe is None
                                        else metrics.foot_turn(ankle, world[:, leg.toe]))
    ref = (full if reference is None else reference[None])[0, :motion.skeleton.num_joints]
    out["bone_length_drift"] = metrics.bone_length_drift(world, motion.skeleton.parents, ref)
    return out


def footplant(motion: Motion, terrain: Terrain | None = None, *,
              legs: Sequence[Leg] | None = None,
              contacts: Mapping[str, Any] | None = None,
              floor: float | None = None,
              lock_feet: bool = True,
              adjust_pelvis: bool = True,
              smooth_time: float = 0.06,
              pelvis_smooth_time: float = 0.15,
              release_time: float = 0.2,
              max_tilt: float = 0.6,
              contact_height: float = 0.03,
              contact_speed: float | None = None,
              weights: float | Mapping[str, float] = 1.0,
              softness: float = 0.005,
              progress: Progress | None = None) -> tuple[Motion, FootplantReport]:
    """Plant the feet of ``motion`` on ``terrain``: returns the new motion and a report.

    Parameters
    ----------
    motion : the source clip (any skeleton with detectable legs).
    terrain : the ground, in world coordinates: the clip's floor is carried onto it
        (a clip whose feet rest at y = −1.3 on ``Terrain.flat(0)`` is lifted by 1.3).
        Default: flat at the source floor (removes foot skate, float and floor
        penetration only).
    legs : the legs to plant (default: :func:`limbik.find_legs`).
    contacts : per leg side (``"left"``/``"right"``), a bool mask ``(frames,)`` or
        inclusive ``(first, last)`` frame ranges; default: detected.
    floor : the source clip's floor height (default: :func:`estimate_floor`).
    lock_feet : hold feet (heel and toe) still while in contact.
    adjust_pelvis : move the pelvis with the lower foot and down where a leg can't reach.
    smooth_time, pelvis_smooth_time : spring smoothing times of the foot and the
        pelvis offsets, seconds.
    release_time : blend time after a contact ends, seconds.
    max_tilt : largest change of foot pitch and roll from the source to follow the
        ground (or ankle tilt without a toe), radians.
    contact_height : a contact starts with the foot at most this high above its local
        minimum (leg lengths, ±0.4 s), once it has come down (``LANDING_AHEAD``), and
        ends above three times this, or at the last frame at most this high where the
        foot then lifts off rolled onto its toe (``LIFT_OFF_ROLL``).
    contact_speed : the planted/swing speed threshold (leg lengths per second); a contact
        starts below 0.7x and ends above 1.4x it. Default: from the clip
        (:func:`contact_speed_threshold`). A foot at or below its rest is in contact
        whatever its speed (sliding through the floor is skating, not swinging).
    weights : 0..1, one for all legs or per side; 0 keeps the source leg.
    softness : soft reach of the legs near full extension, a fraction of the leg
        (``two_bone(..., softness=)``); 0 is off.
    progress : called as ``progress(done, total, stage)``.

    The clip needs at least one frame and a frame time from ``MIN_FRAME_TIME`` to
    ``MAX_FRAME_TIME`` seconds; anything else raises
    :class:`~limbik.errors.InvalidInputError` naming the argument.
    """
    _check_arguments(motion, terrain, legs, contacts, lock_feet, adjust_pelvis,
                     contact_height, weights, progress)
    steps = 6

    def tick(done: int, stage: str) -> None:
        if progress is not None:
            progress(done, steps, stage)

    legs = tuple(legs) if legs is not None else find_legs(motion.skeleton)
    dt = motion.frame_time
    smooth_time = as_float(smooth_time, "smooth_time", minimum=0.0)
    pelvis_smooth_time = as_float(pelvis_smooth_time, "pelvis_smooth_time", minimum=0.0)
    release_frames = round(as_float(release_time, "release_time", minimum=0.0) / dt)
    max_tilt = as_float(max_tilt, "max_tilt", minimum=0.0)
    softness = as_float(softness, "softness", minimum=0.0)
    if softness >= 0.5:
        raise InvalidInputError(f"softness must be below 0.5, got {softness}",
                                argument="softness")
    weight = _weights(weights, legs)
    source_rotations, full_world = world_pose(motion)
    world = full_world[:, :motion.skeleton.num_joints]
    frames = motion.num_frames
    lengths = {leg.side: leg_lengths(motion, leg) for leg in legs}
    # each source leg's hip-to-ankle distance (frames,), which the pelvis bound, the
    # swing's lift and the soft reach all measure against
    source_reaches = {leg.side: np.linalg.norm(world[:, leg.hip] - world[:, leg.ankle], axis=1)
                      for leg in legs}
    leg_length = float(np.mean([sum(v) for v in lengths.values()]))
    floor = (estimate_floor(motion, legs, leg_length, positions=full_world) if floor is None
             else as_float(floor, "floor"))
    ground = terrain if terrain is not None else Terrain.flat(floor)
    ground.warn_if_left(world, "motion")  # a height field is clamped at its edges
    tick(1, "contacts")

    signals = {leg.side: _foot_signals(world, leg, floor, leg_length, dt) for leg in legs}
    if contact_speed is None:
        contact_speed = contact_speed_threshold(
            np.concatenate([speed for _, speed in signals.values()]))
    speed_gate = as_float(contact_speed, "contact_speed", minimum=0.0, exclusive=True)
    rests = _rest_heights(motion, full_world, legs, floor, leg_length)
    soles = {leg.side: _sole_heights(full_world, motion, leg, floor, rests[leg.side])
             for leg in legs}
    masks: dict[str, np.ndarray] = {}
    for leg in legs:
        given = None if contacts is None else contacts.get(leg.side)
        if given is None:
            height, speed = signals[leg.side]
            # (coming down as the float removal sees it, so that it never pins a foot
            # that is still in the air)
            landing = _landing(soles[leg.side][1], leg_length,
                               max(1, round(LANDING_AHEAD / dt)))
            masks[leg.side] = detect_contacts(
                height, speed, enter_height=contact_height, exit_height=3 * contact_height,
                enter_speed=0.7 * speed_gate, exit_speed=1.4 * speed_gate,
                grounded_speed=np.inf, min_frames=max(2, round(0.05 / dt)),
                lifting=_rolled_onto_toe(world, leg, rests[leg.side]), landing=landing)
        elif np.asarray(given).dtype == bool:
            m = np.asarray(given)
            if m.shape != (frames,):
                raise InvalidInputError(f"contacts[{leg.side!r}] must have shape ({frames},), "
                                        f"got {m.shape}", argument="contacts")
            masks[leg.side] = m.copy()
        else:
            masks[leg.side] = contacts_from_ranges(given, frames)
    tick(2, "foot targets")

    targets: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    pins: dict[str, np.ndarray] = {}
    heels: dict[str, np.ndarray] = {}
    drops: dict[str, np.ndarray] = {}
    leaving_drops: dict[str, np.ndarray] = {}
    leaving: dict[str, np.ndarray] = {}
    for leg in legs:
        ankle = world[:, leg.ankle]
        toe = world[:, leg.toe] if leg.toe is not None else None
        above, points = soles[leg.side]
        pin = _pin_weight(masks[leg.side], max(1, round(smooth_time / dt)))
        pins[leg.side] = pin
        heel, flat = (_heel_weight(ankle, toe, dt, leg_length, speed_gate)
                      if toe is not None else (np.ones(frames), np.ones(frames)))
        # stance float: the weight-carrying point rests on the ground (eased in and out
        # over release_time); up to FLOAT_KEPT of a leg is capture noise and is kept
        drop = _stance_drop(points, masks[leg.side], FLOAT_KEPT * leg_length, release_frames,
                            dt, smooth_time)
        ha = np.maximum(above[:, 0] - drop[:, 0], 0.0)
        ht = np.maximum(above[:, 1] - drop[:, 1], 0.0) if toe is not None else None
        # the pitch follows the ground while planted (easing in and out around contacts)
        # and near it; high above it the foot turns as the source's does
        low, high = SWING_FOLLOW[0] * leg_length, SWING_FOLLOW[1] * leg_length
        near = _ramp((high - (points - drop).min(axis=1)) / (high - low))
        # (and in the release_time before a contact, so a landing foot turns to the
        # slope on its way down rather than in its last frames)
        follow = np.maximum.reduce([
            pin, np.clip(smooth_zero_lag(near, dt, smooth_time), 0.0, 1.0),
            _approach(masks[leg.side], max(1, release_frames))])
        tilt = max_tilt * follow
        heels[leg.side] = heel
        foot = toe - ankle if toe is not None else np.zeros_like(ankle)
        lock = np.zeros((frames, 2))
        if lock_feet:
            lock, turn = _lock_offsets(ankle, foot, masks[leg.side], heel, flat,
                                       release_frames)
            foot[:, [0, 2]] += turn
        a, t = _place_foot(ankle, toe, lock, (ha, ht), heel, ground, tilt, max_tilt,
                           foot if toe is not None else None)
        if t is not None and lock_feet:
            # lock again with the placed foot (its pitch follows the ground) until the
            # two agree, so the held points stay put on slopes too
            held = _dilate(masks[leg.side], release_frames)
            no_freeze = np.zeros(frames)
            for _ in range(16):
                placed = t - a
                # (the placed foot already holds its heading where it stood flat)
                lock, _ = _lock_offsets(ankle, placed, masks[leg.side], heel, no_freeze,
                                        release_frames)
                a, t = _place_foot(ankle, toe, lock, (ha, ht), heel, ground, tilt, max_tilt,
                                   placed, rounds=2)
                if np.max(np.abs(t - a - placed)[held], initial=0.0) <= 1e-10 * leg_length:
                    break
        # spring-smooth the correction beyond the lock (the lock itself is already eased),
        # exact while planted, then never below the ground
        base = ankle.copy()
        base[:, [0, 2]] += lock
        a_smooth = base + _pinned_smooth(a - base, pin, dt, smooth_time)
        # (how far the stance drop lowers that target, and the part of it that holds a
        # foot leaving the ground down, for the pelvis)
        window = _leaving(drop[:, 0], masks[leg.side], release_frames)
        drops[leg.side] = _pinned_smooth(drop[:, 0], pin, dt, smooth_time)
        leaving_drops[leg.side] = _pinned_smooth(window * drop[:, 0], pin, dt, smooth_time)
        leaving[leg.side] = np.clip(smooth_zero_lag(window, dt, smooth_time), 0.0, 1.0)
        if t is not None and toe is not None:
            t = t + (a_smooth - a)
            t[:, 1] = np.maximum(t[:, 1], ground.height(t[:, 0], t[:, 2]))
        a = a_smooth
        a[:, 1] = np.maximum(a[:, 1], ground.height(a[:, 0], a[:, 2]))
        targets[leg.side] = (a, t)
    tick(3, "pelvis")

    offset = np.zeros(frames)
    if adjust_pelvis:
        # the pelvis follows the lower foot's change of ground, not the stance drop of
        # step 4: where a planted leg needs that, the bound below lowers the pelvis
        lifts = np.stack([targets[leg.side][0][:, 1] + drops[leg.side]
                          - world[:, leg.ankle, 1] for leg in legs])
        offset = smooth_zero_lag(lifts.min(axis=0), dt, pelvis_smooth_time)
        # a planted leg ends up no straighter than in the source (whose reach is within
        # the soft reach, so its foot lands exactly), any leg no further than full reach
        bound = np.full(frames, np.inf)
        for leg in legs:
            hip = world[:, leg.hip]
            a = targets[leg.side][0]
            full = 0.999 * sum(lengths[leg.side])
            # held through the release too, so a leg leaving the ground is no straighter
            # than the source's and needs no quick bend to follow it
            held = smooth_zero_lag(_dilate(masks[leg.side], release_frames).astype(np.float64),
                                   dt, smooth_time)
            source_reach = source_reaches[leg.side]
            soft_start = min(full, (1.0 - softness) * sum(lengths[leg.side]))
            room = LEAVING_REACH * leaving[leg.side] * np.maximum(soft_start - source_reach, 0.0)
            dh = np.hypot(hip[:, 0] - a[:, 0], hip[:, 2] - a[:, 2])
            # ...but for the drop that holds its foot down as it leaves: that is left out,
            # as far as the leg stays within LEAVING_REACH of its room to the soft reach
            highest = np.full(frames, np.inf)
            for extra, raised in ((0.0, leaving_drops[leg.side]), (room, 0.0)):
                reach = full + held * (np.clip(source_reach + extra, 0.5 * full, full) - full)
                top = a[:, 1] + raised + np.sqrt(np.maximum(reach**2 - dh**2, 0.0)) - hip[:, 1]
                highest = np.minimum(highest, np.where(dh < reach, top, np.inf))
            bound = np.minimum(bound, highest)
        offset = np.minimum(offset, _smooth_below(bound, max(1, round(pelvis_smooth_time / dt))))
        root = world[:, 0]
        lowest = ground.height(root[:, 0], root[:, 2]) + 0.25 * leg_length - root[:, 1]
        offset = np.maximum(offset, lowest)
        offset *= max(weight.values())
    lift = offset[:, None] * _UP
    # a swinging foot over a dip lifts higher rather than straightening its leg
    for leg in legs:
        a, t = targets[leg.side]
        hip = world[:, leg.hip] + lift
        full = 0.999 * sum(lengths[leg.side])
        held = smooth_zero_lag(masks[leg.side].astype(np.float64), dt, pelvis_smooth_time)
        source_reach = np.clip(source_reaches[leg.side], 0.5 * full, full)
        reach = source_reach + held * (full - source_reach)
        dh = np.hypot(hip[:, 0] - a[:, 0], hip[:, 2] - a[:, 2])
        lowest = hip[:, 1] - np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        raise_by = np.where(dh < reach, np.maximum(lowest - a[:, 1], 0.0), 0.0)
        a[:, 1] += raise_by
        if t is not None:
            t[:, 1] += raise_by
    # the foot keeps its length; a swinging toe that the adjustments above put into the
    # ground pitches up onto it (a planted foot keeps its pivot and is lifted instead)
    for leg in legs:
        a, t = targets[leg.side]
        if t is not None and leg.toe is not None:
            length = np.linalg.norm(world[:, leg.toe] - world[:, leg.ankle], axis=1)[:, None]
            free = pins[leg.side] < 1.0
            # the clamps above move the toe alone: give a free foot its length back
            t[free] = _at_length(a[free], t[free], length[free])
            _pitch_toes_onto_ground(a, t, length, np.flatnonzero(free), ground, rounds=8)
            # what the pitch could not fix lifts the whole foot
            rest = np.maximum(ground.height(t[:, 0], t[:, 2]) - t[:, 1], 0.0)
            a[:, 1] += rest
            t[:, 1] += rest
            targets[leg.side] = (a, t)
    for leg in legs:
        a, t = targets[leg.side]
        targets[leg.side] = _knee_continuity(world, leg, lengths[leg.side], lift, a, t,
                                             masks[leg.side], ground, dt, smooth_time)
    tick(4, "legs")

    positions: dict[int, np.ndarray] = {}
    rotations: dict[int, np.ndarray] = {}
    axes = knee_hinge_axes(motion, legs, pose=(source_rotations, world))
    for leg in legs:
        thigh, shin = lengths[leg.side]
        a, t = targets[leg.side]
        hip = world[:, leg.hip] + lift
        # the source leg swung onto the new hip→ankle line: its knee is the reference and
        # its thigh frame carries the knee's hinge axis
        swing = quaternion_from_two_vectors(world[:, leg.ankle] - world[:, leg.hip], a - hip)
        reference = hip + rotate_vectors(swing, world[:, leg.knee] - world[:, leg.hip])
        axis = rotate_vectors(quaternion_multiply(swing, source_rotations[:, leg.hip]),
                              axes[leg.side])
        # the soft reach starts no nearer than the source leg's own reach: a leg the
        # source holds straighter than that stays as straight (the pelvis bound above
        # keeps a planted foot within it, so the foot lands exactly)
        soft = np.clip(1.0 - source_reaches[leg.side] / (thigh + shin), 0.0, softness)
        solved = two_bone(hip, a, thigh, shin, bend_axis=axis, reference=reference,
                          softness=soft)
        positions[leg.knee] = solved.positions[:, 1]
        positions[leg.ankle] = solved.positions[:, 2]
        source_ankle = source_rotations[:, leg.ankle]
        if t is not None and leg.toe is not None:
            foot = t - a
            turn = quaternion_from_two_vectors(world[:, leg.toe] - world[:, leg.ankle], foot)
            mid = 0.5 * (a + t)
            normal = ground.normal(mid[:, 0], mid[:, 2])
            placed = turn
            if np.any(normal[:, 1] < 1.0):  # level ground rolls nothing
                roll = _roll_rotation(foot, normal, max_tilt)
                roll = quaternion_slerp(np.broadcast_to([0.0, 0.0, 0.0, 1.0], roll.shape),
                                        roll, pins[leg.side])
                placed = quaternion_multiply(roll, turn)
            rotations[leg.ankle] = quaternion_multiply(placed, source_ankle)
            toe_turn = _toe_tip_lift(full_world[:, foot_joints(motion, leg)[2:]]
                                     - world[:, leg.toe, None], placed,
                                     solved.positions[:, 2] + foot, ground)
            if toe_turn is not None:
                rotations[leg.toe] = quaternion_multiply(
                    toe_turn, quaternion_multiply(placed, source_rotations[:, leg.toe]))
        else:
            normal = ground.normal(a[:, 0], a[:, 2])
            rotations[leg.ankle] = quaternion_multiply(_tilt_rotation(normal, max_tilt),
                                                       source_ankle)
    if all(_direct_chain(motion.skeleton, leg) for leg in legs):
        planted = _apply_legs(motion, source_rotations, world, legs, lift, positions,
                              rotations)
    else:  # joints between hip, knee, ankle and toe: the general pass
        moved = dataclasses.replace(motion, root_positions=motion.root_positions + lift)
        planted = apply_ik(moved, positions=positions, rotations=rotations)
    if any(w < 1.0 for w in weight.values()):
        planted = _blend(motion, planted, legs, weight)
    tick(5, "metrics")

    before_ground = Terrain.flat(floor) if terrain is None else ground
    root = motion.root_positions
    lift_by = (float(np.median(ground.height(root[:, 0], root[:, 2]))) - floor
               if terrain is not None else 0.0)
    report = FootplantReport(
        floor=floor,
        legs=tuple(leg.side for leg in legs),
        contacts={side: contact_spans(m) for side, m in masks.items()},
        before=_evaluate(motion, full_world, before_ground, legs, masks, None),
        after=_evaluate(planted, _legs_world_pose(planted, source_rotations, full_world, legs,
                                                  lift), ground, legs, masks, full_world[0]),
        pelvis_offset=offset,
        lift=lift_by,
        heel_weight=heels,
    )
    tick(6, "done")
    return planted, report


MIN_FRAME_TIME = 1e-6
"""Shortest frame time :func:`footplant` accepts, seconds (1 MHz)."""
MAX_FRAME_TIME = 3600.0
"""Longest frame time :func:`footplant` accepts, seconds (one frame an hour)."""


def _check_arguments(motion: Any, terrain: Any, legs: Any, contacts: Any, lock_feet: Any,
                     adjust_pelvis: Any, contact_height: Any, weights: Any,
                     progress: Any) -> None:
    """Reject bad :func:`footplant` arguments with errors that name them."""
    check_motion(motion)
    if motion.num_frames < 1:
        raise InvalidInputError("motion must have at least one frame, got 0",
                                argument="motion")
    if not MIN_FRAME_TIME <= motion.frame_time <= MAX_FRAME_TIME:
        raise InvalidInputError(
            f"motion.frame_time must be within [{MIN_FRAME_TIME:g}, {MAX_FRAME_TIME:g}] "
            f"seconds, got {motion.frame_time!r}", argument="motion")
    if terrain is not None and not isinstance(terrain, Terrain):
        raise InvalidInputError(f"terrain must be a Terrain or None, got "
                                f"{type(terrain).__name__} {terrain!r:.40}", argument="terrain")
    if legs is not None and (isinstance(legs, str | bytes) or not isinstance(legs, Sequence)
                             or not all(isinstance(leg, Leg) for leg in legs)):
        raise InvalidInputError(f"legs must be a sequence of Leg, got {legs!r:.60}",
                                argument="legs")
    as_flag(lock_feet, "lock_feet")
    as_flag(adjust_pelvis, "adjust_pelvis")
    as_float(contact_height, "contact_height", minimum=0.0)
    if progress is not None and not callable(progress):
        raise InvalidInputError(f"progress must be callable or None, got "
                                f"{type(progress).__name__}", argument="progress")
    if isinstance(weights, Mapping):
        for side, w in weights.items():
            if side not in ("left", "right"):
                raise InvalidInputError(f"weights keys must be 'left' or 'right', got {side!r}",
                                        argument="weights")
            as_float(w, f"weights[{side!r}]")
    else:
        as_float(weights, "weights")
    if contacts is None:
        return
    if not isinstance(contacts, Mapping):
        raise InvalidInputError(f"contacts must be a mapping of leg side to a mask or ranges, "
                                f"got {type(contacts).__name__}", argument="contacts")
    for side, given in contacts.items():
        if side not in ("left", "right"):
            raise InvalidInputError(f"contacts keys must be 'left' or 'right', got {side!r}",
                                    argument="contacts")
        if given is None:
            continue
        try:
            if np.asarray(given).dtype != bool:
                contacts_from_ranges(given, motion.num_frames)
        except InvalidInputError:
            raise
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"contacts[{side!r}] must be a bool mask ({motion.num_frames},) or "
                f"(first, last) frame ranges, got {given!r:.60}", argument="contacts") from exc


def _weights(weights: float | Mapping[str, float], legs: Sequence[Leg]) -> dict[str, float]:
    if isinstance(weights, Mapping):
        out = {leg.side: float(weights.get(leg.side, 1.0)) for leg in legs}
    else:
        out = {leg.side: float(weights) for leg in legs}
    for side, w in out.items():
        if not 0.0 <= w <= 1.0:
            raise InvalidInputError(f"weights must be within [0, 1], got {w} for {side!r}",
                                    argument="weights")
    return out


def _blend(source: Motion, planted: Motion, legs: Sequence[Leg],
           weight: dict[str, float]) -> Motion:
    """Slerp each leg's local rotations back toward the source by ``1 - weight``."""
    rotations = np.array(planted.rotations)
    for leg in legs:
        joints = [leg.hip, leg.knee, leg.ankle] + ([leg.toe] if leg.toe is not None else [])
        rotations[:, joints] = quaternion_slerp(source.rotations[:, joints],
                                                planted.rotations[:, joints],
                                                np.asarray(weight[leg.side]))
    return dataclasses.replace(planted, rotations=rotations)


PROCEDURAL_TERRAINS = ("flat", "hills", "steps", "slope")


def terrain_for_clip(spec: str, motion: Motion, *, seed: int = 0, cell_size: float = 1.0,
                     origin: tuple[float, float] = (0.0, 0.0), height_scale: float = 1.0,
                     legs: Sequence[Leg] | None = None, up: str = "y",
                     scale: float = 1.0) -> Terrain:
    """A terrain for ``motion``: a procedural kind, or a ``.npy``/``.png`` height field.

    Procedural kinds (``flat``, ``hills``, ``steps``, ``slope``) are sized to the clip:
    they cover the root's path plus two leg lengths, and their features scale with the
    leg length (hills about ±6% of it, steps 10% high, slopes 0.1 rad up the walk).
    All are in world coordinates: ``flat`` is the plane y = 0 and the others lie
    around it; :func:`footplant` carries the clip's floor onto them. Files use
    ``cell_size`` and ``origin`` (``height_scale`` for PNG), as in :meth:`Terrain.from_array`,
    in the frame of the clip's file: its ``up`` axis, and ``scale`` limbik units per file
    unit (see :func:`limbik.io.units.import_height_field`).
    """
    from pathlib import Path

    suffix = Path(spec).suffix.lower()
    if suffix in (".npy", ".png"):
        field = (Terrain.from_npy(spec, cell_size, origin) if suffix == ".npy" else
                 Terrain.from_png(spec, cell_size, origin, height_scale))
        if up == "y" and scale == 1.0:
            return field
        heights, cell, corner = import_height_field(field.heights, field.cell_size,
                                                    field.origin, up=up, scale=scale)
        return Terrain(heights, cell, corner, name=field.name)
    if spec not in PROCEDURAL_TERRAINS:
        raise InvalidInputError(
            f"terrain must be one of {', '.join(PROCEDURAL_TERRAINS)} or a .npy/.png file, "
            f"got {spec!r}", argument="terrain")
    if spec == "flat":  # needs no legs: a clip of an arm has a floor too
        return Terrain.flat(0.0)
    legs = tuple(legs) if legs is not None else find_legs(motion.skeleton)
    leg_length = float(np.mean([sum(leg_lengths(motion, leg)) for leg in legs]))
    root = motion.root_positions[:, [0, 2]]
    lo = root.min(axis=0) - 2 * leg_length
    hi = root.max(axis=0) + 2 * leg_length
    extent = (float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]))
    travel = root[-1] - root[0]
    if spec == "hills":
        t = Terrain.hills(seed, extent=extent, amplitude=0.06 * leg_length,
                          wavelength=2.0 * leg_length, cell_size=0.05 * leg_length)
    elif spec == "steps":
        along_x = abs(travel[0]) >= abs(travel[1])
        t = Terrain.steps(step_height=0.1 * leg_length, step_length=0.8 * leg_length,
                          extent=extent, direction="x" if along_x else "z",
                          cell_size=0.02 * leg_length)
    else:
        heading = float(np.arctan2(travel[1], travel[0])) if np.any(travel) else 0.0
        t = Terrain.slope(0.1, direction=heading, extent=extent)
    out = Terrain.from_array(t.heights, t.cell_size, t.origin)
    out.name = f"{spec} ({t.name})" if spec == "hills" else spec
    return out
