"""Tell the user, once, when Numba compiles limbik's kernels (a cold on-disk cache).

Kernels compile on first use and are cached on disk (``__pycache__`` next to the
sources, or ``NUMBA_CACHE_DIR``), so only the first run after an install waits.
:func:`announce_compilation` prints :data:`MESSAGE` to a stream the moment the first
limbik kernel starts compiling in this process (loading from the cache is silent);
worker processes that share a marker file print it once between them.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

__all__ = ["MESSAGE", "announce_compilation", "note_compilation"]

MESSAGE = ("limbik: compiling kernels, once… (later runs load them from the cache; "
           "`limbik compile` builds them all ahead)")

_installed: list[Any] = []


def announce_compilation(stream: IO[str] | None = None, *, once_file: str | None = None
                         ) -> None:
    """Print :data:`MESSAGE` to ``stream`` (default stderr) when a limbik kernel first
    compiles in this process. Idempotent.

    With ``once_file``, processes that share that path (worker processes) print it once
    between them: only the one that creates the file prints.
    """
    if _installed:
        return
    from numba.core import event

    class _Notice(event.Listener):
        said = False

        def on_start(self, ev: Any) -> None:
            self.notice(ev.data.get("dispatcher") if isinstance(ev.data, dict) else None)

        def notice(self, dispatcher: Any) -> None:
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if not self.said and module.startswith("limbik."):
                self.said = True
                if once_file is not None:
                    try:
                        os.close(os.open(once_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                    except OSError:  # another process said it already
                        return
                # stderr as it is now (it may have been replaced since installation); a
                # closed stream must never break a compilation
                try:
                    print(MESSAGE, file=sys.stderr if stream is None else stream, flush=True)
                except (OSError, ValueError):
                    pass

        def on_end(self, ev: Any) -> None:
            pass

    listener = _Notice()
    event.register("numba:compile", listener)
    _installed.append(listener)



def note_compilation(dispatcher: Any) -> None:
    """Tell :func:`announce_compilation`'s listener, where installed, that ``dispatcher``
    compiles in another process (Numba's events here then say nothing)."""
    for listener in _installed:
        listener.notice(dispatcher)
