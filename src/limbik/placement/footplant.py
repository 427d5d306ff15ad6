"""Foot placement on terrain for whole clips: contacts, locking, pelvis, leg IK, metrics.

The method, per frame and per leg (all of it vectorised over frames):

1. The source clip's floor is estimated (or given). Contacts come from the foot's
   height above that floor and its horizontal speed, with hysteresis (or are given).
2. While a foot is in contact its horizontal position is locked where the contact
   began; after the contact the lock is released with a smooth blend (foot-skate removal).
3. A ray down finds the ground under the ankle and the toe. Each keeps the source's
   height above its own floor, so the sole follows the ground along the foot (limited
   by ``max_tilt``); the foot's length is kept.
4. The foot offsets are smoothed with a zero-lag critically damped spring.
5. The pelvis follows the lower foot and is lowered further where a leg could not
   reach (Final IK's Grounder), never pushed through the ground, and smoothed.
6. Each leg is solved with :func:`limbik.two_bone` using the animated knee as the
   ``reference`` (seed 004: the knee stays closest to the artist's pose), and the
   result is applied with :func:`limbik.apply_ik`; per-leg weights blend with the
   source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from limbik import metrics
from limbik._validation import as_flag, as_float
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_slerp,
)
from limbik.placement.contacts import (
    contact_spans,
    contacts_from_ranges,
    detect_contacts,
    horizontal_speed,
)
from limbik.placement.spring import smooth_zero_lag
from limbik.placement.terrain import Terrain
from limbik.skeleton.apply import apply_ik
from limbik.skeleton.limbs import Leg, find_legs
from limbik.skeleton.motion import Motion
from limbik.solvers.two_bone import two_bone

__all__ = ["FootplantReport", "estimate_floor", "evaluate", "footplant"]

Progress = Callable[[int, int, str], None]
_UP = np.array([0.0, 1.0, 0.0])


@dataclasses.dataclass(frozen=True)
class FootplantReport:
    """What :func:`footplant` did and how the motion measures before and after.

    Attributes
    ----------
    floor : the source clip's floor height.
    legs : leg names (``"left"``, ``"right"``).
    contacts : per leg, the contact spans as half-open ``(start, stop)`` frame ranges.
    before, after : metric name → value (see :func:`evaluate`).
    pelvis_offset : ``(frames,)`` vertical root offset applied.
    """

    floor: float
    legs: tuple[str, ...]
    contacts: dict[str, list[tuple[int, int]]]
    before: dict[str, float]
    after: dict[str, float]
    pelvis_offset: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return {
            "floor": self.floor,
            "legs": list(self.legs),
            "contacts": {k: [list(s) for s in v] for k, v in self.contacts.items()},
            "before": self.before,
            "after": self.after,
            "pelvis_offset": {"min": float(self.pelvis_offset.min(initial=0.0)),
                              "max": float(self.pelvis_offset.max(initial=0.0))},
        }

    def summary(self) -> str:
        """A table of every metric before and after."""
        width = max(len(k) for k in self.before) if self.before else 10
        lines = [f"{'metric'.ljust(width)}  {'before':>12}  {'after':>12}"]
        for key, value in self.before.items():
            lines.append(f"{key.ljust(width)}  {value:12.5g}  {self.after[key]:12.5g}")
        return "\n".join(lines)


def _leg_lengths(motion: Motion, leg: Leg) -> tuple[float, float]:
    offsets = motion.skeleton.offsets
    return (float(np.linalg.norm(offsets[leg.knee])), float(np.linalg.norm(offsets[leg.ankle])))


def _foot_point(leg: Leg) -> int:
    return leg.toe if leg.toe is not None else leg.ankle


def estimate_floor(motion: Motion, legs: Sequence[Leg], leg_length: float) -> float:
    """The source clip's floor height, from its lowest foot points.

    Per frame, the lowest of the ankles, toes and the toes' End Sites (toe tips); the
    floor is the 5th percentile of that over the clip. Motion-capture files put the
    floor at y = 0, so an estimate within 2% of a leg length of 0 is taken as exactly 0.
    """
    world = motion.world_positions(include_end_sites=True)
    joints = motion.skeleton.num_joints
    feet = {j for leg in legs for j in (leg.ankle, _foot_point(leg))}
    points = sorted(feet) + [joints + k for k, p in enumerate(motion.skeleton.end_site_parents)
                             if int(p) in feet]
    level = float(np.percentile(world[:, points, 1].min(axis=1), 5))
    return 0.0 if abs(level) <= 0.02 * leg_length else level


def _foot_signals(world: np.ndarray, leg: Leg, floor: float, leg_length: float, dt: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Height above rest (leg lengths) and speed (leg lengths/s) of the foot's lower, slower point.

    A planted foot pivots on its heel (ankle) or its toe, so per frame the foot's
    height is the lower of the two and its speed the slower. Each point's height is
    measured from its own resting height (a low percentile, never below the floor),
    so a toe joint that sits above the sole still counts.
    """
    heights, speeds = [], []
    for j in {leg.ankle, _foot_point(leg)}:
        point = world[:, j]
        above = point[:, 1] - floor
        rest = max(float(np.percentile(above, 5)), 0.0)
        heights.append((above - rest) / leg_length)
        speeds.append(horizontal_speed(point, dt) / leg_length)
    return np.min(heights, axis=0), np.min(speeds, axis=0)


def contact_speed_threshold(speeds: np.ndarray) -> float:
    """A clip's planted-versus-swinging speed threshold (leg lengths/s).

    Foot speeds are bimodal: slow while planted (or skating), fast in swing. The
    threshold is the geometric mean of the 10th and 90th percentiles, within [0.1, 2].
    """
    low, high = np.percentile(speeds, [10, 90])
    return float(np.clip(np.sqrt(max(low, 1e-3) * max(high, 1e-3)), 0.1, 2.0))


def _lock_offsets(point: np.ndarray, contact: np.ndarray, blend_frames: int) -> np.ndarray:
    """Horizontal (x, z) offsets ``(frames, 2)`` that hold the foot still during contacts.

    Inside a contact the foot is held where the contact began; after it the offset
    eases back to zero over ``blend_frames`` (or before the next contact starts).
    """
    n = len(point)
    offset = np.zeros((n, 2))
    xz = point[:, [0, 2]]
    spans = contact_spans(contact)
    for k, (start, stop) in enumerate(spans):
        offset[start:stop] = xz[start] - xz[start:stop]
        end = offset[stop - 1]
        next_start = spans[k + 1][0] if k + 1 < len(spans) else n
        length = min(blend_frames, next_start - stop)
        if length > 0:
            s = (np.arange(1, length + 1) / (length + 1))[:, None]
            ease = 1 - s * s * (3 - 2 * s)
            offset[stop:stop + length] = end * ease
    return offset


def _place_foot(ankle: np.ndarray, toe: np.ndarray | None, lock: np.ndarray, terrain: Terrain,
                floor: float, max_tilt: float) -> tuple[np.ndarray, np.ndarray | None]:
    """Ankle (and toe) targets on the terrain, keeping heights above the floor."""
    a = ankle.copy()
    a[:, [0, 2]] += lock
    ha = np.maximum(ankle[:, 1] - floor, 0.0)
    if toe is None:
        a[:, 1] = terrain.height(a[:, 0], a[:, 2]) + ha
        return a, None
    t = toe.copy()
    t[:, [0, 2]] += lock
    ht = np.maximum(toe[:, 1] - floor, 0.0)
    a[:, 1] = terrain.height(a[:, 0], a[:, 2]) + ha
    t[:, 1] = terrain.height(t[:, 0], t[:, 2]) + ht
    # keep the foot's length: the toe holds its place, the ankle slides along the
    # foot's heading; the change of pitch is limited to max_tilt
    source = toe - ankle
    length = np.linalg.norm(source, axis=1)
    horizontal = np.hypot(source[:, 0], source[:, 2])
    source_pitch = np.arctan2(source[:, 1], np.maximum(horizontal, 1e-300))
    dy = t[:, 1] - a[:, 1]
    pitch = np.arcsin(np.clip(dy / np.maximum(length, 1e-300), -1.0, 1.0))
    pitch = np.clip(pitch, source_pitch - max_tilt, source_pitch + max_tilt)
    heading = np.where(horizontal[:, None] > 1e-9 * np.maximum(length, 1e-300)[:, None],
                       source[:, [0, 2]] / np.maximum(horizontal, 1e-300)[:, None], 0.0)
    a[:, 0] = t[:, 0] - heading[:, 0] * length * np.cos(pitch)
    a[:, 2] = t[:, 2] - heading[:, 1] * length * np.cos(pitch)
    a[:, 1] = t[:, 1] - length * np.sin(pitch)
    return a, t


def _pin_weight(contact: np.ndarray, frames: int) -> np.ndarray:
    """1 inside contacts, easing to 0 over ``frames`` on either side: ``(n,)``."""
    n = len(contact)
    idx = np.arange(n)
    inside = np.flatnonzero(contact)
    if inside.size == 0:
        return np.zeros(n)
    # distance (frames) to the nearest contact frame
    pos = np.searchsorted(inside, idx)
    left = np.abs(idx - inside[np.clip(pos - 1, 0, inside.size - 1)])
    right = np.abs(inside[np.clip(pos, 0, inside.size - 1)] - idx)
    distance = np.minimum(left, right)
    s = np.clip(1.0 - distance / (frames + 1), 0.0, 1.0)
    return s * s * (3 - 2 * s)


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


def evaluate(motion: Motion, terrain: Terrain, legs: Sequence[Leg],
             contacts: Mapping[str, np.ndarray], *,
             reference: Motion | None = None) -> dict[str, float]:
    """Foot-contact quality metrics of ``motion`` on ``terrain``.

    Keys, per leg side ``S``: ``S_skate`` (total horizontal foot travel during
    contact), ``S_skate_max`` (largest per-frame slide), ``S_penetration`` (deepest
    ankle or toe below the ground), ``S_floating`` (mean foot height above the ground
    during contact), ``S_toe_speed_near_ground`` (mean horizontal speed of the foot
    point while within 5% of a leg length of the ground), ``S_knee_pop`` (largest
    per-frame knee angle change, degrees); and ``bone_length_drift`` (largest relative
    bone length change against ``reference``'s first frame, default ``motion``'s).
    Heights are measured from ``terrain``; to measure a source clip on its own floor,
    pass ``Terrain.flat(floor)``.
    """
    world = motion.world_positions()
    out: dict[str, float] = {}
    dt = motion.frame_time
    for leg in legs:
        point = world[:, _foot_point(leg)]
        thigh, shin = _leg_lengths(motion, leg)
        c = contacts[leg.side]
        per_frame, skate = metrics.foot_skate(point, c)
        feet = world[:, [leg.ankle, _foot_point(leg)]]
        out[f"{leg.side}_skate"] = skate
        out[f"{leg.side}_skate_max"] = float(per_frame.max(initial=0.0))
        out[f"{leg.side}_penetration"] = float(metrics.penetration(feet, terrain).max(initial=0))
        fl = metrics.floating(point, terrain, c)
        out[f"{leg.side}_floating"] = float(fl[c].mean()) if np.any(c) else 0.0
        out[f"{leg.side}_toe_speed_near_ground"] = metrics.speed_near_floor(
            point, terrain, dt, near=0.05 * (thigh + shin))
        out[f"{leg.side}_knee_pop"] = metrics.knee_pop(world[:, leg.hip], world[:, leg.knee],
                                                        world[:, leg.ankle])
    ref = (reference or motion).world_positions()[0]
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
              progress: Progress | None = None) -> tuple[Motion, FootplantReport]:
    """Plant the feet of ``motion`` on ``terrain``: returns the new motion and a report.

    Parameters
    ----------
    motion : the source clip (any skeleton with detectable legs).
    terrain : the ground (default: flat at the source floor, which removes foot skate
        and floor penetration only).
    legs : the legs to plant (default: :func:`limbik.find_legs`).
    contacts : per leg side (``"left"``/``"right"``), a bool mask ``(frames,)`` or
        inclusive ``(first, last)`` frame ranges; default: detected.
    floor : the source clip's floor height (default: :func:`estimate_floor`).
    lock_feet : hold feet still while in contact.
    adjust_pelvis : move the pelvis with the lower foot and down where a leg can't reach.
    smooth_time, pelvis_smooth_time : spring smoothing times of the foot and the
        pelvis offsets, seconds.
    release_time : blend time after a contact ends, seconds.
    max_tilt : largest change of foot pitch (or ankle tilt without a toe) from the
        source to follow the ground, radians.
    contact_height : a contact starts with the foot at most this high above its resting
        height (leg lengths) and ends above twice this.
    contact_speed : the planted/swing speed threshold (leg lengths per second); a contact
        starts below 0.7x and ends above 1.4x it. Default: from the clip
        (:func:`contact_speed_threshold`). A foot at or below its rest is in contact
        whatever its speed (sliding through the floor is skating, not swinging).
    weights : 0..1, one for all legs or per side; 0 keeps the source leg.
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
    weight = _weights(weights, legs)
    world = motion.world_positions()
    frames = motion.num_frames
    lengths = {leg.side: _leg_lengths(motion, leg) for leg in legs}
    leg_length = float(np.mean([sum(v) for v in lengths.values()]))
    floor = estimate_floor(motion, legs, leg_length) if floor is None else as_float(floor, "floor")
    ground = terrain if terrain is not None else Terrain.flat(floor)
    tick(1, "contacts")

    signals = {leg.side: _foot_signals(world, leg, floor, leg_length, dt) for leg in legs}
    if contact_speed is None:
        contact_speed = contact_speed_threshold(
            np.concatenate([speed for _, speed in signals.values()]))
    speed_gate = as_float(contact_speed, "contact_speed", minimum=0.0, exclusive=True)
    masks: dict[str, np.ndarray] = {}
    for leg in legs:
        given = None if contacts is None else contacts.get(leg.side)
        if given is None:
            height, speed = signals[leg.side]
            masks[leg.side] = detect_contacts(
                height, speed, enter_height=contact_height, exit_height=2 * contact_height,
                enter_speed=0.7 * speed_gate, exit_speed=1.4 * speed_gate,
                grounded_speed=np.inf, min_frames=max(2, round(0.05 / dt)))
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
    for leg in legs:
        ankle = world[:, leg.ankle]
        toe = world[:, leg.toe] if leg.toe is not None else None
        point = world[:, _foot_point(leg)]
        lock = (_lock_offsets(point, masks[leg.side], release_frames) if lock_feet
                else np.zeros((frames, 2)))
        a, t = _place_foot(ankle, toe, lock, ground, floor, max_tilt)
        # spring-smooth the correction beyond the lock (the lock itself is already eased),
        # exact while planted, then never below the ground
        pin = _pin_weight(masks[leg.side], max(1, round(smooth_time / dt)))
        base = ankle.copy()
        base[:, [0, 2]] += lock
        a = base + _pinned_smooth(a - base, pin, dt, smooth_time)
        a[:, 1] = np.maximum(a[:, 1], ground.height(a[:, 0], a[:, 2]))
        if t is not None and toe is not None:
            t[:, 1] = toe[:, 1] + _pinned_smooth(t[:, 1] - toe[:, 1], pin, dt, smooth_time)
            t[:, 1] = np.maximum(t[:, 1], ground.height(t[:, 0], t[:, 2]))
        targets[leg.side] = (a, t)
    tick(3, "pelvis")

    offset = np.zeros(frames)
    if adjust_pelvis:
        lifts = np.stack([targets[leg.side][0][:, 1] - world[:, leg.ankle, 1] for leg in legs])
        offset = smooth_zero_lag(lifts.min(axis=0), dt, pelvis_smooth_time)
        # a planted leg ends up no straighter than in the source (any leg no further
        # than full reach), so knees keep the animation's bend and don't pop
        bound = np.full(frames, np.inf)
        for leg in legs:
            hip = world[:, leg.hip]
            a = targets[leg.side][0]
            full = 0.999 * sum(lengths[leg.side])
            held = smooth_zero_lag(masks[leg.side].astype(np.float64), dt, pelvis_smooth_time)
            source_reach = np.clip(np.linalg.norm(hip - world[:, leg.ankle], axis=1),
                                   0.5 * full, full)
            reach = full + held * (source_reach - full)
            dh = np.hypot(hip[:, 0] - a[:, 0], hip[:, 2] - a[:, 2])
            can = dh < reach
            highest = a[:, 1] + np.sqrt(np.maximum(reach**2 - dh**2, 0.0)) - hip[:, 1]
            bound = np.where(can, np.minimum(bound, highest), bound)
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
        source_reach = np.clip(np.linalg.norm(world[:, leg.hip] - world[:, leg.ankle], axis=1),
                               0.5 * full, full)
        reach = source_reach + held * (full - source_reach)
        dh = np.hypot(hip[:, 0] - a[:, 0], hip[:, 2] - a[:, 2])
        lowest = hip[:, 1] - np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        raise_by = np.where(dh < reach, np.maximum(lowest - a[:, 1], 0.0), 0.0)
        a[:, 1] += raise_by
        if t is not None:
            t[:, 1] += raise_by
    tick(4, "legs")

    positions: dict[int, np.ndarray] = {}
    rotations: dict[int, np.ndarray] = {}
    for leg in legs:
        thigh, shin = lengths[leg.side]
        a, t = targets[leg.side]
        solved = two_bone(world[:, leg.hip] + lift, a, thigh, shin,
                          reference=world[:, leg.knee] + lift)
        positions[leg.knee] = solved.positions[:, 1]
        positions[leg.ankle] = solved.positions[:, 2]
        if t is not None and leg.toe is not None:
            positions[leg.toe] = t + (solved.positions[:, 2] - a)
        else:
            normal = ground.normal(a[:, 0], a[:, 2])
            source = motion.world_rotations()[:, leg.ankle]
            rotations[leg.ankle] = quaternion_multiply(_tilt_rotation(normal, max_tilt), source)
    moved = dataclasses.replace(motion, root_positions=motion.root_positions + lift)
    planted = apply_ik(moved, positions=positions, rotations=rotations)
    if any(w < 1.0 for w in weight.values()):
        planted = _blend(motion, planted, legs, weight)
    tick(5, "metrics")

    before_ground = Terrain.flat(floor) if terrain is None else ground
    report = FootplantReport(
        floor=floor,
        legs=tuple(leg.side for leg in legs),
        contacts={side: contact_spans(m) for side, m in masks.items()},
        before=evaluate(motion, before_ground, legs, masks),
        after=evaluate(planted, ground, legs, masks, reference=motion),
        pelvis_offset=offset,
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
    if not isinstance(motion, Motion):
        raise InvalidInputError(f"motion must be a Motion, got {type(motion).__name__}",
                                argument="motion")
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
                     legs: Sequence[Leg] | None = None) -> Terrain:
    """A terrain for ``motion``: a procedural kind, or a ``.npy``/``.png`` height field.

    Procedural kinds (``flat``, ``hills``, ``steps``, ``slope``) are sized to the clip:
    they cover the root's path plus two leg lengths, and their features scale with the
    leg length (hills about ±6% of it, steps 10% high, slopes 0.1 rad up the walk).
    ``flat`` is at the clip's floor. Files use ``cell_size`` and ``origin``
    (``height_scale`` for PNG), as in :meth:`Terrain.from_array`.
    """
    from pathlib import Path

    suffix = Path(spec).suffix.lower()
    if suffix == ".npy":
        return Terrain.from_npy(spec, cell_size, origin)
    if suffix == ".png":
        return Terrain.from_png(spec, cell_size, origin, height_scale)
    if spec not in PROCEDURAL_TERRAINS:
        raise InvalidInputError(
            f"terrain must be one of {', '.join(PROCEDURAL_TERRAINS)} or a .npy/.png file, "
            f"got {spec!r}", argument="terrain")
    legs = tuple(legs) if legs is not None else find_legs(motion.skeleton)
    leg_length = float(np.mean([sum(_leg_lengths(motion, leg)) for leg in legs]))
    floor = estimate_floor(motion, legs, leg_length)
    if spec == "flat":
        return Terrain.flat(floor)
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
    out = Terrain.from_array(t.heights + floor, t.cell_size, t.origin)
    out.name = f"{spec} ({t.name})" if spec == "hills" else spec
    return out
