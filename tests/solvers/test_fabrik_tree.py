"""FABRIK trees: several end effectors, sub-bases at centroids, any depth, weights, constraints."""

from __future__ import annotations

import math

import numpy as np
import pytest

from limbik import Cone, FabrikTree, Frame, fabrik
from limbik.errors import InvalidInputError

# root 0 -> 1 -> 2 (sub-base) -> 3 -> 4 (left hand) and 2 -> 5 -> 6 (right hand)
Y_PARENTS = [-1, 0, 1, 2, 3, 2, 5]
Y_POSE = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0],
                   [0.7, 2.7, 0], [1.4, 3.4, 0]], dtype=float)

# sub-bases under sub-bases: 0 -> 1 (sub-base) -> {2 -> 3 (sub-base) -> {4, 5 -> 6}, 7 -> 8}
DEEP_PARENTS = [-1, 0, 1, 2, 3, 3, 5, 1, 7]


def random_poses(rng, parents, lengths, batch):
    """Random poses of a tree with given bone lengths (index j: bone into joint j)."""
    n = len(parents)
    out = np.zeros((batch, n, 3))
    for j in range(1, n):
        d = rng.normal(size=(batch, 3))
        d /= np.linalg.norm(d, axis=-1, keepdims=True)
        out[:, j] = out[:, parents[j]] + d * lengths[j]
    return out


def tree_lengths(p, parents):
    return np.stack([np.linalg.norm(p[..., j, :] - p[..., parents[j], :], axis=-1)
                     for j in range(1, len(parents))], axis=-1)


def test_two_branch_tree_reaches_jointly_reachable_targets(rng):
    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    goal = random_poses(rng, Y_PARENTS, lengths, 300)  # targets from real poses: jointly reachable
    start = random_poses(rng, Y_PARENTS, lengths, 300)
    s = FabrikTree(Y_PARENTS, start).solve({4: goal[:, 4], 6: goal[:, 6]}, tolerance=1e-6)
    assert s.reached.all()
    assert np.all(np.linalg.norm(s.positions[:, 4] - goal[:, 4], axis=-1) <= 1e-6)
    assert np.all(np.linalg.norm(s.positions[:, 6] - goal[:, 6], axis=-1) <= 1e-6)
    np.testing.assert_allclose(s.error, np.maximum(
        np.linalg.norm(s.positions[:, 4] - goal[:, 4], axis=-1),
        np.linalg.norm(s.positions[:, 6] - goal[:, 6], axis=-1)))
    np.testing.assert_allclose(tree_lengths(s.positions, Y_PARENTS),
                               tree_lengths(start, Y_PARENTS), atol=1e-9)
    np.testing.assert_array_equal(s.positions[:, 0], start[:, 0])


def test_an_array_of_targets_addresses_the_leaves_in_order(rng):
    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    goal = random_poses(rng, Y_PARENTS, lengths, 20)
    tree = FabrikTree(Y_PARENTS, Y_POSE)
    a = tree.solve(goal[:, [4, 6]])
    b = tree.solve({4: goal[:, 4], 6: goal[:, 6]})
    np.testing.assert_array_equal(a.positions, b.positions)


def test_sub_bases_under_sub_bases_reach_three_effectors(rng):
    lengths = np.r_[0.0, rng.uniform(0.5, 1.5, size=8)]
    goal = random_poses(rng, DEEP_PARENTS, lengths, 100)
    start = random_poses(rng, DEEP_PARENTS, lengths, 100)
    tree = FabrikTree(DEEP_PARENTS, start)
    assert tree.leaves == (4, 6, 8)
    s = tree.solve({4: goal[:, 4], 6: goal[:, 6], 8: goal[:, 8]})
    assert s.reached.all()
    np.testing.assert_allclose(tree_lengths(s.positions, DEEP_PARENTS), tree_lengths(start, DEEP_PARENTS),
                               atol=1e-9)


def test_a_chain_as_a_tree_matches_fabrik(rng):
    d = rng.normal(size=(20, 7, 3))
    start = np.concatenate([np.zeros((20, 1, 3)), np.cumsum(d, axis=1)], axis=1)
    target = rng.normal(size=(20, 3)) * 3
    chain = fabrik(start, target, max_iterations=50)
    tree = FabrikTree([-1, 0, 1, 2, 3, 4, 5, 6], start).solve({7: target}, max_iterations=50)
    reachable = np.linalg.norm(target, axis=-1) <= np.linalg.norm(d, axis=-1).sum(-1)
    np.testing.assert_allclose(tree.positions[reachable], chain.positions[reachable], atol=1e-12)
    np.testing.assert_array_equal(tree.iterations[reachable], chain.iterations[reachable])


def test_weights_pull_the_sub_base_toward_the_heavier_effector():
    """Targets pulling apart beyond reach: the heavier effector ends closer to its target."""
    targets = {4: np.array([-10.0, 3.0, 0.0]), 6: np.array([10.0, 3.0, 0.0])}
    even = FabrikTree(Y_PARENTS, Y_POSE).solve(targets)
    heavy = FabrikTree(Y_PARENTS, Y_POSE).solve(targets, weights={6: 5.0})
    d_even = np.linalg.norm(even.positions[6] - targets[6])
    d_heavy = np.linalg.norm(heavy.positions[6] - targets[6])
    assert d_heavy < d_even - 0.1
    assert not heavy.reached and np.all(np.isfinite(heavy.positions))


def test_one_targeted_leaf_leaves_the_other_branch_following(rng):
    s = FabrikTree(Y_PARENTS, Y_POSE).solve({4: [-1.0, 3.0, 1.0]})
    assert s.reached
    np.testing.assert_allclose(tree_lengths(s.positions, Y_PARENTS), tree_lengths(Y_POSE, Y_PARENTS),
                               atol=1e-9)


def test_constraints_hold_in_trees(rng):
    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    start = random_poses(rng, Y_PARENTS, lengths, 200)
    goal = random_poses(rng, Y_PARENTS, lengths, 200)
    cone = Cone(math.radians(30))
    s = FabrikTree(Y_PARENTS, start, constraints=[None] + [cone] * 5).solve(
        {4: goal[:, 4], 6: goal[:, 6]}, max_iterations=50)
    p = s.positions
    for j in range(2, 7):  # every bone whose parent bone exists
        q = Y_PARENTS[j]
        a = p[:, j] - p[:, q]
        b = p[:, q] - p[:, Y_PARENTS[q]]
        cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
        assert np.arccos(np.clip(cos, -1, 1)).max() <= math.radians(30) + 1e-9


def test_root_bone_constraints_without_root_frame_warn():
    with pytest.warns(UserWarning, match=r"constraints\[0\].*root_frame"):
        FabrikTree(Y_PARENTS, Y_POSE, constraints=[Cone(0.3)] + [None] * 5)


def test_root_frame_constrains_bones_leaving_the_root():
    tree = FabrikTree(Y_PARENTS, Y_POSE, constraints=[Cone(0.3)] + [None] * 5,
                      root_frame=Frame.from_axis_angle([1, 0, 0], math.pi / 2))  # look = +Y
    s = tree.solve({4: [-3.0, 0.5, 0.0], 6: [3.0, 0.5, 0.0]})
    d = s.positions[1] - s.positions[0]
    assert math.acos(np.clip(d[1], -1, 1)) <= 0.3 + 1e-9


def test_batches_broadcast_and_stop_on_their_own(rng):
    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    goal = random_poses(rng, Y_PARENTS, lengths, 12).reshape(3, 4, 7, 3)
    s = FabrikTree(Y_PARENTS, Y_POSE).solve({4: goal[..., 4, :], 6: goal[:, :, 6]},
                                             weights={4: np.ones((3, 4))})
    assert s.positions.shape == (3, 4, 7, 3) and s.iterations.shape == (3, 4)
    one = FabrikTree(Y_PARENTS, Y_POSE).solve({4: goal[1, 2, 4], 6: goal[1, 2, 6]})
    np.testing.assert_array_equal(one.positions, s.positions[1, 2])
    assert len(np.unique(s.iterations)) > 1


def test_warm_start_follows_a_smooth_target_path():
    tree = FabrikTree(Y_PARENTS, Y_POSE)
    pose = Y_POSE
    for k in range(40):
        a = np.array([-1.5 + 0.01 * k, 3.0, 0.3])
        b = np.array([1.2, 3.1 - 0.01 * k, -0.2])
        s = tree.solve({4: a, 6: b}, start=pose)
        assert s.reached
        if k:
            assert np.abs(s.positions - pose).max() < 0.1
        pose = s.positions
    with pytest.raises(InvalidInputError, match=r"start must have shape \(\.\.\., 7, 3\)"):
        tree.solve({4: a}, start=np.zeros((3, 3)))


def test_free_root_moves_with_the_centroid():
    s = FabrikTree(Y_PARENTS, Y_POSE).solve({4: [-20.0, 3.0, 0.0], 6: [-18.0, 3.0, 0.0]},
                                             fixed_root=False)
    assert s.positions[0, 0] < -10.0
    assert np.all(np.isfinite(s.positions))


@pytest.mark.parametrize("targets", [{4: [0.0, 0.0, 0.0], 6: [0.0, 0.0, 0.0]},
                                     {4: Y_POSE[2], 6: Y_POSE[2]},
                                     {4: [0.0, 9.0, 0.0], 6: [0.0, 9.0, 0.0]}],
                         ids=["both-at-root", "both-at-sub-base", "both-beyond-reach"])
def test_degenerate_tree_targets_give_finite_results(targets):
    straight = np.zeros((7, 3))
    straight[:, 1] = [0, 1, 2, 3, 4, 3, 4]  # both branches folded onto the trunk's line
    s = FabrikTree(Y_PARENTS, straight).solve(targets, max_iterations=200)
    assert np.all(np.isfinite(s.positions)) and np.isfinite(s.error)
    np.testing.assert_allclose(tree_lengths(s.positions, Y_PARENTS), 1.0, atol=1e-9)


def test_tree_validation_errors():
    with pytest.raises(InvalidInputError, match=r"parents\[0\] must be -1"):
        FabrikTree([0, 0], np.zeros((2, 3)))
    with pytest.raises(InvalidInputError, match=r"parents\[j\] must be in \[0, j\).*parents\[2\] = 3"):
        FabrikTree([-1, 0, 3, 1], np.zeros((4, 3)))
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., 7, 3\)"):
        FabrikTree(Y_PARENTS, np.zeros((6, 3)))
    tree = FabrikTree(Y_PARENTS, Y_POSE)
    with pytest.raises(InvalidInputError, match="targets must be a non-empty mapping"):
        tree.solve({})
    with pytest.raises(InvalidInputError, match=r"or an array of shape \(\.\.\., 2, 3\) for the leaves \[4, 6\]"):
        tree.solve(np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match=r"targets key must be a joint index in \[1, 7\)"):
        tree.solve({9: [0, 0, 0]})
    with pytest.raises(InvalidInputError, match="targets key must be >= 1"):
        tree.solve({0: [0, 0, 0]})
    with pytest.raises(InvalidInputError, match=r"weights keys must be targeted joints \[4\]"):
        tree.solve({4: [0, 0, 0]}, weights={6: 1.0})
    with pytest.raises(InvalidInputError, match=r"weights\[4\] must be > 0"):
        tree.solve({4: [0, 0, 0]}, weights={4: 0.0})
    with pytest.raises(InvalidInputError, match=r"targets\[4\] must have shape"):
        tree.solve({4: [0, 0]})


def _random_quaternions(rng, shape):
    q = rng.normal(size=shape + (4,))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _turn(q_after, q_before):
    """The world turn ``q_after · q_before⁻¹`` as rotation matrices (..., 3, 3)."""
    from limbik.geometry.quaternion import (
        matrix_from_quaternion,
        quaternion_conjugate,
        quaternion_multiply,
    )
    return matrix_from_quaternion(quaternion_multiply(q_after, quaternion_conjugate(q_before)))


def test_tree_rotations_turn_each_single_bone_onto_its_solved_direction(rng):
    """Joints with one child (and leaves) turn by their bone's minimal rotation: the
    bone's input direction, turned, is its solved direction; on a chain the rotations
    are exactly fabrik's."""
    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    goal = random_poses(rng, Y_PARENTS, lengths, 200)
    q0 = _random_quaternions(rng, (200, 7))
    sol = FabrikTree(Y_PARENTS, Y_POSE).solve({4: goal[:, 4], 6: goal[:, 6]}, rotations=q0)
    assert sol.rotations.shape == (200, 7, 4)
    np.testing.assert_allclose(np.linalg.norm(sol.rotations, axis=-1), 1.0, atol=1e-12)
    turn = _turn(sol.rotations, q0)
    for j, kids in {0: [1], 1: [2], 3: [4], 5: [6]}.items():
        a = Y_POSE[kids[0]] - Y_POSE[j]
        b = sol.positions[:, kids[0]] - sol.positions[:, j]
        b = b / np.linalg.norm(b, axis=-1, keepdims=True)
        np.testing.assert_allclose(turn[:, j] @ (a / np.linalg.norm(a)), b, atol=1e-9)
    for leaf, parent in ((4, 3), (6, 5)):  # leaves turn with the bone ending at them
        np.testing.assert_allclose(turn[:, leaf], turn[:, parent], atol=1e-12)

    d = rng.normal(size=(20, 6, 3))
    start = np.concatenate([np.zeros((20, 1, 3)), np.cumsum(d, axis=1)], axis=1)
    target = rng.normal(size=(20, 3)) * 2
    qc = _random_quaternions(rng, (20, 7))
    chain = fabrik(start, target, max_iterations=50, rotations=qc)
    tree = FabrikTree(list(range(-1, 6)), start).solve({6: target}, max_iterations=50,
                                                        rotations=qc)
    np.testing.assert_allclose(tree.rotations, chain.rotations, atol=1e-12)


def test_a_branching_joint_takes_the_best_fit_of_its_child_bones(rng):
    """A rigidly turned and moved tree gives every branching joint exactly that turn;
    a bent one gives the rotation whose turned input child directions lie nearest the
    solved ones (no other rotation of many tried does better)."""
    from scipy.spatial.transform import Rotation

    from limbik import joint_rotations

    spin = Rotation.random(50, random_state=3)
    q0 = _random_quaternions(rng, (50, 7))
    moved = np.einsum("bij,kj->bki", spin.as_matrix(), Y_POSE) + rng.normal(size=(50, 1, 3))
    rigid = joint_rotations(moved, Y_POSE, input_rotations=q0, parents=Y_PARENTS)
    np.testing.assert_allclose(_turn(rigid[:, 2], q0[:, 2]), spin.as_matrix(), atol=1e-12)

    lengths = np.r_[0.0, tree_lengths(Y_POSE, Y_PARENTS)]
    goal = random_poses(rng, Y_PARENTS, lengths, 50)
    sol = FabrikTree(Y_PARENTS, Y_POSE).solve({4: goal[:, 4], 6: goal[:, 6]},
                                              return_rotations=True)
    kids = [3, 5]
    turned = _turn(sol.rotations[:, 2], np.array([0.0, 0.0, 0.0, 1.0]))

    def misfit(rot):
        a = Y_POSE[kids] - Y_POSE[2]
        a = a / np.linalg.norm(a, axis=-1, keepdims=True)
        b = sol.positions[:, kids] - sol.positions[:, 2, None]
        b = b / np.linalg.norm(b, axis=-1, keepdims=True)
        return np.sum((np.einsum("bij,kj->bki", rot, a) - b) ** 2, axis=(-1, -2))

    best = misfit(turned)
    for trial in Rotation.random(400, random_state=4).as_matrix():
        assert np.all(best <= misfit(np.broadcast_to(trial, (50, 3, 3))) + 1e-12)
    wiggle = Rotation.from_rotvec(rng.normal(size=(200, 3)) * 1e-3).as_matrix()
    for w in wiggle:
        assert np.all(best <= misfit(w @ turned) + 1e-12)


def test_tree_rotations_reject_a_wrong_shape():
    tree = FabrikTree(Y_PARENTS, Y_POSE)
    with pytest.raises(InvalidInputError, match="rotations must have shape"):
        tree.solve({4: [-1.0, 3.0, 0.5]}, rotations=np.tile([0.0, 0, 0, 1], (6, 1)))
    with pytest.raises(InvalidInputError, match="rotations must have a batch shape"):
        tree.solve({4: [-1.0, 3.0, 0.5]}, rotations=np.tile([0.0, 0, 0, 1], (3, 7, 1)))
