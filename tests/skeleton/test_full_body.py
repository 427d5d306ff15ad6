"""full_body_ik: hands reach their targets, planted feet stay, bone lengths are kept, knees
bend forward and elbows back, and smooth target paths give smooth motion."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import limbik
from limbik.body.full_body import full_body_ik
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import quaternion_conjugate, quaternion_multiply, rotate_vectors

CMU = "bvh/cmu_131_01_start_walk_stop_meters.bvh"


def humanoid(frames=40):
    """A small humanoid (Y up, facing +Z, left +X) with slightly bent knees and elbows,
    swaying its hips so the clip is not static."""
    names = ["Hips", "LeftHip", "LeftKnee", "LeftAnkle", "RightHip", "RightKnee", "RightAnkle",
             "Spine", "Chest", "Head", "LeftShoulder", "LeftElbow", "LeftWrist",
             "RightShoulder", "RightElbow", "RightWrist"]
    parents = [-1, 0, 1, 2, 0, 4, 5, 0, 7, 8, 8, 10, 11, 8, 13, 14]
    offsets = [[0, 1.0, 0], [0.1, 0, 0], [0, -0.45, 0.04], [0, -0.45, -0.04],
               [-0.1, 0, 0], [0, -0.45, 0.04], [0, -0.45, -0.04], [0, 0.1, 0], [0, 0.4, 0],
               [0, 0.25, 0], [0.2, 0.0, 0], [0, -0.3, -0.03], [0, -0.28, 0.03], [-0.2, 0.0, 0],
               [0, -0.3, -0.03], [0, -0.28, 0.03]]
    sk = limbik.Skeleton(names, parents, offsets)
    motion = limbik.Motion.rest(sk, num_frames=frames)
    time = np.arange(frames) / 30.0
    root = np.stack([0.03 * np.sin(3 * time), 1.0 + 0.02 * np.cos(5 * time), 0 * time], -1)
    return dataclasses.replace(motion, root_positions=root)


def check(motion, out, goals, feet=("LeftAnkle", "RightAnkle"), tol=1e-6):
    sk = motion.skeleton
    before = motion.world_positions()
    after = out.world_positions()
    for joint, goal in goals.items():
        assert np.max(np.linalg.norm(after[:, sk.index(joint)] - goal, axis=-1)) < tol, joint
    for joint in feet:
        j = sk.index(joint)
        assert np.max(np.linalg.norm(after[:, j] - before[:, j], axis=-1)) < tol, joint
    par = sk.parents
    lengths = lambda p: np.linalg.norm(p[:, 1:] - p[:, par[1:]], axis=-1)  # noqa: E731
    assert np.max(np.abs(lengths(after) - lengths(before))) < 1e-9
    facing = rotate_vectors(motion.world_rotations()[:, 0], [0, 0, 1.0]) * [1, 0, 1]
    for hip, knee, ankle in (("LeftHip", "LeftKnee", "LeftAnkle"),
                             ("RightHip", "RightKnee", "RightAnkle")):
        a, b, c = (after[:, sk.index(n)] for n in (hip, knee, ankle))
        assert np.all(np.sum((b - 0.5 * (a + c)) * facing, -1) >= -1e-9), knee
    # no joint bends backward: the bend's normal keeps its side of the clip's hinge axis,
    # carried by the upper bone's turn
    rot_before = motion.world_rotations()
    rot_after = out.world_rotations()
    # (a straight limb's hinge is the body's left axis for knees, right for elbows)
    ahead = rotate_vectors(rot_before[:, 0], [0, 0, 1.0]) * [1, 0, 1]
    left = np.cross([0, 1.0, 0], ahead / np.linalg.norm(ahead, axis=-1, keepdims=True))
    for upper, mid, end, side in (("LeftHip", "LeftKnee", "LeftAnkle", 1),
                                  ("RightHip", "RightKnee", "RightAnkle", 1),
                                  ("LeftShoulder", "LeftElbow", "LeftWrist", -1),
                                  ("RightShoulder", "RightElbow", "RightWrist", -1)):
        u, m, e = (sk.index(n) for n in (upper, mid, end))
        a, b = before[:, m] - before[:, u], before[:, e] - before[:, m]
        size = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
        hinge = np.cross(a, b) + 0.05 * size[:, None] * side * left
        turn = quaternion_multiply(rot_after[:, u], quaternion_conjugate(rot_before[:, u]))
        carried = rotate_vectors(turn, hinge)
        bend = np.cross(after[:, m] - after[:, u], after[:, e] - after[:, m])
        assert np.all(np.sum(bend * carried, -1) >= -1e-12), mid


def test_hands_reach_random_reachable_targets_with_feet_planted(rng):
    motion = humanoid()
    sk = motion.skeleton
    pos = motion.world_positions()
    goals = {}
    for wrist, shoulder in (("LeftWrist", "LeftShoulder"), ("RightWrist", "RightShoulder")):
        direction = rng.normal(size=(motion.num_frames, 3))
        direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
        goals[wrist] = pos[:, sk.index(shoulder)] + direction * rng.uniform(
            0.2, 0.55, (motion.num_frames, 1))
    out = full_body_ik(motion, goals)
    check(motion, out, goals)


def test_hand_rotations_are_taken_exactly(rng):
    motion = humanoid()
    sk = motion.skeleton
    pos = motion.world_positions()
    goal = pos[:, sk.index("LeftShoulder")] + [0.05, -0.2, 0.3]
    turn = rng.normal(size=(motion.num_frames, 4))
    turn /= np.linalg.norm(turn, axis=-1, keepdims=True)
    out = full_body_ik(motion, {"left_hand": goal}, rotations={"left_hand": turn})
    check(motion, out, {"LeftWrist": goal})
    got = out.world_rotations()[:, sk.index("LeftWrist")]
    delta = quaternion_multiply(quaternion_conjugate(turn), got)
    angle = 2 * np.arctan2(np.linalg.norm(delta[:, :3], axis=-1), np.abs(delta[:, 3]))
    assert np.max(angle) < 1e-9


def test_pelvis_moves_when_hands_reach_beyond_the_arms():
    """Targets 0.75 in front of the shoulders (arms are 0.58 long): the pelvis moves
    forward until they are reached, and the feet stay planted."""
    motion = humanoid()
    sk = motion.skeleton
    pos = motion.world_positions()
    goals = {w: pos[:, sk.index(s)] + [0.0, -0.1, 0.7]
             for w, s in (("LeftWrist", "LeftShoulder"), ("RightWrist", "RightShoulder"))}
    out = full_body_ik(motion, goals)
    check(motion, out, goals)
    assert np.all(out.root_positions[:, 2] > motion.root_positions[:, 2] + 0.05)
    fixed = full_body_ik(motion, goals, pelvis_weight=0.0)
    np.testing.assert_allclose(fixed.root_positions, motion.root_positions)
    assert np.min(np.linalg.norm(fixed.world_positions()[:, sk.index("LeftWrist")]
                                 - goals["LeftWrist"], axis=-1)) > 0.05


def test_the_spine_leans_before_the_pelvis_moves():
    """With more spine weight the chest takes more of the reach and the pelvis less;
    with none the spine keeps its local rotations."""
    motion = humanoid()
    sk = motion.skeleton
    pos = motion.world_positions()
    goals = {w: pos[:, sk.index(s)] + [0.0, -0.1, 0.7]
             for w, s in (("LeftWrist", "LeftShoulder"), ("RightWrist", "RightShoulder"))}
    shifts = []
    for lean in (0.0, 0.5, 1.0):
        out = full_body_ik(motion, goals, spine_weight=lean)
        check(motion, out, goals)
        shifts.append(np.mean(out.root_positions[:, 2] - motion.root_positions[:, 2]))
        if lean == 0.0:
            for joint in ("Spine", "Chest"):
                j = sk.index(joint)
                np.testing.assert_array_equal(out.rotations[:, j], motion.rotations[:, j])
    assert shifts[0] > shifts[1] > shifts[2] >= 0.0


def test_smooth_targets_give_smooth_motion():
    motion = humanoid(frames=200)
    sk = motion.skeleton
    pos = motion.world_positions()
    time = np.linspace(0, 2 * np.pi, 200)[:, None]
    circle = np.concatenate([0.2 * np.cos(time), 0.2 * np.sin(time), 0.5 + 0.2 * np.sin(time)], -1)
    goals = {"LeftWrist": pos[:, sk.index("LeftShoulder")] + circle}
    out = full_body_ik(motion, goals, pull={"left_hand": 1.0})
    check(motion, out, goals)
    after = out.world_positions()
    step = np.max(np.linalg.norm(np.diff(after, axis=0), axis=-1))
    target_step = np.max(np.linalg.norm(np.diff(goals["LeftWrist"], axis=0), axis=-1))
    assert step < 4 * target_step


def test_weight_zero_keeps_the_clip_and_head_target_moves_the_body():
    motion = humanoid()
    sk = motion.skeleton
    pos = motion.world_positions()
    goals = {"left_hand": pos[:, sk.index("LeftShoulder")] + [0, 0, 0.4]}
    out = full_body_ik(motion, goals, weights={"left_hand": 0.0}, plant_feet=False)
    np.testing.assert_allclose(out.world_positions(), pos, atol=1e-12)
    head = pos[:, sk.index("Head")] + [0.0, -0.05, 0.05]
    out = full_body_ik(motion, {"head": head})
    np.testing.assert_allclose(out.world_positions()[:, sk.index("Head")], head, atol=1e-9)
    check(motion, out, {})


def test_cmu_clip_hands_reach_while_feet_stay_planted(shared_data, rng):
    motion = limbik.read_bvh(shared_data / CMU)
    sk = motion.skeleton
    pos = motion.world_positions()
    time = np.arange(motion.num_frames)[:, None] / 120.0
    chest = pos[:, sk.index("Chest2")]
    ahead = rotate_vectors(motion.world_rotations()[:, 0], [0, 0, 1.0]) * [1, 0, 1]
    ahead /= np.linalg.norm(ahead, axis=-1, keepdims=True)
    left = np.cross([0, 1.0, 0], ahead)
    goals = {}
    for wrist, side in (("LeftWrist", 1.0), ("RightWrist", -1.0)):
        # a smooth random path in front of the chest, within reach of the arms
        phase = rng.uniform(0, 2 * np.pi, 3)
        wave = 0.06 * np.sin(2 * time + phase)
        goals[wrist] = (chest + (0.3 + wave[:, :1]) * ahead + (0.15 * side + wave[:, 1:2]) * left
                        + wave[:, 2:] * [0, 1.0, 0])
    out = full_body_ik(motion, goals)
    check(motion, out, goals)
    after = out.world_positions()
    # per-frame continuity: no joint moves more in one frame than the clip's own joints
    # do (away from the clip's one glitch, the right toe between frames 724 and 726)
    step = np.linalg.norm(np.diff(after, axis=0), axis=-1)
    clip_step = np.linalg.norm(np.diff(pos, axis=0), axis=-1)
    calm = np.ones(len(step), dtype=bool)
    calm[723:727] = False
    assert np.max(step[calm]) < 1.5 * np.max(clip_step[calm])


def test_bad_targets_raise():
    motion = humanoid(frames=3)
    with pytest.raises(InvalidInputError, match="targets keys must be one of"):
        full_body_ik(motion, {"tail": [0, 0, 0]})
    with pytest.raises(InvalidInputError, match=r"must have shape \(3, 3\) or \(3,\)"):
        full_body_ik(motion, {"left_hand": np.zeros((2, 3))})
    with pytest.raises(InvalidInputError, match=r"weights\['left_hand'\] must be in \[0, 1\]"):
        full_body_ik(motion, {"left_hand": [0, 1, 0]}, weights={"left_hand": 2.0})


def test_bad_forward_and_plant_feet_raise():
    """A zero or mis-shaped forward has no heading, and plant_feet is a flag: both are
    named instead of falling back to +Z or taking 1 for True."""
    motion = humanoid(frames=3)
    goal = {"left_hand": [0.3, 1.2, 0.3]}
    with pytest.raises(InvalidInputError, match=r"forward must be non-zero vectors"):
        full_body_ik(motion, goal, forward=(0, 0, 0))
    with pytest.raises(InvalidInputError, match=r"forward must have shape \(3,\), got \(2, 3\)"):
        full_body_ik(motion, goal, forward=[[0, 0, 1], [0, 0, 1]])
    with pytest.raises(InvalidInputError, match="plant_feet must be True or False, got int 1"):
        full_body_ik(motion, goal, plant_feet=1)
