"""Numba options and argument conventions shared by the compiled kernels."""

from __future__ import annotations

from typing import Any

import numpy as np

#: For kernels that allocate nothing: compiled without Numba's reference-counting runtime.
#: The arrays they index and slice then carry no reference counts, which leaves less code
#: to compile (a shorter first call) and gives the same bits. Their callers own every
#: array they pass; a kernel that allocates fails to compile with this option.
NO_REFCOUNT: dict[str, Any] = {"_nrt": False}

#: For compiled helpers called only from other compiled code: Numba builds no Python
#: entry point and no C-callable wrapper for them. Each wrapper is compiled code of its
#: own: two_bone's helpers without theirs shortened its first call by 0.2-0.4 s.
KERNEL_ONLY: dict[str, Any] = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array``, for a kernel input.

    Numba compiles a kernel again for every new combination of argument types, and a
    read-only array is another type than a writable one. Inputs handed to kernels as
    read-only views (no copy) keep one type whatever the caller passed: a broadcast
    array, a frozen class's array or a fresh one.
    """
    view = array.view()
    view.flags.writeable = False
    return view
