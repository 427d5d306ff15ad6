"""Batches split over threads: a range kernel's chunks run on every core.

Every batched kernel is a *range kernel* ``kernel(start, stop, ...)``, compiled with
``nogil=True``, that solves elements ``start .. stop - 1``. A large batch runs it on
chunks from several Python threads at once: the calling thread and a pool of helpers
take the next chunk until none is left.

- Every element is solved by the same compiled code whichever thread takes it, so
  results are identical for any thread count. A kernel compiled with fast-math flags
  (whose loop the compiler may vectorise) gets chunks that start on multiples of a fixed
  ``granule``, so no element moves between a vector loop and its scalar remainder.
- No parallel driver is compiled: Numba's parallel passes took longer than the kernel
  itself on a first call.
- Numba's threading layer is never started. Calls from several threads at once are
  safe, and so is ``fork`` (a child makes its own helpers): with the GNU OpenMP layer, a
  process that forked after a parallel kernel had run lost every child.

The thread count is :func:`limbik.threads.get_num_threads`.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from limbik.threads import get_num_threads, most_threads

__all__ = ["chunk_size", "run_batch", "run_chunks", "run_range", "thread_count"]

T = TypeVar("T")

#: Chunks per thread: more balances uneven elements better, fewer costs less dispatching.
CHUNKS_PER_THREAD = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def thread_count() -> int:
    """The calling thread's thread count for batched kernels."""
    return get_num_threads()


def _helpers() -> ThreadPoolExecutor:
    """The helper threads of this process, started on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, most_threads() - 1),
                                       thread_name_prefix="limbik batch")
        return _pool


def _forget_helpers() -> None:
    """In a forked child: none of the parent's threads exist there, and the lock may have
    been held by one of them."""
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def chunk_size(count: int, threads: int, smallest: int, granule: int = 1) -> int:
    """Elements per chunk for ``count`` elements on ``threads`` threads.

    Aims at up to :data:`CHUNKS_PER_THREAD` chunks a thread, as many for every thread,
    of at least ``smallest`` elements (waking a helper thread takes tens of
    microseconds, so a chunk should take longer); the size is rounded up to a multiple
    of ``granule``, so the last chunk may be smaller and there may be one chunk fewer.
    At least ``count`` (one chunk: no threads) when ``count`` is under twice
    ``smallest``."""
    most = max(1, count // max(smallest, 1))  # chunks of at least ``smallest``
    chunks = threads * min(CHUNKS_PER_THREAD, most // threads) if most >= threads else most
    size = max(1, math.ceil(count / chunks))
    return math.ceil(size / granule) * granule


def run_chunks(start: int, stop: int, size: int, threads: int,
               make_worker: Callable[[], Callable[[int, int], T]]) -> list[T]:
    """Run a range kernel over elements ``start .. stop - 1`` on ``threads`` threads.

    ``make_worker()`` is called once in each thread that takes part and returns
    ``work(begin, end)``, which solves those elements (with that thread's own scratch
    space) and releases the interpreter lock meanwhile. The calling thread and up to
    ``threads - 1`` helpers take chunks of ``size`` elements in turn until none is
    left; with one chunk, or one thread, the calling thread runs alone. Returns each
    chunk's result, in no particular order. An exception in any chunk is raised once
    every thread has stopped.
    """
    chunks = math.ceil(max(0, stop - start) / size)
    if threads <= 1 or chunks <= 1:
        work = make_worker()
        return [work(begin, min(stop, begin + size)) for begin in range(start, stop, size)]
    taken = itertools.count()  # next() on it is atomic under the interpreter lock
    failed = threading.Event()

    def drain() -> list[T]:
        work = make_worker()
        results = []
        try:
            while not failed.is_set():
                chunk = next(taken)
                if chunk >= chunks:
                    break
                begin = start + chunk * size
                results.append(work(begin, min(stop, begin + size)))
        except BaseException:
            failed.set()  # the others stop after their current chunk
            raise
        return results

    helpers = _helpers()
    futures: list[Future[list[T]]] = []
    for _ in range(min(threads, chunks) - 1):
        try:
            futures.append(helpers.submit(drain))
        except RuntimeError:  # the interpreter is shutting down: the calling thread goes on
            break
    error: BaseException | None = None
    results: list[T] = []
    try:
        results = drain()
    except BaseException as exc:
        error = exc
    for future in futures:
        if future.cancel():  # still queued behind other work: nothing left for it
            continue
        try:
            results.extend(future.result())
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error
    return results


def run_range(kernel: Any, count: int, arguments: Callable[[], tuple[Any, ...]], *,
              smallest: int, granule: int = 1, start: int = 0) -> list[Any]:
    """``kernel(begin, end, *arguments())`` over elements ``start .. count - 1`` on every
    thread; ``arguments()`` is called once in each thread that takes part (scratch space
    of its own, where the kernel needs it). Chunks as in :func:`chunk_size`. A kernel
    that has compiled nothing yet is first called on an empty range on the calling
    thread, so it compiles (or loads from the cache) once. Chunks start at ``start``
    plus multiples of the chunk size (a multiple of ``granule``). Returns each chunk's
    result, in no particular order."""
    left = count - start
    if left < 2 * smallest:  # one chunk: the calling thread alone
        return [kernel(start, count, *arguments())]
    if not getattr(kernel, "overloads", True):
        kernel(start, start, *arguments())
    threads = thread_count()

    def worker() -> Callable[[int, int], Any]:
        args = arguments()
        return lambda begin, end: kernel(begin, end, *args)

    return run_chunks(start, count, chunk_size(left, threads, smallest, granule), threads,
                      worker)


def run_batch(kernel: Any, count: int, arguments: Callable[[], tuple[Any, ...]], *,
              smallest: int, granule: int = 1) -> Any:
    """:func:`run_range` over every element; returns the sum of the chunks' results, or
    None for a kernel that returns nothing."""
    total = None
    for result in run_range(kernel, count, arguments, smallest=smallest, granule=granule):
        if result is not None:
            total = result if total is None else total + result
    return total
