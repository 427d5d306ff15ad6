"""The demo's scene registry: a scene's table rows and the decorator that registers it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from limbik.solvers.solution import Solution


@dataclass(frozen=True)
class SceneResult:
    """One row of the demo table.

    ``reached``, ``error`` and ``iterations`` are arrays over the problems the row
    solved (one element per target, frame or contact frame).
    """

    scene: str
    solver: str
    reached: np.ndarray
    error: np.ndarray
    iterations: np.ndarray
    seconds: float
    pictures: tuple[str, ...] = field(default=())

    @classmethod
    def from_solution(cls, scene: str, solver: str, solution: Solution, seconds: float,
                      pictures: Sequence[str] = ()) -> SceneResult:
        """A row from a :class:`Solution` (every batch element counts)."""
        import numpy as np

        return cls(scene, solver, np.asarray(solution.reached).reshape(-1),
                   np.asarray(solution.error, dtype=np.float64).reshape(-1),
                   np.asarray(solution.iterations).reshape(-1), seconds, tuple(pictures))

    def row(self) -> dict[str, object]:
        """The JSON-ready row: reached as ``"k/n"``, the largest error, mean iterations."""
        import numpy as np

        return {
            "scene": self.scene,
            "solver": self.solver,
            "reached": f"{int(np.sum(self.reached))}/{self.reached.size}",
            "max_error": float(np.max(self.error, initial=0.0)),
            "mean_iterations": (float(np.mean(self.iterations)) if self.iterations.size
                                else 0.0),
            "ms": 1e3 * self.seconds,
            "pictures": list(self.pictures),
        }


Scene = Callable[[Path | None], list[SceneResult]]
#: Scene name → scene, in the order of the table.
SCENES: dict[str, Scene] = {}


def scene(name: str) -> Callable[[Scene], Scene]:
    """Register a scene under ``name`` (decorator)."""

    def register(fn: Scene) -> Scene:
        SCENES[name] = fn
        return fn

    return register


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` twice; return the second result and its wall time in seconds.

    The first call compiles the kernels it needs (or loads them from the cache), so the
    time is the warm solve time.
    """
    fn()
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start
