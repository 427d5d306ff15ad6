"""How many threads the batched kernels use.

Batched solvers and forward kinematics split their batch into chunks that several
threads solve at once (:mod:`limbik._runtime.batch_threads`); each element is solved by the same
compiled code whichever thread takes it, so results are identical for any thread count.
By default they use every core. Set the count for the calling thread with
:func:`set_num_threads` (for a block, ``with num_threads(n):``), or before Python
starts with the environment variable ``NUMBA_NUM_THREADS`` (which also caps what
:func:`set_num_threads` may ask for).
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Iterator

__all__ = ["get_num_threads", "num_threads", "release_memory", "set_num_threads"]

_local = threading.local()


def most_threads() -> int:
    """The most threads a batch may use: ``NUMBA_NUM_THREADS``, by default the cores."""
    from numba import config

    return int(getattr(config, "NUMBA_NUM_THREADS"))  # noqa: B009 (set at import time)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (1 ≤ n ≤ :func:`most_threads`) in the calling thread's batches."""
    from limbik.errors import InvalidInputError

    limit = most_threads()
    try:
        count = operator.index(n)
    except TypeError:
        count = 0
    if isinstance(n, bool) or not 1 <= count <= limit:
        raise InvalidInputError(f"n must be an integer from 1 to {limit} (NUMBA_NUM_THREADS), "
                                f"got {n!r}", argument="n")
    _local.count = count


def get_num_threads() -> int:
    """The number of threads the calling thread's batches use."""
    count = getattr(_local, "count", None)
    return most_threads() if count is None else int(count)


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[None]:
    """``with num_threads(n):`` the calling thread's batches use ``n`` threads inside the
    block, and its count before is restored after it (also on an exception)."""
    saved = getattr(_local, "count", None)
    set_num_threads(n)
    try:
        yield
    finally:
        if saved is None:
            del _local.count
        else:
            _local.count = saved


def release_memory() -> int:
    """Deprecated: limbik keeps no memory between calls, so there is nothing to give back.

    Returns 0 (bytes released), with a :class:`DeprecationWarning`."""
    import warnings

    warnings.warn("limbik.release_memory() is deprecated: limbik keeps no output memory "
                  "between calls", DeprecationWarning, stacklevel=2)
    return 0
