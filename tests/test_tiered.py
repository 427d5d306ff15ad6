"""Tiered first calls: the Python source of a range kernel gives the compiled kernel's bits,
runs while the kernel compiles in the background, and never outlives it wrongly."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from limbik import Frame, JointChain
from limbik._tiered import (
    ENVIRONMENT_SWITCH,
    TieredRangeKernel,
    python_source,
    wait_for_compilations,
)
from limbik.solvers import _jacobian_kernels as jk
from limbik.solvers import _joint_kernels as k
from limbik.solvers._joint_problem import joint_problem

ROOT = Path(__file__).resolve().parents[1]


def spatial_arm():
    """Six joints: revolute about mixed axes, one prismatic, one continuous (no limits)."""
    return JointChain.from_joints([
        {"type": "revolute", "axis": (0, 0, 1), "lower": -3, "upper": 3},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0, 0, 0.3)}, "lower": -2,
         "upper": 2},
        {"type": "prismatic", "axis": (1, 0, 0), "origin": {"xyz": (0.4, 0, 0)}, "lower": 0,
         "upper": 0.3},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0.1, 0, 0)}, "lower": -2.5,
         "upper": 2.5},
        {"type": "continuous", "axis": (1, 0, 0), "origin": {"xyz": (0.3, 0, 0)}},
        {"type": "revolute", "axis": (0, 1, 0), "lower": -2, "upper": 2},
        {"type": "fixed", "origin": {"xyz": (0.1, 0, 0.05)}},
    ])


#: (method code, damping, cutoff, pose targets?) of every serial driver variant
DRIVERS = [
    (jk.METHOD_LM, 1e-6, 0.0, False),
    (jk.METHOD_LM, 1e-6, 0.0, True),
    (jk.METHOD_TRANSPOSE, 0.05, 1e-6, False),
    (jk.METHOD_PINV, 0.05, 1e-6, True),
    (jk.METHOD_DLS, 0.05, 1e-6, True),
    (jk.METHOD_SVD_DLS, 0.05, 1e-6, False),
    (k.METHOD_CCD, 0.0, 0.0, False),
]


@pytest.mark.parametrize(("method", "lam", "cutoff", "pose"), DRIVERS)
def test_python_source_gives_the_compiled_drivers_bits(method, lam, cutoff, pose):
    """Reachable and unreachable targets, with and without a start, restarts drawn from
    seeds: every output array of the Python source equals the compiled kernel's, bit for
    bit."""
    chain = spatial_arm()
    rng = np.random.default_rng(method * 7 + pose)
    for trial in range(6):
        q_goal = chain.random_q(5, rng)
        goal = chain.forward(q_goal)
        position = goal.position + (rng.normal(scale=0.4, size=(5, 3)) if trial % 2 else 0.0)
        target = Frame(goal.quaternion, position) if pose else position
        problem = joint_problem(
            chain, target, tolerance=1e-4, angle_tolerance=1e-3, max_iterations=60,
            patience=5, restarts=2, position_weight=1.0, orientation_weight=0.5,
            q0=chain.random_q(5, rng) if trial % 3 else None, rng=trial, max_step=0.5)
        results = []
        for run in ("compiled", "python"):
            outs = problem.outputs()
            tiered, _variant, args = problem.serial_call(method, lam, cutoff, outs)
            if run == "compiled":
                tiered.kernel(0, 5, *args)
            else:
                with np.errstate(all="ignore"):
                    python_source(tiered.kernel)(0, 5, *args)
            results.append(outs)
        for compiled, python in zip(*results, strict=True):
            assert compiled.dtype == python.dtype
            assert compiled.tobytes() == python.tobytes()


def _fresh_range_kernel():
    """A new, uncompiled range kernel (not cached): ``out[i] = x[i]² + √|x[i]|``."""

    def square_range(start, stop, x, out):  # pragma: no cover - compiled
        for i in range(start, stop):
            out[i] = x[i] * x[i] + math.sqrt(abs(x[i]))

    return njit(square_range)


def test_first_call_runs_the_python_source_while_the_kernel_compiles(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel)
    x = np.linspace(-2.0, 3.0, 4)
    out = np.zeros(4)
    tiered(None, 0, 4, (x, out))
    assert tiered.interpreted_elements >= 1  # the compiler needs far longer than one element
    wait_for_compilations()
    assert len(kernel.signatures) == 1
    expected = np.zeros(4)
    kernel(0, 4, x, expected)
    assert out.tobytes() == expected.tobytes()
    count = tiered.interpreted_elements
    again = np.zeros(4)
    tiered(None, 0, 4, (x, again))  # compiled now: the kernel runs it
    assert tiered.interpreted_elements == count
    assert again.tobytes() == expected.tobytes()


def test_switched_off_the_first_call_compiles_in_the_foreground(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_SWITCH, "0")
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel)
    out = np.zeros(3)
    tiered(None, 0, 3, (np.array([1.0, 4.0, 9.0]), out))
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1
    np.testing.assert_array_equal(out, [2.0, 18.0, 84.0])


def test_large_calls_wait_for_the_compiled_kernel(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel, max_interpreted=2)
    out = np.zeros(3)
    tiered(None, 0, 3, (np.array([1.0, 4.0, 9.0]), out))
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1
    np.testing.assert_array_equal(out, [2.0, 18.0, 84.0])


def test_an_element_python_cannot_run_goes_to_the_compiled_kernel(monkeypatch):
    """Plain Python floats raise on 1 / 0 where the kernel gives inf: that element (and
    the rest) waits for the compiled kernel, and the outputs are the kernel's."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)

    def reciprocal_range(start, stop, x, out):  # pragma: no cover - compiled
        for i in range(start, stop):
            out[i] = 1.0 / float(x[i])

    kernel = njit(error_model="numpy")(reciprocal_range)
    tiered = TieredRangeKernel(kernel)
    out = np.full(3, -1.0)
    tiered(None, 0, 3, (np.array([2.0, 0.0, 4.0]), out))
    np.testing.assert_array_equal(out, [0.5, np.inf, 0.25])
    assert tiered.interpreted_elements == 1
    assert len(kernel.signatures) == 1


def test_a_compile_error_reaches_the_caller(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)

    def mixed_set_range(start, stop, out):  # pragma: no cover - fails to compile
        for i in range(start, stop):
            out[i] = len({1, "a"})  # a set of mixed types: fine in Python, not in Numba

    tiered = TieredRangeKernel(njit(mixed_set_range))
    out = np.zeros(2)
    try:  # the Python source may answer before the compiler fails
        tiered(None, 0, 2, (out,))
    except TypingError:
        pass
    else:
        np.testing.assert_array_equal(out, [2.0, 2.0])
    wait_for_compilations()
    with pytest.raises(TypingError):
        tiered(None, 0, 2, (out,))


def _compile_and_run_in_child() -> float:
    @njit
    def add_one(x):  # pragma: no cover - compiled
        return x + 1.0

    return add_one(1.0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available here")
def test_fork_during_a_background_compilation_leaves_a_working_child(monkeypatch):
    """A forked child compiles its own kernels: the fork waited for the compiler (whose
    lock the child would otherwise inherit, held)."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    tiered = TieredRangeKernel(_fresh_range_kernel())
    tiered(None, 0, 2, (np.array([1.0, 2.0]), np.zeros(2)))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_compile_and_run_in_child).get(timeout=120) == 2.0


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import limbik
    from limbik._tiered import wait_for_compilations
    from limbik.solvers import _joint_problem as jp
    arm = limbik.load_urdf(sys.argv[1], "panda_link0", "panda_hand_tcp")
    pose = limbik.Frame([0.9, 0.1, 0.3, 0.2], [0.4, 0.1, 0.5])
    first = [limbik.jacobian_ik(arm, t) for t in ([0.4, 0.1, 0.5], pose)]
    interpreted = jp._LM_RANGE.interpreted_elements
    wait_for_compilations()
    later = [limbik.jacobian_ik(arm, t) for t in ([0.4, 0.1, 0.5], pose)]
    stats = jp._LM_RANGE.kernel.stats
    print(json.dumps({
        "interpreted": interpreted,
        "same": all(a.q.tobytes() == b.q.tobytes() and a.positions.tobytes()
                    == b.positions.tobytes() and a.error == b.error for a, b in zip(first, later)),
        "reached": [bool(s.reached) for s in first],
        "signatures": len(jp._LM_RANGE.kernel.signatures),
        "cache_hits": sum(stats.cache_hits.values()),
        "cache_misses": sum(stats.cache_misses.values())}))
""")


def test_jacobian_ik_first_calls_on_an_empty_cache(panda, tmp_path):
    """In a fresh process with an empty cache, the first LM calls (a position and a pose
    target) run the Python source and give the compiled kernel's bits; the background
    compilation writes the cache, and the next process loads it."""
    from conftest import PANDA_URDF, SHARED_DATA

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT / "src")}
    env.pop(ENVIRONMENT_SWITCH, None)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CHILD, str(SHARED_DATA / PANDA_URDF)],
                              env=env, capture_output=True, text=True, timeout=300, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, cached = runs
    assert cold["interpreted"] >= 2 and cold["same"] and cold["reached"] == [True, True]
    assert cold["signatures"] == 2 and cold["cache_misses"] == 2
    assert cached["same"] and cached["signatures"] == 2
    assert cached["cache_hits"] == 2 and cached["cache_misses"] == 0


def test_without_a_thread_the_first_call_compiles_in_the_foreground(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel)
    out = np.zeros(2)
    tiered(None, 0, 2, (np.array([1.0, 4.0]), out))
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1
    np.testing.assert_array_equal(out, [2.0, 18.0])
    wait_for_compilations()  # nothing left behind to wait for
