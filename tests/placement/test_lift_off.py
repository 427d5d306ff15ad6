"""Lift-off: a foot that rises at the end of its contact moves no other leg."""

from __future__ import annotations

import numpy as np
import pytest
from clip_checks import knee_flexion

from limbik import apply_ik, find_legs, metrics, two_bone
from limbik.geometry.quaternion import quaternion_from_axis_angle, rotate_vectors
from limbik.placement import Terrain
from limbik.placement.footplant import FLOAT_KEPT, footplant
from limbik.placement.walk import ANKLE_HEIGHT, FOOT, SHIN, THIGH, walk_skeleton
from limbik.skeleton.motion import Motion

RATE = 120.0
LEG = THIGH + SHIN


def lift_off_clip(rng):
    """The built-in biped for 1 s at 120 Hz on the floor y = 0: its right foot stands
    flat a little ahead of the hip, the leg at 99.7-99.9% of its reach (5-9° of knee
    flexion), while its left foot, behind, rolls up about the ball of the foot (its toes
    flat on the floor) and then lifts off.

    Seeded: where the feet stand, when the heel rises and the toes leave the floor, how
    far the foot is rolled, and how fast the toe goes up and forward after (it starts
    slowly, so the contact lasts into the first frames of the lift: the foot's lowest
    point ends its contact 0.6-3.9% of a leg up, as real toe-offs do: the Xia walk's
    about 0.9%, the CMU walk's up to 4.5%).
    """
    skeleton = walk_skeleton()
    n = int(RATE)
    t = np.arange(n) / RATE
    hips = {side: skeleton.offsets[skeleton.index(f"{side}Hip")] for side in ("Left", "Right")}
    ahead = rng.uniform(0.04, 0.12)
    right_ankle = np.array([hips["Right"][0], ANKLE_HEIGHT, ahead])
    lo, hi = np.sort(rng.uniform(0.997, 0.999, size=2))
    fraction = lo + (hi - lo) * 0.5 * (1 - np.cos(2 * np.pi * t / rng.uniform(0.8, 1.4)))
    root = np.zeros((n, 3))
    root[:, 1] = ANKLE_HEIGHT + np.sqrt((fraction * LEG) ** 2 - ahead ** 2) - hips["Right"][1]
    # the rear foot rolls about the ball of the foot (the toe joint), its toes flat on the
    # floor, then the toes leave it slowly at first
    rise, lift = rng.uniform(0.05, 0.15), rng.uniform(0.3, 0.45)
    pitch0 = np.radians(rng.uniform(12.0, 18.0))
    pitch_end = pitch0 + np.radians(rng.uniform(4.0, 10.0))
    u = np.clip((t - rise) / (lift - rise), 0.0, 1.0)
    s = np.clip(t - lift, 0.0, None)
    up, forward = rng.uniform(2.0, 3.0), rng.uniform(0.5, 1.0)
    pitch = (pitch0 + (pitch_end - pitch0) * u * u * (3 - 2 * u)
             + np.radians(rng.uniform(10.0, 30.0)) * s)
    turn = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), pitch)
    # the rear leg starts at 97-98.5% of its reach
    hip0 = root[0] + hips["Left"]
    ankle0 = ANKLE_HEIGHT + FOOT[1] - rotate_vectors(turn[0], FOOT)[1]
    behind = np.sqrt((rng.uniform(0.97, 0.985) * LEG) ** 2 - (hip0[1] - ankle0) ** 2)
    toe = np.stack([np.full(n, hips["Left"][0]), ANKLE_HEIGHT + FOOT[1] + up * s * s,
                    rotate_vectors(turn[0], FOOT)[2] - behind + forward * s * s], axis=-1)
    rotations = np.zeros((n, skeleton.num_joints, 4))
    rotations[..., 3] = 1.0
    targets = {}
    for side, ankle, foot in (("Left", toe - rotate_vectors(turn, FOOT),
                               rotate_vectors(turn, FOOT)),
                              ("Right", np.broadcast_to(right_ankle, (n, 3)), FOOT)):
        hip = root + hips[side]
        solved = two_bone(hip, ankle, THIGH, SHIN, pole=hip + np.array([0.0, -0.5 * THIGH, 1.0]))
        targets[f"{side}Knee"] = solved.positions[:, 1]
        targets[f"{side}Ankle"] = solved.positions[:, 2]
        targets[f"{side}Toe"] = solved.positions[:, 2] + foot
    return apply_ik(Motion(skeleton, root, rotations, 1.0 / RATE), positions=targets,
                    rotations={"LeftToe": np.array([0.0, 0.0, 0.0, 1.0])})


@pytest.mark.parametrize("lock_feet", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_a_straight_stance_keeps_its_knee_while_the_other_foot_lifts_off(seed, lock_feet):
    """On flat ground, where nothing needs to change: the contact lasts into the first
    frames of the lift, float removal holds the rising foot down there and eases it up
    after, and the pelvis went down with it onto the other, nearly straight leg, where
    every 0.1% of a leg bends the knee by about 1.5° (here 6-28° more than the source's,
    the pelvis up to 4.3% of a leg lower; the Xia walk's 3-5° knees came out at 6-15°).
    The lifting leg takes the drop up now: the stance knee keeps the source's flexion
    and the pelvis stays. With the feet locked, the lifting toe is also held where it
    stood while the source's starts forward, and that still lowers the pelvis a little
    (a leg leaving the ground stays no straighter than the source's through its
    release): up to 0.15% of a leg here, the knee within 2.7° of the source's. The
    lifting leg's knee is as continuous as the source's, and no foot goes into the
    ground."""
    source = lift_off_clip(np.random.default_rng(seed))
    result, report = footplant(source, lock_feet=lock_feet)
    legs = {leg.side: leg for leg in find_legs(source.skeleton)}
    stance, lifting = legs["right"], legs["left"]
    ((start, stop),) = report.contacts["left"]
    assert report.contacts["right"] == [(0, source.num_frames)]
    assert start == 0 and stop < source.num_frames
    before = source.world_positions(include_end_sites=True)
    after = result.world_positions(include_end_sites=True)
    # the contact lasts into the lift, so float removal holds the foot down at its end
    tip = source.skeleton.num_joints + list(source.skeleton.end_site_parents).index(lifting.toe)
    sole = before[:, [lifting.ankle, lifting.toe, tip], 1].min(axis=1)
    assert sole[stop - 1] - sole.min() > FLOAT_KEPT * LEG
    knee, sink = (3.0, 2e-3 * LEG) if lock_feet else (0.1, 1e-4 * LEG)
    np.testing.assert_allclose(knee_flexion(after, stance), knee_flexion(before, stance), atol=knee)
    np.testing.assert_allclose(after[:, stance.ankle], before[:, stance.ankle], atol=1e-3 * LEG)
    assert report.pelvis_offset.min() >= -sink, report.pelvis_offset.min() / LEG
    pops = [metrics.knee_pop(w[:, lifting.hip], w[:, lifting.knee], w[:, lifting.ankle])
            for w in (before, after)]
    assert pops[1] <= pops[0] + 1.0, pops
    feet = [leg.ankle for leg in legs.values()] + [leg.toe for leg in legs.values()]
    assert metrics.penetration(after[:, feet], Terrain.flat(0.0)).max() <= 1e-9 * LEG
