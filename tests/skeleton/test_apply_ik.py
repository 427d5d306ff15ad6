"""Applying IK results: targets met exactly, twist kept, other joints untouched."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from bvh_samples import SMALL_BVH
from hypothesis import given, settings
from hypothesis import strategies as st

import limbik
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.geometry import (
    quaternion_conjugate,
    quaternion_multiply,
    rotate_vectors,
)


def law_of_cosines_targets(motion, leg, rng, reach=0.15):
    """Length-consistent (hip, knee, ankle) targets: the ankle moved at random within
    reach, the knee re-solved by the law of cosines in the plane of the animated knee,
    then swung about the hip→ankle axis by a random angle."""
    pos = motion.world_positions()
    H, K, A = pos[:, leg.hip], pos[:, leg.knee], pos[:, leg.ankle]
    L1 = np.linalg.norm(K - H, axis=-1)[:, None]
    L2 = np.linalg.norm(A - K, axis=-1)[:, None]
    scale = float((L1 + L2).mean())
    A2 = A + rng.normal(scale=reach * scale, size=A.shape)
    d = A2 - H
    dist = np.linalg.norm(d, axis=-1, keepdims=True)
    dist_c = np.clip(dist, np.abs(L1 - L2) * 1.05 + 1e-9, (L1 + L2) * 0.98)
    u = d / dist
    A2 = H + u * dist_c
    cos_a = (L1**2 + dist_c**2 - L2**2) / (2 * L1 * dist_c)
    sin_a = np.sqrt(np.clip(1 - cos_a**2, 0, 1))
    pole = (K - H) - np.sum((K - H) * u, axis=-1, keepdims=True) * u
    pole_n = np.linalg.norm(pole, axis=-1, keepdims=True)
    pole = np.where(pole_n > 1e-9, pole / np.where(pole_n > 0, pole_n, 1), np.cross(u, [1.0, 0, 0]))
    K2 = H + L1 * (cos_a * u + sin_a * pole)
    # swivel the knee about the hip→ankle axis
    angle = rng.uniform(-0.6, 0.6, size=len(H))
    q = np.concatenate([u * np.sin(angle / 2)[:, None], np.cos(angle / 2)[:, None]], axis=-1)
    K2 = H + rotate_vectors(q, K2 - H)
    return H, K2, A2


def check_leg_application(motion, leg, rng):
    H, K, A = law_of_cosines_targets(motion, leg, rng)
    scale = float(np.abs(motion.world_positions()).max())
    new = limbik.apply_ik(motion, {leg.hip: H, leg.knee: K, leg.ankle: A})
    before = motion.world_positions()
    after = new.world_positions()
    for j, target in ((leg.hip, H), (leg.knee, K), (leg.ankle, A)):
        assert np.abs(after[:, j] - target).max() < 1e-9 * scale
    sk = motion.skeleton
    in_leg = sk.descendants_mask(leg.hip)
    assert np.array_equal(after[:, ~in_leg], before[:, ~in_leg])
    assert np.array_equal(new.root_positions, motion.root_positions)
    # descendants of the ankle follow it rigidly
    fa, fb = motion.world_frames(), new.world_frames()
    below = sk.descendants_mask(leg.ankle, include_self=False)
    for j in np.flatnonzero(below):
        np.testing.assert_allclose(fb[:, leg.ankle].to_local(after[:, j]),
                                   fa[:, leg.ankle].to_local(before[:, j]), atol=1e-9 * scale)
    # the thigh and the shin turn by the minimal rotation (no added twist)
    qa, qb = motion.world_rotations(), new.world_rotations()
    for joint, child, target_dir in ((leg.hip, leg.knee, K - H), (leg.knee, leg.ankle, A - K)):
        delta = quaternion_multiply(qb[:, joint], quaternion_conjugate(qa[:, joint]))
        old_dir = before[:, child] - before[:, joint]
        axis_part = delta[:, :3]
        # a swing's axis is perpendicular to both directions
        for d in (old_dir, target_dir):
            dn = d / np.linalg.norm(d, axis=-1, keepdims=True)
            assert np.abs(np.sum(axis_part * dn, axis=-1)).max() < 1e-9
    return new


def synthetic_motion(rng, frames=40):
    base = limbik.parse_bvh(SMALL_BVH)
    rot = rng.normal(size=(frames, 3, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    root = rng.normal(size=(frames, 3))
    return dataclasses.replace(base, rotations=rot, root_positions=root)


def test_two_bone_targets_on_real_legs(shared_data, rng):
    """On every shared clip and both legs: hips, knees and ankles land exactly on
    length-consistent targets; joints outside the leg are unchanged."""
    for path in sorted((shared_data / "bvh").glob("*.bvh")):
        motion = limbik.read_bvh(path)
        if motion.num_frames > 200:
            motion = dataclasses.replace(motion, rotations=motion.rotations[:200],
                                         root_positions=motion.root_positions[:200])
        for leg in limbik.find_legs(motion.skeleton):
            check_leg_application(motion, leg, rng)


def test_hip_directly_below_the_root(rng):
    """Without a separate hip joint the hip's parent is the root, which also carries
    the rest of the body: a hip target that is already met leaves the root alone,
    and the thigh still swings its knee onto the target."""
    motion = synthetic_motion(rng)
    pos = motion.world_positions()
    hip, knee = pos[:, 1], pos[:, 2]
    theta = rng.uniform(-1, 1, size=len(hip))
    axis = np.cross(knee - hip, [0.0, 0.0, 1.0])
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    q = np.concatenate([axis * np.sin(theta / 2)[:, None], np.cos(theta / 2)[:, None]], axis=-1)
    new_knee = hip + rotate_vectors(q, knee - hip)
    new = limbik.apply_ik(motion, {"LeftUpLeg": hip, "LeftLeg": new_knee})
    np.testing.assert_array_equal(new.rotations[:, 0], motion.rotations[:, 0])
    after = new.world_positions()
    np.testing.assert_array_equal(after[:, :2], pos[:, :2])
    np.testing.assert_allclose(after[:, 2], new_knee, atol=1e-12)


def test_world_rotation_targets_are_taken_exactly(rng):
    motion = synthetic_motion(rng)
    q = rng.normal(size=(motion.num_frames, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    new = limbik.apply_ik(motion, rotations={"LeftLeg": q})
    got = new.world_rotations()[:, 2]
    assert np.abs(np.abs(np.sum(got * q, axis=-1)) - 1).max() < 1e-12
    np.testing.assert_array_equal(new.world_positions()[:, :3], motion.world_positions()[:, :3])


def test_keeping_the_foot_orientation_while_moving_the_leg(shared_data, rng):
    motion = limbik.read_bvh(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh")
    leg, _ = limbik.find_legs(motion.skeleton)
    H, K, A = law_of_cosines_targets(motion, leg, rng)
    foot = motion.world_rotations()[:, leg.ankle]
    new = limbik.apply_ik(motion, {leg.hip: H, leg.knee: K, leg.ankle: A},
                          rotations={leg.ankle: foot})
    got = new.world_rotations()[:, leg.ankle]
    assert np.abs(np.abs(np.sum(got * foot, axis=-1)) - 1).max() < 1e-12
    np.testing.assert_allclose(new.world_positions()[:, leg.ankle], A, atol=1e-9)


def test_moving_the_root_translates_everything(rng):
    motion = synthetic_motion(rng)
    delta = rng.normal(size=(motion.num_frames, 3))
    new = limbik.apply_ik(motion, {0: motion.root_positions + delta})
    np.testing.assert_allclose(new.world_positions(),
                               motion.world_positions() + delta[:, None], atol=1e-12)
    np.testing.assert_array_equal(new.rotations, motion.rotations)


def test_targets_already_met_change_nothing(rng):
    motion = synthetic_motion(rng)
    pos = motion.world_positions()
    new = limbik.apply_ik(motion, {1: pos[:, 1], 2: pos[:, 2]})
    np.testing.assert_array_equal(new.rotations, motion.rotations)


def test_several_targeted_children_share_one_joint(rng):
    """Two children of the root moved by one rigid rotation about it are both met."""
    sk = limbik.Skeleton(["root", "a", "b", "c"], [-1, 0, 0, 0],
                         [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 0.5)])
    F = 30
    q0 = rng.normal(size=(F, 3, 4))
    q0 = np.concatenate([q0, np.tile([0, 0, 0, 1.0], (F, 1, 1))], axis=1)
    q0 = np.roll(q0 / np.linalg.norm(q0, axis=-1, keepdims=True), 1, axis=1)
    motion = limbik.Motion(sk, np.zeros((F, 3)), q0, 1 / 30)
    pos = motion.world_positions()
    r = rng.normal(size=(F, 4))
    r /= np.linalg.norm(r, axis=-1, keepdims=True)
    a2 = rotate_vectors(r, pos[:, 1])
    b2 = rotate_vectors(r, pos[:, 2])
    # the root has no parent bone to turn, so target its children through a helper root
    sk2 = limbik.Skeleton(["base", "root", "a", "b", "c"], [-1, 0, 1, 1, 1],
                          [(0, 0, 0), (0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 0.5)])
    m2 = limbik.Motion(sk2, np.zeros((F, 3)),
                       np.concatenate([np.tile([0, 0, 0, 1.0], (F, 1, 1)), q0], axis=1), 1 / 30)
    new = limbik.apply_ik(m2, {"a": a2, "b": b2})
    after = new.world_positions()
    np.testing.assert_allclose(after[:, 2], a2, atol=1e-12)
    np.testing.assert_allclose(after[:, 3], b2, atol=1e-12)
    np.testing.assert_allclose(after[:, 4], rotate_vectors(r, pos[:, 3]), atol=1e-12)


def test_degenerate_targets_never_give_nan(rng):
    motion = synthetic_motion(rng, frames=4)
    pos = motion.world_positions()
    for target in (pos[:, 1],  # on the parent: no direction
                   2 * pos[:, 1] - pos[:, 2]):  # straight behind: a half turn
        new = limbik.apply_ik(motion, {2: target})
        assert np.all(np.isfinite(new.rotations))
        assert np.all(np.isfinite(new.world_positions()))
    behind = limbik.apply_ik(motion, {2: 2 * pos[:, 1] - pos[:, 2]})
    np.testing.assert_allclose(behind.world_positions()[:, 2], 2 * pos[:, 1] - pos[:, 2],
                               atol=1e-12)


def test_apply_chain_takes_solution_like_objects(rng):
    motion = synthetic_motion(rng, frames=5)
    pos = motion.world_positions()

    class Result:
        positions = pos[:, [0, 1, 2]]

    new = limbik.apply_chain(motion, ["Hips", "LeftUpLeg", "LeftLeg"], Result())
    np.testing.assert_allclose(new.world_positions(), pos, atol=1e-12)
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(frames, 2, 3\)"):
        limbik.apply_chain(motion, ["Hips", "LeftUpLeg"], pos)


def test_invalid_arguments(rng):
    motion = synthetic_motion(rng, frames=5)
    with pytest.raises(InvalidInputError, match=r"must have shape \(5, 3\) or \(3,\)"):
        limbik.apply_ik(motion, {1: np.zeros((4, 3))})
    with pytest.raises(NonFiniteInputError, match="must be finite"):
        limbik.apply_ik(motion, {1: [np.nan, 0, 0]})
    with pytest.raises(InvalidInputError, match="joint must be one of"):
        limbik.apply_ik(motion, {"Nope": [0, 0, 0]})
    with pytest.raises(InvalidInputError, match="whose child"):
        limbik.apply_ik(motion, {2: [0, 0, 0]}, rotations={1: [0, 0, 0, 1]})
    with pytest.raises(InvalidInputError, match="motion must be a Motion"):
        limbik.apply_ik("motion", {})


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(3, 8), st.integers(1, 6))
def test_any_length_consistent_chain_pose_is_reproduced(seed, n, frames):
    """For a random chain and any pose of a sub-chain reachable by turning its
    joints, applying the sub-chain's positions reproduces them; joints above the
    sub-chain are untouched."""
    rng = np.random.default_rng(seed)
    offsets = rng.normal(size=(n, 3))
    sk = limbik.Skeleton([f"j{i}" for i in range(n)], [-1, *range(n - 1)], offsets)
    q = rng.normal(size=(frames, n, 4))
    motion = limbik.Motion(sk, rng.normal(size=(frames, 3)), q, 0.1)
    first = int(rng.integers(1, n - 1))
    posed = np.array(motion.rotations)
    posed[:, first - 1:] = rng.normal(size=(frames, n - first + 1, 4))
    target = dataclasses.replace(motion, rotations=posed).world_positions()
    joints = list(range(first, n))
    new = limbik.apply_ik(motion, {j: target[:, j] for j in joints})
    after = new.world_positions()
    scale = 1 + np.abs(target).max()
    assert np.abs(after[:, joints] - target[:, joints]).max() < 1e-10 * scale
    np.testing.assert_array_equal(after[:, :first], motion.world_positions()[:, :first])
    assert np.all(np.isfinite(new.rotations))
