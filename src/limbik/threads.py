"""How many threads the batched kernels use.

Batched solvers and forward kinematics split their batch over threads (Numba
``parallel=True``, one batch element per iteration), so results are identical for
any thread count. By default they use every core. Set the count for this process
with :func:`set_num_threads`, or before Python starts with the environment variable
``NUMBA_NUM_THREADS`` (which also caps what :func:`set_num_threads` may ask for).
"""

from __future__ import annotations

import operator

__all__ = ["get_num_threads", "set_num_threads"]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (1 ≤ n ≤ the cores Numba started with) in the calling thread's kernels."""
    import numba
    from numba import config

    from limbik.errors import InvalidInputError

    limit = int(getattr(config, "NUMBA_NUM_THREADS"))  # noqa: B009 (set at import time)
    try:
        count = operator.index(n)
    except TypeError:
        count = 0
    if isinstance(n, bool) or not 1 <= count <= limit:
        raise InvalidInputError(f"n must be an integer from 1 to {limit} (NUMBA_NUM_THREADS), "
                                f"got {n!r}", argument="n")
    numba.set_num_threads(count)


def get_num_threads() -> int:
    """The number of threads the calling thread's kernels use."""
    import numba

    return int(numba.get_num_threads())
