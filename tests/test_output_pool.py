"""Large batches write into pooled output memory: reused only once the caller has let go."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import limbik
from limbik import _output_pool as pool
from limbik.skeleton.motion import forward_kinematics

LIMBS = 100_000  # 8.1 MB of two_bone outputs: pooled


@pytest.fixture(autouse=True)
def empty_pool():
    # results of earlier tests that only the garbage collector frees (reference cycles)
    # would give their blocks back in the middle of a test, where a compilation's
    # collection happens to run, and a same-size block could be taken instead
    gc.collect()
    limbik.release_memory()
    yield
    gc.collect()
    limbik.release_memory()


def block_of(array):
    """The pooled block under ``array`` (None for plain memory)."""
    base = array
    while base is not None and not isinstance(base, pool._Owner):
        base = getattr(base, "base", None)
    return None if base is None else base.block


def solve(goals):
    return limbik.two_bone(np.zeros(3), goals, 0.8, 0.7, pole=[0.0, 0.0, 1.0])


def goals(seed, count=LIMBS):
    return np.random.default_rng(seed).normal(size=(count, 3))


def test_dropped_results_are_written_again_in_place():
    first = solve(goals(0))
    block = block_of(first.positions)
    assert block is not None and block_of(first.error) is None  # 0.8 MB: plain memory
    del first
    second = solve(goals(1))
    assert block_of(second.positions) is block
    fresh = solve(goals(1))  # `second` is alive: another block, same bits
    assert block_of(fresh.positions) is not block
    for name in ("positions", "error", "reached"):
        assert getattr(second, name).tobytes() == getattr(fresh, name).tobytes()


def test_a_live_view_keeps_its_memory():
    first = solve(goals(0))
    row = first.positions[1234]
    flags = first.reached[::7]
    kept_row, kept_flags = row.copy(), flags.copy()
    del first
    for seed in range(1, 6):
        solve(goals(seed))
        assert np.array_equal(row, kept_row) and np.array_equal(flags, kept_flags)


def test_outputs_are_aligned_disjoint_and_writeable():
    result = solve(goals(0, 10 * LIMBS))
    arrays = (result.positions, result.error, result.reached)
    assert all(a.flags.writeable for a in arrays)
    assert result.positions.ctypes.data % 64 == 0 and result.error.ctypes.data % 64 == 0
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.may_share_memory(a, b)


def test_a_kept_small_array_does_not_keep_the_large_one():
    """Each large array has its own block: keeping a result's errors lets its positions'
    memory be written again."""
    first = solve(goals(0, 10 * LIMBS))
    positions_block, error_block = block_of(first.positions), block_of(first.error)
    error = first.error
    kept = error.copy()
    del first
    second = solve(goals(1, 10 * LIMBS))
    assert block_of(second.positions) is positions_block
    assert block_of(second.error) is not error_block
    assert np.array_equal(error, kept)


def test_small_batches_are_not_pooled():
    result = solve(goals(0, 1000))
    assert all(block_of(a) is None for a in (result.positions, result.error, result.reached))
    del result
    assert pool._returned == [] and pool._free == []
    assert limbik.release_memory() == 0


def test_release_memory_gives_back_only_free_blocks():
    held = solve(goals(0))
    dropped = solve(goals(1))
    size = dropped.positions.nbytes + 64
    del dropped
    assert limbik.release_memory() == size
    assert limbik.release_memory() == 0
    assert np.array_equal(held.positions, solve(goals(0)).positions)
    block = block_of(held.positions)
    del held  # its block comes back to the pool when its result is gone
    assert block_of(solve(goals(2)).positions) is block


def test_the_pool_keeps_at_most_keep_blocks_and_limit_bytes():
    held = [solve(goals(seed)) for seed in range(pool.KEEP + 3)]
    blocks = [block_of(result.positions) for result in held]
    assert len({id(block) for block in blocks}) == len(held)  # each live result its own
    del held
    free = pool._free + pool._returned
    assert len(free) == pool.KEEP and all(any(f is b for b in blocks) for f in free)
    # the oldest leave first: a new size is kept, by count and by bytes
    newer = solve(goals(0, 2 * LIMBS))
    newer_block = block_of(newer.positions)
    del newer
    assert any(b is newer_block for b in pool._free + pool._returned)
    assert len(pool._free + pool._returned) == pool.KEEP
    big = solve(goals(0, 6 * 10**6))  # 432 MB of positions and 48 MB of errors
    big_blocks = [block_of(big.positions), block_of(big.error)]
    del big
    free = pool._free + pool._returned
    assert sum(block.size for block in free) <= pool.LIMIT
    assert all(any(b is f for f in free) for b in big_blocks)


def test_alternating_sizes_each_reuse_their_memory():
    """Two batch sizes in turn (a pipeline of two solvers): each writes into its own
    block again."""
    first = {n: block_of(solve(goals(0, n)).positions) for n in (LIMBS, 2 * LIMBS)}
    for seed in range(3):
        for n in (LIMBS, 2 * LIMBS):
            assert block_of(solve(goals(seed, n)).positions) is first[n]


def test_concurrent_callers_never_share_memory():
    expected = {seed: solve(goals(seed)).positions.copy() for seed in range(4)}
    targets = {seed: goals(seed) for seed in range(4)}
    errors = []

    def caller(seed):
        limbik.set_num_threads(1)  # this thread's count: the callers share the cores
        try:
            for _ in range(8):
                result = solve(targets[seed])
                result_again = solve(targets[seed])
                assert result.positions.tobytes() == expected[seed].tobytes()
                assert result_again.positions.tobytes() == expected[seed].tobytes()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors


@pytest.mark.parametrize("family", ["fabrik", "ccd", "forward kinematics"])
def test_other_families_reuse_their_memory_and_keep_their_bits(family):
    rng = np.random.default_rng(3)
    if family == "forward kinematics":
        parents = np.r_[-1, np.arange(29)]
        rot = rng.normal(size=(6000, 30, 4))
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        trans = rng.normal(size=(6000, 30, 3))

        def run():
            return forward_kinematics(parents, rot, trans)
    else:
        chains = np.cumsum(rng.normal(size=(40_000, 6, 3)), axis=1)
        goals_ = rng.normal(scale=3.0, size=(40_000, 3))
        solver = getattr(limbik, family)

        def run():
            solution = solver(chains, goals_)
            return solution.positions, solution.error, solution.reached, solution.iterations

    first = run()
    block = block_of(first[0])
    assert block is not None
    reference = [a.copy() for a in first]
    del first
    again = run()
    assert block_of(again[0]) is block
    assert all(a.tobytes() == b.tobytes() for a, b in zip(again, reference, strict=True))


def test_odd_sizes_are_carved_exactly():
    specs = [((1_000_003,), np.bool_), ((333_337, 3), np.float64), ((5,), np.int64)]
    arrays = pool.empty_arrays(*specs)
    for array, (shape, dtype) in zip(arrays, specs, strict=True):
        assert array.shape == shape and array.dtype == dtype
    assert arrays[1].ctypes.data % 64 == 0  # the pooled one (the others: np.empty)
    assert arrays[0].base is None and arrays[2].base is None
    arrays[0][:] = True
    arrays[1][:] = -1.5
    arrays[2][:] = 7
    assert arrays[0].all() and (arrays[1] == -1.5).all() and (arrays[2] == 7).all()
    small = pool.empty_arrays(((10,), np.float64), ((10,), np.bool_))
    assert [a.shape for a in small] == [(10,), (10,)]
    block = block_of(arrays[1])
    assert block is not None and block_of(arrays[0]) is None and block_of(arrays[2]) is None
    del arrays
    assert block_of(pool.empty_arrays(((333_337, 3), np.float64))[0]) is block


REENTRY = """
import gc, numpy as np, limbik
goals = np.random.default_rng(0).normal(size=(200_000, 3))

class CallsBack:  # a reference cycle: freed by the collector, at any allocation
    def __init__(self, what):
        self.me, self.what = self, what
    def __del__(self):
        if self.what == "release":
            limbik.release_memory()
        else:
            limbik.two_bone(np.zeros(3), goals, 0.8, 0.7)

for n in range(1, 200):
    gc.collect()
    CallsBack("release" if n % 2 else "solve")
    gc.set_threshold(n % 50 + 1)
    limbik.two_bone(np.zeros(3), goals, 0.8, 0.7)
print("done")
"""


def test_a_finalizer_calling_limbik_during_a_solve_does_not_deadlock():
    """The collector may run a user's ``__del__`` inside the pool's own code; one that
    releases memory or solves a large batch there must not wait on the pool's lock."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", REENTRY], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "done", run.stderr[-2000:]
