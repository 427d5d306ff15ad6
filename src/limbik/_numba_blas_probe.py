"""Numba's first compilation in a process without its SciPy probe.

The first compilation in a process (or the first kernel loaded from the cache) imports
Numba's NumPy implementations, and ``numba.np.arraymath`` asks at import whether a BLAS
is there by importing ``scipy.linalg.cython_blas``: all of ``scipy.linalg``, 0.15–0.4 s
on a 2-core machine, though no limbik kernel calls BLAS. The answer only picks how a
compiled ``np.correlate``/``np.convolve`` sums, and whether SciPy is installed answers it
the same way without importing it. So :func:`skip` imports ``arraymath`` with that
module blocked for the length of the import, then sets the probe's answer
(``_HAVE_BLAS``) from the installed packages. Functions that do need BLAS (``np.dot``,
``np.linalg``) import SciPy themselves when they compile, as they always do.

:func:`install` makes Numba's CPU target call :func:`skip` just before it loads those
implementations (``CPUContext.load_additional_registries``), so the import happens
where Numba would make it, inside the first compilation or cache load: an import of
limbik's kernel modules, or a first call that runs a kernel's Python source while the
kernel compiles in the background, does not wait for it.

Both touch private names of Numba; where a release lacks them, or ``arraymath`` is
already imported, nothing changes.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

__all__ = ["install", "skip"]

_PROBED = "scipy.linalg.cython_blas"
_ARRAYMATH = "numba.np.arraymath"


def skip() -> bool:
    """Import ``numba.np.arraymath`` without its BLAS probe; True when this call did."""
    if _ARRAYMATH in sys.modules or sys.modules.get(_PROBED) is not None:
        return False  # done already, or the probe costs nothing: SciPy's BLAS is loaded
    missing = object()
    saved = sys.modules.get(_PROBED, missing)
    sys.modules[_PROBED] = None  # type: ignore[assignment]  # import raises, nothing loads
    try:
        import numba.np.arraymath as arraymath
    finally:
        if saved is missing:
            sys.modules.pop(_PROBED, None)
        else:
            sys.modules[_PROBED] = saved  # type: ignore[assignment]
    if not hasattr(arraymath, "_HAVE_BLAS"):  # pragma: no cover - another Numba layout
        return False
    arraymath._HAVE_BLAS = importlib.util.find_spec("scipy") is not None
    return True


def install() -> None:
    """Have Numba's CPU target run :func:`skip` before it loads its implementations."""
    try:
        from numba.core.cpu import CPUContext
    except ImportError:  # pragma: no cover - another Numba layout
        return
    load = getattr(CPUContext, "load_additional_registries", None)
    if load is None or getattr(load, "limbik_no_blas_probe", False):
        return

    def load_additional_registries(self: Any) -> None:
        skip()
        load(self)

    load_additional_registries.limbik_no_blas_probe = True  # type: ignore[attr-defined]
    load_additional_registries.__doc__ = load.__doc__
    CPUContext.load_additional_registries = load_additional_registries  # type: ignore[method-assign]
