"""Tiered first calls: the Python source of a range kernel gives the compiled kernel's bits,
runs while the kernel compiles in the background, and never outlives it wrongly."""

from __future__ import annotations

import importlib
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

import limbik
from chains import spatial_arm
from limbik import Frame, _tiered
from limbik._tiered import (
    CHILD_SWITCH,
    ENVIRONMENT_SWITCH,
    TieredRangeKernel,
    compile_small_calls,
    interpreted_elements,
    python_source,
    wait_for_compilations,
)
from limbik.solvers import _jacobian_kernels as jk
from limbik.solvers import _joint_kernels as k
from limbik.solvers._joint_problem import joint_problem
from limbik.solvers.constraints import Cone, EllipticalCone, Hinge

ROOT = Path(__file__).resolve().parents[1]


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
        q0 = chain.random_q(5, rng) if trial % 3 else None
        if trial == 4:  # far beyond a turn on the unlimited joint (int64 overflows there)
            q0[:, 4] = [1e20, -3e19, 7e18, 1e300, -2.5]
        problem = joint_problem(
            chain, target, tolerance=1e-4, angle_tolerance=1e-3, max_iterations=60,
            patience=5, restarts=2, position_weight=1.0, orientation_weight=0.5,
            q0=q0, rng=trial, max_step=0.5)
        results = []
        for run in ("compiled", "python"):
            outs = problem.outputs()
            tiered, _variant, arguments = problem.serial_call(method, lam, cutoff, outs)
            args = arguments()
            if run == "compiled":
                tiered.kernel(0, 5, *args)
            else:
                with np.errstate(all="ignore"):
                    python_source(tiered.kernel)(0, 5, *args)
            results.append(outs)
        for compiled, python in zip(*results, strict=True):
            assert compiled.dtype == python.dtype
            assert compiled.tobytes() == python.tobytes()


class _PythonOnly:
    """Stands in for a tiered kernel and always runs its Python source."""

    def __init__(self, tiered):
        self.source = python_source(tiered.kernel)

    def __call__(self, variant, start, stop, args, *, interpretable=True):
        with np.errstate(all="ignore"):
            return self.source(start, stop, *args)

    def batch(self, variant, count, arguments, *, smallest, interpretable=True):
        return self(variant, 0, count, arguments(), interpretable=interpretable)


def _same_solutions(a, b):
    for field in ("positions", "reached", "error", "iterations"):
        x, y = np.asarray(getattr(a, field)), np.asarray(getattr(b, field))
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field


def test_python_source_gives_fabriks_bits(monkeypatch):
    """Chains of 2 to 7 joints, one or a batch of 2 to 6, free and with cones, elliptical
    cones (carried and seed frames), hinges, root frames, a free root or a last-bone
    direction, reachable or not: the Python source of the chain driver gives the compiled
    driver's bits."""
    rng = np.random.default_rng(11)
    cases = []
    for trial in range(240):
        n = int(rng.integers(2, 8))
        batch = () if trial % 3 else (int(rng.integers(2, 7)),)
        chain = np.cumsum(rng.normal(size=(*batch, n, 3)), axis=-2)
        kw = {}
        kind = trial % 6
        if kind == 1:
            kw["constraints"] = [Cone(rng.uniform(0.2, 1.5)) for _ in range(n - 1)]
        elif kind == 2:
            kw["constraints"] = [EllipticalCone(*rng.uniform(0.2, 1.2, size=4))
                                 for _ in range(n - 1)]
            kw["cone_frames"] = "seed" if trial % 4 else "carried"
        elif kind == 3:
            kw["constraints"] = [Hinge(np.r_[rng.normal(size=2), 0.0], -rng.uniform(0.1, 2),
                                       rng.uniform(0.1, 2)) for _ in range(n - 1)]
        elif kind == 4:
            kw["fixed_root"] = False
        elif kind == 5:
            kw["direction"] = rng.normal(size=(*batch, 3))
        if kind in (1, 2, 3) and trial % 2 and not batch:
            kw["root_frame"] = Frame(rng.normal(size=4), chain[0])
        cases.append((chain, rng.normal(scale=2.5, size=(*batch, 3)), kw))
    compiled = [limbik.fabrik(chain, target, **kw) for chain, target, kw in cases]
    module = importlib.import_module("limbik.solvers.fabrik")  # (the package exports a
    monkeypatch.setattr(module, "_CHAIN_RANGE", _PythonOnly(module._CHAIN_RANGE))  # function)
    for (chain, target, kw), expected in zip(cases, compiled, strict=True):
        _same_solutions(limbik.fabrik(chain, target, **kw), expected)


def test_python_source_gives_fabrik_trees_bits(monkeypatch):
    """Y-shaped trees with two effectors, one or a batch of 2 to 6 goal pairs, free or
    with cones, fixed or free root."""
    rng = np.random.default_rng(12)
    parents = [-1, 0, 1, 2, 3, 2, 5]
    cases = []
    for trial in range(60):
        batch = () if trial % 3 else (int(rng.integers(2, 7)),)
        pose = np.cumsum(rng.normal(scale=0.7, size=(7, 3)), axis=0)
        constraints = ([Cone(rng.uniform(0.3, 1.5)) for _ in range(6)] if trial % 2
                       else None)
        tree = limbik.FabrikTree(parents, pose, constraints=constraints)
        goals = {4: rng.normal(scale=2.5, size=(*batch, 3)),
                 6: rng.normal(scale=2.5, size=(*batch, 3))}
        cases.append((tree, goals, {"fixed_root": trial % 3 != 0}))
    compiled = [tree.solve(goals, **kw) for tree, goals, kw in cases]
    module = importlib.import_module("limbik.solvers.fabrik_tree")
    monkeypatch.setattr(module, "_TREE_RANGE", _PythonOnly(module._TREE_RANGE))
    for (tree, goals, kw), expected in zip(cases, compiled, strict=True):
        _same_solutions(tree.solve(goals, **kw), expected)


@njit
def _hypot_all(x, y, out):  # pragma: no cover - compiled
    for i in range(x.size):
        out[i] = math.hypot(x[i], y[i])


def test_python_source_computes_hypot_as_compiled_code():
    """Compiled ``math.hypot`` is the C library's; Python's own can differ in the last bit
    (about once in 10⁴ FABRIK ellipse projections), so the Python source uses the C one."""
    from limbik._tiered import _COMPILED_MATH

    rng = np.random.default_rng(13)
    x = rng.normal(size=200_000) * np.exp(rng.uniform(-30, 30, size=200_000))
    y = rng.normal(size=200_000) * np.exp(rng.uniform(-30, 30, size=200_000))
    compiled = np.empty_like(x)
    _hypot_all(x, y, compiled)
    python = np.array([_COMPILED_MATH.hypot(a, b) for a, b in zip(x.tolist(), y.tolist(),
                                                                  strict=True)])
    assert python.tobytes() == compiled.tobytes()


@pytest.mark.parametrize("small_calls_compile", [True, False],
                         ids=["in the background", "not at all"])
def test_a_python_error_puts_in_place_rows_back(monkeypatch, small_calls_compile):
    """An element the Python source cannot finish is solved again by the compiled kernel
    from its original row (compiled then in the foreground where small calls compile
    nothing)."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)

    def halve_then_invert_range(start, stop, x):  # pragma: no cover - compiled
        for i in range(start, stop):
            x[i, 0] = x[i, 0] / 2.0
            x[i, 1] = 1.0 / float(x[i, 1])

    kernel = njit(error_model="numpy")(halve_then_invert_range)
    tiered = TieredRangeKernel(kernel, in_place=(0,))
    x = np.array([[8.0, 2.0], [6.0, 0.0], [4.0, 4.0]])
    with compile_small_calls(small_calls_compile):
        tiered(None, 0, 3, (x,))
    np.testing.assert_array_equal(x, [[4.0, 0.5], [3.0, np.inf], [2.0, 0.25]])
    if not small_calls_compile:
        assert tiered.interpreted_elements == 1
        assert len(kernel.signatures) == 1


def test_calls_return_the_sum_of_their_elements(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)

    def count_negative_range(start, stop, x):  # pragma: no cover - compiled
        found = 0
        for i in range(start, stop):
            if x[i] < 0.0:
                found += 1
        return found

    tiered = TieredRangeKernel(njit(count_negative_range))
    x = np.array([-1.0, 2.0, -3.0, -4.0])
    assert tiered(None, 0, 4, (x,)) == 3  # while compiling: element by element
    wait_for_compilations()
    assert tiered(None, 0, 4, (x,)) == 3  # compiled


def test_threads_asking_at_once_get_whole_python_sources(monkeypatch):
    """The Python source is built with every compiled helper replaced before any thread
    sees it (a compiled helper without a Python entry point, called from Python, ends the
    process)."""
    from numba.core.dispatcher import Dispatcher

    from limbik import _tiered

    def unreplaced(func):
        names = _tiered._global_names(func.__code__)
        return [n for n in names if isinstance(func.__globals__.get(n), Dispatcher)
                or func.__globals__.get(n) is math or func.__globals__.get(n) is np]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(60):
            monkeypatch.setattr(_tiered, "_sources", {})
            barrier = threading.Barrier(3)
            seen: list[list[str]] = []

            def ask(barrier=barrier, seen=seen):
                barrier.wait()
                seen.append(unreplaced(python_source(jk.lm_solve_range)))

            threads = [threading.Thread(target=ask) for _ in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert seen == [[], [], []]
    finally:
        sys.setswitchinterval(interval)


def test_python_source_gives_the_seed_cones_bits():
    """Directions on the boundary of seed 003's elliptical cone, where the comparisons
    decide: the Python source of the projection gives the compiled bits (``x ** 2`` in
    Python rounds otherwise than ``x * x`` about once in 10³ numbers)."""
    from limbik.solvers import _fabrik_kernels as K

    source = python_source(K.constrain_seed)
    rng = np.random.default_rng(14)
    for _ in range(20_000):
        look = rng.normal(size=3)
        look /= np.linalg.norm(look)
        up = rng.normal(size=3)
        up -= up.dot(look) * look
        up /= np.linalg.norm(up)
        frame = (*look, *up, *np.cross(up, look), *rng.uniform(0.2, 1.2, size=4))
        edge = np.array(K.constrain_seed(*rng.normal(size=3), *frame))
        edge /= np.linalg.norm(edge)
        compiled = K.constrain_seed(*edge, *frame)
        with np.errstate(all="ignore"):
            python = source(*map(np.float64, edge), *map(np.float64, frame))
        assert tuple(map(float, python)) == tuple(map(float, compiled))


def test_calls_allowed_very_many_iterations_wait_for_the_compiled_kernel(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel)
    out = np.zeros(2)
    tiered(None, 0, 2, (np.array([1.0, 4.0]), out), interpretable=False)
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1
    np.testing.assert_array_equal(out, [2.0, 18.0])


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


def test_small_calls_can_run_from_python_source_alone(monkeypatch):
    """With compile_small_calls(False), small calls compile nothing and give the kernel's
    bits; a call over max_interpreted elements still compiles (in the foreground), and
    after that small calls run the kernel."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel, max_interpreted=3)
    x = np.linspace(-2.0, 3.0, 5)
    out = np.zeros(5)
    before = interpreted_elements()
    with compile_small_calls(False):
        for _ in range(2):  # every small call, not only the first
            tiered(None, 1, 4, (x, out))
        assert not _tiered._running
        assert len(kernel.signatures) == 0
        assert tiered.interpreted_elements == 6
        assert interpreted_elements() - before == 6
        tiered(None, 0, 5, (x, out))  # 5 > max_interpreted: compiles
        assert len(kernel.signatures) == 1
        assert tiered.interpreted_elements == 6
        tiered(None, 0, 2, (x, out))  # compiled now: the kernel runs it
        assert tiered.interpreted_elements == 6
    expected = np.zeros(5)
    kernel(0, 5, x, expected)
    assert out.tobytes() == expected.tobytes()
    interpreted = np.zeros(5)
    with compile_small_calls(False):  # a new tiered kernel over the compiled one: no Python
        TieredRangeKernel(kernel)(None, 0, 5, (x, interpreted))
    assert interpreted.tobytes() == expected.tobytes()


def test_up_to_counts_larger_calls_and_batches_as_small(monkeypatch):
    """compile_small_calls(False, up_to=n): calls and batches of up to n elements run from
    the Python source (the kernel's bits, nothing compiled), one over n compiles; calls
    that may run very long (interpretable=False) compile whatever their size."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel, max_interpreted=2)
    x = np.linspace(-2.0, 3.0, 40)
    out = np.zeros(40)
    with compile_small_calls(False, up_to=40):
        tiered(None, 0, 30, (x, out))
        tiered.batch(None, 40, lambda: (x, out), smallest=4)  # 40 >= 2 * smallest
        assert len(kernel.signatures) == 0
        assert tiered.interpreted_elements == 70
    expected = np.zeros(40)
    kernel(0, 40, x, expected)
    assert out.tobytes() == expected.tobytes()

    for size, interpretable in ((41, True), (3, False)):
        fresh = _fresh_range_kernel()
        tiered = TieredRangeKernel(fresh, max_interpreted=2)
        values, results = np.ones(size), np.zeros(size)
        with compile_small_calls(False, up_to=40):
            tiered.batch(None, size, lambda v=values, r=results: (v, r), smallest=1,
                         interpretable=interpretable)
        assert tiered.interpreted_elements == 0
        assert len(fresh.signatures) == 1
        np.testing.assert_array_equal(results, 2.0)


def test_up_to_replaces_max_interpreted(monkeypatch):
    """up_to below max_interpreted: a call between the two compiles."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel, max_interpreted=8)
    with compile_small_calls(False, up_to=2):
        tiered(None, 0, 6, (np.ones(6), np.zeros(6)))
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1


@pytest.mark.parametrize(("enabled", "up_to"), [(True, 5), (False, -1)])
def test_up_to_needs_small_calls_off_and_a_count(enabled, up_to):
    with pytest.raises(ValueError, match="up_to"), compile_small_calls(enabled, up_to=up_to):
        pass


_FABRIK_BATCH = textwrap.dedent("""
    import importlib, json
    import numpy as np
    import limbik
    from limbik._tiered import compile_small_calls
    fabrik = importlib.import_module("limbik.solvers.fabrik")
    rng = np.random.default_rng(3)
    chain = np.cumsum(rng.normal(size=(6, 3)), axis=0)
    with compile_small_calls(False, up_to=64):
        sol = limbik.fabrik(chain, rng.normal(scale=2.0, size=(40, 3)))
    print(json.dumps({"interpreted": fabrik._CHAIN_RANGE.interpreted_elements,
                      "compiled": len(fabrik._CHAIN_RANGE.kernel.signatures),
                      "positions": sol.positions.tolist(), "error": sol.error.tolist()}))
""")


def test_up_to_runs_a_fabrik_batch_from_python_source_with_the_kernel_bits(tmp_path):
    """A 40-target FABRIK batch under up_to=64, in a process with an empty cache, runs
    from the Python source, compiles nothing, and gives the compiled batch's bits."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _FABRIK_BATCH], capture_output=True,
                          text=True, env=env, timeout=300, check=True)
    found = json.loads(done.stdout)
    assert (found["interpreted"], found["compiled"]) == (40, 0)
    rng = np.random.default_rng(3)
    chain = np.cumsum(rng.normal(size=(6, 3)), axis=0)
    compiled = limbik.fabrik(chain, rng.normal(scale=2.0, size=(40, 3)))
    assert np.array(found["positions"]).tobytes() == compiled.positions.tobytes()
    assert np.array(found["error"]).tobytes() == compiled.error.tobytes()


_LARGE_CALL = textwrap.dedent("""
    import importlib, json
    import numpy as np
    import limbik
    fabrik = importlib.import_module("limbik.solvers.fabrik")
    rng = np.random.default_rng(4)
    chains = np.cumsum(rng.normal(size=(200, 5, 3)), axis=1)
    sol = limbik.fabrik(chains, rng.normal(scale=2.0, size=(200, 3)))
    print(json.dumps({"interpreted": fabrik._CHAIN_RANGE.interpreted_elements,
                      "positions": sol.positions.tolist()}))
    from limbik._tiered import wait_for_compilations
    wait_for_compilations()  # the kernel in the cache (a child process may compile it)
""")


def test_a_large_first_call_loads_a_cached_kernel_instead_of_interpreting(tmp_path):
    """A 200-chain first call runs from the Python source on an empty cache, and loads the
    kernel (no Python source) where the on-disk cache holds it: the same positions."""
    def run():
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
        env.pop(ENVIRONMENT_SWITCH, None)
        done = subprocess.run([sys.executable, "-c", _LARGE_CALL], capture_output=True,
                              text=True, env=env, timeout=300, check=True)
        return json.loads(done.stdout)

    cold = run()  # it waits for the compilation: the cache is written
    assert cold["interpreted"] > 0
    warm = run()
    assert warm["interpreted"] == 0
    assert warm["positions"] == cold["positions"]


def test_compile_small_calls_is_restored_after_the_block(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    with compile_small_calls(False):
        with pytest.raises(RuntimeError), compile_small_calls(True):
            raise RuntimeError
        kernel = _fresh_range_kernel()
        tiered = TieredRangeKernel(kernel)
        tiered(None, 0, 2, (np.ones(2), np.zeros(2)))
        assert len(kernel.signatures) == 0  # still off after the inner block
    tiered(None, 0, 2, (np.ones(2), np.zeros(2)))  # on again: compiles in the background
    wait_for_compilations()
    assert len(kernel.signatures) == 1


_TREE_CALL = textwrap.dedent("""
    import json, sys
    import numpy as np
    import limbik
    from limbik._tiered import compile_small_calls
    from limbik.solvers import fabrik_tree
    tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], [[0, 0, 0], [0, 1, 0], [0, 2, 0],
                             [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0], [1.4, 3.4, 0]])
    goals = {4: np.array([-1.0, 3.0, 0.0]), 6: np.array([1.0, 3.2, 0.5])}
    if sys.argv[1] == "batch":  # compiles the kernel and writes it to the cache
        from limbik._tiered import wait_for_compilations
        tree.solve({k: np.tile(v, (200, 1)) for k, v in goals.items()})
        wait_for_compilations()
    else:
        with compile_small_calls(False):
            sol = tree.solve(goals)
        kernel = fabrik_tree._TREE_RANGE
        print(json.dumps({"interpreted": kernel.interpreted_elements,
                          "compiled": len(kernel.kernel.signatures),
                          "positions": sol.positions.tolist()}))
""")


def test_small_calls_that_compile_nothing_load_a_cached_kernel(tmp_path):
    """With small calls compiling nothing, a kernel in Numba's on-disk cache is loaded and
    runs (no Python source); with an empty cache the Python source runs and nothing is
    compiled or cached. The two give the same bits."""
    def tree_call(mode, cache):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        done = subprocess.run([sys.executable, "-c", _TREE_CALL, mode], capture_output=True,
                              text=True, env=env, timeout=300, check=True)
        return json.loads(done.stdout) if mode == "single" else None

    empty, filled = tmp_path / "empty", tmp_path / "filled"
    alone = tree_call("single", empty)
    assert alone["interpreted"] == 1 and alone["compiled"] == 0
    assert not any(p.suffix == ".nbc" and "tree" in p.name for p in empty.rglob("*"))
    tree_call("batch", filled)
    loaded = tree_call("single", filled)
    assert loaded["interpreted"] == 0 and loaded["compiled"] == 1
    assert loaded["positions"] == alone["positions"]


def test_the_first_call_compiles_in_the_foreground_when_switched_off(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_SWITCH, "0")
    kernel = _fresh_range_kernel()
    tiered = TieredRangeKernel(kernel)
    out = np.zeros(3)
    tiered(None, 0, 3, (np.array([1.0, 4.0, 9.0]), out))
    assert tiered.interpreted_elements == 0
    assert len(kernel.signatures) == 1
    np.testing.assert_array_equal(out, [2.0, 18.0, 84.0])


@pytest.mark.parametrize("use_batch", [False, True], ids=["call", "batch"])
def test_a_large_first_call_runs_from_source_within_its_budget(monkeypatch, use_batch):
    """A call over max_interpreted elements runs unpaced from the Python source while the
    kernel compiles, when its projected time fits LARGE_CALL_BUDGET: every element here
    (the kernel's bits); with no budget it runs one element, then waits for the kernel,
    which runs the rest (on every thread for a batch)."""
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    x = np.linspace(-3.0, 5.0, 200)
    expected = np.zeros(200)
    _fresh_range_kernel()(0, 200, x, expected)
    for budget, interpreted in ((60.0, 200), (0.0, 1)):
        monkeypatch.setattr(_tiered, "LARGE_CALL_BUDGET", budget)
        kernel = _fresh_range_kernel()
        tiered = TieredRangeKernel(kernel, max_interpreted=2)
        out = np.zeros(200)
        if use_batch:
            tiered.batch(None, 200, lambda out=out: (x, out), smallest=8)
        else:
            tiered(None, 0, 200, (x, out))
        assert tiered.interpreted_elements == interpreted
        if interpreted == 1:
            assert len(kernel.signatures) == 1  # waited for it
        wait_for_compilations()
        assert out.tobytes() == expected.tobytes()


_FOREGROUND_CALL = textwrap.dedent("""
    import importlib, json, sys, time
    import numpy as np
    import limbik
    from limbik import _tiered
    fabrik = importlib.import_module("limbik.solvers.fabrik")
    if sys.argv[1] == "over budget":
        _tiered.LARGE_CALL_BUDGET = 0.0
    else:  # the source gives up at once, after a child process has started
        _tiered.TieredRangeKernel._run_while_compiling = (
            lambda self, job, start, stop, args, **options: (start, None))
    rng = np.random.default_rng(6)
    chains = np.cumsum(rng.normal(size=(200, 5, 3)), axis=1)
    sol = limbik.fabrik(chains, rng.normal(scale=2.0, size=(200, 3)))
    kernel = fabrik._CHAIN_RANGE
    jobs = list(kernel._jobs.values())
    for job in jobs:
        job.join(60)
    print(json.dumps({
        "interpreted": kernel.interpreted_elements,
        "misses": sum(kernel.kernel.stats.cache_misses.values()),
        "jobs": [[job.in_child, job._cancelled, job.is_alive(), job.error is None]
                 for job in jobs],
        "positions": sol.positions.tobytes().hex()}))
""")


@pytest.mark.parametrize("case", ["over budget", "child cancelled"])
def test_a_large_call_the_source_cannot_run_compiles_here_at_once(tmp_path, case):
    """A large first call whose projected Python time is over the budget after its first
    element starts no child process and compiles the kernel here, in the foreground; one
    that leaves the source while a child has barely started stops the child and does the
    same. Both give the compiled kernel's bits."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    env.pop(ENVIRONMENT_SWITCH, None)
    env.pop(CHILD_SWITCH, None)
    done = subprocess.run([sys.executable, "-c", _FOREGROUND_CALL, case], capture_output=True,
                          text=True, env=env, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["misses"] == 1  # compiled in this process
    if case == "over budget":
        assert found["interpreted"] == 1 and found["jobs"] == []
    else:
        assert found["interpreted"] == 1
        assert found["jobs"] == [[True, True, False, True]]  # cancelled, ended, no error
    rng = np.random.default_rng(6)
    chains = np.cumsum(rng.normal(size=(200, 5, 3)), axis=1)
    compiled = limbik.fabrik(chains, rng.normal(scale=2.0, size=(200, 3)))
    assert bytes.fromhex(found["positions"]) == compiled.positions.tobytes()


_MARKER_OF = textwrap.dedent("""
    import importlib
    import numpy as np
    from limbik import _tiered
    fabrik = importlib.import_module("limbik.solvers.fabrik")
    markers = []
    class Record(_tiered._Compilation):  # the signature of the first call's job
        def __init__(self, kernel, signature):
            markers.append(_tiered._compiling_marker(kernel, signature))
            raise RuntimeError("not compiling")
    _tiered._Compilation = Record
    chain = np.c_[np.arange(5.0), np.zeros(5), np.zeros(5)]
    try:
        fabrik.fabrik(chain, [1.5, 2.5, 1.0])
    except RuntimeError:
        pass
    print(markers[0])
""")

_WAITS_ELSEWHERE = textwrap.dedent("""
    import importlib, json, sys
    import numpy as np
    import limbik
    fabrik = importlib.import_module("limbik.solvers.fabrik")
    chain = np.c_[np.arange(5.0), np.zeros(5), np.zeros(5)]
    first = limbik.fabrik(chain, [1.5, 2.5, 1.0])
    job = next(iter(fabrik._CHAIN_RANGE._jobs.values()))
    print(json.dumps({"elsewhere": job._elsewhere is not None,
                      "child": job._child is not None, "alive": job.is_alive()}), flush=True)
    sys.stdin.readline()  # the lock's holder lets go
    job.join(60)
    second = limbik.fabrik(chain, [1.5, 2.5, 1.0])
    print(json.dumps({"obtained": job.obtained, "alive": job.is_alive(),
                      "same": first.positions.tobytes() == second.positions.tobytes(),
                      "signatures": len(fabrik._CHAIN_RANGE.kernel.signatures)}))
""")


@pytest.mark.skipif(os.name != "posix", reason="the lock file needs fcntl")
def test_a_process_waits_for_another_process_compiling_the_same_kernel(tmp_path):
    """While another process holds a kernel's lock file (its child compiling), a first
    call starts no child of its own but waits for that one; where that gave nothing, the
    next call compiles here, with the same bits."""
    import fcntl

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    env.pop(ENVIRONMENT_SWITCH, None)
    env.pop(CHILD_SWITCH, None)
    marker = subprocess.run([sys.executable, "-c", _MARKER_OF], capture_output=True,
                            text=True, env=env, timeout=120, check=True).stdout.strip()
    fd = os.open(marker, os.O_CREAT | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    with subprocess.Popen([sys.executable, "-c", _WAITS_ELSEWHERE], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            before = json.loads(proc.stdout.readline())
        finally:
            os.close(fd)  # lets go of the lock
        out, _ = proc.communicate("go\n", timeout=300)
    after = json.loads(out.strip().splitlines()[-1])
    assert before == {"elsewhere": True, "child": False, "alive": True}
    assert after == {"obtained": False, "alive": False, "same": True, "signatures": 1}


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


@pytest.mark.parametrize("in_child", [True, False])
def test_jacobian_ik_first_calls_on_an_empty_cache(panda, tmp_path, in_child):
    """In a fresh process with an empty cache, the first LM calls (a position and a pose
    target) run the Python source and give the compiled kernel's bits; the background
    compilation (in a child process, which this process then loads from the cache, or in
    a thread of its own) writes the cache, and the next process loads it."""
    from conftest import PANDA_URDF, SHARED_DATA

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT / "src"), CHILD_SWITCH: "1" if in_child else "0"}
    env.pop(ENVIRONMENT_SWITCH, None)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CHILD, str(SHARED_DATA / PANDA_URDF)],
                              env=env, capture_output=True, text=True, timeout=300, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, cached = runs
    assert cold["interpreted"] >= 2 and cold["same"] and cold["reached"] == [True, True]
    # a child compiled both: this process loaded them and compiled nothing itself
    assert cold["signatures"] == 2 and cold["cache_misses"] == (0 if in_child else 2)
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
