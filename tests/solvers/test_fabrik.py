"""FABRIK chains: reach, lengths, fixed root, unreachable targets, degenerate input, batching."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import limbik
from limbik import Frame, fabrik
from limbik.errors import InvalidInputError, NonFiniteInputError


def random_chains(rng, batch, n=10, length=1.0):
    """Chains of ``n`` joints with bones of ``length`` in random directions, root at 0."""
    d = rng.normal(size=(batch, n - 1, 3))
    d *= length / np.linalg.norm(d, axis=-1, keepdims=True)
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(d, axis=1)], axis=1)


def bone_lengths(p):
    return np.linalg.norm(np.diff(p, axis=-2), axis=-1)


def plain_fabrik(p, target, tol, cap):
    """Textbook FABRIK (the seed's loop), vectorised over the batch, for comparison."""
    p = p.copy()
    lengths = bone_lengths(p)
    root = p[:, 0].copy()
    n = p.shape[1]
    its = np.zeros(len(p), dtype=int)
    active = np.linalg.norm(p[:, -1] - target, axis=-1) > tol
    while active.any() and its.max() < cap:
        q = p[active]
        q[:, -1] = target[active]
        for i in range(n - 2, -1, -1):
            r = q[:, i] - q[:, i + 1]
            q[:, i] = q[:, i + 1] + r * (lengths[active, i] / np.linalg.norm(r, axis=-1))[:, None]
        q[:, 0] = root[active]
        for i in range(n - 1):
            r = q[:, i + 1] - q[:, i]
            q[:, i + 1] = q[:, i] + r * (lengths[active, i] / np.linalg.norm(r, axis=-1))[:, None]
        p[active] = q
        its[active] += 1
        active = (np.linalg.norm(p[:, -1] - target, axis=-1) > tol) & (its < cap)
    return p, its


def test_random_reachable_targets_are_reached_with_lengths_and_root_kept(rng):
    """2000 reachable targets on 10-joint unit chains from random poses: the acceptance check."""
    start = random_chains(rng, 2000)
    target = random_chains(rng, 2000)[:, -1]  # an end point of some pose: reachable
    tol = 1e-6 * 9
    s = fabrik(start, target, tolerance=tol)
    assert s.reached.all()
    assert np.all(s.error <= tol)
    np.testing.assert_allclose(np.linalg.norm(s.positions[:, -1] - target, axis=-1), s.error)
    assert np.abs(bone_lengths(s.positions) - 1.0).max() <= 1e-9
    assert np.array_equal(s.positions[:, 0], start[:, 0])
    _, plain_its = plain_fabrik(start, target, tol, 100)
    assert s.iterations.mean() <= plain_its.mean()
    assert np.all(np.isfinite(s.positions))


def test_default_tolerance_is_relative_to_chain_length(rng):
    start = random_chains(rng, 50, length=100.0)
    target = random_chains(rng, 50, length=100.0)[:, -1]
    s = fabrik(start, target)
    assert s.reached.all()
    assert np.all(s.error <= 1e-6 * 900)


def test_unreachable_target_gives_straight_chain_toward_it(rng):
    start = random_chains(rng, 200)
    direction = rng.normal(size=(200, 3))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    target = direction * rng.uniform(9.5, 50.0, size=(200, 1))
    s = fabrik(start, target)
    assert not s.reached.any()
    assert np.all(s.iterations == 0)
    bones = np.diff(s.positions, axis=1)
    np.testing.assert_allclose(bones, np.broadcast_to(direction[:, None], bones.shape), atol=1e-12)
    np.testing.assert_allclose(s.error, np.linalg.norm(target, axis=-1) - 9.0, rtol=1e-12)


def test_iteration_stops_at_cap_and_on_min_improvement(rng):
    start = random_chains(rng, 100)
    target = random_chains(rng, 100)[:, -1]
    s = fabrik(start, target, tolerance=0.0, max_iterations=3)
    assert np.all(s.iterations <= 3)
    s = fabrik(start, target, tolerance=0.0, min_improvement=1e9)
    assert np.all(s.iterations <= 1)
    # each batch element stops on its own
    s = fabrik(start, target)
    assert len(np.unique(s.iterations)) > 1
    for i in range(5):
        one = fabrik(start[i], target[i])
        assert one.iterations == s.iterations[i]
        np.testing.assert_array_equal(one.positions, s.positions[i])


def test_batch_shapes_broadcast(rng):
    start = random_chains(rng, 6).reshape(2, 3, 10, 3)
    s = fabrik(start, [1.0, 2.0, 0.5])
    assert s.positions.shape == (2, 3, 10, 3)
    assert s.reached.shape == s.error.shape == s.iterations.shape == (2, 3)
    assert s.iterations.dtype == np.int64
    s = fabrik(start[0, 0], np.ones((4, 3)))
    assert s.positions.shape == (4, 10, 3)
    empty = fabrik(np.zeros((0, 10, 3)), np.zeros(3))
    assert empty.positions.shape == (0, 10, 3)


@pytest.mark.parametrize("case", ["target_at_root", "collinear_off_line", "straight_on_line_inside",
                                  "straight_on_line_beyond", "straight_on_line_behind",
                                  "target_on_a_joint", "all_joints_coincide"])
def test_degenerate_inputs_give_finite_results(case):
    n = 10
    straight = np.zeros((n, 3))
    straight[:, 1] = np.arange(n)
    p, t = straight, np.zeros(3)
    if case == "collinear_off_line":
        t = np.array([3.0, 2.0, 1.0])
    elif case == "straight_on_line_inside":
        t = np.array([0.0, 4.5, 0.0])
    elif case == "straight_on_line_beyond":
        t = np.array([0.0, 9.0, 0.0])
    elif case == "straight_on_line_behind":
        t = np.array([0.0, -3.0, 0.0])
    elif case == "target_on_a_joint":
        t = straight[4] + 0.0
    elif case == "all_joints_coincide":
        p = np.zeros((n, 3))
        t = np.array([1.0, 0.0, 0.0])
    s = fabrik(p, t)
    assert np.all(np.isfinite(s.positions)) and np.isfinite(s.error)
    np.testing.assert_allclose(bone_lengths(s.positions), bone_lengths(p), atol=1e-9)
    np.testing.assert_array_equal(s.positions[0], p[0])
    if case != "all_joints_coincide":
        # a chain lying on a line through its target is bent once instead of stalling
        assert s.reached, case


def test_direction_target_lays_the_last_bone_along_it(rng):
    start = random_chains(rng, 200)
    goal = random_chains(rng, 200)
    target = goal[:, -1]
    direction = goal[:, -1] - goal[:, -2]  # reachable with this last-bone direction
    s = fabrik(start, target, direction=direction, max_iterations=500)
    assert s.reached.mean() > 0.98
    ok = s.reached
    last = s.positions[ok, -1] - s.positions[ok, -2]
    assert np.abs(last - direction[ok]).max() < 1e-4
    assert np.abs(bone_lengths(s.positions) - 1.0).max() <= 1e-9


def test_free_root_translates_the_chain_and_reaches(rng):
    start = random_chains(rng, 50)
    target = rng.normal(size=(50, 3)) * 30.0  # mostly beyond reach of a fixed root
    s = fabrik(start, target, fixed_root=False)
    assert s.reached.all()
    assert np.abs(bone_lengths(s.positions) - 1.0).max() <= 1e-9


def test_smooth_target_path_gives_smooth_joint_motion(rng):
    p = random_chains(rng, 1)[0]
    path = np.stack([np.array([3.0, 2.0 + 0.01 * k, 1.0]) for k in range(100)])
    jumps = []
    for t in path:
        s = fabrik(p, t)
        assert s.reached
        jumps.append(np.abs(s.positions - p).max())
        p = s.positions
    assert max(jumps[1:]) < 0.1


def test_return_rotations_carry_input_bones_onto_solved_bones(rng):
    start = random_chains(rng, 20)
    target = random_chains(rng, 20)[:, -1]
    s = fabrik(start, target, return_rotations=True)
    assert s.rotations is not None and s.rotations.shape == (20, 10, 4)
    moved = limbik.geometry.rotate_vectors(s.rotations[:, :-1], np.diff(start, axis=1))
    np.testing.assert_allclose(moved, np.diff(s.positions, axis=1), atol=1e-9)


def test_rotations_keep_the_input_twist_as_two_bone_and_ccd_do(rng):
    """With input joint rotations, each joint's output is its bone's minimal turn times its
    input rotation: the rule every solver shares (``limbik.joint_rotations``)."""
    from limbik.geometry.quaternion import quaternion_multiply
    from limbik.solvers.rotations import joint_rotations

    start = random_chains(rng, 20)
    target = random_chains(rng, 20)[:, -1]
    q = rng.normal(size=(20, 10, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    s = fabrik(start, target, rotations=q)
    np.testing.assert_allclose(s.rotations, joint_rotations(s.positions, start,
                                                            input_rotations=q), atol=1e-12)
    turn = fabrik(start, target, return_rotations=True).rotations
    expected = quaternion_multiply(turn, q)
    same = np.abs(np.sum(expected * s.rotations, axis=-1))
    np.testing.assert_allclose(same, 1.0, atol=1e-9)


@settings(max_examples=40)
@example(n=3, seed=67108863, scale=1.0, frac=0.01171875)  # 2053 iterations
@given(n=st.integers(2, 12), seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-3, 1e3),
       frac=st.floats(0.0, 0.999))
def test_property_reachable_in_range_targets(n, seed, scale, frac):
    """Any pose, any target inside a sphere the chain can certainly reach: reached, lengths kept.

    Just outside the inner radius (the chain folded back) FABRIK converges slowly: over
    5000 random chains of 3 to 5 joints with targets at 1 to 5 % of the annulus, up to
    about 30 000 iterations were needed (8 % needed more than 2000), so the cap is high.
    """
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, size=n - 1) * scale
    d = rng.normal(size=(n - 1, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    p = np.concatenate([np.zeros((1, 3)), np.cumsum(d * lengths[:, None], axis=0)])
    # radius the chain spans for sure: between |longest - rest| and the total
    total = lengths.sum()
    inner = max(0.0, 2 * lengths.max() - total)
    r = inner + frac * (total - inner)
    u = rng.normal(size=3)
    target = u / np.linalg.norm(u) * r
    s = fabrik(p, target, max_iterations=200_000, min_improvement=-np.inf)
    assert np.all(np.isfinite(s.positions))
    np.testing.assert_allclose(bone_lengths(s.positions), lengths, rtol=1e-9)
    if n > 2 and 0.01 < frac < 0.99:
        assert s.reached, (s.error, s.iterations)


def test_validation_errors():
    p = np.zeros((4, 3))
    p[:, 0] = np.arange(4)
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., n, 3\)"):
        fabrik(np.zeros((1, 3)), [0, 0, 0])
    with pytest.raises(InvalidInputError, match=r"target must have shape \(\.\.\., 3\), got \(4,\)"):
        fabrik(p, [0, 0, 0, 0])
    with pytest.raises(NonFiniteInputError, match="target must be finite"):
        fabrik(p, [np.nan, 0, 0])
    with pytest.raises(NonFiniteInputError, match=r"positions must be finite, got inf at index \(2, 1\)"):
        fabrik(np.where(np.arange(12).reshape(4, 3) == 7, np.inf, p), [1, 1, 0])
    with pytest.raises(InvalidInputError, match="batch shapes must broadcast"):
        fabrik(np.stack([p, p]), np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match="tolerance must be >= 0"):
        fabrik(p, [1, 1, 0], tolerance=-1.0)
    with pytest.raises(InvalidInputError, match="max_iterations must be an int"):
        fabrik(p, [1, 1, 0], max_iterations=2.5)
    with pytest.raises(InvalidInputError, match="direction must be non-zero"):
        fabrik(p, [1, 1, 0], direction=[0, 0, 0])
    with pytest.raises(InvalidInputError, match=r"constraints must have one entry per bone \(3\), got 2"):
        fabrik(p, [1, 1, 0], constraints=[None, None])
    with pytest.raises(InvalidInputError, match="constraints must be a sequence"):
        fabrik(p, [1, 1, 0], constraints=limbik.Cone(0.3))
    with pytest.raises(InvalidInputError, match=r"constraints\[1\] must be a Cone"):
        fabrik(p, [1, 1, 0], constraints=[None, 0.3, None])
    with pytest.raises(InvalidInputError, match="root_frame must be a single"):
        fabrik(p, [1, 1, 0], root_frame=Frame.identity((2,)))
