"""Thread count: batched kernels give bit-identical results on 1 and 2 threads; out= reuse."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.errors import InvalidInputError
from limbik.skeleton.motion import forward_kinematics


@pytest.fixture
def threads():
    """Run a callable at a given thread count, restoring the count afterwards."""
    before = limbik.get_num_threads()

    def run(n, fn):
        limbik.set_num_threads(n)
        try:
            return fn()
        finally:
            limbik.set_num_threads(before)

    return run


def random_chains(rng, batch, n):
    steps = rng.normal(size=(batch, n - 1, 3))
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(steps, axis=1)], axis=1)


def solves(rng):
    """name → a batched solve whose every output array is compared."""
    # every batch spans several chunks of its solver's smallest chunk
    chains = random_chains(rng, 600, 6)
    goals = rng.normal(scale=2.0, size=(600, 3))
    # inside, out of and at the edge of reach; over three chunks of the threaded two_bone
    limb_goals = rng.normal(size=(3 * 4096 + 123, 3))
    tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], random_chains(rng, 1, 7)[0])
    arm = limbik.JointChain.from_points(random_chains(rng, 1, 4)[0])
    arm_goals = arm.forward(arm.random_q(64, rng))
    # warm starts, a third of the targets out of reach (restarts drawn around the start)
    warm_q0 = arm.random_q(64, rng)
    far_goals = arm_goals.position * np.where(np.arange(64) % 3 == 0, 1.6, 1.0)[:, None]
    parents = np.array([-1, 0, 1, 1, 3])
    rot = rng.normal(size=(7000, 5, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    trans = rng.normal(size=(7000, 5, 3))
    return {
        "two_bone": lambda: limbik.two_bone(np.zeros(3), limb_goals, 0.8, 0.7, pole=[0, 0, 1]),
        "fabrik": lambda: limbik.fabrik(chains, goals),
        "FabrikTree": lambda: tree.solve({4: goals[:150], 6: goals[150:300]}),
        "ccd": lambda: limbik.ccd(chains, goals),
        "jacobian_ik lm": lambda: limbik.jacobian_ik(arm, arm_goals, restarts=2),
        "jacobian_ik dls": lambda: limbik.jacobian_ik(arm, arm_goals.position, method="dls",
                                                      restarts=1, max_iterations=50),
        "jacobian_ik lm warm": lambda: limbik.jacobian_ik(arm, far_goals, q0=warm_q0,
                                                          restarts=3),
        "jacobian_ik dls warm": lambda: limbik.jacobian_ik(arm, far_goals, method="dls",
                                                           q0=warm_q0, restarts=2,
                                                           max_iterations=50),
        "forward kinematics": lambda: forward_kinematics(parents, rot, trans),
    }


def arrays(result):
    if isinstance(result, tuple):
        return list(result)
    return [a for a in (result.positions, result.reached, result.error, result.iterations,
                        result.q, result.rotations) if a is not None]


@pytest.mark.parametrize("name", ["two_bone", "fabrik", "FabrikTree", "ccd", "jacobian_ik lm",
                                  "jacobian_ik dls", "jacobian_ik lm warm",
                                  "jacobian_ik dls warm", "forward kinematics"])
def test_results_are_bit_identical_on_one_and_two_threads(name, threads, monkeypatch):
    """Each batch element is solved by one thread from its own inputs, so the thread count
    cannot change a single bit of any output."""
    from numba import config

    from limbik._runtime import batch_threads as _batch_threads

    if int(config.NUMBA_NUM_THREADS) < 2:  # type: ignore[attr-defined]
        pytest.skip("Numba started with one thread (NUMBA_NUM_THREADS=1)")
    solves(np.random.default_rng(5))[name]()  # compiled first
    one = arrays(threads(1, solves(np.random.default_rng(5))[name]))
    handed = []
    helpers = _batch_threads._helpers
    monkeypatch.setattr(_batch_threads, "_helpers", lambda: handed.append(1) or helpers())
    two = arrays(threads(2, solves(np.random.default_rng(5))[name]))
    assert handed, "the batch was not spread over threads"
    assert len(one) == len(two) > 0
    for a, b in zip(one, two, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_set_num_threads_round_trips_and_rejects_bad_counts(threads):
    assert threads(1, limbik.get_num_threads) == 1
    for bad in (0, -1, 10**6, 1.5, True, "2"):
        with pytest.raises(InvalidInputError, match="n must be an integer from 1 to"):
            limbik.set_num_threads(bad)  # type: ignore[arg-type]


def test_two_bone_out_reuses_the_arrays_and_matches_a_fresh_solve(rng):
    """out= writes into the given Solution's arrays; results equal an allocating call."""
    root = rng.normal(size=(4, 50, 3))
    target = root + rng.normal(size=(4, 50, 3))
    upper = rng.uniform(0.5, 1.0, size=(4, 50))
    buffer = limbik.two_bone(root, root + 1.0, upper, 0.6)
    for _ in range(3):
        target = target + rng.normal(scale=0.1, size=target.shape)
        got = limbik.two_bone(root, target, upper, 0.6, pole=target + [0, 0, 1], out=buffer)
        fresh = limbik.two_bone(root, target, upper, 0.6, pole=target + [0, 0, 1])
        assert got.positions is buffer.positions and got.error is buffer.error
        assert np.array_equal(got.positions, fresh.positions)
        assert np.array_equal(got.reached, fresh.reached)
        assert np.array_equal(got.error, fresh.error)
        assert got.iterations.shape == (4, 50) and not np.any(got.iterations)


def test_two_bone_out_of_the_wrong_shape_or_kind_is_rejected(rng):
    buffer = limbik.two_bone(np.zeros((5, 3)), np.ones((5, 3)), 1.0, 1.0)
    with pytest.raises(InvalidInputError, match=r"out.positions must be a writable C-contiguous float64 array of shape \(6, 3, 3\), got float64 \(5, 3, 3\)"):
        limbik.two_bone(np.zeros((6, 3)), np.ones((6, 3)), 1.0, 1.0, out=buffer)
    with pytest.raises(InvalidInputError, match="out must be a Solution, got ndarray"):
        limbik.two_bone(np.zeros((5, 3)), np.ones((5, 3)), 1.0, 1.0, out=np.empty((5, 3, 3)))
    frozen = limbik.two_bone(np.zeros((5, 3)), np.ones((5, 3)), 1.0, 1.0)
    frozen.positions.flags.writeable = False
    with pytest.raises(InvalidInputError, match=r"out\.positions must be a writable"):
        limbik.two_bone(np.zeros((5, 3)), np.ones((5, 3)), 1.0, 1.0, out=frozen)


def test_num_threads_restores_the_count():
    before = limbik.get_num_threads()
    setting = getattr(limbik.threads._local, "count", None)
    with limbik.threads.num_threads(1):
        assert limbik.get_num_threads() == 1
        with limbik.threads.num_threads(limbik.threads.most_threads()):
            assert limbik.get_num_threads() == limbik.threads.most_threads()
        assert limbik.get_num_threads() == 1
        with pytest.raises(RuntimeError), limbik.threads.num_threads(1):
            raise RuntimeError
        assert limbik.get_num_threads() == 1
    assert limbik.get_num_threads() == before
    assert getattr(limbik.threads._local, "count", None) == setting  # as it was
    with pytest.raises(InvalidInputError):
        limbik.threads.num_threads(0).__enter__()
    assert limbik.get_num_threads() == before
