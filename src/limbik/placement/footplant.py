"""Foot placement on terrain for whole clips: a short pipeline of named stages over one
:class:`LegTrack` per leg, every stage vectorised over frames.

1. **contacts**: per foot joint (ankle/heel and toe separately), from its height above its
   local floor and its speed relative to the leg's length, with hysteresis and a
   minimum duration (:func:`limbik.placement.contacts.joint_contacts`), or given.
2. **locks**: during a contact a joint is held still at the median of the source's
   horizontal positions over the contact (not its first frame: a skating source is held
   where it stood on average), at its resting height above the ground there; a toe held
   with its ankle keeps the foot's length. The foot's ground path is the ground under
   its locks while planted and a smoothstep from the lift-off ground to the landing
   ground in between.
3. **swing paths**: every foot joint keeps the source's height above its floor, carried
   onto the ground path (not onto the bump under it at each frame); the locks are held
   exactly and eased in before and out after each contact; a swing is raised smoothly
   where it would pass the terrain closer than the source's own clearance.
4. **root**: the source's root path lifted by the ground under the feet less the
   source's floor (one constant on flat ground, low-passed on uneven ground), with one
   lift that puts the source's typical stance on the ground; it is lowered by one
   constant as far as most held frames need, and by the least smooth amount more where a
   held leg still could not reach. A swing that would bring its ankle nearer the hip
   than half the source's distance is lowered, smoothly, as far as the ground leaves
   room (the knee turns about the hip at the ankle's speed over that distance).
5. **legs**: knees bend no faster than the source's where the ankle is not held (a bend
   that would come too fast starts earlier and ends later, so a foot is never lowered
   by it); each leg is solved with :func:`limbik.two_bone` about the knee's own hinge
   axis, with the source knee as the bend reference; the foot turns from the source's
   by the least rotation onto its new ankle→toe line; toe tips in the ground bend up;
   everything above the hips is the source's, moved with the root.
6. **report**: contacts per joint and the metrics before (the source on its own floor)
   and after (on the ground), :func:`evaluate`'s and :func:`limbik.metrics.score_motion`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import as_flag, as_float, read_only
from limbik.errors import InvalidInputError
from limbik.geometry._quaternion_kernels import swing_rows
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
from limbik.placement._footplant_kernels import (
    eased_offsets,
    hold_foot_length,
    keep_length,
    leg_chain_rotations,
    limit_rate,
    turn_over_ground,
)
from limbik.placement.contacts import (
    CONTACT_HEIGHT,
    LANDING_TIME,
    contact_spans,
    contacts_from_ranges,
    feet_contacts,
    joint_speed_threshold,
    runs,
    universal_band,
    white_noise,
    window_reduce,
)
from limbik.placement.feet import (
    estimate_floor,
    foot_joints,
    foot_point,
    leg_lengths,
    world_pose,
)
from limbik.placement.settle import settle_in_runs, steady_paths
from limbik.placement.spans import span_frames, span_medians, span_percentiles
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
#: Share of a leg's length (thigh plus shin) that the root's bound lets a held leg reach,
#: where the source's own leg reaches less.
REACH = 0.995
#: Percentile of the held frames' reach shortfall by which the whole root is lowered at once
#: (the rest is lowered locally and smoothly).
DROP_PERCENTILE = 50.0
#: Units of reach shortfall that one unit of distance from a contact's median position
#: is worth, when an ankle's lock is chosen (:func:`_reachable_locks`).
LOCK_SHIFT_COST = 0.02
#: Leg lengths by which a held foot may stand above the ground where its leg would not
#: reach it otherwise (before the root is lowered for it).
FLOAT_ALLOWANCE = 0.005
#: Degrees per frame by which a leg's knee may bend faster than the source's where its
#: ankle is not held.
KNEE_RATE_SLACK = 1.5
#: Share of the source's hip→ankle distance that a swinging ankle keeps from its hip, as far
#: as the ground leaves room (:func:`_stage_unfold`).
FOLD_SHARE = 0.5
#: Heights (leg lengths) of a source foot's lowest joint above its resting height: up to
#: the first, a joint that is not held stands on the ground right under it; from the
#: second up it follows the foot's smooth ground path; between, it blends smoothly.
SWING_FOLLOW = (0.005, 0.02)
#: Height (leg lengths) above its floor below which a source foot at the clip's first or
#: last frame, outside a contact, takes the root onto the ground under it there.
EDGE_NEAR = 0.04


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
        pivot (1 heel, 0 toe): where the foot's length has to be kept, the ankle stays
        by this share and the toe by the rest.
    joint_contacts : per leg side, ``(frames, k)`` contact labels of the foot joints
        (ankle, then toe where the leg has one).
    """

    floor: float
    legs: tuple[str, ...]
    contacts: dict[str, list[tuple[int, int]]]
    before: dict[str, float]
    after: dict[str, float]
    pelvis_offset: np.ndarray
    lift: float = 0.0
    heel_weight: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    joint_contacts: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary; ``joint_contacts`` holds, per leg side and foot joint
        (``"ankle"``, ``"toe"``), the contact spans as ``[start, stop)`` frame ranges."""
        return {
            "floor": self.floor,
            "lift": self.lift,
            "legs": list(self.legs),
            "contacts": {k: [list(s) for s in v] for k, v in self.contacts.items()},
            "joint_contacts": {side: {name: [list(s) for s in contact_spans(mask[:, k])]
                                      for k, name in enumerate(("ankle", "toe")[:mask.shape[1]])}
                               for side, mask in self.joint_contacts.items()},
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
    :func:`foot_joints`): each point's 5th percentile, never below the floor; a point more
    than 0.5% of a leg above the same point of the other foot takes the other's (both
    feet stand on one floor, so a foot that never comes down that far was hovering)."""
    own = {leg.side: np.maximum(np.percentile(
        full_world[:, foot_joints(motion, leg), 1] - floor, 5, axis=0), 0.0) for leg in legs}
    out = {}
    for leg in legs:
        rest = own[leg.side]
        for other in legs:
            if other.side != leg.side and own[other.side].shape == rest.shape:
                rest = np.where(rest > own[other.side] + 0.005 * leg_length,
                                own[other.side], rest)
        out[leg.side] = rest
    return out


def contact_speed_threshold(speeds: np.ndarray) -> float:
    """A clip's planted-versus-swinging speed threshold (leg lengths/s): the same as
    :func:`limbik.placement.contacts.joint_speed_threshold`."""
    return joint_speed_threshold(speeds)


def _ramp(x: np.ndarray) -> np.ndarray:
    """Smoothstep of ``x`` clipped to [0, 1]."""
    s = np.clip(x, 0.0, 1.0)
    return s * s * (3 - 2 * s)


def _knee_angles(distance: np.ndarray, thigh: float, shin: float) -> np.ndarray:
    """Interior knee angles (degrees) ``(n,)`` of a leg whose ankle is ``distance``
    ``(n,)`` from its hip."""
    cos = (thigh * thigh + shin * shin - distance * distance) / (2.0 * thigh * shin)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _knee_continuity(world: np.ndarray, leg: Leg, lengths: tuple[float, float],
                     lift: np.ndarray, ankle: np.ndarray, toe: np.ndarray | None,
                     held: np.ndarray, ground: Terrain, dt: float, smooth_time: float
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """Ankle and toe targets ``(n, 3)`` moved along the hip→ankle line where the ankle is
    not held so that the knee angle changes per frame by at most the source's change plus
    ``KNEE_RATE_SLACK`` degrees; a foot moved into the ground is lifted onto it.

    ``held`` ``(n, k)`` says where each foot joint (ankle, then toe) is fully held. A foot
    leaving a flank or swinging over a crest otherwise bends the knee faster than the
    source does (the planted leg's knee catches up with the source's within a few
    frames), and so does a leg that a heel easing in or out of its lock takes through
    full reach; here the change is spread over the frames around it. The limit only
    bends a knee more (the ankle goes up toward the hip, never below its target): a bend
    it cannot reach in time is begun earlier and released later rather than cut, as far
    as the held frames around it allow. Frames with the ankle held are kept exactly; a
    held toe stays, its ankle turning about it at the foot's length.
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
    held = np.asarray(held, dtype=bool)
    free = ~held[:, 0]
    # (on the knee's bend, 180° less its interior angle: the limit only bends the knee
    # more, which raises the foot toward the hip, never less)
    bend = 180.0 - angle
    limited = limit_rate(bend, rate, free, True)
    # the limit's corners smoothed (zero-lag spring over smooth_time), then limited again
    corner = np.where(free, smooth_zero_lag(limited - bend, dt, smooth_time), 0.0)
    limited = 180.0 - limit_rate(bend + np.maximum(corner, 0.0), rate, free, True)
    changed = np.flatnonzero(np.abs(limited - angle) > 1e-9)
    if changed.size == 0:
        return ankle, toe
    cos = np.cos(np.radians(limited[changed]))
    wanted = np.sqrt(np.maximum(thigh * thigh + shin * shin - 2.0 * thigh * shin * cos, 0.0))
    move = reach[changed] * (wanted / np.maximum(distance[changed], 1e-300) - 1.0)[:, None]
    a = ankle.copy()
    a[changed] += move
    t = None
    loose = changed
    if toe is not None:
        t = toe.copy()
        length = np.linalg.norm(toe - ankle, axis=1)[:, None]
        kept = held[changed, -1]
        pinned, loose = changed[kept], changed[~kept]
        # an ankle over a held toe turns about it, to the wanted distance from the hip
        a[pinned] = _on_two_spheres(hip[pinned], wanted[kept], t[pinned], length[pinned, 0],
                                    ankle[pinned])
        t[loose] += move[~kept]
        # a toe moved into the ground pitches up onto it about the ankle
        _pitch_toes_onto_ground(a, t, length, loose, ground, rounds=4)
    # what is left in the ground lifts the foot (an ankle over a held toe, alone)
    depth = ground._height_unchecked(a[changed, 0], a[changed, 2]) - a[changed, 1]
    if t is not None:
        depth = np.maximum(depth, np.where(np.isin(changed, loose), ground._height_unchecked(
            t[changed, 0], t[changed, 2]) - t[changed, 1], -np.inf))
    up = np.maximum(depth, 0.0)
    a[changed, 1] += up
    if t is not None:
        t[loose, 1] += up[np.isin(changed, loose)]
    return a, t


def _on_two_spheres(first: np.ndarray, first_radius: np.ndarray, second: np.ndarray,
                    second_radius: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Points ``(n, 3)`` at ``second_radius`` ``(n,)`` from ``second`` ``(n, 3)`` and as
    near ``first_radius`` from ``first`` as there are: on the circle where the two
    spheres meet, the one nearest to ``near`` ``(n, 3)``; where they do not meet, the
    point of the second sphere on the line through both centres whose distance from
    ``first`` is nearest to ``first_radius`` (the circle shrinks to it as the spheres
    part)."""
    axis = second - first
    d = np.maximum(np.linalg.norm(axis, axis=1), 1e-300)
    u = axis / d[:, None]
    x = (first_radius ** 2 - second_radius ** 2 + d * d) / (2.0 * d)
    r2 = first_radius ** 2 - x * x
    centre = first + x[:, None] * u
    off = near - centre
    off -= np.sum(off * u, axis=1, keepdims=True) * u
    size = np.linalg.norm(off, axis=1)
    meet = (r2 > 0.0) & (size > 0.0)
    # (apart: the second sphere's nearest or farthest point from the first centre)
    farther = np.abs(d + second_radius - first_radius) < np.abs(
        np.abs(d - second_radius) - first_radius)
    out = second + np.where(farther, 1.0, -1.0)[:, None] * u * second_radius[:, None]
    out[meet] = centre[meet] + off[meet] * (np.sqrt(r2[meet]) / size[meet])[:, None]
    return out


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
        under = ground._height_unchecked(toe[rows, 0], toe[rows, 2])
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
    # (all legs at once: per frame and leg ``(F, L, ...)``; a toe without a rotation keeps
    # its own)
    chains = np.array([(leg.hip, leg.knee, leg.ankle,
                        leg.toe if leg.toe is not None and leg.toe in rotations else -1)
                       for leg in legs], dtype=np.int64)
    ankle_q = np.stack([rotations[leg.ankle] for leg in legs], axis=1)
    toe_q = np.stack([rotations[toe] if toe >= 0 else ankle_q[:, i]
                      for i, toe in enumerate(chains[:, 3].tolist())], axis=1)
    knee_at, ankle_at = (np.stack([positions[j] for j in chains[:, c]], axis=1)
                         for c in (1, 2))
    leg_chain_rotations(_contiguous(source_rotations), _contiguous(world), _contiguous(lift),
                        _contiguous(motion.local_translations()),
                        np.ascontiguousarray(sk.parents, dtype=np.int64), chains,
                        _contiguous(knee_at), _contiguous(ankle_at), _contiguous(ankle_q),
                        _contiguous(toe_q), q_local)
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
    deepest = np.argmin(toe[:, None, 1] + d[..., 1] - ground._height_unchecked(
        toe[:, None, 0] + d[..., 0], toe[:, None, 2] + d[..., 2]), axis=1)
    frames = np.arange(len(toe))
    v = d[frames, deepest]
    tip = toe + v
    sunk = np.flatnonzero((ground._height_unchecked(tip[:, 0], tip[:, 2]) > tip[:, 1])
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
        depth = ground._height_unchecked(tip[:, 0], tip[:, 2]) - tip[:, 1]
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


@dataclasses.dataclass
class LegTrack:
    """One leg through :func:`footplant`'s stages: what each stage knows of it.

    ``joints`` are the foot joints that take contacts (ankle, then toe where the leg has
    one); arrays are per frame ``F`` and per foot joint ``k``.
    """

    leg: Leg
    thigh: float
    shin: float
    joints: list[int]
    source: np.ndarray  # (F, k, 3) source world positions of the foot joints
    rest: np.ndarray  # (k,) each joint's resting height above the floor
    contacts: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0), bool))
    locks: np.ndarray | None = None  # (F, k, 3) held positions (nan outside contacts)
    ground: np.ndarray | None = None  # (F,) the ground path the foot travels over
    root_ground: np.ndarray | None = None  # (F,) the same, as the root follows it (over
    # the ankle's lock where the ankle is held)
    pins: np.ndarray | None = None  # (F, k) 0..1 how much each joint is held
    targets: np.ndarray | None = None  # (F, k, 3) where the foot joints go
    hover: list[float] = dataclasses.field(default_factory=list)  # per contact, the
    # source's stance height above the joints' rests (a network's stances hover)
    stand: np.ndarray | None = None  # (F,) 0..1 how much the foot stands on the ground
    sole: np.ndarray | None = None  # (F,) the source foot's lowest point (ankle, toe, toe
    # tips) above its resting height
    flat_pitch: float = 0.0  # units the toe stands above its rest beyond the ankle's
    # height above its own while the foot stands flat on the ground
    steady: np.ndarray | None = None  # (F, k, 3) the source paths with the clip's white
    # noise held out over the planted spans (:func:`~limbik.placement.settle.steady_paths`)

    @property
    def planted(self) -> np.ndarray:
        """``(F,)`` frames on which any of the foot's joints is in contact."""
        return np.asarray(self.contacts.any(axis=1), dtype=bool)


def _ease_ramps(since: np.ndarray, until: np.ndarray, before: int, after: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Smoothsteps ``(n,)`` from 0 to 1 over the ``before`` frames before each run of a mask
    and from 1 to 0 over the ``after`` frames after it, from each frame's distances since
    the run's last frame and until its next (:func:`_contact_distances`): ``(into,
    out_of)``."""
    into = _ramp(1.0 - until / (before + 1)) if before > 0 else (until == 0).astype(float)
    out_of = _ramp(1.0 - since / (after + 1)) if after > 0 else (since == 0).astype(float)
    return into, out_of


def _ease_weights(mask: np.ndarray, before: int, after: int,
                  distances: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """1 on ``mask`` ``(n,)``, easing (smoothstep) to 0 over ``before`` frames before each
    run of it and ``after`` frames after it: ``(n,)`` (``distances``: the mask's
    :func:`_contact_distances`, where at hand)."""
    since, until = _contact_distances(mask) if distances is None else distances
    into, out_of = _ease_ramps(since, until, before, after)
    return np.maximum(into, out_of)


def _eased_offsets(values: np.ndarray, mask: np.ndarray, before: int, after: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``values`` ``(n, d)`` on ``mask`` (n,), carried from the nearest run's edge and eased
    to 0 over ``before`` frames before each run and ``after`` frames after it (in a gap
    shorter than both, the two are blended, their weights summing to 1); and the mask's
    :func:`_ease_weights` ``(n,)``."""
    n = len(mask)
    out = np.zeros_like(values, dtype=np.float64)
    weights = np.zeros(n)
    if np.any(mask):  # (compiled: :func:`~limbik.placement._footplant_kernels.eased_offsets`)
        eased_offsets(_contiguous(values), np.ascontiguousarray(mask, dtype=np.bool_),
                      int(before), int(after), out, weights)
    return out, weights


def _given_legs(legs: Sequence[Leg] | None, motion: Motion) -> tuple[Leg, ...]:
    """The legs given (at least one), or those found on the skeleton."""
    if legs is None:
        return tuple(find_legs(motion.skeleton))
    given = tuple(legs)
    if not given:
        raise InvalidInputError("legs must hold at least one leg, got an empty sequence",
                                argument="legs")
    return given


def _stage_tracks(motion: Motion, full_world: np.ndarray, legs: Sequence[Leg],
                  floor: float, leg_length: float) -> list[LegTrack]:
    """A :class:`LegTrack` per leg: lengths, foot joints, their source paths and rests."""
    rests = _rest_heights(motion, full_world, legs, floor, leg_length)
    tracks = []
    for leg in legs:
        thigh, shin = leg_lengths(motion, leg)
        joints = [leg.ankle] + ([leg.toe] if leg.toe is not None else [])
        sole = (full_world[:, foot_joints(motion, leg), 1] - floor - rests[leg.side]).min(axis=1)
        tracks.append(LegTrack(leg, thigh, shin, joints, full_world[:, joints].copy(),
                               rests[leg.side][:len(joints)], sole=sole))
    return tracks


def _stage_contacts(tracks: list[LegTrack], given: Mapping[str, Any] | None, floor: float,
                    leg_length: float, dt: float, contact_height: float,
                    contact_speed: float | None, noise: float) -> None:
    """Contacts per foot joint: given per leg, else found on the source's heights above its
    floor and speeds (:func:`~limbik.placement.contacts.feet_contacts`: one speed
    threshold, one noise low-pass and the clip's white ``noise`` for all its feet), a toe
    that lands the frame after its heel held from the heel strike
    (:func:`_toe_from_heel_strike`)."""
    gate = (None if contact_speed is None
            else as_float(contact_speed, "contact_speed", minimum=0.0, exclusive=True))
    frames = len(tracks[0].source) if tracks else 0
    masks = [None if given is None else given.get(t.leg.side) for t in tracks]
    found: list[np.ndarray | None] = [None] * len(tracks)
    if any(m is None for m in masks):
        found = list(feet_contacts([t.source for t in tracks],
                                   [t.source[..., 1] - floor for t in tracks], leg_length,
                                   dt, contact_height=contact_height, speed_threshold=gate,
                                   noise=noise))
    for track, mask, detected in zip(tracks, masks, found, strict=True):
        if mask is None:
            assert detected is not None
            track.contacts = detected
            if detected.shape[1] > 1:
                _toe_from_heel_strike(track.contacts)
            continue
        side = track.leg.side
        if np.asarray(mask).dtype == bool:
            m = np.asarray(mask)
            if m.shape != (frames,):
                raise InvalidInputError(f"contacts[{side!r}] must have shape ({frames},), "
                                        f"got {m.shape}", argument="contacts")
        else:
            m = contacts_from_ranges(mask, frames)
        track.contacts = np.repeat(m[:, None], len(track.joints), axis=1)


def _stage_hovers(track: LegTrack, floor: float) -> None:
    """Per foot contact, how far above its resting height the source's foot stands: the
    lower quartile over the contact of its lowest joint's height above that joint's rest
    (a network's stances hover; a foot rolling onto its toe does not)."""
    lowest = (track.source[..., 1] - floor - track.rest).min(axis=1)
    starts, stops = runs(track.planted)
    track.hover = span_percentiles(lowest, starts, stops, 25.0).tolist() if starts.size else []


def _stage_flat_pitch(tracks: list[LegTrack]) -> None:
    """Per leg with a toe, the toe's height above its rest less the ankle's above its own
    while the foot stands flat (``flat_pitch``): the median over the frames where both are
    in contact and the sole is within ``FLOAT_KEPT`` of its rest; a leg without such
    frames takes the other legs' (one skeleton, one foot shape), and 0 where none has
    them (the rests then stand for the flat foot)."""
    pitches: dict[int, np.ndarray] = {}
    for i, track in enumerate(tracks):
        if track.contacts.shape[1] < 2 or track.sole is None:
            continue
        above = track.source[..., 1] - track.rest  # (a constant floor cancels)
        down = track.sole <= FLOAT_KEPT * (track.thigh + track.shin)
        flat = track.contacts.all(axis=1) & down
        pitches[i] = (above[:, 1] - above[:, 0])[flat]
    for i in pitches:
        own = pitches[i]
        pool = own if own.size else np.concatenate([p for j, p in pitches.items() if j != i]
                                                   + [np.zeros(0)])
        tracks[i].flat_pitch = float(np.median(pool)) if pool.size else 0.0


def _reachable_locks(track: LegTrack, hip: np.ndarray, starts: np.ndarray,
                     stops: np.ndarray, medians: np.ndarray, drop: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The ankle's held horizontal position ``(S, 2)`` over each contact
    ``[starts, stops)`` ``(S,)``: of the source's own positions over the contact (at most
    32, evenly spaced) and their median (``medians`` ``(S, 2)``), the one the leg reaches
    best from the source's hip path ``hip`` ``(F, 3)`` (its largest shortfall, with the hip
    ``drop`` above the ankle's rest, lowest), preferring the median; and the largest
    shortfall there (units) ``(S,)``."""
    src = track.source[:, 0][:, [0, 2]]
    lengths = stops - starts
    # (the median, then every ``every``-th frame of the contact: at most 32 of them)
    every = np.maximum(1, -(-lengths // 32))
    counts = 1 + -(-lengths // every)
    cand_span = np.repeat(np.arange(len(starts)), counts)
    cand_first = np.cumsum(counts) - counts
    rank = np.arange(int(counts.sum())) - cand_first[cand_span]
    frame = starts[cand_span] + np.maximum(rank - 1, 0) * every[cand_span]
    candidates = np.where((rank == 0)[:, None], medians[cand_span], src[frame])
    full = track.thigh + track.shin
    source_reach = np.linalg.norm(track.source[:, 0] - hip, axis=1)
    reach = np.clip(source_reach, REACH * full, 0.9999 * full)
    vertical = hip[:, 1] - drop
    # each candidate against each frame of its contact
    pairs = lengths[cand_span]
    pair_cand = np.repeat(np.arange(len(candidates)), pairs)
    pair_first = np.cumsum(pairs) - pairs
    pair_frame = (np.arange(int(pairs.sum())) - pair_first[pair_cand]
                  + starts[cand_span][pair_cand])
    d = np.hypot(np.hypot(hip[pair_frame, 0] - candidates[pair_cand, 0],
                          hip[pair_frame, 2] - candidates[pair_cand, 1]), vertical[pair_frame])
    shortfall = np.maximum.reduceat(np.maximum(d - reach[pair_frame], 0.0), pair_first)
    cost = shortfall + LOCK_SHIFT_COST * np.linalg.norm(candidates - medians[cand_span], axis=1)
    # the first candidate of least cost in each contact
    least = np.minimum.reduceat(cost, cand_first)
    hit = np.flatnonzero(cost == least[cand_span])
    best = hit[np.searchsorted(cand_span[hit], np.arange(len(starts)))]
    return candidates[best], shortfall[best]


def _stage_locks(track: LegTrack, ground: Terrain, floor: float, hover: float,
                 hip: np.ndarray, lock_feet: bool, dt: float, noise: float = 0.0) -> None:
    """Where each foot joint is held during each of its contacts, at its resting height
    above the ground there: the median of the source's horizontal positions over the
    contact (robust to a skating source); an ankle whose leg would not reach that from
    the source's hip path is held at the source position over the contact that it
    reaches best (:func:`_reachable_locks`), up to ``FLOAT_ALLOWANCE`` higher where it still
    would not; where heel and toe are held at once the foot keeps its length about its
    ball (:func:`_hold_foot_length`). Heights: the source's standing heights above the
    joints' rests, less the float of the foot's sole beyond ``FLOAT_KEPT`` on every
    planted frame (a landing or lifting foot keeps the float it lands or lifts with, and
    is told from a standing one within ``FLOAT_KEPT`` widened by twice the noise's
    universal band); on the standing frames (those of a contact the clip ends in
    included, from where the foot has come down as far as the clip shows), each joint's
    heights over each of its contacts and the sole's over each planted span are first
    settled against the clip's white ``noise`` (:func:`settle_in_runs`: jitter does not
    move a held joint). A toe held with its ankle that stays above the ankle's height
    over its rest plus the foot's ``flat_pitch`` and ``FLOAT_KEPT`` on every such
    standing frame of its contact (outside a contact the clip ends in before it could be
    seen to land) is held at that height there (the foot stands flat; a toe that comes
    down in its contact keeps the source's roll).

    Also the ground path the foot travels over: the ground under its locks while planted,
    a smoothstep from the lift-off ground to the landing ground between contacts, and
    from or to the ground under the foot at the clip's first or last frame where it is
    not in contact there; and the root's copy of it (``root_ground``), which stands on
    the ground under the ankle's lock in a contact that holds the ankle (the hip stands
    over the ankle: on a slope the toe's ground would bend or straighten the leg) and
    takes those edge levels only where the foot is within ``EDGE_NEAR`` of its floor
    there."""
    n, k = track.contacts.shape
    locks = np.full((n, k, 3), np.nan)
    levels: list[tuple[int, int, float]] = []
    length = (float(np.median(np.linalg.norm(track.source[:, 1] - track.source[:, 0], axis=1)))
              if k > 1 else 0.0)
    shifts = np.zeros((n, 2))
    raised = np.zeros(n)
    size = track.thigh + track.shin
    allowance = FLOAT_ALLOWANCE * size
    # the joints' heights above their rests, less the whole foot's float beyond FLOAT_KEPT
    # of a leg on each frame (a foot on tiptoe keeps its heel up; a hovering one comes
    # down)
    above_rest = track.source[..., 1] - floor - track.rest
    # (the sole's lowest point, toe tips included: in a toe-off the toe joint rises over
    # tips that stay on the ground; on each planted frame its float is removed, except
    # while the foot is still landing at the start of its contact or lifting at its end,
    # where the move is lowered by the float it lands or lifts with: it comes down and
    # lifts off as the source's does, and stands where the source's stops)
    lowest = above_rest.min(axis=1) if track.sole is None else track.sole.copy()
    window = max(1, round(LANDING_TIME / dt))
    # (landed and lifting are told apart from standing within FLOAT_KEPT of a leg, widened
    # by how far the clip's noise moves a standing sole: twice the universal band)
    near = FLOAT_KEPT * size + 2.0 * float(universal_band(window, noise))
    still = np.ones(n, dtype=bool)  # (neither landing nor lifting, as far as the clip shows)
    seen = np.ones(n, dtype=bool)  # (not in a contact the clip ends in before it could land)
    keeps = []  # (frames, the frame whose float they keep)
    for start, stop in contact_spans(track.planted):
        if start > 0:  # (a contact the clip starts in has landed)
            ahead = lowest[start:min(stop, start + window + 1)]
            landed = start + int(np.flatnonzero(ahead <= ahead.min() + near)[0])
            keeps.append((slice(start, landed), landed))
            still[start:landed] = False
            if start + window >= n:  # (the clip ends before it could be seen to land)
                seen[start:stop] = False
        if stop < n:  # (and lifts off as the source's does, from its last low)
            behind = lowest[max(start, stop - window - 1):stop]
            last = stop - len(behind) + int(np.flatnonzero(behind <= behind.min() + near)[-1])
            keeps.append((slice(last, stop), last))
            still[last + 1:stop] = False
    # (the standing frames' jitter settled out, as far as the clip shows them: a landing
    # or lifting foot moves as the source's does)
    settle_in_runs(lowest, track.planted & still, noise)
    for j in range(k):
        settle_in_runs(above_rest[:, j], track.contacts[:, j] & still, noise)
    foot_float = np.maximum(lowest - FLOAT_KEPT * size, 0.0)
    for frames_, kept in keeps:
        foot_float[frames_] = foot_float[kept]
    standing = above_rest - foot_float[:, None]
    if k > 1:  # a settled foot held at heel and toe stands flat: its toe no higher above
        # its rest than the heel above its own (or its rest, where the heel is lower) plus
        # the foot's flat pitch and FLOAT_KEPT, in a toe contact whose toe never comes down
        # to that level (a foot that lands on its heel with its toe up and lifts so lays
        # the toe down; one that rolls down onto its toe keeps the roll)
        flat = track.contacts.all(axis=1) & still & seen
        level = (np.maximum(standing[:, 0], 0.0) + max(track.flat_pitch, 0.0)
                 + FLOAT_KEPT * size)
        for start, stop in zip(*runs(track.contacts[:, 1]), strict=True):
            on = np.flatnonzero(flat[start:stop]) + start
            if on.size and np.all(standing[on, 1] > level[on]):
                standing[on, 1] = level[on]
    for j in range(k):
        starts, stops = runs(track.contacts[:, j])
        if starts.size == 0:
            continue
        frames, span = span_frames(starts, stops)
        xz = span_medians(track.source[:, j][:, [0, 2]], starts, stops)
        up = np.zeros(len(starts))
        if j == 0:
            chosen, short = _reachable_locks(track, hip, starts, stops, xz,
                                             floor + hover + track.rest[0])
            shifts[frames] = (chosen - xz)[span]
            xz = chosen
            up = np.minimum(short, allowance)
            raised[frames] = up[span]
        else:
            for c, (start, stop) in enumerate(zip(starts.tolist(), stops.tolist(), strict=True)):
                held = track.contacts[start:stop, 0]
                if np.any(held):
                    xz[c] = xz[c] + shifts[start:stop][held].mean(axis=0)
                    up[c] = float(raised[start:stop][held].max())
        # held still over the ground; its height above the ground is the source's
        # standing height above its rest (the source's, less the sole's float): a
        # foot rolling onto its ball or its heel rolls as the source's does, and a
        # landing one comes down as the source's does (never into the ground, and at
        # least ``up`` above its rest where the leg would not reach lower)
        height = np.maximum(standing[frames, j], -float(track.rest[j]))
        least = up[span]
        height = np.where(least > 0.0, np.maximum(height, least), height)
        y = ground._height_unchecked(xz[:, 0], xz[:, 1])[span] + track.rest[j] + height
        locks[frames, j] = np.stack([xz[span, 0], y, xz[span, 1]], axis=1)
    if k > 1:  # where both are held, the foot keeps its length about the ball of the foot
        _hold_foot_length(locks, track.contacts, length, ground)
    track.locks = locks if lock_feet else np.full_like(locks, np.nan)
    planted = track.planted
    # the ground under the held joints: per planted span, the mean over its joints of the
    # ground under each one's lock at its first held frame there (a held joint's lock
    # stays put over the ground through its contact); and the root's level, the ground
    # under the ankle's lock where the ankle is held in the span (the hip stands over the
    # ankle), else the same mean
    starts, stops = runs(planted)
    total = np.zeros(len(starts))
    count = np.zeros(len(starts))
    under_ankle = np.full(len(starts), np.nan)
    for j in range(k):
        begins, _ = runs(track.contacts[:, j])
        # (a joint's contacts lie within the foot's; its first one in each)
        span, at = np.unique(np.searchsorted(starts, begins, side="right") - 1,
                             return_index=True)
        rows = begins[at]
        beneath = ground._height_unchecked(locks[rows, j, 0], locks[rows, j, 2])
        total[span] = np.where(count[span] > 0, total[span] + beneath, beneath)
        count[span] += 1
        if j == 0:
            under_ankle[span] = beneath
    mean = total / count
    levels.extend(zip(starts.tolist(), stops.tolist(), mean.tolist(), strict=True))
    ankle_levels = list(zip(starts.tolist(), stops.tolist(),
                            np.where(np.isnan(under_ankle), mean, under_ankle).tolist(),
                            strict=True))
    if not levels:  # never planted: the ground under the foot, low-passed
        below = ground._height_unchecked(track.source[:, 0, 0], track.source[:, 0, 2])
        track.ground = smooth_zero_lag(below, 1.0, 5.0) if n > 1 else below
        track.root_ground = track.ground
        return
    # a clip that begins or ends with the foot outside a contact (landing as the clip
    # ends, say, or mid-swing) begins or ends the foot's path on the ground under it
    # there; the root's share of it only where the foot is near the floor there
    lowest = (track.source[..., 1] - floor).min(axis=1)
    size = track.thigh + track.shin
    foot_levels, root_levels = list(levels), list(ankle_levels)
    for edge, first in ((0, True), (n - 1, False)):
        if not planted[edge]:
            j = int(np.argmin(track.source[edge, :, 1]))
            under = float(ground._height_unchecked(track.source[edge, j, 0],
                                                   track.source[edge, j, 2]))
            foot_levels.insert(0 if first else len(foot_levels), (edge, edge + 1, under))
            if lowest[edge] <= EDGE_NEAR * size:
                root_levels.insert(0 if first else len(root_levels), (edge, edge + 1, under))
    track.ground = _level_path(foot_levels, n)
    track.root_ground = _level_path(root_levels, n)


def _toe_from_heel_strike(contacts: np.ndarray) -> None:
    """``contacts`` ``(n, 2)`` (ankle, toe; in place): a toe contact that begins on the
    frame after its ankle's begins starts with the ankle's (the foot struck on its heel
    and is held flat from there)."""
    starts, _ = runs(contacts[:, 1])
    for start in starts.tolist():
        if start >= 1 and contacts[start - 1, 0] and (start < 2 or not contacts[start - 2, 0]):
            contacts[start - 1, 1] = True


def _turn_over_ground(pivot: np.ndarray, heading: np.ndarray, length: np.ndarray,
                      above: np.ndarray, weight: np.ndarray, kept: np.ndarray,
                      ground: Terrain) -> np.ndarray:
    """Points ``(n, 3)`` ``length`` ``(n,)`` from ``pivot`` ``(n, 3)`` along the unit
    ``heading`` ``(n, 2)`` over the ground, at the height ``weight · (ground + above) +
    (1 − weight) · kept`` (``(n,)`` each): the ground under the point as it turns about the
    pivot, found as a fixed point from the ground under the pivot in nine rounds
    (:func:`~limbik.placement._footplant_kernels.turn_over_ground`). A height ``length``
    or more from the pivot's puts the point straight over or under it (its extent over
    the ground goes to 0 there, whatever the heading)."""
    c = _contiguous
    return turn_over_ground(ground.heights, ground.cell_size, ground.origin[0],
                            ground.origin[1], c(pivot), c(heading), c(length), c(above),
                            c(weight), c(kept), 9)


def _swing_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`~limbik.geometry.quaternion.quaternion_from_two_vectors` of ``a`` and ``b``
    ``(..., 3)`` (one shape), compiled (:func:`~limbik.geometry._quaternion_kernels.
    swing_rows`): ``(..., 4)``."""
    return swing_rows(_contiguous(a).reshape(-1, 3),
                      _contiguous(b).reshape(-1, 3)).reshape(a.shape[:-1] + (4,))


def _contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous float64 array, for a kernel (no copy where it is one)."""
    return np.ascontiguousarray(a, dtype=np.float64)


def _hold_foot_length(locks: np.ndarray, contacts: np.ndarray, length: float,
                      ground: Terrain) -> None:
    """In place, over each span where both foot joints are held (``contacts`` ``(n, 2)``),
    in time order: the toe's lock ``locks[:, 1]`` ``(n, 3)`` is moved, for the whole of
    its contact, to ``length`` from the ankle's at the span's first frame along their
    heading over the ground (its height above the ground kept), at the first such span
    of that contact only (a held toe has one place; a heel that lifts and comes down
    again within the toe's contact turns about it where it is); within the span the
    ankle's lock turns about the toe's, ``length`` from it at its own height (a heel
    rolling up over the ball of the foot comes closer to it), keeping its height above
    the ground; and for the rest of the ankle's contact after the span it stays where it
    got to (:func:`~limbik.placement._footplant_kernels.hold_foot_length`, the turns in
    nine rounds as :func:`_turn_over_ground`'s)."""
    held = np.asarray(contacts, dtype=bool)
    hold_foot_length(ground.heights, ground.cell_size, ground.origin[0], ground.origin[1],
                     locks, np.ascontiguousarray(held[:, 0]), np.ascontiguousarray(held[:, 1]),
                     float(length), 9)


def _level_path(levels: list[tuple[int, int, float]], n: int) -> np.ndarray:
    """A ground path ``(n,)`` at each ``(start, stop, level)`` (in order, apart) on its
    frames, and a smoothstep from one level to the next between them."""
    starts, stops, values = (np.array(v) for v in zip(*levels, strict=True))
    frame = np.arange(n)
    k = np.searchsorted(starts, frame, side="right") - 1  # the last level begun by each frame
    path = np.full(n, values[0])  # (before the first level, its own)
    k0 = np.maximum(k, 0)
    begun = k >= 0
    inside = begun & (frame < stops[k0])
    path[inside] = values[k0[inside]]
    path[begun & ~inside & (k0 == len(starts) - 1)] = values[-1]
    gap = np.flatnonzero(begun & ~inside & (k0 < len(starts) - 1))
    if gap.size:
        last = k0[gap]
        s = (gap - stops[last] + 1) / (starts[last + 1] - stops[last] + 1)
        path[gap] = values[last] + (values[last + 1] - values[last]) * _ramp(s)
    return path


def _held_back_on_release(base: np.ndarray, held: np.ndarray, ease_in: int, ease_out: int,
                          band: float) -> np.ndarray:
    """How much of its source's move ``base`` ``(n, d)`` a joint released from its locks
    (held on ``held`` ``(n,)``) does not follow yet ``(n, d)``: on the frames that ease out
    of a run of ``held`` (nearer its end than the next run's start), each coordinate's
    move since the run's last frame clipped to ``±band`` and weighted as the lock's offset
    is there (:func:`_eased_offsets`); 0 elsewhere. A move that the clip's noise could make
    is no lift-off: it comes in as the lock lets go."""
    n = len(held)
    place = np.zeros((n, base.shape[1] + 1))
    place[held, :-1] = base[held]
    place[held, -1] = 1.0
    carried, _ = _eased_offsets(place, held, ease_in, ease_out)
    weight = carried[:, -1:]
    moved = np.clip(weight * base - carried[:, :-1], -weight * band, weight * band)
    since, until = _contact_distances(held)
    moved[held | ~(since <= until)] = 0.0
    return moved


def _stage_swing(track: LegTrack, ground: Terrain, floor: float, hover: float,
                 ease_in: int, ease_out: int, landing: int, release_band: float = 0.0
                 ) -> None:
    """The foot's targets: the source's height above its floor carried onto the ground path
    (never above the bump under it frame by frame), locks held exactly while in contact
    and eased in before and out after (a joint easing out follows its source's move since
    its release less up to ``release_band`` per coordinate, :func:`_held_back_on_release`);
    the swing raised, smoothly, where it would pass closer to the terrain than the
    source's lowest clearance in that swing; the foot kept at its length, the held joint
    fixed."""
    n, k = track.contacts.shape
    source = track.source if track.steady is None else track.steady
    assert track.ground is not None and track.locks is not None
    base = source.copy()
    base[..., 1] += (track.ground - floor - hover)[:, None]
    targets = base.copy()
    pins = np.zeros((n, k))
    for j in range(k):
        if j > 0:  # a toe starts from where its ankle went, the foot turned as the source's
            base[:, j] = targets[:, 0] + source[:, j] - source[:, 0]
            targets[:, j] = base[:, j]
        held = track.contacts[:, j] & np.isfinite(track.locks[:, j, 0])
        if not np.any(held):
            continue
        # (the lock's offset from the source, its height taken above the ground under
        # each, so that easing it out over sloping ground keeps the height above it)
        gap = np.zeros((n, 3))
        lock = track.locks[held, j]
        gap[held] = lock - base[held, j]
        gap[held, 1] = (lock[:, 1] - ground._height_unchecked(lock[:, 0], lock[:, 2])
                        - (base[held, j, 1] - track.ground[held]))
        eased, pins[:, j] = _eased_offsets(gap, held, ease_in, ease_out)
        if release_band > 0.0:
            ground_relative = base[:, j].copy()
            ground_relative[:, 1] -= track.ground
            eased -= _held_back_on_release(ground_relative, held, ease_in, ease_out,
                                           release_band)
        targets[:, j] = base[:, j] + eased
    # a joint while its foot is planted stands on the ground under it, not on the foot's
    # ground path (which it follows in swing)
    # (easing in and out over the short ease-in both ways: a foot that has left the ground
    # follows its path, not the bumps under it); and so does one landing or lifting off
    # (within ``landing`` frames of a contact) as far as the source's is near its floor:
    # fully within SWING_FOLLOW[0] of its rest, not from SWING_FOLLOW[1] up
    distances = _contact_distances(track.planted)
    planted = _ease_weights(track.planted, ease_in, ease_in, distances)
    size = track.thigh + track.shin
    low, high = SWING_FOLLOW[0] * size, SWING_FOLLOW[1] * size
    near = _ramp((high - (source[..., 1] - floor - track.rest).min(axis=1))
                 / (high - low)) * _ease_weights(track.planted, landing, landing, distances)
    # (and so does a foot still held in part, easing out of its locks: its heights are
    # above the ground it leaves)
    track.stand = np.maximum(np.maximum(planted, near), pins.max(axis=1))
    for j in range(k):
        conform = track.stand
        rows = np.flatnonzero(conform > 0.0)
        if rows.size:
            under = ground._height_unchecked(targets[rows, j, 0], targets[rows, j, 2])
            targets[rows, j, 1] += conform[rows] * (under - track.ground[rows])
    if k > 1:  # the foot keeps its length: the held joint stays, the other follows
        length = np.linalg.norm(track.source[:, 1] - track.source[:, 0], axis=1)[:, None]
        a, t = targets[:, 0], targets[:, 1]
        # an ankle free over a held toe hangs from it as the source's does (a heel rolling
        # up and forward over the ball of the foot)
        over = (pins[:, 1] * (1.0 - pins[:, 0]))[:, None]
        hang = t + source[:, 0] - source[:, 1]
        rows = np.flatnonzero(over[:, 0] > 0.0)
        if rows.size:
            _hang_over_ground(hang, t, source[:, 0] - source[:, 1],
                              length[:, 0], rows, ground, track.stand)
        a = (1.0 - over) * a + over * hang
        # the foot's length is kept by moving the joint held less (:func:`_toe_share`);
        # on a standing foot both joints keep their heights above the ground under them
        # (a heel rising off a held toe comes closer to it over the ground as the foot
        # turns about it; three rounds, as the ground under a moved joint changes), and a
        # swinging one keeps its direction (one that points nearly straight down has two
        # pitches at which both joints keep their heights)
        source_heading = (source[:, 1] - source[:, 0])[:, [0, 2]]
        standing = np.flatnonzero(track.stand > 0.0)
        w = track.stand[standing, None]
        toe_first = _toe_share(pins[:, 0:1], pins[:, 1:2])
        held = _keep_length(a[standing], t[standing], length[standing], toe_first[standing],
                            source_heading[standing], ground, w[:, 0], rounds=3)
        a[standing] = w * held[0] + (1.0 - w) * a[standing]
        t[standing] = w * held[1] + (1.0 - w) * t[standing]
        direction = (t - a) / np.maximum(np.linalg.norm(t - a, axis=1, keepdims=True), 1e-300)
        a = (1.0 - toe_first) * a + toe_first * (t - length * direction)
        targets[:, 0], targets[:, 1] = a, a + length * direction
    track.targets, track.pins = targets, pins


def _toe_share(ankle_pin: np.ndarray, toe_pin: np.ndarray) -> np.ndarray:
    """How much of a change of foot length the ankle takes ``(n, 1)`` (the toe takes the
    rest), from how much each is held (0..1, ``(n, 1)``): each joint's hold ``p / (1 − p)``
    resists the move, so a fully held joint stays while the other is held less, of two
    fully held joints the toe stays (the foot turns about its ball), and a free foot
    moves its toe."""
    with np.errstate(divide="ignore", invalid="ignore"):
        resist_ankle = ankle_pin / (1.0 - ankle_pin)
        resist_toe = toe_pin / (1.0 - toe_pin)
        share = resist_toe / (resist_ankle + resist_toe)
    share = np.where(ankle_pin >= 1.0, 0.0, np.where(np.isfinite(share), share, 0.0))
    return np.where(toe_pin >= 1.0, 1.0, share)


def _keep_length(ankle: np.ndarray, toe: np.ndarray, length: np.ndarray,
                 toe_first: np.ndarray, source_heading: np.ndarray,
                 ground: Terrain | None = None, weight: np.ndarray | None = None, *,
                 rounds: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Ankle and toe ``(n, 3)`` moved to ``length`` ``(n, 1)`` apart along their heading over
    the ground, the toe by ``1 − toe_first`` ``(n, 1)`` of the change and the ankle by the
    rest.

    The rise from ankle to toe is blended between the one that keeps both heights (a
    heel rising off a held toe comes closer to it over the ground as the foot turns
    about it; clipped to ``±length``) and the one of the foot scaled along its own line,
    by ``1 − s¹⁶`` with ``s`` the sine of the foot's pitch: a foot up to about 45° from
    level keeps its heights all but exactly, and one pointing straight up or down is
    scaled along its line. Its extent over the ground then goes to 0 as the foot passes through
    the vertical, where its heading over the ground turns over, so the result is
    continuous there. Joints at one place go along ``source_heading`` ``(n, 2)``.

    With ``ground``, ``rounds`` such moves, after each of which each joint's height
    changes by ``weight`` ``(n,)`` times the change of the ground under it (the ground
    under a moved joint changes). Compiled (:func:`~limbik.placement._footplant_kernels.
    keep_length`).
    """
    n = len(ankle)
    a, t = np.array(ankle, dtype=np.float64), np.array(toe, dtype=np.float64)
    field = ground if ground is not None else _LEVEL
    keep_length(field.heights, field.cell_size, field.origin[0], field.origin[1], a, t,
                _contiguous(np.broadcast_to(length, (n, 1))[:, 0]),
                _contiguous(np.broadcast_to(toe_first, (n, 1))[:, 0]),
                _contiguous(np.broadcast_to(source_heading, (n, 2))),
                _contiguous(np.zeros(n) if weight is None else weight), rounds)
    return a, t


#: The ground of :func:`_keep_length` without one (its heights then stay).
_LEVEL = Terrain.flat(0.0)


def _hang_over_ground(hang: np.ndarray, toe: np.ndarray, offset: np.ndarray,
                      length: np.ndarray, rows: np.ndarray, ground: Terrain,
                      stand: np.ndarray) -> None:
    """In place: each ankle of ``rows`` hanging from its ``toe`` ``(n, 3)`` by the source's
    ``offset`` ``(n, 3)`` (ankle − toe) is put at ``length`` ``(n,)`` from the toe, along the
    offset's heading over the ground, at the height above the ground under it that keeps
    its height over the toe's as the source's: on a slope the foot turns with the ground
    (a fixed point over the ground's height under the ankle, eight rounds), by as much as
    the foot stands (``stand`` ``(n,)``, 0..1) and less the steeper it is pitched."""
    t = toe[rows]
    rel = offset[rows, 1]
    size = length[rows]
    # (a foot pitched steeply is turned with the ground less, by the squared cosine of
    # its pitch: the heel of a foot standing on its toes is high above the ground, and
    # near the vertical two pitches would keep its height above it)
    weight = stand[rows] * np.maximum(1.0 - (rel / np.maximum(size, 1e-300)) ** 2, 0.0)
    heading = offset[rows][:, [0, 2]]
    heading /= np.maximum(np.linalg.norm(heading, axis=1, keepdims=True), 1e-300)
    above_toe = t[:, 1] - ground._height_unchecked(t[:, 0], t[:, 2])
    hang[rows] = _turn_over_ground(t, heading, size, above_toe + rel, weight, t[:, 1] + rel,
                                   ground)


def _smooth_cover(need: np.ndarray, width: int) -> np.ndarray:
    """The least smooth raise ``(m,)`` that covers ``need`` ``(m,)``: the upper envelope
    of one bump per frame, that frame's need times ``cos²(π/2 · d / width)`` at ``d``
    frames from it (none from ``width`` on). It meets every need and falls away from it
    over ``width`` frames."""
    d = np.arange(len(need))[:, None] - np.arange(len(need))[None, :]
    bump = np.where(np.abs(d) < width, np.cos(0.5 * np.pi * d / width) ** 2, 0.0)
    return (bump * np.maximum(need, 0.0)[None, :]).max(axis=1)


def _stage_clearance(track: LegTrack, ground: Terrain, floor: float, hover: float,
                     root: np.ndarray, drop: float, carried: np.ndarray) -> None:
    """The swings carried with the root, lowered with its constant ``drop`` (the leg keeps
    its shape), then raised, smoothly, where a foot joint would pass the terrain closer
    than the source's own clearance; and nothing in the ground (what is left lifts the
    foot).

    ``root`` ``(F,)`` is the root's vertical offset before ``drop``, and ``carried``
    ``(F,)`` (0..1) how much another foot stands (the root then follows that foot's
    ground). A swing carried on its foot's ground path alone (a smoothstep from the
    lift-off ground to the landing ground) and a root carried by the other foot move
    down into a trough or up a rise on their own schedules, so the swing leg would
    stretch out of reach and then fold (its knee bending in a V at the rate limit) where
    the source's keeps its shape; as far as the root is carried, the swing follows what
    the root does beyond a smoothstep between its offsets at the swing's ends, as one
    arch over the swing, so it leaves and meets the ground path where it did. Over a
    swing's second half the raise fades out as far as the foot stands
    (``track.stand``): a foot coming down to a contact follows the ground under each
    joint."""
    assert track.targets is not None and track.pins is not None
    assert track.ground is not None
    targets, pins = track.targets, track.pins
    n = len(targets)
    free = 1.0 - pins.max(axis=1)
    # (the root's offset over the foot's ground path: constant for a leg that keeps its
    # shape)
    over = root - (track.ground - floor - hover)
    # (the drop, the following, and any raise, as one arch over each swing, sin²(pi s):
    # the foot leaves and meets the ground path with its speed)
    arches = np.zeros(n)
    follow = np.zeros(n)
    landing = np.zeros(n)  # (0 over a swing's first half, up to 1 at its landing)
    raise_by = np.zeros(n)
    starts, stops = runs(~track.planted)
    if starts.size:
        frames, span = span_frames(starts, stops)
        lengths = stops - starts
        s = (frames - starts[span] + 1.0) / (lengths[span] + 1.0)
        arches[frames] = np.sin(np.pi * s) ** 2
        landing[frames] = np.where(starts[span] > 0, _ramp(2.0 * s - 1.0), 0.0)
        first = over[np.maximum(starts - 1, 0)][span]
        last = over[np.minimum(stops, n - 1)][span]
        follow[frames] = arches[frames] * (over[frames] - first - (last - first) * _ramp(s))
    targets[..., 1] += ((follow * carried - drop * arches) * _ramp(free))[:, None]
    swings = stops - starts >= 2
    starts, stops = starts[swings], stops[swings]
    if starts.size:
        frames, span = span_frames(starts, stops)
        above_src = np.maximum(track.source[frames, :, 1] - floor, 0.0)
        # the source's clearance: its lowest height in the middle half of the swing, and
        # toward the ends no more than its height there
        lengths = stops - starts
        first = np.cumsum(lengths) - lengths
        quarter = lengths // 4
        middle = window_reduce(np.minimum, above_src, first + quarter,
                               first + lengths - quarter)
        clearance = np.minimum(above_src, middle[span])
        seg = targets[frames]
        need = (ground._height_unchecked(seg[..., 0], seg[..., 2]) + clearance
                - seg[..., 1]).max(axis=1)
        need = np.maximum(need, 0.0) * (free[frames] > 0.0)
        for c in np.flatnonzero(np.maximum.reduceat(need, first) > 0.0).tolist():
            start, stop = int(starts[c]), int(stops[c])
            raise_by[start:stop] = _smooth_cover(need[first[c]:first[c] + stop - start],
                                                 max(2, (stop - start) // 3))
    # (on the way down to a contact, faded out as far as the foot stands: there each
    # joint already follows the ground under it, and a raise for one joint short of its
    # height over a flank would lift the other off the ground it comes down to)
    if track.stand is not None:
        raise_by *= 1.0 - track.stand * landing
    # (faded in on the way out of a lock, none while it is held)
    raise_by = np.maximum(raise_by * _ramp(free), 0.0)
    targets[..., 1] += raise_by[:, None]
    # and never in the ground: what is left lifts the whole foot
    depth = (ground._height_unchecked(targets[..., 0], targets[..., 2])
             - targets[..., 1]).max(axis=1)
    targets[..., 1] += np.maximum(depth, 0.0)[:, None]


def _stage_unfold(track: LegTrack, ground: Terrain, floor: float, hover: float,
                  hip: np.ndarray, source_reach: np.ndarray) -> None:
    """Swings lowered, smoothly, where the ankle would come nearer its hip ``(F, 3)`` (the
    root's lift included) than ``FOLD_SHARE`` of the source's hip→ankle distance
    ``source_reach`` ``(F,)``, as far as every foot joint keeps at least the source's
    height above its floor over the ground under it.

    A swing carried on a ground path that stays up at the lift-off ground (a foot leaving
    a flank into a trough) while the root follows the lower foot brings the ankle up
    toward the hip. The ankle's motion relative to the hip is the source's, but the knee
    turns about the hip with the hip→ankle line, at the ankle's speed across that line
    over its length: an ankle at a third of the source's distance swings the knee three
    times as fast, in the folded leg's whip. The least smooth drop that covers each
    frame's need (one cos² bump per frame, over a third of the swing either side), no
    more than the room, is faded in as the lock releases and out as the foot stands."""
    assert track.targets is not None and track.pins is not None
    targets = track.targets
    reach = targets[:, 0] - hip
    near = FOLD_SHARE * source_reach
    flat = reach[:, 0] ** 2 + reach[:, 2] ** 2
    # (the vertical drop that puts the ankle at ``near`` from the hip)
    need = np.where(np.linalg.norm(reach, axis=1) < near,
                    reach[:, 1] + np.sqrt(np.maximum(near * near - flat, 0.0)), 0.0)
    fade = _ramp(1.0 - track.pins.max(axis=1))
    if track.stand is not None:
        fade = fade * (1.0 - track.stand)
    need = np.maximum(need, 0.0) * (fade > 0.0)
    starts, stops = runs(~track.planted)
    if starts.size == 0:
        return
    keep = (stops - starts >= 2) & (window_reduce(np.maximum, need, starts, stops) > 0.0)
    if not np.any(keep):
        return
    above_src = np.maximum(track.source[..., 1] - floor - hover, 0.0)
    room = (targets[..., 1] - ground._height_unchecked(targets[..., 0], targets[..., 2])
            - above_src).min(axis=1)
    room = np.maximum(room, 0.0)
    drop = np.zeros(len(targets))
    for start, stop in zip(starts[keep].tolist(), stops[keep].tolist(), strict=True):
        width = max(2, (stop - start) // 3)
        bound = _smooth_below(room[start:stop], max(1, width // 4))
        cover = _smooth_cover(np.minimum(need[start:stop], bound), width)
        drop[start:stop] = np.minimum(cover, bound)
    targets[..., 1] -= (drop * fade)[:, None]


def _stage_root(tracks: list[LegTrack], world: np.ndarray, floor: float, hover: float,
                dt: float, smooth_time: float, adjust_pelvis: bool
                ) -> tuple[np.ndarray, float]:
    """The root's vertical offset ``(F,)``: the ground under the feet's paths less the
    source floor, each foot's weighted by how much it stands (the ground that carries
    the body; both alike when neither stands), low-passed (one constant on flat ground),
    lowered by one constant as far as the legs need on half of the frames to reach their
    feet's targets, then by the least smooth amount where a leg still could not reach;
    and that constant."""
    paths = np.stack([t.root_ground for t in tracks if t.root_ground is not None])
    weights = np.stack([(t.stand if t.stand is not None else np.zeros(len(t.root_ground)))
                        + 1e-3 for t in tracks if t.root_ground is not None])
    offset = (weights * paths).sum(axis=0) / weights.sum(axis=0) - floor - hover
    if np.ptp(offset) > 0.0 and len(offset) > 1:
        offset = smooth_zero_lag(offset, dt, smooth_time)
    if not adjust_pelvis:
        return offset, 0.0
    bound = np.full(len(offset), np.inf)
    for t in tracks:
        assert t.targets is not None
        hip = world[:, t.leg.hip]
        a = t.targets[:, 0]
        full = t.thigh + t.shin
        # a leg reaches as far as the source's does, and at least REACH of its length
        source_reach = np.linalg.norm(world[:, t.leg.ankle] - hip, axis=1)
        reach = np.clip(source_reach, REACH * full, 0.9999 * full)
        dh = np.hypot(hip[:, 0] - a[:, 0], hip[:, 2] - a[:, 2])
        top = a[:, 1] + np.sqrt(np.maximum(reach * reach - dh * dh, 0.0)) - hip[:, 1]
        # only a foot held, easing or standing on the ground bounds the root: a swinging
        # one may fall short
        held = t.pins.max(axis=1) > 0.0 if t.pins is not None else np.zeros(len(a), bool)
        if t.stand is not None:
            held |= t.stand > 0.5
        bound = np.minimum(bound, np.where((dh < reach) & held, top, np.inf))
    # one constant first: the root goes down by as much as most frames need (a clip whose
    # stances hover at different heights is lowered to its lower stances), then the least
    # smooth amount more where a leg still could not reach
    short = offset - bound
    drop = 0.0
    if np.any(np.isfinite(short)):
        drop = max(float(np.percentile(short[np.isfinite(short)], DROP_PERCENTILE)), 0.0)
    offset = offset - drop
    if np.any(offset > bound):
        width = max(1, round(max(smooth_time, dt) / dt))
        offset = np.minimum(offset, _smooth_below(bound, width))
    return offset, drop


def _stage_legs(motion: Motion, tracks: list[LegTrack], source_rotations: np.ndarray,
                full_world: np.ndarray, lift: np.ndarray, ground: Terrain, max_tilt: float,
                softness: float) -> Motion:
    """Each leg solved to its targets: :func:`limbik.two_bone` about the knee's own hinge
    axis with the source knee (turned onto the new hip→ankle line) as the bend reference,
    the foot turned from the source's by the least rotation onto its new ankle→toe line
    (its pitch change at most ``max_tilt`` where neither of its joints is held), the rest
    of the body exactly the source's."""
    legs = [t.leg for t in tracks]
    world = full_world[:, :motion.skeleton.num_joints]
    axes = knee_hinge_axes(motion, legs, pose=(source_rotations, world))
    positions: dict[int, np.ndarray] = {}
    rotations: dict[int, np.ndarray] = {}
    # every leg solved in one batch (per frame and leg, ``(F, L, ...)``)
    hips, knees, ankles = (np.array(j) for j in zip(*((leg.hip, leg.knee, leg.ankle)
                                                         for leg in legs), strict=True))
    hip_all = world[:, hips] + lift[:, None]
    a_all = np.stack([np.asarray(t.targets)[:, 0] for t in tracks], axis=1)
    swing = _swing_rows(world[:, ankles] - world[:, hips], a_all - hip_all)
    reference = hip_all + rotate_vectors(swing, world[:, knees] - world[:, hips])
    axis = rotate_vectors(quaternion_multiply(swing, source_rotations[:, hips]),
                          np.stack([axes[leg.side] for leg in legs]))
    source_reach = np.linalg.norm(world[:, ankles] - world[:, hips], axis=-1)
    thighs, shins = (np.array(v) for v in zip(*((t.thigh, t.shin) for t in tracks),
                                               strict=True))
    soft = np.clip(1.0 - source_reach / np.array([t.thigh + t.shin for t in tracks]), 0.0,
                   softness)
    solved_all = two_bone(hip_all, a_all, thighs, shins, bend_axis=axis, reference=reference,
                          softness=soft).positions
    for i, track in enumerate(tracks):
        leg = track.leg
        assert track.targets is not None
        a = track.targets[:, 0]
        solved = solved_all[:, i]
        positions[leg.knee] = solved[:, 1]
        positions[leg.ankle] = solved[:, 2]
        if leg.toe is not None:
            src_foot = world[:, leg.toe] - world[:, leg.ankle]
            # (a foot held on the ground takes the pitch its locks give it, from where the
            # ankle got to: an ankle a soft reach left short turns the foot about the toe)
            wanted = track.targets[:, 1] - solved[:, 2]
            free = 1.0 - track.pins.max(axis=1) if track.pins is not None else 1.0
            foot = wanted + np.reshape(free, (-1, 1)) * (
                _limit_pitch(src_foot, wanted, max_tilt) - wanted)
            # (but not into the ground: there it takes the pitch it was given)
            toe = solved[:, 2] + foot
            sunk = ground._height_unchecked(toe[:, 0], toe[:, 2]) > toe[:, 1]
            foot[sunk] = wanted[sunk]
            turn = _swing_rows(src_foot, foot)
            # a planted sole rolls with the ground's cross slope (within max_tilt)
            mid = a + 0.5 * foot
            normal = ground.normal(mid[:, 0], mid[:, 2])
            if np.any(normal[:, 1] < 1.0) and track.stand is not None:
                roll = quaternion_slerp(np.broadcast_to([0.0, 0.0, 0.0, 1.0], turn.shape),
                                        _roll_rotation(foot, normal, max_tilt),
                                        np.clip(track.stand, 0.0, 1.0))
                turn = quaternion_multiply(roll, turn)
            rotations[leg.ankle] = quaternion_multiply(turn, source_rotations[:, leg.ankle])
            rotations[leg.toe] = quaternion_multiply(turn, source_rotations[:, leg.toe])
            # toe tips that this puts in the ground bend up onto it
            tips = foot_joints(motion, leg)[2:]
            lift_tips = _toe_tip_lift(full_world[:, tips] - world[:, leg.toe, None], turn,
                                      solved[:, 2] + foot, ground)
            if lift_tips is not None:
                rotations[leg.toe] = quaternion_multiply(lift_tips, rotations[leg.toe])
        else:
            normal = ground.normal(a[:, 0], a[:, 2])
            rotations[leg.ankle] = quaternion_multiply(_tilt_rotation(normal, max_tilt),
                                                       source_rotations[:, leg.ankle])
    if all(_direct_chain(motion.skeleton, leg) for leg in legs):
        return _apply_legs(motion, source_rotations, world, legs, lift, positions, rotations)
    moved = dataclasses.replace(motion, root_positions=motion.root_positions + lift)
    return apply_ik(moved, positions=positions, rotations=rotations)


def _limit_pitch(source: np.ndarray, wanted: np.ndarray, max_tilt: float) -> np.ndarray:
    """``wanted`` foot vectors ``(n, 3)`` whose pitch differs from ``source``'s by at most
    ``max_tilt`` radians (heading and length kept)."""
    def pitch(v: np.ndarray) -> np.ndarray:
        return np.arctan2(v[:, 1], np.maximum(np.hypot(v[:, 0], v[:, 2]), 1e-300))
    p_src, p_new = pitch(source), pitch(wanted)
    limited = np.clip(p_new, p_src - max_tilt, p_src + max_tilt)
    if np.array_equal(limited, p_new):
        return wanted
    length = np.linalg.norm(wanted, axis=1)
    flat = np.hypot(wanted[:, 0], wanted[:, 2])
    heading = wanted[:, [0, 2]] / np.maximum(flat, 1e-300)[:, None]
    out = np.empty_like(wanted)
    out[:, [0, 2]] = heading * (length * np.cos(limited))[:, None]
    out[:, 1] = length * np.sin(limited)
    return out


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
    if not isinstance(terrain, Terrain):
        raise InvalidInputError(f"terrain must be a Terrain, got {type(terrain).__name__}",
                                argument="terrain")
    masks = {leg.side: metrics._mask(contacts[leg.side], motion.num_frames) for leg in legs}
    return _evaluate(motion, world_pose(motion)[1], terrain, legs, masks,
                     None if reference is None else world_pose(reference)[1][0])


def _evaluate(motion: Motion, full: np.ndarray, terrain: Terrain, legs: Sequence[Leg],
              contacts: Mapping[str, np.ndarray], reference: np.ndarray | None,
              knees: metrics._Knees | None = None) -> dict[str, float]:
    """:func:`evaluate` on world positions with End Sites ``full`` ``(F, J + E, 3)``;
    ``reference`` is the reference pose ``(J + E, 3)`` (default: ``full[0]``); ``knees``
    the clip's :func:`limbik.placement.metrics._knees`, where at hand."""
    world = full[:, :motion.skeleton.num_joints]
    out: dict[str, float] = {}
    dt = motion.frame_time
    forward = _facing(world, legs)
    knees = metrics._knees(world, legs) if knees is None else knees
    height = terrain._height_unchecked
    for leg in legs:
        point = world[:, foot_point(leg)]
        ankle = world[:, leg.ankle]
        thigh, shin = leg_lengths(motion, leg)
        c = contacts[leg.side]
        per_frame, skate = metrics._foot_skate(point, c)
        feet = full[:, foot_joints(motion, leg)]
        out[f"{leg.side}_skate"] = skate
        out[f"{leg.side}_skate_max"] = float(per_frame.max(initial=0.0))
        out[f"{leg.side}_penetration"] = float(metrics._penetration(feet, height).max(initial=0))
        fl = metrics._floating(point, height, c)
        out[f"{leg.side}_floating"] = float(fl[c].mean()) if np.any(c) else 0.0
        out[f"{leg.side}_stance_gap"] = metrics._stance_gap(feet, height, c)
        out[f"{leg.side}_pivot_slide"] = metrics._pivot_slide(ankle, point, c)[1]
        out[f"{leg.side}_heel_slide"] = metrics._contact_speed(ankle, c, dt)
        out[f"{leg.side}_toe_slide"] = metrics._contact_speed(point, c, dt)
        out[f"{leg.side}_toe_speed_near_ground"] = metrics._speed_near_floor(
            point, height, dt, 0.05 * (thigh + shin))
        offset, flexion, move = knees[leg.side]
        bend = metrics._signed_flexion(offset, flexion, forward)
        out[f"{leg.side}_knee_pop"] = float(np.max(np.abs(np.diff(np.abs(bend))), initial=0.0))
        out[f"{leg.side}_backward_knee_frames"] = float(np.count_nonzero(bend < -2.0))
        out[f"{leg.side}_knee_jump"] = move
        out[f"{leg.side}_foot_turn"] = (0.0 if leg.toe is None
                                        else metrics._foot_turn(ankle, world[:, leg.toe]))
    ref = (full if reference is None else reference[None])[0, :motion.skeleton.num_joints]
    out["bone_length_drift"] = metrics._bone_length_drift(
        world, np.asarray(motion.skeleton.parents, dtype=np.intp), ref)
    return out


def footplant(motion: Motion, terrain: Terrain | None = None, *,
              legs: Sequence[Leg] | None = None,
              contacts: Mapping[str, Any] | None = None,
              floor: float | None = None,
              lock_feet: bool = True,
              adjust_pelvis: bool = True,
              smooth_time: float = 0.1,
              pelvis_smooth_time: float = 0.15,
              release_time: float = 0.2,
              max_tilt: float = 0.6,
              contact_height: float = CONTACT_HEIGHT,
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
        inclusive ``(first, last)`` frame ranges, held for the ankle and the toe alike;
        default: found per foot joint (:func:`limbik.placement.contacts.joint_contacts`).
    floor : the source clip's floor height (default: :func:`estimate_floor`).
    lock_feet : hold each foot joint still while it is in contact.
    adjust_pelvis : lower the root where a held leg could not reach its foot (else the
        root is only lifted onto the ground).
    smooth_time : seconds over which a foot joint eases into its lock before a contact.
    pelvis_smooth_time : seconds of the low-pass that makes the root follow uneven
        ground, and of the smallest drop where a leg could not reach.
    release_time : seconds over which a foot joint eases out of its lock after a contact.
    max_tilt : largest change of foot pitch from the source's (or ankle tilt to the
        ground's slope without a toe), radians.
    contact_height : a foot joint enters a contact at most this high above its local
        floor (its lowest height within ±0.4 s; leg lengths) and leaves it above twice
        this.
    contact_speed : the planted/moving speed threshold (leg lengths per second); a
        contact starts below 0.7x and ends above 1.4x it. Default: from the clip's foot
        joints (:func:`limbik.placement.contacts.joint_speed_threshold`). A joint at or
        below its floor is in contact unless it moves faster than 1.4x (a skating foot
        is still planted).
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

    legs = _given_legs(legs, motion)
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
    leg_length = float(np.mean([sum(leg_lengths(motion, leg)) for leg in legs]))
    estimated = floor is None
    floor = (estimate_floor(motion, legs, leg_length, positions=full_world) if estimated
             else as_float(floor, "floor"))
    ground = terrain if terrain is not None else Terrain.flat(floor)
    ground.warn_if_left(world, "motion")  # a height field is clamped at its edges
    tick(1, "contacts")
    tracks = _stage_tracks(motion, full_world, legs, floor, leg_length)
    # (how much the source's standing feet jitter: a landing comes down by more than it,
    # and it is settled out of locks and of the joints free while their foot stands)
    noise = white_noise(np.concatenate([t.source for t in tracks], axis=1), dt)
    _stage_contacts(tracks, contacts, floor, leg_length, dt, contact_height, contact_speed,
                    noise)
    tick(2, "locks")
    ease_in = max(1, round(smooth_time / dt))
    for track in tracks:
        _stage_hovers(track, floor)
    _stage_flat_pitch(tracks)
    # the one lift that puts the source's typical stance on the ground
    hovers = [h for track in tracks for h in track.hover]
    hover = float(np.median(hovers)) if hovers else 0.0
    for track in tracks:
        _stage_locks(track, ground, floor, hover, world[:, track.leg.hip], lock_feet, dt,
                     noise)
        track.steady = steady_paths(track.source, track.planted, noise)
    # (a joint released from its lock does not follow at once the moves of its source that
    # the noise could make over the ease-out: they come in as the lock lets go)
    release = max(1, release_frames)
    release_band = float(universal_band(release + 1, noise))
    for track in tracks:
        _stage_swing(track, ground, floor, hover, ease_in, release,
                     max(1, round(LANDING_TIME / dt)), release_band)
    tick(3, "root")
    offset, drop = _stage_root(tracks, world, floor, hover, dt, pelvis_smooth_time,
                               adjust_pelvis)
    offset = offset * max(weight.values())  # (legs kept as the source's keep its root)
    lift = offset[:, None] * _UP
    for track in tracks:
        others = [t.stand for t in tracks if t is not track and t.stand is not None]
        carried = np.max(others, axis=0) if others else np.zeros(len(lift))
        _stage_clearance(track, ground, floor, hover, lift[:, 1] + drop, drop, carried)
        _stage_unfold(track, ground, floor, hover, world[:, track.leg.hip] + lift,
                      np.linalg.norm(world[:, track.leg.ankle] - world[:, track.leg.hip],
                                     axis=1))
    tick(4, "legs")
    for track in tracks:  # knees bend no faster than the source's where ankles are free
        assert track.targets is not None and track.pins is not None
        a, t = _knee_continuity(world, track.leg, (track.thigh, track.shin), lift,
                                track.targets[:, 0], track.targets[:, 1] if
                                len(track.joints) > 1 else None, track.pins >= 1.0, ground,
                                dt, smooth_time)
        track.targets[:, 0] = a
        if t is not None:
            track.targets[:, 1] = t
    planted = _stage_legs(motion, tracks, source_rotations, full_world, lift, ground,
                          max_tilt, softness)
    if any(w < 1.0 for w in weight.values()):
        planted = _blend(motion, planted, legs, weight)
    tick(5, "report")
    report = _stage_report(motion, planted, tracks, full_world, source_rotations, lift,
                           ground, terrain, floor, offset, estimated)
    tick(6, "done")
    return planted, report


def _stage_report(motion: Motion, planted: Motion, tracks: list[LegTrack],
                  full_world: np.ndarray, source_rotations: np.ndarray, lift: np.ndarray,
                  ground: Terrain, terrain: Terrain | None, floor: float,
                  offset: np.ndarray, estimated: bool) -> FootplantReport:
    """The report: contacts, and the metrics before (the source on its own floor) and after
    (the result on the ground), :func:`evaluate`'s and :func:`limbik.metrics.score_motion`'s
    (``estimated``: ``floor`` is the source's :func:`estimate_floor`, which the scores
    measure the source on)."""
    legs = tuple(t.leg for t in tracks)
    masks = {t.leg.side: t.planted for t in tracks}
    labels = {t.leg.side: t.contacts for t in tracks}
    before_ground = Terrain.flat(floor)
    root = motion.root_positions
    lift_by = (float(np.median(ground._height_unchecked(root[:, 0], root[:, 2]))) - floor
               if terrain is not None else 0.0)
    after_world = _legs_world_pose(planted, source_rotations, full_world, legs, lift)
    joints = motion.skeleton.num_joints
    knees_before = metrics._knees(full_world[:, :joints], legs)
    knees_after = metrics._knees(after_world[:, :joints], legs)
    before = _evaluate(motion, full_world, before_ground, legs, masks, None, knees_before)
    after = _evaluate(planted, after_world, ground, legs, masks, full_world[0], knees_after)
    source_floor = floor if estimated else None
    before.update(metrics._score_motion(motion, source=motion, terrain=before_ground,
                                        legs=legs, contacts=labels, positions=full_world,
                                        source_positions=full_world,
                                        source_floor=source_floor, knees=knees_before))
    after.update(metrics._score_motion(planted, source=motion, terrain=ground, legs=legs,
                                       contacts=labels, positions=after_world,
                                       source_positions=full_world, source_floor=source_floor,
                                       knees=knees_after))
    return FootplantReport(
        floor=floor, legs=tuple(leg.side for leg in legs),
        contacts={side: contact_spans(m) for side, m in masks.items()},
        before=before, after=after, pelvis_offset=offset, lift=lift_by,
        heel_weight={t.leg.side: (1.0 - _toe_share(t.pins[:, :1], t.pins[:, -1:])[:, 0]
                                  if t.pins is not None and t.pins.shape[1] > 1
                                  else np.ones(len(offset)))
                     for t in tracks},
        joint_contacts=labels)


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
    legs = _given_legs(legs, motion)
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
