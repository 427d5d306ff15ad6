"""FABRIK drivers: the serial and the parallel driver agree bit for bit, with every kind of
constraint; a single unconstrained solve runs only the serial, unconstrained kernel."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import limbik
from limbik import Cone, EllipticalCone, Frame, Hinge
from limbik.solvers.constraints import Constraint


def mixed_constraints(rng, n_bones):
    """A random mix of free bones, cones, both elliptical methods and hinges."""
    out: list[Constraint | None] = []
    for _ in range(n_bones):
        kind = rng.integers(0, 5)
        if kind == 0:
            out.append(None)
        elif kind == 1:
            out.append(Cone(rng.uniform(0.1, 1.5)))
        elif kind == 2:
            out.append(EllipticalCone(*rng.uniform(0.1, 1.4, 4)))
        elif kind == 3:
            out.append(EllipticalCone(*rng.uniform(0.1, 1.4, 4), method="seed"))
        else:
            axis = np.r_[rng.normal(size=2), 0.0]
            out.append(Hinge(axis, -rng.uniform(0.0, 2.0), rng.uniform(0.0, 2.0)))
    return out


def chains(rng, batch, n):
    steps = rng.normal(size=(batch, n - 1, 3))
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(steps, axis=1)], axis=1)


def outputs(solution):
    return [solution.positions, solution.reached, solution.error, solution.iterations]


def on_threads(n, fn):
    before = limbik.get_num_threads()
    limbik.set_num_threads(n)
    try:
        return fn()
    finally:
        limbik.set_num_threads(before)


@pytest.mark.parametrize("cone_frames", ["carried", "seed"])
@pytest.mark.parametrize("fixed_root", [True, False])
def test_serial_and_parallel_drivers_give_the_same_bits(cone_frames, fixed_root):
    """One thread runs the serial range kernels, two the parallel drivers over chunks of
    them; a batch larger than a chunk, constrained or not, gives identical outputs, and
    each element equals its own single solve."""
    from numba import config

    if int(config.NUMBA_NUM_THREADS) < 2:  # type: ignore[attr-defined]
        pytest.skip("Numba started with one thread (NUMBA_NUM_THREADS=1)")
    rng = np.random.default_rng(11)
    root_frame = Frame.look_at([0, 0, 0], [0.3, 0.2, -1.0])
    pos = chains(rng, 37, 7)
    goals = rng.normal(scale=3.0, size=(37, 3))
    tree_goals = rng.normal(scale=2.0, size=(37, 2, 3))
    for constraints in (None, mixed_constraints(rng, 6)):
        kw = dict(constraints=constraints, cone_frames=cone_frames, root_frame=root_frame)
        tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], pos[0], **kw)
        runs = {
            "fabrik": lambda kw=kw: limbik.fabrik(pos, goals, fixed_root=fixed_root, **kw),
            "FabrikTree": lambda tree=tree: tree.solve(tree_goals, fixed_root=fixed_root),
        }
        for name, run in runs.items():
            one = outputs(on_threads(1, run))
            two = outputs(on_threads(2, run))
            for a, b in zip(one, two, strict=True):
                assert a.tobytes() == b.tobytes(), name
        single = limbik.fabrik(pos[5], goals[5], fixed_root=fixed_root, **kw)
        batch = limbik.fabrik(pos, goals, fixed_root=fixed_root, **kw)
        assert single.positions.tobytes() == batch.positions[5].tobytes()
        assert single.error == batch.error[5] and single.iterations == batch.iterations[5]


def test_a_single_unconstrained_solve_compiles_only_the_serial_free_kernel():
    """A single chain and a single tree call the serial kernels with ``limits=None`` (no
    constraint code), and a batch spread over threads calls the same kernels with the same
    types; a constrained chain passes its limits."""
    code = """
import json
import numpy as np
import limbik
from limbik.solvers.fabrik import _kernels as K
chain = np.c_[np.arange(6.0), np.zeros(6), np.zeros(6)]
limbik.fabrik(chain, [2.0, 3.0, 1.0])
tree = limbik.FabrikTree([-1, 0, 1, 2], chain[:4])
tree.solve({3: [1.0, 1.0, 0.5]})
limbik.fabrik(np.broadcast_to(chain, (1000, 6, 3)), np.full((1000, 3), 2.0))
tree.solve({3: np.full((300, 3), 0.5)})
free = {"chain": [str(s[12]) for s in K.solve_chain_range.signatures],
        "tree": [str(s[13]) for s in K.solve_tree_range.signatures]}
limbik.fabrik(chain, [2.0, 3.0, 1.0], constraints=[None, limbik.Cone(0.5)] + [None] * 3)
free["constrained"] = [str(s[12]) for s in K.solve_chain_range.signatures]
print(json.dumps(free))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["chain"] == ["none"] and got["tree"] == ["none"]
    assert len(got["constrained"]) == 2 and got["constrained"][1].startswith("Tuple(")
