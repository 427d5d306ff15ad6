"""Tell the user, once, when Numba compiles limbik's kernels (a cold on-disk cache).

Kernels compile on first use and are cached on disk (``__pycache__`` next to the
sources, or ``NUMBA_CACHE_DIR``), so only the first run after an install waits.
:func:`announce_compilation` prints :data:`MESSAGE` to a stream the moment the first
limbik kernel starts compiling in this process (loading from the cache is silent);
:func:`cache_is_cold` tells, before any work, whether the demo's kernels would compile
(for work done in worker processes).
"""

from __future__ import annotations

import sys
from typing import IO, Any

__all__ = ["MESSAGE", "announce_compilation", "cache_is_cold"]

MESSAGE = "limbik: compiling kernels, once… (later runs load them from the cache)"

#: Kernel modules, each with one cached function whose index file marks it compiled.
KERNEL_MODULES = (
    ("limbik.solvers._two_bone_kernels", "solve_batch"),
    ("limbik.solvers._fabrik_kernels", "solve_chains"),
    ("limbik.solvers._ccd_kernels", "ccd_points_solve"),
    ("limbik.solvers._jacobian_kernels", "lm_solve_range"),
    ("limbik.skeleton._fk_kernels", "forward_kinematics_kernel"),
)

_installed: list[Any] = []


def announce_compilation(stream: IO[str] | None = None) -> None:
    """Print :data:`MESSAGE` to ``stream`` (default stderr) when a limbik kernel first
    compiles in this process. Idempotent."""
    if _installed:
        return
    from numba.core import event

    out = sys.stderr if stream is None else stream

    class _Notice(event.Listener):
        said = False

        def on_start(self, ev: Any) -> None:
            dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if not self.said and module.startswith("limbik."):
                self.said = True
                print(MESSAGE, file=out, flush=True)

        def on_end(self, ev: Any) -> None:
            pass

    listener = _Notice()
    event.register("numba:compile", listener)
    _installed.append(listener)


def cache_is_cold(functions: tuple[tuple[str, str], ...] = KERNEL_MODULES) -> bool:
    """Whether any of these ``(module, function)`` kernels has no index file in Numba's
    on-disk cache yet, i.e. its first call will compile. False when it cannot tell."""
    import importlib
    from pathlib import Path

    for module_name, function in functions:
        try:
            dispatcher = getattr(importlib.import_module(module_name), function)
            cache = dispatcher._cache
            index = Path(cache._cache_path) / cache._cache_file._index_name
        except (AttributeError, ImportError):  # pragma: no cover - another Numba layout
            return False
        if not index.exists():
            return True
    return False
