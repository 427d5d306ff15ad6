"""Warm-started joint-space IK along smooth target paths: each sample solved alone from
the previous answer (``q0=`` the last ``q``), as a per-frame loop does. The joints move
continuously, also where the path leaves the reach and comes back, and next to the wrist's
singular pose (CCD), and reachable targets are reached."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from chains import planar_arm, seven_dof_arm
from limbik import Frame, ccd, jacobian_ik

from conftest import SHARED_DATA

#: Jacobian rules whose warm-started tracking is checked for continuity.
METHODS = ("lm", "dls", "svd-dls", "pinv")

#: The largest joint step (rad, any joint) per target step along a path, the target's step
#: in reach units (position step / reach from the shoulder, plus the turn in radians for
#: pose targets). Smooth tracking stays below 3 inside reach and below 25 where the chain
#: stretches to its full reach; a jump to another branch makes 100 to 350.
STEP_RATIO = 40.0

#: Samples per path: about 0.05 reach between samples.
SAMPLES = 48


def track(chain, targets, q, method, **options):
    """Solve each target warm-started from the previous answer; returns q (n, dof),
    reached (n,) and error (n,)."""
    qs, reached, error = [], [], []
    for target in targets:
        sol = jacobian_ik(chain, target, method=method, q0=q, **options)
        q = sol.q
        qs.append(q)
        reached.append(bool(sol.reached))
        error.append(float(sol.error))
    return np.array(qs), np.array(reached), np.array(error)


def joint_steps(chain, q_start, qs):
    """Largest joint change into each sample (rad; unlimited joints wrap)."""
    step = np.diff(np.vstack([q_start, qs]), axis=0)
    unlimited = np.isinf(chain.lower) & np.isinf(chain.upper)
    step[:, unlimited] = (step[:, unlimited] + np.pi) % (2 * np.pi) - np.pi
    return np.max(np.abs(step), axis=-1)


def out_and_back(shoulder, start, factor, reach, rng, n=SAMPLES):
    """From ``start`` out along the ray from ``shoulder`` to ``factor * reach`` and back,
    swinging sideways by up to 0.5 rad about a random axis across the ray."""
    out = (start - shoulder) / np.linalg.norm(start - shoulder)
    side = np.cross(out, rng.normal(size=3))
    side /= np.linalg.norm(side)
    t = np.linspace(0.0, 1.0, n)
    d0 = np.linalg.norm(start - shoulder)
    distance = d0 + (factor * reach - d0) * np.sin(np.pi * t) ** 2
    swing = 0.5 * np.sin(2 * np.pi * t)
    direction = np.outer(np.cos(swing), out) + np.outer(np.sin(swing), side)
    return shoulder + direction * distance[:, None]


def target_steps(positions, reach, quats=None):
    """Each sample's target step in reach units (and radians for pose targets)."""
    steps = np.linalg.norm(np.diff(positions, axis=0), axis=-1) / reach
    if quats is not None:
        dot = np.abs(np.sum(quats[1:] * quats[:-1], axis=-1))
        steps = steps + 2 * np.arccos(np.clip(dot, -1.0, 1.0))
    return np.r_[np.linalg.norm(positions[0] - positions[0]), steps]


def reachable(chain, positions, quats=None):
    """Samples that a cold solve with many restarts reaches."""
    target = positions if quats is None else Frame(quats, positions)
    return np.asarray(jacobian_ik(chain, target, restarts=100, rng=3).reached)


def arm(name):
    """(chain, shoulder, reach from the shoulder, a bent start q) of a test arm."""
    if name == "synthetic":
        return (seven_dof_arm(), np.array([0, 0, 0.36]), 0.9,
                np.array([0.2, 0.6, 0.1, 1.2, 0.1, 0.6, 0.0]))
    files = {"panda": ("urdf/panda_example-robot-data.urdf", "panda_link0", "panda_hand_tcp",
                       [0, -0.3, 0, -2.2, 0, 2.0, np.pi / 4], [0, 0, 0.333], 0.947),
             "kuka": ("urdf/kuka_iiwa_pybullet_data.urdf", "lbr_iiwa_link_0",
                      "lbr_iiwa_link_7", [0, 0.5, 0, -1.5, 0, 0.8, 0], [0, 0, 0.36], 0.901)}
    path, base, tip, q, shoulder, reach = files[name]
    if not (SHARED_DATA / path).is_file():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return limbik.load_urdf(SHARED_DATA / path, base, tip), np.array(shoulder), reach, np.array(q)


def run_path(chain, shoulder, reach, q_start, factor, seed, kind, method):
    """Track one out-and-back path; returns (joint steps, target steps, reached, oracle)."""
    start = chain.forward(q_start)
    path = out_and_back(shoulder, start.position, factor, reach, np.random.default_rng(seed))
    quats = None if kind == "position" else np.broadcast_to(start.quaternion, (len(path), 4))
    targets = path if quats is None else [Frame(quats[i], path[i]) for i in range(len(path))]
    qs, reached, _ = track(chain, targets, q_start, method)
    return (joint_steps(chain, q_start, qs), target_steps(path, reach, quats), reached,
            reachable(chain, path, quats))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["synthetic", "panda", "kuka"])
def test_tracking_out_of_reach_and_back_moves_the_joints_continuously(name, method):
    """Out to 1.3 and 1.5 reaches and back, position and pose targets: every joint step
    stays within STEP_RATIO target steps (a warm start that fails beyond reach no longer
    hands the frame to a random restart on another branch), and every sample that a cold
    solve can reach is reached. The paths keep to branches without dead ends at joint
    limits (where a reachable target can only be reached by changing branch)."""
    chain, shoulder, reach, q_start = arm(name)
    runs = ([(f, s) for f in (1.3, 1.5) for s in range(3)] if name == "synthetic"
            else [(1.5, s) for s in range(2)])
    for factor, seed in runs:
        for kind in ("position", "pose"):
            dq, ds, reached, oracle = run_path(chain, shoulder, reach, q_start, factor, seed,
                                               kind, method)
            worst = int(np.argmax(dq[1:] / ds[1:])) + 1
            assert dq[worst] <= STEP_RATIO * ds[worst], (factor, seed, kind, worst, dq[worst])
            assert np.all(reached[oracle]), (factor, seed, kind, np.flatnonzero(oracle & ~reached))
            assert not oracle.all() and oracle[:3].all()  # the path leaves the reach


@pytest.mark.parametrize("method", ["lm", "dls"])
def test_beyond_reach_a_warm_start_keeps_its_own_best_effort(method):
    """Where the path is out of reach, the answer is the warm start's own continuation,
    bit for bit what the same solve without restarts gives: the restarts, which ran
    because the target was not reached, found no other branch better by more than its
    jump costs (WARM_START_JUMP_COST)."""
    chain, shoulder, reach, q_start = arm("synthetic")
    start = chain.forward(q_start).position
    for seed in range(3):
        path = out_and_back(shoulder, start, 1.4, reach, np.random.default_rng(seed))
        q = q_start
        unreached = 0
        for target in path:
            sol = jacobian_ik(chain, target, method=method, q0=q)
            if not sol.reached:
                alone = jacobian_ik(chain, target, method=method, q0=q, restarts=0)
                assert sol.q.tobytes() == alone.q.tobytes() and sol.error == alone.error
                assert sol.iterations > alone.iterations  # the restarts did run
                unreached += 1
            q = sol.q
        assert unreached >= SAMPLES // 4


@pytest.mark.parametrize("method", METHODS)
def test_a_restart_far_better_than_a_stuck_warm_start_replaces_it(method):
    """A straight chain pointing directly away from a target beyond reach sits on a
    saddle of the error (no step moves it): a restart that turns it round, ~π away, cuts
    the error from 8 to 2, far more than its jump costs, and is taken."""
    chain = planar_arm()
    target = [-5.0, 0.0, 0.0]
    stuck = jacobian_ik(chain, target, method=method, q0=np.zeros(3), restarts=0)
    assert stuck.error == pytest.approx(8.0)
    sol = jacobian_ik(chain, target, method=method, q0=np.zeros(3))
    assert not sol.reached and 2.0 <= sol.error < 2.02  # DLS ends short of straight
    np.testing.assert_allclose(sol.end_effector, [-3.0, 0.0, 0.0], atol=0.25)


@pytest.mark.parametrize("method", METHODS)
def test_tracking_through_the_base(method):
    """A line through the chain's base (reachable: the chain folds onto it): every
    sample is reached, also the one exactly at the base, with steps bounded as elsewhere."""
    chain = planar_arm()
    t = np.linspace(0.0, 1.0, SAMPLES + 1)
    path = np.c_[1.0 - 2.0 * t, 0.5 - t, 0.0 * t]
    assert np.array_equal(path[SAMPLES // 2], [0.0, 0.0, 0.0])
    q_start = np.array([0.5, 1.5, 1.5])
    qs, reached, error = track(chain, path, q_start, method)
    assert reached.all() and np.all(np.isfinite(qs)) and np.all(np.isfinite(error))
    dq = joint_steps(chain, q_start, qs)
    ds = target_steps(path, chain.reach)
    assert np.all(dq[1:] <= STEP_RATIO * ds[1:])


@pytest.mark.parametrize("method", METHODS)
def test_tracking_through_the_straight_arm(method):
    """Along the chain's own axis out to 1.5 reaches and back: the chain straightens
    (its singular pose), points at the targets beyond reach, and bends again on the way
    back with steps bounded as elsewhere; reachable samples are reached."""
    chain = planar_arm()
    t = np.linspace(0.0, 1.0, 2 * SAMPLES + 1)
    path = np.c_[2.0 + 2.5 * np.sin(np.pi * t), 0.0 * t, 0.0 * t]
    q_start = np.array([0.3, -0.5, 0.4])
    qs, reached, error = track(chain, path, q_start, method)
    dq = joint_steps(chain, q_start, qs)
    assert np.all(dq[1:] <= STEP_RATIO * target_steps(path, chain.reach)[1:])
    assert np.all(reached[path[:, 0] < 2.99])
    beyond = path[:, 0] > 3.01
    tips = chain.forward(qs[beyond]).position
    # stretched toward the target (the pseudo-inverse stalls a little short of straight)
    np.testing.assert_allclose(tips, np.broadcast_to([3.0, 0.0, 0.0], tips.shape), atol=0.02)
    np.testing.assert_allclose(error[beyond], path[beyond, 0] - 3.0, atol=1e-3)


def test_warm_started_batches_match_single_solves():
    """A batch of warm starts (some targets out of reach) gives each element what solving
    it alone gives, bit for bit."""
    chain, shoulder, reach, q_start = arm("synthetic")
    rng = np.random.default_rng(4)
    q0 = q_start + rng.normal(scale=0.3, size=(12, chain.dof))
    targets = shoulder + rng.normal(size=(12, 3)) * reach * 0.8
    for method in ("lm", "dls"):
        batch = jacobian_ik(chain, targets, method=method, q0=q0)
        assert 0 < batch.reached.sum() < 12
        for i in range(12):
            one = jacobian_ik(chain, targets[i], method=method, q0=q0[i])
            assert one.q.tobytes() == batch.q[i].tobytes() and one.error == batch.error[i]


#: The wrist pitch (joint 5) of each test arm next to its singular pose, where the wrist
#: roll before it (joint 4) has its axis nearly through the tip: its objective is almost
#: flat, and its exact best angle can lie anywhere on its circle.
NEAR_SINGULAR_WRIST = {"synthetic": 0.1, "panda": 2.7, "kuka": 0.1}


def circle_through(start, rng, radius, n=60):
    """``n`` samples of a circle of ``radius`` through ``start`` in a random plane."""
    normal = rng.normal(size=3)
    u = np.cross(normal, rng.normal(size=3))
    u /= np.linalg.norm(u)
    v = np.cross(normal / np.linalg.norm(normal), u)
    t = np.linspace(0.0, 2 * np.pi, n)
    return start + radius * (np.outer(np.cos(t) - 1.0, u) + np.outer(np.sin(t), v))


def track_ccd(chain, path, q_start, **options):
    """CCD warm-started along ``path``; yields (sample, q before, Solution)."""
    q = q_start
    for i, target in enumerate(path):
        sol = ccd(chain, target, q0=q, **options)
        yield i, q, sol
        q = sol.q


@pytest.mark.parametrize("name", ["synthetic", "panda", "kuka"])
def test_ccd_tracking_next_to_the_wrist_singularity_keeps_the_wrist_from_spinning(name):
    """Circles inside reach through a pose next to the wrist's singular pose, position
    targets, CCD warm-started from the last answer: every sample is reached, and every
    joint step stays within STEP_RATIO target steps, except where the warm start's own
    branch cannot reach the target (a restart's jump, as documented). Classic CCD, each
    joint at its exact best angle, turned the wrist roll by up to 5.9 rad between samples
    on these circles, with no restart involved."""
    chain, shoulder, reach, q_start = arm(name)
    q_start = q_start.copy()
    q_start[5] = NEAR_SINGULAR_WRIST[name]
    start = chain.forward(q_start).position
    for seed in range(4):
        path = circle_through(start, np.random.default_rng(seed), 0.15 * reach)
        assert np.all(np.linalg.norm(path - shoulder, axis=-1) < reach)
        ds = target_steps(path, reach)
        for i, q, sol in track_ccd(chain, path, q_start):
            assert sol.reached, (seed, i)
            dq = joint_steps(chain, q, sol.q[None])[0]
            if i and dq > STEP_RATIO * ds[i]:
                alone = ccd(chain, path[i], q0=q, restarts=0)
                assert not alone.reached, (seed, i, dq, ds[i])


def test_classic_ccd_spins_the_wrist_where_the_motion_cost_keeps_it():
    """The same circle with ``damping=0`` (classic CCD) and no restarts turns a joint by
    more than 1 rad between samples; the default motion cost keeps every step small."""
    chain, _, reach, q_start = arm("synthetic")
    q_start = q_start.copy()
    q_start[5] = NEAR_SINGULAR_WRIST["synthetic"]
    path = circle_through(chain.forward(q_start).position, np.random.default_rng(0),
                          0.15 * reach)
    for damping, bound in ((0.0, None), (limbik.tolerances.CCD_DAMPING, 0.5)):
        steps = [joint_steps(chain, q, sol.q[None])[0]
                 for _, q, sol in track_ccd(chain, path, q_start, restarts=0, damping=damping)]
        if bound is None:
            assert max(steps) > 1.0
        else:
            assert max(steps) < bound
