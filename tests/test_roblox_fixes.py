"""The seed thread's fixes in ``limbik.roblox``: the degenerate axis and the shoulder C1 offset."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import limbik
from limbik import Frame, roblox
from limbik.errors import InvalidInputError


def axis_aligned_frames() -> Frame:
    """The 24 proper rotations that map coordinate axes onto coordinate axes."""
    mats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product([1.0, -1.0], repeat=3):
            m = np.zeros((3, 3))
            for row, (col, s) in enumerate(zip(perm, signs, strict=True)):
                m[row, col] = s
            if np.linalg.det(m) > 0:
                mats.append(m)
    assert len(mats) == 24
    return Frame.from_rotation(Rotation.from_matrix(np.array(mats)), np.zeros(3))


def rotated_origins() -> Frame:
    rng = np.random.default_rng(21)
    rand = Frame(Rotation.random(1000, random_state=rng).as_quat(), rng.normal(size=(1000, 3)))
    aligned = axis_aligned_frames()
    aligned = Frame(aligned.quaternion, rng.normal(size=(24, 3)))
    return Frame(np.concatenate([rand.quaternion, aligned.quaternion]),
                 np.concatenate([rand.position, aligned.position]))


@pytest.mark.parametrize("local_z", [-1.5, 1.5, -0.3, 3.0])
def test_straight_ahead_and_behind_roll_as_in_the_identity_frame(local_z):
    """1000 random and all 24 axis-aligned origin frames: the plane is ``origin · plane₀``."""
    origins = rotated_origins()
    local = np.array([0.0, 0.0, local_z])
    target = origins.apply(local)
    plane, shoulder, elbow = roblox.solve_ik(origins, target, 1.0, 0.8)
    plane0, shoulder0, elbow0 = roblox.solve_ik(Frame(), local, 1.0, 0.8)
    assert np.all((origins @ plane0).isclose(plane, atol=1e-9))
    np.testing.assert_allclose(shoulder, shoulder0, atol=1e-12)
    np.testing.assert_allclose(elbow, elbow0, atol=1e-12)
    # the elbow side: behind rolls the elbow up (+Y of the origin), ahead keeps it down
    up = plane.rotate(np.array([0.0, 1.0, 0.0]))
    expected = origins.rotate(np.array([0.0, -1.0 if local_z > 0 else 1.0, 0.0]))
    np.testing.assert_allclose(up, expected, atol=1e-9)


@pytest.mark.parametrize("local_z", [-1.5, 1.5])
def test_two_bone_root_frame_rolls_as_in_the_identity_frame(local_z):
    origins = rotated_origins()
    local = np.array([0.0, 0.0, local_z])
    sol = limbik.two_bone(np.zeros(3), origins.rotate(local), 1.0, 1.0, root_frame=origins)
    mid0 = limbik.two_bone(np.zeros(3), local, 1.0, 1.0, root_frame=Frame()).positions[1]
    np.testing.assert_allclose(sol.positions[:, 1], origins.rotate(mid0), atol=1e-9)


def test_the_tolerance_only_touches_near_degenerate_targets():
    """A target 1e-6 rad off straight behind keeps the seed's own (continuous) roll."""
    eps = 1e-6
    local = np.array([np.sin(eps), 0.0, np.cos(eps)])
    plane, _, _ = roblox.solve_ik(Frame(), local, 1.0, 1.0)
    u = local
    axis = np.cross([0.0, 0.0, -1.0], u)
    expected = Frame.from_axis_angle(axis, np.arccos(-u[2]))
    assert plane.isclose(expected, atol=1e-12)


# ----------------------------------------------------------------------------- C1 offset


def arm_hand(torso, shoulder_c0, c1, elbow_angle, l1, l2):
    """The hand of an R15-style arm through its Motor6Ds.

    Upper arm = ``torso · C0 · C1⁻¹``; the elbow joint sits ``l1 − C1.Y`` below the upper
    arm's centre (lengths as the thread counts them: ``|C1.Y| + |elbow.C0.Y|``), the lower
    arm hangs ``0.3`` below the elbow and the hand ``l2 − 0.3`` below that.
    """
    upper = roblox.motor6d_part1(torso, shoulder_c0, c1)
    c1y = float(c1.position[1])
    elbow_c0 = roblox.elbow_motor_c0(Frame.from_translation([0.0, -(l1 - c1y), 0.0]),
                                     elbow_angle)
    lower = roblox.motor6d_part1(upper, elbow_c0, Frame.from_translation([0.0, 0.3, 0.0]))
    return lower.apply(np.array([0.0, -(l2 - 0.3), 0.0]))


def random_setups(rng, n):
    torso = Frame(Rotation.random(n, random_state=rng).as_quat(), rng.normal(size=(n, 3)))
    rest_c0 = Frame(Rotation.random(n, random_state=rng).as_quat(), rng.normal(size=(n, 3)))
    return torso, torso @ rest_c0


def test_the_uncompensated_hand_misses_by_c1x():
    rng = np.random.default_rng(31)
    torso, origin = random_setups(rng, 200)
    c1x, l1, l2 = -0.25, 1.2, 1.1
    c1 = Frame.from_translation([c1x, 0.4, 0.0])
    target = origin.position + rng.normal(size=(200, 3))
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    hand = arm_hand(torso, roblox.shoulder_motor_c0(torso, plane, s), c1, e, l1, l2)
    seed_hand = roblox.build_arm(plane, s, e, l1, l2)[1].apply(np.array([0.0, -l2 / 2, 0.0]))
    miss = np.linalg.norm(hand - seed_hand, axis=-1)
    np.testing.assert_allclose(miss, abs(c1x), atol=1e-12)


def test_c1_plane_fix_puts_the_straight_arm_on_the_target():
    """Too-far targets (the straight arm of the comment's triangle): hand on target, 1e-9."""
    rng = np.random.default_rng(32)
    n = 2000
    torso, origin = random_setups(rng, n)
    l1, l2 = rng.uniform(0.5, 1.5, n), rng.uniform(0.5, 1.5, n)
    c1x = rng.uniform(-0.5, 0.5, n)
    c1 = [Frame.from_translation([c, 0.4, 0.0]) for c in c1x]
    d = rng.normal(size=(n, 3))
    target = origin.position + d / np.linalg.norm(d, axis=1, keepdims=True) * (
        (l1 + l2) * rng.uniform(1.0, 2.0, n))[:, None]
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    fixed = roblox.compensate_c1_plane(plane, c1x, l1, l2)
    c0 = roblox.shoulder_motor_c0(torso, fixed, s)
    err = [np.linalg.norm(arm_hand(torso[i], c0[i], c1[i], e[i], l1[i], l2[i]) - target[i])
           for i in range(n)]
    assert max(err) < 1e-9


def test_c1_plane_fix_with_the_solved_reach_is_exact_for_bent_arms():
    rng = np.random.default_rng(33)
    n = 1000
    torso, origin = random_setups(rng, n)
    l1, l2, c1x = 1.0, 0.9, 0.3
    c1 = Frame.from_translation([c1x, 0.45, 0.0])
    d = rng.normal(size=(n, 3))
    l3 = rng.uniform(0.2, 1.9, n)
    target = origin.position + d / np.linalg.norm(d, axis=1, keepdims=True) * l3[:, None]
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    fixed = roblox.compensate_c1_plane(plane, c1x, l1, l2, reach=l3)
    c0 = roblox.shoulder_motor_c0(torso, fixed, s)
    err = [np.linalg.norm(arm_hand(torso[i], c0[i], c1, e[i], l1, l2) - target[i])
           for i in range(n) if l3[i] >= abs(l1 - l2)]
    assert len(err) > 800 and max(err) < 1e-9
    # the joint moves only by h - R along the look, far less than the offset
    moved = np.linalg.norm(fixed.position - plane.position, axis=-1)
    np.testing.assert_allclose(moved, np.hypot(l3, c1x) - l3, atol=1e-12)


def test_c1_origin_fix_puts_the_hand_on_the_target():
    rng = np.random.default_rng(34)
    n = 2000
    torso, origin = random_setups(rng, n)
    l1, l2 = 1.1, 1.0
    c1x = rng.uniform(-0.5, 0.5, n)
    target = origin.position + rng.normal(size=(n, 3)) * 1.2
    start = roblox.compensate_c1_origin(origin, c1x)
    np.testing.assert_allclose(start.position, origin.apply(
        np.stack([-c1x, 0 * c1x, 0 * c1x], axis=-1)), atol=1e-12)
    plane, s, e = roblox.solve_ik(start, target, l1, l2)
    joint = plane.translated(np.stack([c1x, 0 * c1x, 0 * c1x], axis=-1))
    c0 = roblox.shoulder_motor_c0(torso, joint, s)
    hands = np.array([arm_hand(torso[i], c0[i], Frame.from_translation([c1x[i], 0.4, 0.0]),
                               e[i], l1, l2) for i in range(n)])
    # reachable from the line's start, or pushed by the seed so the hand still reaches
    ok = np.linalg.norm(target - start.position, axis=-1) >= abs(l1 - l2)
    assert ok.sum() > 1900
    assert np.abs(hands[ok] - target[ok]).max() < 1e-9


def test_c1_origin_fix_keeps_the_joint_for_targets_in_the_origin_yz_plane():
    rng = np.random.default_rng(35)
    origin = Frame(Rotation.random(300, random_state=rng).as_quat(), rng.normal(size=(300, 3)))
    c1x = 0.25
    local = np.stack([np.zeros(300), rng.normal(size=300), rng.normal(size=300)], axis=-1)
    start = roblox.compensate_c1_origin(origin, c1x)
    target = start.apply(local)  # in the YZ plane through the arm's line
    plane, _, _ = roblox.solve_ik(start, target, 1.0, 1.0)
    reach = np.linalg.norm(local, axis=-1)
    inside = (reach <= 2.0)
    joint = plane.translated([c1x, 0.0, 0.0])
    np.testing.assert_allclose(joint.position[inside], origin.position[inside], atol=1e-12)


def test_c1_fix_errors_name_the_argument():
    with pytest.raises(InvalidInputError, match="origin_cf must be a limbik Frame"):
        roblox.compensate_c1_origin(None, 0.2)
    with pytest.raises(InvalidInputError, match="l1"):
        roblox.compensate_c1_plane(Frame(), 0.2, -1.0, 1.0)
    with pytest.raises(InvalidInputError, match="reach"):
        roblox.compensate_c1_plane(Frame(), 0.2, 1.0, 1.0, reach=0.0)
