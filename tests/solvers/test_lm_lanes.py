"""Levenberg–Marquardt's NumPy lanes give the compiled kernel's bits.

:func:`limbik.solvers._lm_lanes.lm_lanes` runs a batch's first call while the kernel
compiles; every output array must be the kernel's, bit for bit, on every branch the
kernel takes: pose and position targets, cold and warm starts, restarts drawn from
per-target seeds, joints at their limits, prismatic and unlimited joints, targets out of
reach, no iterations at all, and a range that does not start at 0.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import limbik
from chains import planar_arm, seven_dof_arm, spatial_arm
from limbik import Frame
from limbik.solvers import _jacobian_kernels as jk
from limbik.solvers._joint_problem import joint_problem
from limbik.solvers._lm_lanes import lm_lanes

ROOT = Path(__file__).resolve().parents[2]


def _both(problem, start=0, stop=None, lam=1e-9):
    """Every output of the compiled kernel and of the lanes over ``start .. stop - 1``."""
    count = problem.first.shape[0]
    stop = count if stop is None else stop
    results = []
    for run in (jk.lm_solve_range, lm_lanes):
        outs = problem.outputs()
        for array in outs:  # rows outside the range must stay as they were
            array.view(np.uint8)[...] = 7
        _, _, arguments = problem.serial_call(jk.METHOD_LM, lam, 0.0, outs)
        run(start, stop, *arguments())
        results.append(outs)
    return results


def _assert_same_bits(results):
    for compiled, lanes in zip(*results, strict=True):
        assert compiled.dtype == lanes.dtype
        assert compiled.tobytes() == lanes.tobytes()


def _problem(chain, target, **options):
    settings = {"tolerance": None, "angle_tolerance": 1e-2, "max_iterations": 300,
                "patience": 3, "restarts": 30, "position_weight": 1.0,
                "orientation_weight": 1.0, "q0": None, "rng": None, "max_step": 0.5}
    settings.update(options)
    return joint_problem(chain, target, **settings)


@pytest.mark.parametrize("pose", [False, True])
@pytest.mark.parametrize("warm", [False, True])
def test_lanes_give_the_kernels_bits_on_the_panda(panda, pose, warm):
    """Reachable targets and targets beyond reach, cold and warm starts, one seed for all
    and a seed per target."""
    rng = np.random.default_rng(11 + 2 * pose + warm)
    goal = panda.forward(panda.random_q(120, rng))
    position = goal.position.copy()
    position[::7] *= 2.5  # out of reach: restarts, then the stretched chain
    target = Frame(goal.quaternion, position) if pose else position
    for seeds in (None, np.random.default_rng(5)):
        q0 = panda.random_q(120, rng) if warm else None
        _assert_same_bits(_both(_problem(panda, target, q0=q0, rng=seeds)))


@pytest.mark.parametrize("pose", [False, True])
def test_lanes_give_the_kernels_bits_with_prismatic_and_unlimited_joints(pose):
    """The spatial arm: a prismatic joint and a continuous one (wrapped into (-π, π]);
    starts far beyond a turn on the continuous joint."""
    chain = spatial_arm()
    rng = np.random.default_rng(3 + pose)
    for trial in range(4):
        goal = chain.forward(chain.random_q(40, rng))
        position = goal.position + (rng.normal(scale=0.4, size=(40, 3)) if trial % 2 else 0.0)
        target = Frame(goal.quaternion, position) if pose else position
        q0 = chain.random_q(40, rng) if trial >= 2 else None
        if q0 is not None:
            q0[:5, 4] = [1e20, -3e19, 7e18, 1e300, -2.5]
        problem = _problem(chain, target, q0=q0, rng=trial, orientation_weight=0.5,
                           restarts=4, max_iterations=60, patience=5, tolerance=1e-4,
                           angle_tolerance=1e-3)
        _assert_same_bits(_both(problem))


def test_lanes_give_the_kernels_bits_at_joint_limits():
    """A planar arm with tight limits: targets that push joints against them (the
    gradient then stays put on the limited joint)."""
    chain = planar_arm(limits=[(-0.3, 0.3)] * 3)
    rng = np.random.default_rng(8)
    targets = np.c_[rng.uniform(-3.0, 3.0, size=(60, 2)), np.zeros(60)]
    _assert_same_bits(_both(_problem(chain, targets, restarts=3)))


@pytest.mark.parametrize(("iterations", "restarts", "patience"),
                         [(0, 0, 1), (1, 0, 1), (2, 1, 1), (5, 3, 2), (300, 0, 10)])
def test_lanes_give_the_kernels_bits_with_few_iterations(panda, iterations, restarts,
                                                         patience):
    rng = np.random.default_rng(iterations)
    goal = panda.forward(panda.random_q(50, rng))
    problem = _problem(panda, goal, max_iterations=iterations, restarts=restarts,
                       patience=patience)
    _assert_same_bits(_both(problem))


def test_lanes_run_a_range_and_leave_the_other_rows(panda):
    rng = np.random.default_rng(21)
    goal = panda.forward(panda.random_q(40, rng))
    problem = _problem(panda, goal, rng=np.random.default_rng(2))
    _assert_same_bits(_both(problem, start=13, stop=31))
    _assert_same_bits(_both(problem, start=7, stop=7))


def test_lanes_give_the_kernels_bits_on_degenerate_targets():
    """Targets at the base, on the tip's start, at 1e6 and the weights at their ends;
    a damping floor of zero."""
    chain = seven_dof_arm()
    tip = chain.forward(chain.middle).position
    targets = np.array([[0.0, 0.0, 0.0], tip, [1e6, -1e6, 3e5], tip * 1e-9, [0.0, 0.0, -1.0]])
    for w_pos, w_rot in ((1.0, 1.0), (0.0, 1.0), (1e10, 1e-10)):
        target = Frame(np.tile([0.0, 0.0, 0.0, 1.0], (5, 1)), targets)
        problem = _problem(chain, target, position_weight=w_pos, orientation_weight=w_rot,
                           restarts=2)
        for lam in (0.0, 1e-9):
            _assert_same_bits(_both(problem, lam=lam))


_LARGE_LM_CALL = textwrap.dedent("""
    import json, sys
    import numpy as np
    import limbik
    from limbik.solvers import _joint_problem as jp
    arm = limbik.load_urdf(sys.argv[1], "panda_link0", "panda_hand_tcp")
    goal = arm.forward(arm.random_q(300, np.random.default_rng(4)))
    sol = limbik.jacobian_ik(arm, goal)
    print(json.dumps({"lanes": jp._LM_RANGE.interpreted_elements,
                      "q": sol.q.tobytes().hex(), "positions": sol.positions.tobytes().hex(),
                      "iterations": sol.iterations.tolist(), "reached": sol.reached.tolist()}))
""")


def test_a_large_first_call_runs_the_lanes_with_the_kernels_bits(panda, tmp_path):
    """A 300-target pose batch in a process with an empty cache runs on the lanes while
    the kernel compiles, and gives the compiled kernel's answer."""
    from conftest import PANDA_URDF, SHARED_DATA

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    env.pop("LIMBIK_BACKGROUND_COMPILE", None)
    done = subprocess.run([sys.executable, "-c", _LARGE_LM_CALL, str(SHARED_DATA / PANDA_URDF)],
                          env=env, capture_output=True, text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["lanes"] == 300
    goal = panda.forward(panda.random_q(300, np.random.default_rng(4)))
    compiled = limbik.jacobian_ik(panda, goal)
    assert bytes.fromhex(found["q"]) == compiled.q.tobytes()
    assert bytes.fromhex(found["positions"]) == compiled.positions.tobytes()
    assert found["iterations"] == compiled.iterations.tolist()
    assert found["reached"] == compiled.reached.tolist()
