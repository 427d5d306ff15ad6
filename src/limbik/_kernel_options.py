"""Numba options shared by the compiled kernels."""

from __future__ import annotations

from typing import Any

#: For kernels that allocate nothing: compiled without Numba's reference-counting runtime.
#: The arrays they index and slice then carry no reference counts, which leaves less code
#: to compile (a shorter first call) and gives the same bits. Their callers own every
#: array they pass; a kernel that allocates fails to compile with this option.
NO_REFCOUNT: dict[str, Any] = {"_nrt": False}
