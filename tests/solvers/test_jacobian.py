"""Jacobian IK (transpose, pinv, DLS, SVD-DLS): reach, limits, pose targets, determinism, degenerate input."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from chains import planar_arm, spatial_arm
from limbik import Frame, JointChain, ccd, jacobian_ik
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.solvers import JACOBIAN_METHODS
from limbik.solvers.joint import _jacobian_kernels as jk
from limbik.solvers.joint._jacobian_kernels import chain_fk


@njit
def _chain_fk(pre_rot, pre_trans, axis, kind, q, slot, wr, wp, wa):
    # chain_fk is a helper without a Python entry point: called through a kernel here
    chain_fk(pre_rot, pre_trans, axis, kind, q, slot, wr, wp, wa)


@njit
def _jacobi_eigen(a, n, v):
    jk._jacobi_eigen(a, n, v)  # a helper without a Python entry point too


def test_kernel_fk_matches_joint_chain(panda):
    pre_rot, pre_trans, axis, kind, _, _ = panda.kernel_arrays
    rng = np.random.default_rng(0)
    for q in panda.random_q(5, rng):
        wr, wp, wa = np.empty((2, 8, 3, 3)), np.empty((2, 8, 3)), np.empty((2, 7, 3))
        _chain_fk(pre_rot, pre_trans, axis, kind, np.stack([q, q]), 1, wr, wp, wa)
        f = panda.forward(q)
        np.testing.assert_allclose(wp[1, -1], f.position, atol=1e-12)
        np.testing.assert_allclose(wr[1, -1], f.rotation_matrix, atol=1e-12)


def test_panda_default_dls_reaches_random_targets(panda):
    """Acceptance: 200 FK targets within the limits, defaults: ≥ 99 % within 1e-3 m, limits kept."""
    rng = np.random.default_rng(42)
    targets = panda.forward(panda.random_q(200, rng)).position
    sol = jacobian_ik(panda, targets, method="dls")
    assert sol.q.shape == (200, 7) and sol.positions.shape == (200, 11, 3)
    tip = panda.forward(sol.q).position
    distance = np.linalg.norm(tip - targets, axis=-1)
    assert np.mean(distance < 1e-3) >= 0.99
    assert panda.within_limits(sol.q, atol=0.0).all()
    np.testing.assert_allclose(sol.error, distance, atol=1e-12)
    assert np.array_equal(sol.reached, distance <= 1e-6 * panda.reach)
    np.testing.assert_allclose(sol.end_effector, tip, atol=1e-12)


@pytest.mark.parametrize("method", JACOBIAN_METHODS)
def test_every_method_reaches_and_keeps_limits(method):
    chain = spatial_arm()
    rng = np.random.default_rng(1)
    targets = chain.forward(chain.random_q(40, rng)).position
    sol = jacobian_ik(chain, targets, method=method, tolerance=1e-5, max_iterations=2000)
    assert chain.within_limits(sol.q, atol=0.0).all()
    assert np.all(np.isfinite(sol.q)) and np.all(np.isfinite(sol.positions))
    assert np.mean(sol.reached) >= 0.9
    done = np.linalg.norm(chain.forward(sol.q[sol.reached]).position - targets[sol.reached], axis=-1)
    assert np.all(done <= 1e-5)
    assert np.all(sol.iterations >= 0)


@pytest.mark.parametrize("method", JACOBIAN_METHODS)
def test_tight_limits_are_never_crossed(method):
    limits = [(-0.3, 0.3), (0.2, 0.5), (-1.0, -0.5)]
    chain = planar_arm(limits)
    rng = np.random.default_rng(2)
    targets = rng.uniform(-3, 3, (50, 3))  # mostly outside what the limits allow
    sol = jacobian_ik(chain, targets, method=method, restarts=2)
    lo, hi = np.array(limits).T
    assert np.all((sol.q >= lo) & (sol.q <= hi))
    assert np.all(np.isfinite(sol.error))


def test_pose_targets(panda):
    rng = np.random.default_rng(3)
    poses = panda.forward(panda.random_q(30, rng))
    for method in ("dls", "svd-dls", "pinv"):
        sol = jacobian_ik(panda, poses, method=method)
        assert np.mean(sol.reached) >= 0.9, method
        got = panda.forward(sol.q[sol.reached])
        assert np.all(got.isclose(poses[sol.reached], atol=1e-5))
        assert panda.within_limits(sol.q).all()


def test_orientation_weight_zero_is_position_only(panda):
    rng = np.random.default_rng(4)
    poses = panda.forward(panda.random_q(10, rng))
    # a rotation no configuration near it matches: only the position counts
    twisted = Frame(np.tile([0.3, 0.2, 0.1, 0.9], (10, 1)), poses.position)
    sol = jacobian_ik(panda, twisted, orientation_weight=0.0)
    assert sol.reached.all()
    np.testing.assert_allclose(panda.forward(sol.q).position, poses.position, atol=1e-5)


def test_restarts_are_deterministic_with_rng(panda):
    rng = np.random.default_rng(5)
    targets = panda.forward(panda.random_q(20, rng)).position
    a = jacobian_ik(panda, targets, restarts=3, rng=7, max_iterations=5)
    b = jacobian_ik(panda, targets, restarts=3, rng=7, max_iterations=5)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    g1 = jacobian_ik(panda, targets, restarts=3, rng=np.random.default_rng(7), max_iterations=5)
    g2 = jacobian_ik(panda, targets, restarts=3, rng=np.random.default_rng(7), max_iterations=5)
    np.testing.assert_array_equal(g1.q, g2.q)
    c = jacobian_ik(panda, targets, restarts=3, rng=8, max_iterations=5)
    assert not np.array_equal(a.q, c.q)


def test_restarts_help():
    chain = planar_arm([(-1.5, 1.5), (-2.5, 2.5), (-2.5, 2.5)])
    rng = np.random.default_rng(6)
    targets = chain.forward(chain.random_q(100, rng)).position
    none = jacobian_ik(chain, targets, restarts=0, q0=[1.4, 2.4, -2.4])
    some = jacobian_ik(chain, targets, restarts=8, q0=[1.4, 2.4, -2.4])
    assert some.reached.sum() >= none.reached.sum()
    assert some.reached.mean() >= 0.97


def test_unreachable_target_is_a_result():
    chain = planar_arm()
    sol = jacobian_ik(chain, [10.0, 0.0, 0.0], method="dls")
    assert not sol.reached and sol.shape == ()
    np.testing.assert_allclose(sol.error, 7.0, atol=1e-3)
    np.testing.assert_allclose(sol.end_effector, [3, 0, 0], atol=1e-2)


@pytest.mark.parametrize("method", JACOBIAN_METHODS)
def test_degenerate_targets_stay_finite(method):
    chain = planar_arm()
    targets = np.array([[0, 0, 0], [3, 0, 0], [-3, 0, 0], [0, 0, 5], [1e-12, 0, 0]], float)
    sol = jacobian_ik(chain, targets, method=method, q0=np.zeros(3), restarts=1)
    for value in (sol.q, sol.positions, sol.error):
        assert np.all(np.isfinite(value))
    assert sol.reached[1]  # straight, singular and already there


def test_batch_shapes_broadcast():
    chain = planar_arm()
    targets = np.random.default_rng(7).uniform(-1, 1, (2, 3, 3)) * [1, 1, 0]
    sol = jacobian_ik(chain, targets)
    assert sol.q.shape == (2, 3, 3) and sol.reached.shape == (2, 3)
    assert sol.positions.shape == (2, 3, 5, 3)
    q0 = np.zeros((4, 1, 3))
    sol = jacobian_ik(chain, [1.0, 1.0, 0.0], q0=q0)
    assert sol.q.shape == (4, 1, 3)
    single = jacobian_ik(chain, [1.0, 1.0, 0.0])
    assert single.reached.shape == () and single.q.shape == (3,)


def test_small_target_moves_give_small_joint_moves():
    """Warm-started DLS along a smooth path: joints move continuously."""
    chain = planar_arm()
    t = np.linspace(0, 1, 50)
    path = np.stack([2 + 0.3 * np.cos(t), 0.5 * np.sin(t), 0 * t], axis=-1)
    q = np.array([0.3, -0.5, 0.4])
    steps = []
    for point in path:
        sol = jacobian_ik(chain, point, q0=q, restarts=0)
        assert sol.reached
        steps.append(np.max(np.abs(sol.q - q)))
        q = sol.q
    assert max(steps[1:]) < 0.1


def test_invalid_input_raises():
    chain = planar_arm()
    with pytest.raises(InvalidInputError, match="method must be one of 'transpose', 'pinv', 'dls', 'svd-dls', 'lm', got 'newton'"):
        jacobian_ik(chain, [1, 0, 0], method="newton")
    with pytest.raises(InvalidInputError, match="chain must be a JointChain, got list"):
        jacobian_ik([[0, 0, 0], [1, 0, 0]], [1, 0, 0])
    with pytest.raises(InvalidInputError, match=r"target must have shape \(\.\.\., 3\), got \(4,\)"):
        jacobian_ik(chain, [1, 0, 0, 0])
    with pytest.raises(NonFiniteInputError, match="target must be finite"):
        jacobian_ik(chain, [np.nan, 0, 0])
    with pytest.raises(InvalidInputError, match=r"damping must be >= 0\.0"):
        jacobian_ik(chain, [1, 0, 0], damping=-1)
    with pytest.raises(InvalidInputError, match=r"q0 must have shape \(\.\.\., 3\), got \(2,\)"):
        jacobian_ik(chain, [1, 0, 0], q0=[0, 0])
    with pytest.raises(InvalidInputError, match="restarts must be >= 0"):
        jacobian_ik(chain, [1, 0, 0], restarts=-1)
    with pytest.raises(InvalidInputError, match="rng must be None, an int seed or a numpy Generator"):
        jacobian_ik(chain, [1, 0, 0], rng="seed")
    for solve in (jacobian_ik, ccd):
        with pytest.raises(InvalidInputError, match="rng must be a seed >= 0, got -1") as caught:
            solve(chain, [1, 0, 0], rng=-1)
        assert caught.value.argument == "rng"
    with pytest.raises(InvalidInputError, match="batch shapes must broadcast"):
        jacobian_ik(chain, np.zeros((2, 3)), q0=np.zeros((3, 3)))
    fixed_only = JointChain.from_joints([{"type": "fixed"}])
    with pytest.raises(InvalidInputError, match="at least one movable joint"):
        jacobian_ik(fixed_only, [1, 0, 0])


@pytest.mark.parametrize("method", ["lm", "dls"])
def test_warm_start_array_gives_the_bits_of_any_other_start(method):
    """One float64 start (the warm start of a per-frame loop) takes a shorter path; it
    gives the same bits as the same start as a list or a batch of one, out of limits too,
    and still refuses NaN."""
    chain = spatial_arm()
    rng = np.random.default_rng(5)
    for q in chain.random_q(20, rng) * 1.3:  # some beyond the limits: clipped
        target = chain.forward(chain.random_q(1, rng)[0]).position
        fast = jacobian_ik(chain, target, q0=q, method=method)
        for other in (list(q), tuple(q), q[None], np.ma.masked_array(q)):
            slow = jacobian_ik(chain, target, q0=other, method=method)
            assert np.asarray(slow.q).reshape(-1).tobytes() == np.asarray(fast.q).tobytes()
            assert float(np.asarray(slow.error).reshape(())) == float(fast.error)
    with pytest.raises(NonFiniteInputError, match="q0 must be finite"):
        jacobian_ik(chain, [0.3, 0.2, 0.1], q0=np.full(chain.dof, np.nan))
    with pytest.raises(NonFiniteInputError, match="q0 must be finite"):
        jacobian_ik(chain, [0.3, 0.2, 0.1], q0=np.r_[np.inf, np.zeros(chain.dof - 1)])


def test_jacobi_eigen_decomposes_symmetric_matrices():
    rng = np.random.default_rng(8)
    for n in (1, 3, 6):
        for rank_deficient in (False, True):
            jac = rng.normal(size=(n, 7))
            if rank_deficient and n > 1:
                jac[0] = jac[1]
            a = jac @ jac.T
            work = a.copy()
            v = np.zeros((6, 6))
            _jacobi_eigen(work, n, v)
            vecs = v[:n, :n]
            np.testing.assert_allclose(vecs @ np.diag(np.diag(work)) @ vecs.T, a, atol=1e-10)
            np.testing.assert_allclose(vecs.T @ vecs, np.eye(n), atol=1e-12)


def test_orientation_only_pose_target(panda):
    rng = np.random.default_rng(9)
    poses = panda.forward(panda.random_q(10, rng))
    moved = Frame(poses.quaternion, poses.position + 5.0)  # unreachable positions
    sol = jacobian_ik(panda, moved, position_weight=0.0)
    assert sol.reached.mean() >= 0.9
    got = panda.forward(sol.q[sol.reached]).quaternion
    dots = np.abs(np.sum(got * moved.quaternion[sol.reached], axis=-1))
    assert np.all(dots > 1 - 1e-9)


def fixed_joints_everywhere_arm():
    """Fixed joints before the first movable joint, between movable ones and after the
    last, rotated origins, a prismatic joint: every case of JointChain.position_map."""
    return JointChain.from_joints([
        {"type": "fixed", "origin": {"xyz": (0.1, 0.2, 0.3), "rpy": (0.3, -0.2, 0.5)}},
        {"type": "revolute", "axis": (0, 0, 1), "origin": {"xyz": (0, 0, 0.2)}, "lower": -2,
         "upper": 2},
        {"type": "fixed", "origin": {"xyz": (0.3, 0.1, 0), "rpy": (0.0, 0.4, 0.0)}},
        {"type": "fixed", "origin": {"xyz": (0.0, 0.2, 0.1), "rpy": (0.7, 0.0, -0.3)}},
        {"type": "prismatic", "axis": (1, 1, 0), "origin": {"xyz": (0.1, 0, 0)}, "lower": 0,
         "upper": 0.4},
        {"type": "revolute", "axis": (1, 0, 1), "origin": {"xyz": (0.2, 0, 0)}, "lower": -3,
         "upper": 3},
        {"type": "fixed", "origin": {"xyz": (0.1, 0, 0.05), "rpy": (0.1, 0.2, 0.3)}},
        {"type": "fixed", "origin": {"xyz": (0.0, 0.15, 0.0)}},
    ])


@pytest.mark.parametrize("method", ["lm", "dls", "ccd"])
@pytest.mark.parametrize("make", [fixed_joints_everywhere_arm, spatial_arm, planar_arm])
def test_solution_positions_are_the_joint_frames_of_its_q(make, method):
    """The positions a joint-space solve returns (written by the kernel from its own forward
    kinematics) are the chain's joint frames at the returned q, fixed joints included,
    for single and batched targets."""
    chain = make()
    rng = np.random.default_rng(3)
    goals = chain.forward(chain.random_q(70, rng))  # >= 64: the parallel kernel too
    for target in (goals.position, goals.position[0], goals, goals[1]):
        if method == "ccd":
            sol = ccd(chain, target, restarts=1, max_iterations=30)
        else:
            sol = jacobian_ik(chain, target, method=method, restarts=1, max_iterations=30)
        np.testing.assert_allclose(sol.positions, chain.joint_positions(sol.q), atol=1e-12)
        np.testing.assert_allclose(sol.positions[..., 0, :], 0.0, atol=0.0)


def test_single_solves_do_not_depend_on_the_solves_before_them(panda):
    """Single solves reuse their scratch space; what a solve leaves there must not
    change the next one (position and pose targets, reached and unreached, mixed)."""
    rng = np.random.default_rng(21)
    points = rng.uniform(-0.9, 0.9, size=(12, 3)) + [0.0, 0.0, 0.4]
    quats = rng.normal(size=(12, 4))
    targets = [points[i] if i % 2 else Frame(quats[i], points[i]) for i in range(12)]
    first = [jacobian_ik(panda, t) for t in targets]
    again = [jacobian_ik(panda, t) for t in reversed(targets)][::-1]
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a.q, b.q) and np.array_equal(a.positions, b.positions)
        assert a.error == b.error and a.reached == b.reached
    assert 0 < sum(bool(s.reached) for s in first) < 12


def test_far_targets_are_solved_toward_their_direction():
    """10^16 and 10^120 away: the chain points at them as for a target 100 reaches away."""
    chain = JointChain.from_points(np.c_[np.arange(5.0) / 5, np.zeros(5), np.zeros(5)])
    for distance in (1e16, 1e120):
        for method in ("lm", "dls", "pinv"):
            s = jacobian_ik(chain, [0.0, distance, 0.0], method=method)
            tip = chain.forward(s.q).position
            assert tip[1] > 0.79 and not s.reached and s.error == pytest.approx(distance)
        tip = chain.forward(ccd(chain, [0.0, distance, 0.0]).q).position
        assert tip[1] > 0.79


def test_ccd_leaves_a_joint_that_cannot_move_the_tip(panda):
    """The Panda's last joint turns about an axis through the tip: warm-started CCD on
    position targets must not spin it from frame to frame."""
    q = np.array([0, -0.3, 0, -2.2, 0, 2, np.pi / 4])
    start = panda.forward(q).position
    for k in range(1, 31):
        s = ccd(panda, start + [0.002 * k, 0, 0], q0=q)
        assert s.reached and np.max(np.abs(s.q - q)) < 0.05
        q = s.q


def test_pose_targets_with_both_weights_zero_are_refused():
    chain = JointChain.from_points(np.c_[np.arange(4.0), np.zeros(4), np.zeros(4)])
    goal = chain.forward(np.zeros(chain.dof))
    for solve in (jacobian_ik, ccd):
        with pytest.raises(InvalidInputError, match="must not both be 0") as caught:
            solve(chain, goal, position_weight=0.0, orientation_weight=0.0)
        assert caught.value.argument == "orientation_weight"
    # on a point target the weights do not apply
    assert jacobian_ik(chain, [1.0, 1.0, 0.0], position_weight=0.0,
                       orientation_weight=0.0).reached
