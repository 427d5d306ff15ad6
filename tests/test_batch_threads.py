"""Batches over threads: every element once, errors raised, several callers at once,
forks, and Numba's threading layer never started (so no layer's limits apply)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import limbik
from limbik._runtime.batch_threads import chunk_size, run_chunks, run_range


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_every_element_is_solved_once_in_chunks_of_the_size_asked(threads):
    rng = np.random.default_rng(threads)
    for _ in range(40):
        start = int(rng.integers(0, 50))
        stop = start + int(rng.integers(0, 400))
        size = int(rng.integers(1, 60))
        seen = np.zeros(stop, dtype=np.int64)
        lock = threading.Lock()

        def worker(seen=seen, lock=lock):
            def work(begin, end):
                with lock:
                    seen[begin:end] += 1
                return end - begin
            return work

        results = run_chunks(start, stop, size, threads, worker)
        assert sum(results) == stop - start
        assert np.all(seen[start:] == 1) and not np.any(seen[:start])
        assert all(0 < r <= size for r in results)


def test_chunks_are_even_multiples_of_the_granule_and_never_under_the_smallest():
    from limbik._runtime.batch_threads import CHUNKS_PER_THREAD

    for count in (1, 100, 4095, 4097, 8191, 8192, 9000, 10**6):
        for threads in (1, 2, 16):
            for smallest, granule in ((4096, 1024), (16, 1), (256, 1)):
                size = chunk_size(count, threads, smallest, granule)
                chunks = -(-count // size)
                assert size % granule == 0
                assert chunks <= threads * CHUNKS_PER_THREAD
                if count >= smallest:
                    assert size >= smallest
                if count < 2 * smallest:
                    assert chunks == 1
                if granule == 1 and chunks > 1:  # nearly equal: the last is at most one short
                    assert count - (chunks - 1) * size >= size - chunks
                if granule == 1 and chunks >= threads > 1:  # about as many for every thread
                    assert chunks % threads in (0, threads - 1)


def test_an_error_in_a_chunk_is_raised_after_every_thread_stops():
    running = []

    def worker():
        def work(begin, end):
            running.append(threading.get_ident())
            if begin == 30:
                raise ValueError("chunk 30")
            return end - begin
        return work

    with pytest.raises(ValueError, match="chunk 30"):
        run_chunks(0, 200, 10, 4, worker)
    # the pool still works afterwards
    assert sum(run_chunks(0, 50, 10, 4, lambda: lambda b, e: e - b)) == 50


def test_a_kernel_without_overloads_compiles_on_the_calling_thread_first():
    calls = []

    class Kernel:
        def __init__(self):
            self.overloads = {}  # as a Numba dispatcher that has compiled nothing

        def __call__(self, begin, end, out):
            calls.append((threading.get_ident(), begin))
            out[begin:end] = 1.0

    out = np.zeros(3000)
    with_threads = limbik.get_num_threads()
    run_range(Kernel(), 3000, lambda: (out,), smallest=100)
    assert np.all(out == 1.0)
    if with_threads > 1:
        assert calls[0] == (threading.get_ident(), 0)


def test_the_thread_count_belongs_to_the_calling_thread():
    if limbik.get_num_threads() < 2:
        pytest.skip("one thread only (NUMBA_NUM_THREADS=1 or one core)")
    seen = []

    def other():
        limbik.set_num_threads(1)
        seen.append(limbik.get_num_threads())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [1] and limbik.get_num_threads() > 1


def test_batches_from_several_threads_at_once_match_one_at_a_time():
    rng = np.random.default_rng(3)
    chains = np.cumsum(rng.normal(size=(3000, 6, 3)), axis=1)
    goals = rng.normal(scale=2.0, size=(3000, 3))
    arm = limbik.JointChain.from_points(chains[0, :4])
    arm_goals = arm.forward(arm.random_q(200, rng)).position
    solves = [lambda: limbik.fabrik(chains, goals).positions,
              lambda: limbik.two_bone(np.zeros(3), goals * 0.3, 0.5, 0.4).positions,
              lambda: limbik.jacobian_ik(arm, arm_goals).q,
              lambda: limbik.ccd(chains, goals).positions]
    alone = [solve() for solve in solves]
    got: dict[int, list] = {}

    def run(k):
        got[k] = [solves[(k + i) % len(solves)]() for i in range(2 * len(solves))]

    ts = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k, results in got.items():
        for i, result in enumerate(results):
            assert result.tobytes() == alone[(k + i) % len(solves)].tobytes()


CHILD = textwrap.dedent("""
    import multiprocessing, sys
    import numpy as np
    import limbik

    def solve():
        rng = np.random.default_rng(0)
        chains = np.cumsum(rng.normal(size=(2000, 6, 3)), axis=1)
        goals = rng.normal(scale=2.0, size=(2000, 3))
        a = limbik.fabrik(chains, goals).positions
        b = limbik.two_bone(np.zeros(3), rng.normal(size=(20000, 3)), 0.8, 0.7).positions
        return float(a.sum() + b.sum())

    def child(queue):
        queue.put(solve())

    if __name__ == "__main__":
        limbik.set_num_threads(2)
        here = solve()
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        proc = context.Process(target=child, args=(queue,))
        proc.start()
        there = queue.get(timeout=120)
        proc.join(120)
        import numba
        try:
            layer = numba.threading_layer()
        except ValueError:
            layer = None
        print("LAYER", layer, "EXIT", proc.exitcode, "SAME", here == there)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
@pytest.mark.parametrize("layer", ["omp", "workqueue"])
def test_a_forked_child_solves_batches_under_every_numba_threading_layer(tmp_path, layer):
    """Batches run on limbik's own threads: Numba's threading layer is never started, so
    GNU OpenMP's fork rule (a child of a process that used it dies) cannot apply."""
    script = tmp_path / "fork_child.py"
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ,
                                            "NUMBA_THREADING_LAYER": layer,
                                            "NUMBA_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LAYER None EXIT 0 SAME True" in done.stdout, done.stdout + done.stderr[-2000:]


def test_a_batch_during_interpreter_shutdown_runs_on_the_calling_thread(tmp_path):
    """Python stops thread pools before atexit functions run; a batch there still works."""
    script = tmp_path / "at_exit.py"
    script.write_text(textwrap.dedent("""
        import atexit
        import numpy as np
        import limbik

        chains = np.cumsum(np.random.default_rng(0).normal(size=(5000, 6, 3)), axis=1)
        goals = np.zeros((5000, 3))
        first = limbik.fabrik(chains, goals).positions

        def late():
            again = limbik.fabrik(chains, goals).positions
            print("AT EXIT SAME", again.tobytes() == first.tobytes())

        atexit.register(late)
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "AT EXIT SAME True" in done.stdout, done.stdout + done.stderr[-2000:]
