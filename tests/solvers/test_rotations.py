"""rotations_from_positions: bone rotations from solved points, with minimal twist."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import Frame, fabrik, rotations_from_positions
from limbik.errors import InvalidInputError
from limbik.geometry import (
    axis_angle_from_quaternion,
    quaternion_from_axis_angle,
    quaternion_multiply,
    rotate_vectors,
)


def chains(rng, batch, n=6):
    d = rng.normal(size=(batch, n - 1, 3))
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(d, axis=1)], axis=1)


def same_rotation(a, b, atol=1e-9):
    return np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) <= atol)


def test_each_rotation_carries_the_rest_bone_onto_the_solved_bone(rng):
    rest = chains(rng, 50)
    target = rng.normal(size=(50, 3)) * 2
    s = fabrik(rest, target)
    q = rotations_from_positions(s.positions, rest)
    assert q.shape == (50, 5, 4)
    np.testing.assert_allclose(rotate_vectors(q, np.diff(rest, axis=1)), np.diff(s.positions, axis=1),
                               atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)


def test_a_swing_of_the_whole_chain_gives_that_swing_for_every_bone(rng):
    """Minimal twist: a rigid swing about the root (axis ⟂ a straight chain) is recovered exactly."""
    rest = np.zeros((5, 3))
    rest[:, 1] = np.arange(5)
    swing = quaternion_from_axis_angle(np.array([0.3, 0.0, 1.0]), 1.1)
    posed = rotate_vectors(swing, rest)
    q = rotations_from_positions(posed, rest)
    assert same_rotation(q, swing)


def test_unchanged_joints_have_identity_local_rotation(rng):
    rest = chains(rng, 1, n=5)[0]
    # swing only the third bone (joint 2 -> 3) about an axis perpendicular to it, and carry
    # the bones below rigidly: every other joint's local rotation stays the identity
    turn = quaternion_from_axis_angle(np.cross(rest[3] - rest[2], rng.normal(size=3)), 0.7)
    posed = rest.copy()
    posed[3:] = rest[2] + rotate_vectors(turn, rest[3:] - rest[2])
    local = rotations_from_positions(posed, rest, local=True)
    assert same_rotation(local[[0, 1, 3]], np.array([0.0, 0.0, 0.0, 1.0]))
    # the changed joint's local rotation is a pure swing: its axis is perpendicular to the bone
    axis, angle = axis_angle_from_quaternion(local[2])
    assert angle > 0.1
    assert abs(axis @ (rest[3] - rest[2])) < 1e-9


def test_local_rotations_compose_back_to_world(rng):
    rest = chains(rng, 10)
    posed = chains(rng, 10)
    posed = rest[:, :1] + (posed - posed[:, :1])
    world = rotations_from_positions(posed, rest)
    local = rotations_from_positions(posed, rest, local=True)
    acc = local[:, 0]
    for b in range(1, 5):
        acc = quaternion_multiply(acc, local[:, b])
        assert same_rotation(acc, world[:, b])


def test_rest_rotations_are_carried(rng):
    rest = chains(rng, 4)
    posed = chains(rng, 4)
    frames = quaternion_from_axis_angle(rng.normal(size=(4, 5, 3)), rng.uniform(0, 3, size=(4, 5)))
    delta = rotations_from_positions(posed, rest)
    out = rotations_from_positions(posed, rest, rest_rotations=frames)
    assert same_rotation(out, quaternion_multiply(delta, frames))
    as_frames = rotations_from_positions(posed, rest, rest_rotations=Frame(frames))
    assert same_rotation(as_frames, out)


def test_trees_and_zero_length_bones_are_finite(rng):
    parents = [-1, 0, 1, 1, 3]
    rest = rng.normal(size=(5, 3))
    rest[2] = rest[1]  # zero-length bone
    posed = rest + rng.normal(size=(5, 3)) * 0.1
    posed[2] = posed[1]
    q = rotations_from_positions(posed, rest, parents=parents)
    assert q.shape == (4, 4) and np.all(np.isfinite(q))
    for j in (1, 3, 4):
        p = parents[j]
        np.testing.assert_allclose(rotate_vectors(q[j - 1], rest[j] - rest[p]) * 1.0,
                                   (posed[j] - posed[p]) * np.linalg.norm(rest[j] - rest[p])
                                   / np.linalg.norm(posed[j] - posed[p]), atol=1e-9)


def test_rotation_validation():
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., n, 3\)"):
        rotations_from_positions(np.zeros((1, 3)), np.zeros((1, 3)))
    with pytest.raises(InvalidInputError, match="rest_positions must have 4 joints"):
        rotations_from_positions(np.zeros((4, 3)), np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match="parents must have 4 entries"):
        rotations_from_positions(np.zeros((4, 3)), np.zeros((4, 3)), parents=[-1, 0, 1])
    with pytest.raises(InvalidInputError, match=r"rest_rotations must have shape \(\.\.\., 3, 4\)"):
        rotations_from_positions(np.zeros((4, 3)), np.zeros((4, 3)), rest_rotations=np.ones((2, 4)))
