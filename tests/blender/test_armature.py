"""Armature conversions without Blender: a synthetic armature built with Blender's
pose formula (pose = parent pose · rest-relative · basis) becomes a Motion whose joints
are the bone heads, and pose_bases recovers the bases; the rest pose is identity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from limbik.app.blender.armature import (
    bone_order,
    euler_from_quaternions,
    motion_from_armature,
    pose_bases,
)
from limbik.errors import InvalidInputError

PARENTS = [-1, 0, 1, 2, 0, 4, 5, 0]


def matrices(rotations, positions, scale=1.0):
    m = np.zeros(rotations.shape[:-1] + (4, 4)) if rotations.ndim > 1 else np.zeros((4, 4))
    m[..., :3, :3] = Rotation.from_quat(rotations.reshape(-1, 4)).as_matrix().reshape(
        rotations.shape[:-1] + (3, 3)) * scale
    m[..., :3, 3] = positions
    m[..., 3, 3] = 1.0
    return m


def armature(seed, frames=6):
    rng = np.random.default_rng(seed)
    J = len(PARENTS)
    heads = np.zeros((J, 3))
    for j in range(1, J):
        heads[j] = heads[PARENTS[j]] + rng.normal(size=3)
    rest = matrices(Rotation.random(J, random_state=rng).as_quat(), heads)
    basis_q = Rotation.random(frames * J, random_state=rng).as_quat().reshape(frames, J, 4)
    basis_loc = np.zeros((frames, J, 3))
    basis_loc[:, 0] = rng.normal(size=(frames, 3))
    basis = matrices(basis_q, basis_loc)
    pose = np.empty_like(basis)
    for j, p in enumerate(PARENTS):
        rel = rest[j] if p < 0 else np.linalg.solve(rest[p], rest[j])
        pose[:, j] = (rel if p < 0 else pose[:, p] @ rel) @ basis[:, j]
    world = matrices(Rotation.random(random_state=rng).as_quat(), rng.normal(size=3),
                     scale=0.01)
    return rest, pose, world, basis_q, basis_loc


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_joints_are_the_bone_heads_and_bases_come_back(seed):
    rest, pose, world, basis_q, basis_loc = armature(seed)
    names = [f"b{j}" for j in range(len(PARENTS))]
    motion = motion_from_armature(names, PARENTS, rest, pose, world, 1 / 30)
    heads = (world @ pose)[..., :3, 3]  # Blender's Z-up world
    expected = np.stack([heads[..., 0], heads[..., 2], -heads[..., 1]], axis=-1)
    assert np.abs(motion.world_positions() - expected).max() < 1e-9 * np.abs(expected).max()
    loc, q_wxyz, scale = pose_bases(motion, PARENTS, rest, pose, world)
    assert np.allclose(scale, 1.0)
    assert np.allclose(loc, basis_loc, atol=1e-9)
    dots = np.abs(np.sum(q_wxyz[..., [1, 2, 3, 0]] * basis_q, axis=-1))
    assert np.all(dots > 1 - 1e-12)
    # consecutive quaternions stay in one hemisphere
    assert np.all(np.sum(q_wxyz[1:] * q_wxyz[:-1], axis=-1) >= 0)


def test_rest_pose_is_identity_with_the_rest_heads_and_tails_as_end_sites():
    rest, _, world, _, _ = armature(3)
    J = len(PARENTS)
    pose = np.broadcast_to(rest, (2, J, 4, 4))
    tails = rest[:, :3, 3] + np.array([0.0, 0.5, 0.0])
    names = [f"b{j}" for j in range(J)]
    motion = motion_from_armature(names, PARENTS, rest, pose, world, 1 / 24, tails=tails)
    assert np.allclose(motion.rotations[..., 3], 1.0)
    assert np.allclose(motion.rest_positions(include_end_sites=True),
                       motion.world_positions(include_end_sites=True)[0], atol=1e-12)
    assert motion.skeleton.end_site_parents.tolist() == [3, 6, 7]  # the leaves
    assert not motion.joint_translations


def test_bone_order_puts_parents_first_and_needs_one_root():
    assert bone_order(["c", "a", "b"], ["b", None, "a"]) == [1, 2, 0]
    with pytest.raises(InvalidInputError, match="armature must have one root bone, got a, b"):
        bone_order(["a", "b"], [None, None])
    with pytest.raises(InvalidInputError, match="parent must be a bone of the armature"):
        bone_order(["a", "b"], [None, "x"])


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_angles_rebuild_the_rotation_in_blenders_order(order):
    rng = np.random.default_rng(1)
    q = Rotation.random(50, random_state=rng).as_quat()
    e = euler_from_quaternions(q[:, [3, 0, 1, 2]], order)
    # Blender: mode "XYZ" applies X first, i.e. R = Rz @ Ry @ Rx
    m = np.eye(3)
    for axis in order:
        m = Rotation.from_euler(axis.lower(), e[:, ["XYZ".index(axis)]]).as_matrix() @ m
    assert np.allclose(m, Rotation.from_quat(q).as_matrix(), atol=1e-12)
    with pytest.raises(InvalidInputError, match="order must be a permutation of XYZ"):
        euler_from_quaternions(q[:, [3, 0, 1, 2]], "XXY")


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_angles_match_scipy_and_survive_gimbal_lock(order):
    rng = np.random.default_rng(2)
    q = Rotation.random(200, random_state=rng).as_quat()
    e = euler_from_quaternions(q[:, None][..., [3, 0, 1, 2]], order)[:, 0]
    reference = Rotation.from_quat(q).as_euler(order.lower())
    for slot, axis in enumerate(order):  # the same angles, up to whole turns of the unwrap
        turns = (e[:, "XYZ".index(axis)] - reference[:, slot]) / (2 * np.pi)
        assert np.allclose(turns, np.round(turns), atol=1e-12)
    # the middle angle at ±90°: the first and last axes line up, the last angle is 0
    angles = np.c_[rng.uniform(-3, 3, 40), np.full(40, np.pi / 2) * rng.choice([-1, 1], 40),
                   rng.uniform(-3, 3, 40)]
    locked = Rotation.from_euler(order.lower(), angles)
    e = euler_from_quaternions(locked.as_quat()[:, [3, 0, 1, 2]], order)
    assert np.all(np.isfinite(e)) and np.allclose(e[:, "XYZ".index(order[2])], 0.0)
    m = np.eye(3)
    for axis in order:
        m = Rotation.from_euler(axis.lower(), e[:, ["XYZ".index(axis)]]).as_matrix() @ m
    assert np.allclose(m, locked.as_matrix(), atol=1e-9)


def test_euler_angles_of_a_zero_quaternion_are_refused():
    with pytest.raises(InvalidInputError, match="q_wxyz must be a non-zero quaternion"):
        euler_from_quaternions(np.zeros((2, 1, 4)), "XYZ")
