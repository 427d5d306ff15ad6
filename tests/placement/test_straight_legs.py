"""A leg the source holds (nearly) straight stays as straight where nothing needs to move."""

from __future__ import annotations

import numpy as np
import pytest
from clip_checks import knee_flexion

from limbik import apply_ik, find_legs, two_bone
from limbik.placement.footplant import footplant
from limbik.placement.walk import ANKLE_HEIGHT, FOOT, SHIN, THIGH, walk_skeleton
from limbik.skeleton.motion import Motion

RATE = 120.0
LEG = THIGH + SHIN


def standing_clip(rng):
    """The built-in biped standing on both feet, flat on the floor y = 0, for 1.5 s,
    its hips swaying a little sideways and up and down with each leg between 99.6% and
    99.95% of its full reach (3.6–10.3° of knee flexion): a soldier's stance."""
    skeleton = walk_skeleton()
    n = int(RATE * 1.5)
    t = np.arange(n) / RATE
    hips = {side: skeleton.offsets[skeleton.index(f"{side}Hip")] for side in ("Left", "Right")}
    ankles = {side: np.array([hips[side][0], ANKLE_HEIGHT, 0.02]) for side in hips}
    # the hips' height for a reach of `fraction` of the leg, swaying between two seeded ones
    lo, hi = np.sort(rng.uniform(0.996, 0.9995, size=2))
    fraction = lo + (hi - lo) * 0.5 * (1 - np.cos(2 * np.pi * t / rng.uniform(0.8, 1.5)))
    sway = 0.01 * np.sin(2 * np.pi * t / rng.uniform(0.9, 1.4))
    root = np.zeros((n, 3))
    root[:, 0] = sway
    for side in hips:  # the lower of the two hips sets the height
        dx = hips[side][0] + sway - ankles[side][0]
        dz = 0.0 - ankles[side][2]
        height = ANKLE_HEIGHT + np.sqrt((fraction * LEG) ** 2 - dx ** 2 - dz ** 2) - hips[side][1]
        root[:, 1] = height if side == "Left" else np.minimum(root[:, 1], height)
    rotations = np.zeros((n, skeleton.num_joints, 4))
    rotations[..., 3] = 1.0
    targets = {}
    for side in hips:
        hip = root + hips[side]
        ankle = np.broadcast_to(ankles[side], (n, 3))
        solved = two_bone(hip, ankle, THIGH, SHIN, pole=hip + np.array([0.0, -0.5 * THIGH, 1.0]))
        targets[f"{side}Knee"] = solved.positions[:, 1]
        targets[f"{side}Ankle"] = solved.positions[:, 2]
        targets[f"{side}Toe"] = solved.positions[:, 2] + FOOT
    return apply_ik(Motion(skeleton, root, rotations, 1.0 / RATE), positions=targets)


@pytest.mark.parametrize("seed", range(6))
def test_a_straight_stance_on_flat_ground_keeps_its_straight_knees(seed):
    """Feet flat on the floor and legs within 0.05% to 0.4% of full reach: the clean-up
    has nothing to fix, so the knees keep the source's flexion (within 1.5°; the soft
    reach bent them to 11.5°) and the pelvis stays where it was."""
    source = standing_clip(np.random.default_rng(seed))
    result, report = footplant(source)
    before, after = source.world_positions(), result.world_positions()
    for leg in find_legs(source.skeleton):
        assert report.contacts[leg.side] == [(0, source.num_frames)]
        flexion, kept = knee_flexion(before, leg), knee_flexion(after, leg)
        assert flexion.max() < 10.5
        np.testing.assert_allclose(kept, flexion, atol=1.5)
        np.testing.assert_allclose(after[:, leg.ankle], before[:, leg.ankle], atol=1e-3 * LEG)
    assert np.max(np.abs(report.pelvis_offset)) <= 2e-3 * LEG
