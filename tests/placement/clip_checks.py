"""The foot-placement acceptance checks, computed from world positions of written clips.

Kept apart from :mod:`limbik.metrics` on purpose: these follow the checks' own wording
(lowest foot point, frames where a reference clip holds a foot still, knee bend side
from the hips' facing) so that a mistake in the library's metrics cannot hide here.
"""

from __future__ import annotations

import numpy as np

from limbik import find_legs


def leg_length(motion, leg):
    off = motion.skeleton.offsets
    return float(np.linalg.norm(off[leg.knee]) + np.linalg.norm(off[leg.ankle]))


def foot_points(motion, leg):
    """Joint indices (into world_positions(include_end_sites=True)) of a foot: ankle, toe,
    and the toe's End Sites."""
    sk = motion.skeleton
    points = [leg.ankle] + ([leg.toe] if leg.toe is not None else [])
    points += [sk.num_joints + k for k, p in enumerate(sk.end_site_parents)
               if leg.toe is not None and int(p) == leg.toe]
    return points


def facing(world, legs):
    """(frames, 3) horizontal forward from the hips: left hip minus right hip, crossed with up."""
    left = world[:, legs[0].hip] - world[:, legs[1].hip]
    forward = np.cross(left, [0.0, 1.0, 0.0])
    return forward / np.maximum(np.linalg.norm(forward, axis=1, keepdims=True), 1e-12)


def signed_flexion(world, leg, forward):
    h, k, a = world[:, leg.hip], world[:, leg.knee], world[:, leg.ankle]
    u = (a - h) / np.linalg.norm(a - h, axis=1, keepdims=True)
    off = (k - h) - np.sum((k - h) * u, axis=1, keepdims=True) * u
    cos = np.sum((h - k) * (a - k), axis=1) / (np.linalg.norm(h - k, axis=1)
                                                * np.linalg.norm(a - k, axis=1))
    flex = 180.0 - np.degrees(np.arccos(np.clip(cos, -1, 1)))
    return np.where(np.sum(off * forward, axis=1) < 0, -flex, flex)


def backward_frames(motion, min_angle=2.0):
    world = motion.world_positions()
    legs = find_legs(motion.skeleton)
    fwd = facing(world, legs)
    return sum(int(np.sum(signed_flexion(world, leg, fwd) < -min_angle)) for leg in legs)


def knee_jump(motion):
    """Largest per-frame knee move relative to its hip, over both legs."""
    world = motion.world_positions()
    out = 0.0
    for leg in find_legs(motion.skeleton):
        rel = world[:, leg.knee] - world[:, leg.hip]
        out = max(out, float(np.linalg.norm(np.diff(rel, axis=0), axis=1).max()))
    return out


def knee_pop(motion):
    world = motion.world_positions()
    out = 0.0
    for leg in find_legs(motion.skeleton):
        h, k, a = world[:, leg.hip], world[:, leg.knee], world[:, leg.ankle]
        cos = np.sum((h - k) * (a - k), axis=1) / (np.linalg.norm(h - k, axis=1)
                                                    * np.linalg.norm(a - k, axis=1))
        ang = np.degrees(np.arccos(np.clip(cos, -1, 1)))
        out = max(out, float(np.abs(np.diff(ang)).max()))
    return out


def held_frames(motion, leg, *, speed=0.15, height=0.05):
    """Frames where the clip holds this foot still on y = 0: heel or toe slower than
    ``speed`` leg lengths/s and within ``height`` leg lengths of the ground."""
    world = motion.world_positions()
    length = leg_length(motion, leg)
    held = np.zeros(motion.num_frames, dtype=bool)
    for j in (leg.ankle, leg.toe if leg.toe is not None else leg.ankle):
        v = np.linalg.norm(np.gradient(world[:, j], motion.frame_time, axis=0), axis=1)
        low = world[:, j, 1] <= height * length + world[:, foot_points(motion, leg)[0], 1].min()
        held |= (v <= speed * length) & low
    return held


def compare_with_reference(result, reference, ground=None):
    """Per leg: penetration, mean lowest-point gap and heel/toe speeds on the frames where
    ``reference`` holds the foot still, for ``result`` and ``reference``, in units."""
    out = {}
    for leg in find_legs(reference.skeleton):
        held = held_frames(reference, leg)
        row = {"held_frames": int(held.sum()), "leg": leg_length(reference, leg)}
        for name, clip in (("ours", result), ("theirs", reference)):
            w = clip.world_positions(include_end_sites=True)
            pts = w[:, foot_points(clip, leg)]
            floor = 0.0 if ground is None else ground.height(pts[..., 0], pts[..., 2])
            gap = (pts[..., 1] - floor).min(axis=1)
            row[f"{name}_penetration"] = float(max(0.0, -gap.min()))
            row[f"{name}_gap"] = float(gap[held].mean()) if held.any() else 0.0
            for label, j in (("heel", leg.ankle), ("toe", leg.toe)):
                if j is None:
                    continue
                v = np.linalg.norm(np.gradient(w[:, j], clip.frame_time, axis=0), axis=1)
                row[f"{name}_{label}_speed"] = float(v[held].mean()) if held.any() else 0.0
        out[leg.side] = row
    return out
