"""CCD on joint chains (limits, pose targets, restarts) and on point chains (lengths, reach, degenerate cases)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from chains import seven_dof_arm
from limbik import JointChain, ccd
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.solvers import _ccd_kernels


def planar_arm(limits=None, prismatic=False):
    joints = []
    for i in range(3):
        j = {"type": "revolute", "axis": (0, 0, 1), "origin": {"xyz": (1.0 if i else 0.0, 0, 0)}}
        if limits is not None:
            j["lower"], j["upper"] = limits[i]
        joints.append(j)
    if prismatic:
        joints.append({"type": "prismatic", "axis": (1, 0, 0), "origin": {"xyz": (1, 0, 0)},
                       "lower": 0.0, "upper": 0.5})
    joints.append({"type": "fixed", "origin": {"xyz": (1, 0, 0)}})
    return JointChain.from_joints(joints)


def lengths(points):
    return np.linalg.norm(np.diff(points, axis=-2), axis=-1)


# ---------------------------------------------------------------- joint chains
def test_panda_targets_within_a_millimetre(panda):
    rng = np.random.default_rng(11)
    targets = panda.forward(panda.random_q(100, rng)).position
    sol = ccd(panda, targets)
    distance = np.linalg.norm(panda.forward(sol.q).position - targets, axis=-1)
    assert np.mean(distance < 1e-3) >= 0.95
    assert panda.within_limits(sol.q, atol=0.0).all()
    np.testing.assert_allclose(sol.error, distance, atol=1e-12)
    assert sol.positions.shape == (100, 11, 3)


@pytest.mark.parametrize("prismatic", [False, True])
def test_limits_are_never_crossed(prismatic):
    limits = [(-0.3, 0.3), (0.2, 0.5), (-1.0, -0.5)]
    chain = planar_arm(limits, prismatic)
    rng = np.random.default_rng(12)
    sol = ccd(chain, rng.uniform(-4, 4, (60, 3)), restarts=2)
    assert chain.within_limits(sol.q, atol=0.0).all()
    assert np.all(np.isfinite(sol.positions))


def test_reachable_planar_targets_with_prismatic_joint():
    chain = planar_arm(prismatic=True)
    rng = np.random.default_rng(13)
    targets = chain.forward(chain.random_q(50, rng)).position
    sol = ccd(chain, targets, tolerance=1e-6, max_iterations=500)
    assert sol.reached.mean() >= 0.95
    assert chain.within_limits(sol.q, atol=0.0).all()


def test_pose_targets_small_arm():
    chain = JointChain.from_joints([
        {"type": "revolute", "axis": (0, 0, 1)},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0, 0, 0.5)}},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0.5, 0, 0)}},
        {"type": "revolute", "axis": (1, 0, 0), "origin": {"xyz": (0.4, 0, 0)}},
        {"type": "revolute", "axis": (0, 1, 0)},
        {"type": "revolute", "axis": (1, 0, 0)},
        {"type": "fixed", "origin": {"xyz": (0.1, 0, 0)}},
    ])
    rng = np.random.default_rng(14)
    poses = chain.forward(chain.random_q(20, rng))
    sol = ccd(chain, poses, max_iterations=2000, tolerance=1e-4, angle_tolerance=1e-3)
    # pose CCD converges slowly (linearly); most reach the tight tolerance, all get close
    assert sol.reached.mean() >= 0.6
    assert np.all(sol.error < 2e-2)
    got = chain.forward(sol.q[sol.reached])
    assert np.all(got.isclose(poses[sol.reached], atol=2e-3))


def test_joint_chain_restarts_deterministic(panda):
    rng = np.random.default_rng(15)
    targets = panda.forward(panda.random_q(10, rng)).position
    a = ccd(panda, targets, max_iterations=3, restarts=2, rng=1)
    b = ccd(panda, targets, max_iterations=3, restarts=2, rng=1)
    np.testing.assert_array_equal(a.q, b.q)


@njit
def _best_angle(q, lo, hi, a, b):
    return _ccd_kernels._best_angle(q, lo, hi, a, b)  # a helper without a Python entry point


def test_a_joint_update_never_goes_the_long_way_round():
    """``_best_angle`` (one joint's CCD update, ``A cos φ + B sin φ`` for φ = new − q):
    the new angle lies within the limits and at most a half turn from the old one, and is
    the best such angle. Before, a joint whose best angle fell in the gap of its range
    went round to the far end, up to 5.9 rad on a ±170° joint."""
    rng = np.random.default_rng(31)
    for _ in range(2000):
        lo = rng.uniform(-3.5, 0.0)
        hi = rng.uniform(0.5, 3.5) if rng.random() < 0.8 else np.inf
        q = rng.uniform(lo, min(hi, 4.0))
        a, b = rng.normal(size=2) * 10.0 ** rng.integers(-6, 3)
        new = _best_angle(q, lo, hi, a, b)
        assert lo <= new <= hi and abs(new - q) <= np.pi
        window = np.linspace(max(lo, q - np.pi), min(hi, q + np.pi), 4001) - q
        best = np.max(a * np.cos(window) + b * np.sin(window))
        assert a * np.cos(new - q) + b * np.sin(new - q) >= best - 1e-9 * np.hypot(a, b)


def test_joint_chain_degenerate_targets_give_finite_answers():
    """The 7-joint arm held straight up (q = 0: every roll axis through the tip and the
    pitch joints' levers along their targets' directions, so each joint's objective is
    flat or at a tie) and bent, toward targets on the base axis (at the base, inside reach,
    at the full reach, beyond it, below), at the tip, and on the axis of the wrist roll:
    finite answers within the limits, warm and cold, with no motion cost, the default one
    and a heavy one; the reachable targets inside the reach are reached."""
    chain = seven_dof_arm()
    straight = np.zeros(chain.dof)
    bent = np.array([0.2, 0.6, 0.1, 1.2, 0.1, 0.6, 0.0])
    tip = chain.forward(straight).position
    frames = chain.joint_frames(bent)
    wrist = frames.position[5]  # the wrist roll's pivot, its axis along its frame's z
    roll_axis = frames.rotation_matrix[5][:, 2]
    reach_up = tip[2]
    targets = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.3], [0.0, 0.0, 0.6 * reach_up],
                        tip, [0.0, 0.0, 1.5 * reach_up], [0.0, 0.0, -0.5],
                        wrist + 0.05 * roll_axis, wrist])
    for q0 in (straight, bent, None):
        for damping in (0.0, 0.02, 1.0):
            sol = ccd(chain, targets, q0=q0, damping=damping)
            assert np.all(np.isfinite(sol.q)) and np.all(np.isfinite(sol.error))
            assert np.all(np.isfinite(sol.positions))
            assert chain.within_limits(sol.q, atol=0.0).all()
            if damping < 1.0:  # (a heavy motion cost converges slowly)
                assert sol.reached[[2, 6, 7]].all(), (q0, damping, sol.error)
    # straight, toward a point straight above beyond reach: it stays pointing at it
    far = ccd(chain, targets[4], q0=straight)
    np.testing.assert_allclose(far.positions[-1], tip, atol=1e-12)
    np.testing.assert_allclose(far.error, 0.5 * reach_up, rtol=1e-12)


# ---------------------------------------------------------------- point chains
def straight_chain(n=10):
    return np.stack([np.zeros(n), np.arange(n, dtype=float), np.zeros(n)], axis=-1)


def test_point_chain_reaches_reachable_targets_and_keeps_lengths():
    rng = np.random.default_rng(16)
    chain = straight_chain()
    d = rng.normal(size=(300, 3))
    targets = d / np.linalg.norm(d, axis=-1, keepdims=True) * rng.uniform(0.5, 8.5, (300, 1))
    sol = ccd(chain, targets, tolerance=1e-4, max_iterations=2000)
    assert sol.positions.shape == (300, 10, 3) and sol.q is None
    np.testing.assert_allclose(lengths(sol.positions), 1.0, atol=1e-9)
    np.testing.assert_allclose(sol.positions[:, 0], 0.0, atol=1e-12)
    assert sol.reached.mean() >= 0.95
    np.testing.assert_allclose(
        np.linalg.norm(sol.positions[:, -1] - targets, axis=-1), sol.error, atol=1e-12)
    assert np.all(sol.error[sol.reached] <= 1e-4)


def test_point_chain_unreachable_stretches_toward_target():
    chain = straight_chain(5)
    target = np.array([10.0, 3.0, -2.0])
    sol = ccd(chain, target, max_iterations=1000)
    assert not sol.reached
    np.testing.assert_allclose(sol.error, np.linalg.norm(target) - 4.0, atol=1e-3)
    direction = sol.positions[-1] / np.linalg.norm(sol.positions[-1])
    np.testing.assert_allclose(direction, target / np.linalg.norm(target), atol=1e-3)
    assert sol.iterations < 1000  # stopped by the improvement criterion


@settings(max_examples=40)
@given(st.integers(2, 7), st.integers(0, 2**31 - 1))
def test_point_chain_properties(n, seed):
    """Random chains and targets: lengths kept, root fixed, never NaN, never farther than at the start."""
    rng = np.random.default_rng(seed)
    pts = np.cumsum(rng.normal(size=(n, 3)), axis=0)
    target = rng.normal(size=3) * 3
    sol = ccd(pts, target, max_iterations=50)
    assert np.all(np.isfinite(sol.positions))
    np.testing.assert_allclose(lengths(sol.positions), lengths(pts), atol=1e-9)
    np.testing.assert_allclose(sol.positions[0], pts[0])
    assert sol.error <= np.linalg.norm(pts[-1] - target) + 1e-12


def test_point_chain_degenerate_cases():
    chain = straight_chain(4)
    # target at the root, pointing exactly away, zero-length bone, folded chain
    cases = [
        (chain, np.zeros(3)),
        (chain, np.array([0.0, -2.0, 0.0])),
        (np.array([[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 2, 0]], float), np.array([1.0, 1.0, 0.0])),
        (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 1, 0]], float), np.array([0.0, 2.0, 0.5])),
        (np.zeros((3, 3)), np.array([1.0, 0.0, 0.0])),
    ]
    for pts, target in cases:
        sol = ccd(pts, target, max_iterations=200)
        assert np.all(np.isfinite(sol.positions)) and np.isfinite(sol.error)
        np.testing.assert_allclose(lengths(sol.positions), lengths(pts), atol=1e-9)
    # slightly off the line through the chain (exactly on it, CCD has nothing to turn)
    assert ccd(chain, np.array([0.01, -2.0, 0.0]), tolerance=1e-6, max_iterations=500).reached


def test_point_chain_tracking_keeps_bones_from_flipping():
    """A straight chain tracking lines across its own line, warm-started from its last
    pose: one through the root, one through a joint's rest position. Where the end folds
    back onto a joint, or the target passes next to one, that joint's objective is
    nearly flat; classic CCD (``damping=0``) then swung the bones beyond it by up to
    1.2 rad between samples (82 and 295 times the target step); the motion cost keeps
    every bone turn within 40 target steps and reaches every sample of the first line."""
    chain = np.c_[np.arange(5.0), np.zeros(5), np.zeros(5)]
    t = np.linspace(0.0, 1.0, 121)[:, None]
    lines = (np.c_[0 * t, 1.5 - 3 * t, 0.2 + 0 * t], np.c_[2 + 0 * t, 1.0 - 2 * t, 0 * t])
    for k, path in enumerate(lines):
        ds = np.linalg.norm(np.diff(path, axis=0), axis=-1) / 4.0
        for damping, ratio in ((0.0, 60.0), (None, 40.0)):
            options = {} if damping is None else {"damping": damping}
            pose, turns, reached = chain, [], []
            for target in path:
                sol = ccd(pose, target, **options)
                assert np.all(np.isfinite(sol.positions))
                np.testing.assert_allclose(lengths(sol.positions), 1.0, atol=1e-9)
                a, b = np.diff(pose, axis=0), np.diff(sol.positions, axis=0)
                cos = np.sum(a * b, axis=-1)  # unit bones
                turns.append(np.arccos(np.clip(cos, -1.0, 1.0)).max())
                reached.append(bool(sol.reached))
                pose = sol.positions
            worst = np.max(np.array(turns[1:]) / ds)
            if damping is None:
                assert worst <= ratio, (k, worst)
                assert k == 1 or all(reached)
            else:
                assert worst > ratio, (k, worst)


def test_point_chain_batches_broadcast():
    chain = straight_chain(4)
    targets = np.random.default_rng(17).uniform(-2, 2, (2, 5, 3))
    sol = ccd(chain, targets)
    assert sol.positions.shape == (2, 5, 4, 3) and sol.reached.shape == (2, 5)
    many = np.broadcast_to(chain, (5, 4, 3))
    assert ccd(many, targets[0]).error.shape == (5,)


def test_ccd_invalid_input():
    chain = straight_chain(3)
    with pytest.raises(InvalidInputError, match="q0 applies to JointChain only"):
        ccd(chain, [1, 0, 0], q0=[0, 0])
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., n, 3\) with n >= 2"):
        ccd(np.zeros((1, 3)), [1, 0, 0])
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., 3\)"):
        ccd(np.zeros((3, 2)), [1, 0, 0])
    with pytest.raises(NonFiniteInputError, match="target must be finite"):
        ccd(chain, [np.inf, 0, 0])
    with pytest.raises(InvalidInputError, match="min_improvement applies to point chains only"):
        ccd(planar_arm(), [1, 0, 0], min_improvement=1e-3)
    with pytest.raises(InvalidInputError, match="max_iterations must be >= 0"):
        ccd(chain, [1, 0, 0], max_iterations=-1)
    for bad, message in ((-0.1, r"damping must be >= 0.0, got -0.1"),
                         (1e7, r"damping must be <= 1e\+06, got 1e\+07"),
                         ("x", "damping must be a number, got str")):
        for where in (chain, planar_arm()):
            with pytest.raises(InvalidInputError, match=message):
                ccd(where, [1, 0, 0], damping=bad)


def test_ccd_point_inputs_are_checked_in_order_with_the_entry_named():
    chain = straight_chain(3)
    cases = [
        (np.where(np.arange(9).reshape(3, 3) == 4, np.nan, chain), [1, 0, 0],
         NonFiniteInputError, r"positions must be finite, got NaN at index \(1, 1\)"),
        (chain, [0, -np.inf, 0], NonFiniteInputError, r"target must be finite, got inf at "
         r"index \(1,\)"),
        (np.full((2, 3), np.nan), [np.inf, 0, 0], NonFiniteInputError, "positions must be"),
        (np.zeros((3, 2)), [np.nan, 0, 0], InvalidInputError, r"positions must have shape "
         r"\(\.\.\., 3\), got \(3, 2\)"),
        (chain, [[np.nan, 0]], InvalidInputError, r"target must have shape \(\.\.\., 3\)"),
        (chain, np.zeros((2, 2)), InvalidInputError, r"target must have shape \(\.\.\., 3\)"),
        (np.zeros(3), [np.nan, 0, 0], NonFiniteInputError, "target must be finite"),
        (np.zeros(3), [1, 0, 0], InvalidInputError, r"positions must have shape \(\.\.\., n, "
         r"3\) with n >= 2, got \(3,\)"),
        (5.0, [1, 0, 0], InvalidInputError, r"positions must have shape \(\.\.\., 3\)"),
    ]
    for positions, target, error, message in cases:
        with pytest.raises(error, match=message):
            ccd(positions, target)
    huge = chain * 6e307  # finite entries whose sum overflows are taken
    solved = ccd(np.concatenate([huge, huge]), [1e307, 1e307, 0])
    assert np.all(np.isfinite(solved.positions)) and np.isfinite(solved.error)
