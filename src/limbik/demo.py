"""``limbik demo``: solve the built-in scenes, print a table, and draw a gallery."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from limbik.solvers.solution import Solution


@dataclass(frozen=True)
class SceneResult:
    """One row of the demo table."""

    scene: str
    solver: str
    solution: Solution
    seconds: float
    pictures: tuple[str, ...] = ()

    def row(self) -> dict[str, object]:
        s = self.solution
        return {
            "scene": self.scene,
            "solver": self.solver,
            "reached": f"{int(np.sum(s.reached))}/{s.reached.size}",
            "max_error": float(np.max(s.error, initial=0.0)),
            "mean_iterations": float(np.mean(s.iterations)) if s.iterations.size else 0.0,
            "ms": 1e3 * self.seconds,
            "pictures": list(self.pictures),
        }


Scene = Callable[[Path | None], list[SceneResult]]
SCENES: list[Scene] = []


def timed(fn: Callable[[], Solution]) -> tuple[Solution, float]:
    """Run ``fn`` and return its Solution with the wall time in seconds."""
    start = time.perf_counter()
    solution = fn()
    return solution, time.perf_counter() - start


def format_table(rows: list[dict[str, object]]) -> str:
    """A plain-text table of demo rows."""
    headers = ["scene", "solver", "reached", "max error", "iters", "ms"]
    body = [[str(r["scene"]), str(r["solver"]), str(r["reached"]), f"{r['max_error']:.2e}",
             f"{r['mean_iterations']:.1f}", f"{r['ms']:.2f}"] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)) for b in body]
    return "\n".join(out)


def run_demo(out: str | Path = "limbik-demo", *, json_output: bool = False,
             pictures: bool = True) -> int:
    """Run every scene; print the table (or JSON); return the exit code."""
    folder = Path(out) if pictures else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    results: list[SceneResult] = []
    for scene in SCENES:
        results.extend(scene(folder))
    rows = [r.row() for r in results]
    if json_output:
        print(json.dumps(rows, indent=2))
    else:
        print(format_table(rows))
        if folder is not None:
            n = sum(len(r.pictures) for r in results)
            print(f"\n{n} pictures written to {folder}/")
    return 0
