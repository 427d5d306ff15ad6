"""Tell the user, once, that limbik's kernels compile on this run (a cold on-disk cache).

Kernels are compiled by Numba on first use and cached on disk: in ``__pycache__`` next
to the sources, or under ``NUMBA_CACHE_DIR`` where it is set. :func:`announce_compilation`
prints :data:`MESSAGE` where that cache holds no kernel of limbik's yet.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

__all__ = ["MESSAGE", "announce_compilation", "cache_is_cold"]

MESSAGE = ("limbik: compiling kernels on first use, once (later runs load them from the "
           "cache; `limbik compile` builds them all ahead)")


def _indexes(folder: Path, pattern: str) -> bool:
    """Whether ``folder`` holds a Numba cache index (``MODULE.FUNCTION-LINE.*.nbi``) of
    a function in one of limbik's modules."""
    if not folder.is_dir():
        return False
    modules = {p.stem for p in Path(__file__).resolve().parents[1].glob("**/*.py")}
    return any(p.name.split(".", 1)[0] in modules for p in folder.glob(pattern))


def cache_is_cold() -> bool:
    """True where no cache index of a limbik kernel exists where Numba would look.

    Numba caches in ``NUMBA_CACHE_DIR`` where that is set; otherwise beside the sources,
    or in the user's cache folder where the sources' folder is not writable."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return not _indexes(Path(given), "**/*.nbi")
    package = Path(__file__).resolve().parents[1]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return not (_indexes(package, "**/__pycache__/*.nbi") or _indexes(user, "**/*.nbi"))


def _compiled_here() -> bool:
    """Whether a limbik kernel is already compiled (or loaded) in this process."""
    for name, module in list(sys.modules.items()):
        if name.startswith("limbik.") and module is not None:
            for value in list(vars(module).values()):
                if getattr(value, "py_func", None) is not None and getattr(
                        value, "signatures", None):
                    return True
    return False


def announce_compilation(stream: IO[str] | None = None) -> None:
    """Print :data:`MESSAGE` to ``stream`` (default stderr) where the on-disk cache holds
    none of limbik's kernels and none is compiled in this process yet.

    A closed stream is ignored: the notice never breaks a command."""
    if not cache_is_cold() or _compiled_here():
        return
    try:
        print(MESSAGE, file=sys.stderr if stream is None else stream, flush=True)
    except (OSError, ValueError):
        pass
