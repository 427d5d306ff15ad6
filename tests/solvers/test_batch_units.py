"""Each batch element is solved in its own units, whatever it is batched with; a chain on
a line through its target is bent off it by one rule and reaches the target."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fuzzers import straight_chain
from limbik import FabrikTree, ccd, fabrik, two_bone

CHAIN = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 3.0, 0.0]])
GOAL = np.array([1.0, 1.5, 0.3])


def _same_as_alone(batch, alone, k, size):
    assert np.isfinite(batch.positions[k]).all()
    np.testing.assert_allclose(batch.positions[k] / size, alone.positions / size, rtol=0,
                               atol=1e-9)
    assert abs(float(batch.error[k]) - float(alone.error)) <= 1e-9 * size
    assert bool(batch.reached[k]) == bool(alone.reached)


@pytest.mark.parametrize("small, large", [(1e-310, 1.0), (1e-155, 1.0), (1e-200, 1e200)])
def test_two_bone_limbs_of_any_sizes_in_one_batch(small, large):
    scales = np.array([small, large])
    roots = np.zeros((2, 3))
    targets = np.array([[1.0, 0.5, 0.2]]) * scales[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = two_bone(roots, targets, scales, scales)
    for k, s in enumerate(scales):
        alone = two_bone(roots[k], targets[k], s, s)
        _same_as_alone(batch, alone, k, s)
        p = batch.positions[k] / s
        np.testing.assert_allclose(np.linalg.norm(np.diff(p, axis=0), axis=-1), 1.0,
                                   rtol=1e-12)


def test_two_bone_subnormal_bones_with_a_far_finite_target():
    """The limb lies straight toward the target; the error is the true distance."""
    s = two_bone(np.zeros(3), np.array([1.0, 0.0, 0.0]), 1e-310, 1e-310)
    assert not s.reached
    assert float(s.error) == pytest.approx(1.0)
    assert np.isfinite(s.positions).all() and s.positions[2, 0] > 0.0


@pytest.mark.parametrize("solve", [fabrik, ccd])
@pytest.mark.parametrize("small, large", [(1e-200, 1e200), (1e-10, 1e10), (1e-150, 1.0)])
def test_chains_of_any_sizes_in_one_batch(solve, small, large):
    scales = np.array([small, large])
    batch = solve(CHAIN * scales[:, None, None], GOAL * scales[:, None])
    for k, s in enumerate(scales):
        alone = solve(CHAIN * s, GOAL * s)
        assert alone.reached
        _same_as_alone(batch, alone, k, s)


def test_fabrik_absolute_tolerance_in_a_mixed_batch():
    scales = np.array([1e-3, 1e3])
    batch = fabrik(CHAIN * scales[:, None, None], GOAL * scales[:, None], tolerance=1e-6)
    for k, s in enumerate(scales):
        _same_as_alone(batch, fabrik(CHAIN * s, GOAL * s, tolerance=1e-6), k, s)


def test_fabrik_tree_of_any_sizes_in_one_batch():
    parents = np.array([-1, 0, 1, 2, 1, 4])
    pose = np.array([[0, 0, 0], [0, 1, 0], [0.5, 2, 0], [1, 3, 0], [-0.5, 2, 0], [-1, 3, 0.]])
    goals = np.array([[1.2, 2.5, 0.5], [-1.0, 2.6, -0.4]])
    scales = np.array([1e-200, 1e200, 1.0])
    tree = FabrikTree(parents, pose * scales[:, None, None])
    batch = tree.solve({3: goals[0] * scales[:, None], 5: goals[1] * scales[:, None]})
    for k, s in enumerate(scales):
        alone = FabrikTree(parents, pose * s).solve({3: goals[0] * s, 5: goals[1] * s})
        _same_as_alone(batch, alone, k, s)


@pytest.mark.parametrize("solve", [fabrik, ccd])
def teststraight_chain_reaches_targets_on_its_line(rng, solve):
    """On the line (a third up to 1e-9 of the reach off it), with default options."""
    for _ in range(300):
        pose, t = straight_chain(rng)
        s = solve(pose, t)
        assert s.reached, (pose.tolist(), t.tolist(), float(s.error))
        np.testing.assert_allclose(np.linalg.norm(np.diff(s.positions, axis=0), axis=-1),
                                   np.linalg.norm(np.diff(pose, axis=0), axis=-1), rtol=1e-9)


@pytest.mark.parametrize("solve", [fabrik, ccd])
def test_arm_hanging_down_with_the_target_below_and_closer(solve):
    """The classic rest pose: bent the same way every time, and bent at once."""
    arm = np.array([[0.0, 1.5, 0.0], [0.0, 1.2, 0.0], [0.0, 0.9, 0.0], [0.0, 0.75, 0.0]])
    target = np.array([0.0, 1.0, 0.0])
    first = solve(arm, target)
    assert first.reached
    np.testing.assert_array_equal(solve(arm, target).positions, first.positions)
    assert np.abs(first.positions[:, [0, 2]]).max() > 0.01  # off the line
    if solve is fabrik:
        assert int(first.iterations) <= 1
