"""two_bone with an input pose: joint rotations with minimal twist, the target rotation,
weights (overall, position, rotation, pole), maintain offset and the stretch start ratio."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import Frame, two_bone
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_multiply,
    quaternion_normalize,
    rotate_vectors,
)
from limbik.solvers.rotations import joint_rotations


def angle_between(a, b):
    """Rotation angle (rad) of a⁻¹ b for unit quaternions (..., 4)."""
    d = quaternion_multiply(quaternion_conjugate(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., :3], axis=-1), np.abs(d[..., 3]))


def random_limbs(rng, n):
    """Random input poses (n, 3, 3), their rotations (n, 3, 4), lengths and reachable targets."""
    root = rng.normal(size=(n, 3))
    mid = root + rng.normal(size=(n, 3))
    end = mid + rng.normal(size=(n, 3))
    pose = np.stack([root, mid, end], axis=-2)
    l1 = np.linalg.norm(mid - root, axis=-1)
    l2 = np.linalg.norm(end - mid, axis=-1)
    lo, hi = np.abs(l1 - l2), l1 + l2
    d = lo + rng.uniform(0.01, 0.99, n) * (hi - lo)
    u = rng.normal(size=(n, 3))
    target = root + d[:, None] * u / np.linalg.norm(u, axis=-1, keepdims=True)
    rotations = quaternion_normalize(rng.normal(size=(n, 3, 4)))
    return pose, rotations, l1, l2, target


def test_target_rotation_reached_and_bones_are_rotated_rest_directions(rng):
    """The end joint takes the target rotation (1e-9 rad); each bone's solved direction is
    its input-local direction rotated by the returned joint rotation."""
    pose, rot, l1, l2, target = random_limbs(rng, 20_000)
    goal_rot = quaternion_normalize(rng.normal(size=(20_000, 4)))
    s = two_bone(pose[:, 0], target, l1, l2, pose=pose, pose_rotations=rot,
                 target_rotation=goal_rot)
    assert s.rotations.shape == (20_000, 3, 4)
    assert np.all(s.reached)
    assert np.max(np.linalg.norm(s.end_effector - target, axis=-1)) < 1e-9
    assert np.max(angle_between(goal_rot, s.rotations[:, 2])) < 1e-9
    for j in range(2):
        local = rotate_vectors(quaternion_conjugate(rot[:, j]), pose[:, j + 1] - pose[:, j])
        solved = s.positions[:, j + 1] - s.positions[:, j]
        assert np.max(np.abs(rotate_vectors(s.rotations[:, j], local) - solved)) < 1e-9
    np.testing.assert_allclose(np.linalg.norm(s.rotations, axis=-1), 1.0, atol=1e-12)


def test_twist_is_minimal_against_brute_force(rng):
    """No twist about the solved bone brings a joint's rotation closer to its input rotation."""
    pose, rot, l1, l2, target = random_limbs(rng, 300)
    s = two_bone(pose[:, 0], target, l1, l2, pose=pose, pose_rotations=rot)
    twists = np.linspace(-np.pi, np.pi, 721)
    for j in range(2):
        bone = s.positions[:, j + 1] - s.positions[:, j]
        best = angle_between(rot[:, j], s.rotations[:, j])
        spun = quaternion_multiply(
            quaternion_from_axis_angle(bone[:, None, :], twists[None, :]),
            s.rotations[:, j, None, :])
        brute = np.min(angle_between(rot[:, j, None, :], spun), axis=1)
        assert np.all(best <= brute + 1e-12)


def test_weight_zero_is_the_input_pose_bit_for_bit_and_one_the_full_solve(rng):
    pose, rot, l1, l2, target = random_limbs(rng, 500)
    goal_rot = quaternion_normalize(rng.normal(size=(500, 4)))
    kw = dict(pose=pose, pose_rotations=rot, target_rotation=goal_rot)
    zero = two_bone(pose[:, 0], target, l1, l2, weight=0.0, **kw)
    assert np.array_equal(zero.positions, pose)
    assert np.array_equal(zero.rotations, rot)
    one = two_bone(pose[:, 0], target, l1, l2, weight=1.0, **kw)
    full = two_bone(pose[:, 0], target, l1, l2, **kw)
    assert np.array_equal(one.positions, full.positions)
    assert np.array_equal(one.rotations, full.rotations)
    mixed = two_bone(pose[:, 0], target, l1, l2, weight=np.where(np.arange(500) % 2, 0.0, 1.0),
                     **kw)
    assert np.array_equal(mixed.positions[1::2], pose[1::2])
    assert np.array_equal(mixed.positions[::2], full.positions[::2])


def test_weights_blend_continuously_and_keep_bone_lengths(rng):
    """Refining the weight steps shrinks the largest joint move (no jumps); bone lengths
    stay those of the pose."""
    pose, rot, l1, l2, target = random_limbs(rng, 50)
    goal_rot = quaternion_normalize(rng.normal(size=(50, 4)))
    pole = pose[:, 0] + rng.normal(size=(50, 3))

    def steps(name, count):
        weights = np.linspace(0.0, 1.0, count)[:, None]
        s = two_bone(pose[:, 0], target, l1, l2, pose=pose, pose_rotations=rot,
                     target_rotation=goal_rot, pole=pole, **{name: weights})
        np.testing.assert_allclose(np.linalg.norm(s.positions[..., 1, :] - s.positions[..., 0, :],
                                                  axis=-1), np.broadcast_to(l1, (count, 50)),
                                   rtol=1e-9)
        return (np.max(np.linalg.norm(np.diff(s.positions, axis=0), axis=-1)),
                np.max(angle_between(s.rotations[1:], s.rotations[:-1])))

    for name in ("weight", "position_weight", "rotation_weight", "pole_weight"):
        coarse, fine = steps(name, 201), steps(name, 1601)
        assert fine[0] < 0.3 * coarse[0] + 1e-12, name
        assert fine[1] < 0.3 * coarse[1] + 1e-12, name


def test_position_and_rotation_weights_interpolate_the_effector(rng):
    pose, rot, l1, l2, target = random_limbs(rng, 200)
    goal_rot = quaternion_normalize(rng.normal(size=(200, 4)))
    s = two_bone(pose[:, 0], target, l1, l2, pose=pose, pose_rotations=rot,
                 target_rotation=goal_rot, position_weight=0.0, rotation_weight=0.0)
    np.testing.assert_allclose(s.end_effector, pose[:, 2], atol=1e-9)
    carried = joint_rotations(s.positions, pose, input_rotations=rot)[:, 2]
    assert np.max(angle_between(carried, s.rotations[:, 2])) < 1e-9
    half = two_bone(pose[:, 0], target, l1, l2, pose=pose, position_weight=0.5)
    expected = pose[:, 2] + 0.5 * (target - pose[:, 2])
    ok = half.reached
    np.testing.assert_allclose(half.end_effector[ok], expected[ok], atol=1e-9)


def test_pole_weight_turns_the_bend_plane_from_the_pose_to_the_pole(rng):
    pose, _rot, l1, l2, target = random_limbs(rng, 200)
    pole = pose[:, 0] + rng.normal(size=(200, 3))
    own = two_bone(pose[:, 0], target, l1, l2, reference=pose[:, 1])
    poled = two_bone(pose[:, 0], target, l1, l2, pole=pole)
    s0 = two_bone(pose[:, 0], target, l1, l2, pose=pose, pole=pole, pole_weight=0.0)
    s1 = two_bone(pose[:, 0], target, l1, l2, pose=pose, pole=pole, pole_weight=1.0)
    np.testing.assert_allclose(s0.positions, own.positions, atol=1e-9)
    np.testing.assert_array_equal(s1.positions, poled.positions)
    # without a pole, the input pose's bend plane is kept
    plain = two_bone(pose[:, 0], target, l1, l2, pose=pose)
    np.testing.assert_array_equal(plain.positions, own.positions)


def test_target_offset_keeps_the_effector_frame_relative_to_the_target(rng):
    pose, _rot, l1, l2, target = random_limbs(rng, 100)
    goal_rot = quaternion_normalize(rng.normal(size=(100, 4)))
    offset = Frame(quaternion_normalize(rng.normal(size=(100, 4))), 0.01 * rng.normal(size=(100, 3)))
    s = two_bone(pose[:, 0], target, l1, l2, pose=pose, target_rotation=goal_rot,
                 target_offset=offset)
    effector = Frame(goal_rot, target) @ offset
    ok = s.reached
    assert ok.mean() > 0.9
    np.testing.assert_allclose(s.end_effector[ok], effector.position[ok], atol=1e-9)
    assert np.max(angle_between(effector.quaternion, s.rotations[:, 2])) < 1e-9


def test_stretch_start_ratio_scales_bones_linearly(rng):
    root = np.zeros(3)
    ratios = np.linspace(0.5, 2.0, 61)
    target = ratios[:, None] * np.array([0.0, 0.0, -2.0])
    s = two_bone(root, target, 1.0, 1.0, unreachable="stretch", max_stretch=1.5,
                 stretch_start=0.9)
    upper = np.linalg.norm(s.positions[:, 1] - s.positions[:, 0], axis=-1)
    expected = 1.0 + 0.5 * np.clip((ratios - 0.9) / 0.6, 0.0, 1.0)
    np.testing.assert_allclose(upper, expected, rtol=1e-12)
    assert np.all(s.reached[ratios <= 1.5])
    assert not np.any(s.reached[ratios > 1.5 + 1e-9])


def test_degenerate_targets_stay_finite(rng):
    pose, rot, l1, l2, _ = random_limbs(rng, 4)
    root = pose[:, 0]
    straight = pose[:, 0] + (pose[:, 1] - pose[:, 0]) * 10
    for target in (root, straight, 2 * root - straight):
        s = two_bone(root, target, l1, l2, pose=pose, pose_rotations=rot,
                     target_rotation=rot[:, 2], weight=0.5)
        assert np.all(np.isfinite(s.positions)) and np.all(np.isfinite(s.rotations))
        # a pole on the root→target line, half weighted
        s = two_bone(root, target, l1, l2, pose=pose, pole=0.5 * (root + target),
                     pole_weight=0.5)
        assert np.all(np.isfinite(s.positions)) and np.all(np.isfinite(s.rotations))


def test_bad_pose_arguments_raise():
    z = np.zeros(3)
    pose = np.array([[0, 0, 0], [0, -1, 0], [0, -2, 0.0]])
    with pytest.raises(InvalidInputError, match="target_rotation needs pose="):
        two_bone(z, z, 1.0, 1.0, target_rotation=[0, 0, 0, 1])
    with pytest.raises(InvalidInputError, match=r"weight must be in \[0, 1\], got 1.5"):
        two_bone(z, z, 1.0, 1.0, pose=pose, weight=1.5)
    with pytest.raises(InvalidInputError, match=r"pose must have shape \(\.\.\., 3, 3\)"):
        two_bone(z, z, 1.0, 1.0, pose=np.zeros((2, 3)))
    with pytest.raises(InvalidInputError, match="stretch_start needs unreachable='stretch'"):
        two_bone(z, z, 1.0, 1.0, stretch_start=0.9)
    with pytest.raises(InvalidInputError, match="stretch_start must be <= max_stretch"):
        two_bone(z, z, 1.0, 1.0, unreachable="stretch", max_stretch=1.2, stretch_start=1.5)
    with pytest.raises(InvalidInputError, match="target_offset must be a limbik Frame"):
        two_bone(z, z, 1.0, 1.0, pose=pose, target_offset=np.zeros(3))


@pytest.mark.parametrize("s", [1e-13, 2.0**-520, 1e160])
def test_weights_and_pole_blend_do_not_depend_on_the_scale(s):
    """weight, pole_weight and the carried rotations of a limb scaled by s are those of
    the unit limb, scaled (a 1e-13 limb ignored its weight, a 1e160 one gave NaN)."""
    pose = np.array([[0.0, 0, 0], [1, 1, 0], [2, 0, 0]])
    target = np.array([1.5, 0.3, 0.2])
    length = 2**0.5
    for kwargs in ({"weight": 0.5}, {"pole": np.array([0, 0, 1.0]), "pole_weight": 0.5},
                   {"weight": 0.3, "rotation_weight": 0.5,
                    "target_rotation": [0, 0, np.sin(0.3), np.cos(0.3)]}):
        plain = two_bone(pose[0], target, length, length, pose=pose, **kwargs)
        scaled_kwargs = {k: (v * s if k == "pole" else v) for k, v in kwargs.items()}
        scaled = two_bone(pose[0] * s, target * s, length * s, length * s, pose=pose * s,
                          **scaled_kwargs)
        np.testing.assert_allclose(scaled.positions / s, plain.positions, atol=1e-14)
        np.testing.assert_allclose(scaled.rotations, plain.rotations, atol=1e-14)
        assert bool(scaled.reached) == bool(plain.reached)


def test_a_pose_of_another_batch_is_named_in_the_error():
    with pytest.raises(InvalidInputError, match=r"root \(5,\), target \(\), pose \(4,\)"):
        two_bone(np.zeros((5, 3)), [1.0, 0, 0], 1.0, 1.0, pose=np.zeros((4, 3, 3)))
