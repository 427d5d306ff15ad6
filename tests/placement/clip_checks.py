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


def knee_flexion(world, leg):
    """Degrees ``(frames,)`` between thigh and shin (0: straight)."""
    thigh = world[:, leg.knee] - world[:, leg.hip]
    shin = world[:, leg.ankle] - world[:, leg.knee]
    cos = np.sum(thigh * shin, axis=1) / np.linalg.norm(thigh, axis=1) / np.linalg.norm(
        shin, axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


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


def held_frames(motion, leg, *, speed=0.1):
    """Frames where the clip holds this foot still: the mean of its ankle's and toe's
    speeds (backward differences) below ``speed`` leg lengths/s."""
    world = motion.world_positions()
    length = leg_length(motion, leg)
    joints = [leg.ankle] + ([leg.toe] if leg.toe is not None else [])
    v = np.zeros((motion.num_frames, len(joints)))
    v[1:] = np.linalg.norm(np.diff(world[:, joints], axis=0), axis=-1) / motion.frame_time
    return v.mean(axis=1) < speed * length


def compare_with_reference(result, reference, ground=None):
    """Per leg: penetration, mean lowest-point gap and the mean of the ankle's and toe's
    horizontal speeds (backward differences; ``_speed_3d``: full 3-D speeds) on the
    frames where ``reference`` holds the foot still, for ``result`` and ``reference``, in
    units."""
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
            joints = [leg.ankle] + ([leg.toe] if leg.toe is not None else [])
            step = np.diff(w[:, joints], axis=0) / clip.frame_time
            for key, v in (("speed", np.linalg.norm(step[..., [0, 2]], axis=-1)),
                           ("speed_3d", np.linalg.norm(step, axis=-1))):
                v = np.concatenate([np.zeros((1, len(joints))), v])
                row[f"{name}_{key}"] = float(v.mean(axis=1)[held].mean()) if held.any() else 0.0
        out[leg.side] = row
    return out


def rough_terrain(motion, seed, kind):
    """An unseen height field around a clip's path: ``"noise"`` (smooth noise, about ±6% of
    a leg) or ``"ridges"`` (parallel ridges in a random direction, slopes up to about 25°,
    with a little noise). Returns ``(heights, cell_size, origin)`` as a user's ``.npy``
    with ``--cell-size`` and ``--terrain-origin`` would give them."""
    from scipy.ndimage import gaussian_filter

    leg = leg_length(motion, find_legs(motion.skeleton)[0])
    root = motion.root_positions[:, [0, 2]]
    lo = root.min(axis=0) - 2 * leg
    hi = root.max(axis=0) + 2 * leg
    cell = leg / 16
    rows = int((hi[1] - lo[1]) / cell) + 2
    cols = int((hi[0] - lo[0]) / cell) + 2
    rng = np.random.default_rng(seed)
    noise = gaussian_filter(rng.normal(size=(rows, cols)), 10)
    noise *= 0.06 * leg / max(float(np.abs(noise).max()), 1e-12)
    if kind == "noise":
        heights = noise
    else:
        x = lo[0] + cell * np.arange(cols)
        z = lo[1] + cell * np.arange(rows)
        X, Z = np.meshgrid(x, z)
        theta = rng.uniform(0, np.pi)
        along = np.cos(theta) * X + np.sin(theta) * Z
        wavelength = rng.uniform(1.5, 2.5) * leg
        phase = np.mod(along / wavelength + rng.uniform(), 1.0)
        tri = 1.0 - np.abs(2.0 * phase - 1.0)
        heights = gaussian_filter(tri, 1.5) * np.tan(np.radians(25.0)) * wavelength / 2
        heights = heights + 0.3 * noise
    return heights, cell, (float(lo[0]), float(lo[1]))


def max_slope_degrees(heights, cell):
    gz, gx = np.gradient(heights, cell)
    return float(np.degrees(np.arctan(np.hypot(gx, gz).max())))


def heightfield_checks(source, result, terrain, floor=0.0):
    """The acceptance checks for a style clip over a height field, per leg, in leg lengths
    and degrees: penetration, the 99th percentile of the stance height error (per joint,
    ankle and toe, on the frames where that joint is on its floor in the source: within
    1% of a leg of its resting height and slower than 0.3 leg/s), backward knee frames
    the source lacks, the largest knee move against max(2x the source's, 1% of a leg),
    and knee pop."""
    w_src = source.world_positions()
    w_out = result.world_positions(include_end_sites=True)
    legs = find_legs(source.skeleton)
    fwd_src = facing(w_src, legs)
    fwd_out = facing(w_out, legs)
    out = {}
    for leg in legs:
        length = leg_length(source, leg)
        pts = foot_points(result, leg)
        depth = terrain.height(w_out[:, pts, 0], w_out[:, pts, 2]) - w_out[:, pts, 1]
        heel_toe = [leg.ankle, leg.toe]
        src_above = w_src[:, heel_toe, 1] - floor
        got = w_out[:, heel_toe, 1] - terrain.height(w_out[:, heel_toe, 0],
                                                     w_out[:, heel_toe, 2])
        speed = np.linalg.norm(np.gradient(w_src[:, heel_toe], source.frame_time, axis=0),
                               axis=2)
        rest = np.percentile(src_above, 5, axis=0)
        # per joint, on the frames where that joint itself is on its floor in the source
        stance = ((src_above - rest) <= 0.01 * length) & (speed <= 0.3 * length)
        error = np.abs(got - np.maximum(src_above, 0.0))[stance]
        back_src = signed_flexion(w_src, leg, fwd_src) < -2.0
        back_out = signed_flexion(w_out, leg, fwd_out) < -2.0
        rel_src = w_src[:, leg.knee] - w_src[:, leg.hip]
        rel_out = w_out[:, leg.knee] - w_out[:, leg.hip]
        jump_src = float(np.linalg.norm(np.diff(rel_src, axis=0), axis=1).max())
        jump_out = float(np.linalg.norm(np.diff(rel_out, axis=0), axis=1).max())
        out[leg.side] = {
            "penetration": float(max(depth.max(), 0.0)) / length,
            "stance_height_error_p99": float(np.percentile(error, 99)) / length
            if error.size else 0.0,
            "stance_frames": int(stance.any(axis=1).sum()),
            "new_backward_frames": int(np.sum(back_out & ~back_src)),
            "knee_jump": jump_out / length,
            "knee_jump_limit": max(2 * jump_src, 0.01 * length) / length,
            "knee_pop": _pop(w_out, leg),
            "knee_pop_source": _pop(w_src, leg),
        }
    return out


def _pop(world, leg):
    h, k, a = world[:, leg.hip], world[:, leg.knee], world[:, leg.ankle]
    cos = np.sum((h - k) * (a - k), axis=1) / (np.linalg.norm(h - k, axis=1)
                                                * np.linalg.norm(a - k, axis=1))
    return float(np.abs(np.diff(np.degrees(np.arccos(np.clip(cos, -1, 1))))).max())
