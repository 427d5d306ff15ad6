"""Touch-down: a landing foot follows the source down, stands once landed, and nothing snaps."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import apply_ik, find_legs, read_bvh, two_bone
from limbik.geometry.quaternion import quaternion_from_axis_angle, rotate_vectors
from limbik.placement import Terrain
from limbik.placement.footplant import _toe_from_heel_strike, footplant
from limbik.placement.walk import ANKLE_HEIGHT, FOOT, SHIN, THIGH, walk_skeleton
from limbik.skeleton.motion import Motion

RATE = 120.0
LEG = THIGH + SHIN


def landing_clip(rng):
    """The built-in biped standing on its right foot while its left foot comes down onto
    the floor y = 0 in front of it: ``(motion, land)``, where the left foot rests from
    frame ``land`` on.

    Seeded: how long and how far the last descent is, how it slows into the floor (the
    ankle height above rest goes as ``s**power`` of the time left), how early the foot
    stops moving forward (the detector's speed gate then opens while it is still in the
    air), and a heel strike: the toe pitched up by up to 0.35 rad, coming down after.
    """
    skeleton = walk_skeleton()
    n = int(RATE * 1.2)
    t = np.arange(n) / RATE
    land = int(RATE * rng.uniform(0.45, 0.6))
    descent, drop = rng.uniform(0.12, 0.3), rng.uniform(0.04, 0.1)
    power, stop = rng.uniform(1.6, 3.0), rng.uniform(0.02, 0.1)
    step, pitch0, settle = rng.uniform(0.15, 0.3), rng.uniform(0.0, 0.35), rng.uniform(0.05, 0.15)
    left = (land / RATE - t) / descent  # 1 .. 0 over the descent, above 1 before it
    lift = np.where(left <= 1.0, drop * np.clip(left, 0.0, 1.0) ** power,
                    drop * (1.0 + power * (left - 1.0)))  # rising back before it
    u = np.clip((t - (land / RATE - descent - 0.3)) / (0.3 + descent - stop), 0.0, 1.0)
    forward = step * u * u * (3 - 2 * u) - step + 0.12
    pitch = np.where(t < land / RATE, pitch0,
                     pitch0 * np.clip(1 - (t - land / RATE) / settle, 0.0, 1.0) ** 2)
    root = np.tile([0.0, 0.93, 0.0], (n, 1))
    rotations = np.zeros((n, skeleton.num_joints, 4))
    rotations[..., 3] = 1.0
    targets = {}
    for side, ankle, up in (("Left", np.stack([np.full(n, 0.1), ANKLE_HEIGHT + lift, forward],
                                              axis=-1), -pitch),
                            ("Right", np.tile([-0.1, ANKLE_HEIGHT, -0.05], (n, 1)),
                             np.zeros(n))):
        toe = ankle + rotate_vectors(quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), up),
                                     FOOT)
        hip = root + skeleton.offsets[skeleton.index(f"{side}Hip")]
        solved = two_bone(hip, ankle, THIGH, SHIN, pole=hip + np.array([0.0, -0.5 * THIGH, 1.0]))
        targets[f"{side}Knee"] = solved.positions[:, 1]
        targets[f"{side}Ankle"] = solved.positions[:, 2]
        targets[f"{side}Toe"] = toe + (solved.positions[:, 2] - ankle)
    return apply_ik(Motion(skeleton, root, rotations, 1.0 / RATE), positions=targets), land


def _heights(source, result, report, terrain):
    """Heights ``(frames, 3)`` of the left ankle, toe and toe tip: the source's above its
    floor, the result's above the ground under each point."""
    sk = source.skeleton
    leg = next(leg for leg in find_legs(sk) if leg.side == "left")
    tips = [sk.num_joints + k for k, p in enumerate(sk.end_site_parents) if int(p) == leg.toe]
    points = [leg.ankle, leg.toe, *tips]
    src = source.world_positions(include_end_sites=True)[:, points]
    out = result.world_positions(include_end_sites=True)[:, points]
    return (src[..., 1] - report.floor,
            out[..., 1] - terrain.height(out[..., 0], out[..., 2]))


@pytest.mark.parametrize("ground", ["flat", "slope"])
def test_a_landing_foot_follows_the_source_down_and_stands(ground):
    """Over seeded landings onto flat ground and onto slopes up to 0.2 rad in any
    direction: while the source's foot comes down its last 5% of a leg, no point of the
    planted foot (ankle, toe, toe tip) is lower above the ground than the source's above
    its floor by more than 0.25% of a leg on flat ground, 1% on slopes (the contact used to
    start in the air and float removal pinned the foot to the floor: up to 2.8%); once
    landed, the foot's lowest
    point stands where the source's does; and the vertical velocity of every point
    changes from frame to frame by at most 0.02 leg/s (flat) or 0.45 leg/s (slope, where
    the foot turns to the slope on its way down) more than the source's (0.9 leg/s used
    to be seen: a foot stopped dead, or a turn to the slope stopped dead)."""
    rng = np.random.default_rng(2024 if ground == "flat" else 2025)
    jump_limit = 0.02 if ground == "flat" else 0.45
    # (on a slope the approaching foot's heel and toe stand on the ground under each while
    # its toe tips keep the foot's pitch: a tip may come down to 1% of a leg lower)
    lowered = 0.0025 if ground == "flat" else 0.01
    for _ in range(10):
        source, land = landing_clip(rng)
        terrain = (Terrain.flat(0.0) if ground == "flat" else
                   Terrain.slope(rng.uniform(-0.2, 0.2), direction=rng.uniform(0, 2 * np.pi),
                                 extent=(-3, 3, -3, 3)))
        result, report = footplant(source, terrain)
        src, out = _heights(source, result, report, terrain)
        rest = np.percentile(src, 5, axis=0)
        near = np.flatnonzero((src[:land] - rest).min(axis=1) <= 0.05 * LEG)
        assert near.size, "the synthetic foot comes down"
        assert np.all(out[near] >= src[near] - lowered * LEG), (
            land, float((src[near] - out[near]).max() / LEG))
        landed = slice(land + int(0.2 * RATE), None)
        np.testing.assert_allclose(out[landed].min(axis=1), src[landed].min(axis=1),
                                   atol=1e-3 * LEG)
        assert report.contacts["left"][0][0] <= land + 2  # the foot is held once it stands
        window = slice(near[0] - 5, land + int(0.2 * RATE))
        excess = np.diff(np.diff(out, axis=0) - np.diff(src, axis=0), axis=0)[window] * RATE
        assert np.abs(excess).max() <= jump_limit * LEG, float(np.abs(excess).max() / LEG)


def test_real_touch_downs_are_not_lowered_before_the_source_lands(shared_data):
    """The shared clips on flat ground: over the 10 frames before the source's foot lands
    (from the highest it is in the 20 before a detected contact, the first frame where
    its lowest point is within 0.5% of a leg of the lowest it gets over the next 0.25 s
    and of its contact height), the planted foot's lowest point is never lower above its
    landed height than the source's by more than 0.6% of a leg (it was up to 1.9%, 1.5 cm
    on the CMU walk: the foot was pinned to the floor while the source still came
    down)."""
    for name in ("cmu_131_01_start_walk_stop_meters.bvh", "xia_neutral_walk_01_000.bvh",
                 "dme_demo_3d_1_raw_footskate.bvh", "dme_demo_3d_1_fixed_ik.bvh"):
        source = read_bvh(shared_data / "bvh" / name)
        result, report = footplant(source)
        src_all = source.world_positions(include_end_sites=True)
        out_all = result.world_positions(include_end_sites=True)
        settle = round(0.25 / source.frame_time)
        for leg in find_legs(source.skeleton):
            length = float(np.linalg.norm(source.skeleton.offsets[leg.knee])
                           + np.linalg.norm(source.skeleton.offsets[leg.ankle]))
            src = np.maximum(src_all[:, [leg.ankle, leg.toe], 1] - report.floor, 0.0)
            rest = np.percentile(src, 5, axis=0)
            low_src = (src - rest).min(axis=1)
            low_out = (out_all[:, [leg.ankle, leg.toe], 1] - report.floor - rest).min(axis=1)
            spans = report.contacts[leg.side]
            for k, (start, stop) in enumerate(spans):
                if start == 0:
                    continue
                first = max(spans[k - 1][1] if k else 0, start - 20)
                first += int(np.argmax(low_src[first:start + 1]))
                tol = 0.005 * length
                lowest = low_src[start:stop].min()
                land = next(f for f in range(first, stop)
                            if low_src[f] <= low_src[f:f + settle + 1].min() + tol
                            and low_src[f] <= lowest + 6 * tol)
                frames = np.arange(max(first, land - 10), land)
                deficit = ((low_src[frames] - low_src[land])
                           - (low_out[frames] - low_out[land]))
                assert deficit.max(initial=0.0) <= 0.006 * length, (
                    name, leg.side, start, land, float(deficit.max() / length))


def test_a_toe_landing_the_frame_after_its_heel_is_held_from_the_heel_strike():
    """Seeded contact masks (degenerate ones included: empty, all held, one frame): a toe
    contact that begins on the frame after its ankle's contact begins starts with it;
    nothing else changes (the ankle's contacts, other toe contacts, a toe that lands
    with or before its heel or two frames after it)."""
    rng = np.random.default_rng(7)
    masks = [np.zeros((6, 2), bool), np.ones((6, 2), bool), np.ones((1, 2), bool),
             np.array([[True, False], [True, True]])]
    masks += [rng.random((int(rng.integers(2, 40)), 2)) < rng.uniform(0.2, 0.8)
              for _ in range(200)]
    for mask in masks:
        got = mask.copy()
        _toe_from_heel_strike(got)
        assert np.array_equal(got[:, 0], mask[:, 0])
        assert np.all(got[:, 1] >= mask[:, 1])
        for f in np.flatnonzero(got[:, 1] != mask[:, 1]):
            assert mask[f, 0] and (f == 0 or not mask[f - 1, 0])  # the heel strikes at f
            assert mask[f + 1, 1]  # the toe lands on the next frame
        for f in range(1, len(mask)):
            heel = mask[f - 1, 0] and (f < 2 or not mask[f - 2, 0])
            if mask[f, 1] and not mask[f - 1, 1] and heel:
                assert got[f - 1, 1]
