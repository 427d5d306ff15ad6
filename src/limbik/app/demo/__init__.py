"""``limbik demo``: solve the built-in scenes, print a table, and draw a gallery.

The scenes live in :mod:`limbik.app.demo.scenes` (registered through
:mod:`limbik.app.demo.registry`); each one solves its problems, draws its
pictures into the output folder (unless pictures are off) and returns table rows.
Scenes are independent, so with ``jobs > 1`` they run in worker processes; each worker
compiles only the kernels its scenes use, which is most of a cold run's time.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from limbik.app.demo.registry import SCENES, Scene, SceneResult
from limbik.errors import InvalidInputError

#: The scenes in table order, as :mod:`limbik.app.demo.scenes` registers them
#: (``tests/test_demo.py`` checks): known without importing the scenes, so ``--help``
#: and the process that hands scenes to the worker processes load no solver and no Numba.
SCENE_NAMES = ("arm", "planar", "fabrik", "leg", "footplant", "jacobian", "footplanter",
               "rotations")


def format_table(rows: list[dict[str, object]]) -> str:
    """A plain-text table of demo rows."""
    headers = ["scene", "solver", "reached", "max error", "iters", "ms (warm)"]
    body = [[str(r["scene"]), str(r["solver"]), str(r["reached"]), f"{r['max_error']:.2e}",
             f"{r['mean_iterations']:.1f}", f"{r['ms']:.2f}"] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)) for b in body]
    return "\n".join(out)


def _load_scenes() -> dict[str, Scene]:
    import limbik.app.demo.scenes  # noqa: F401  (registers the scenes)

    return SCENES


def _run_scene(name: str, folder: Path | None) -> list[SceneResult]:
    """Run one scene by name (the unit of work of a worker process)."""
    if folder is not None:
        import matplotlib

        matplotlib.use("Agg")
    return _load_scenes()[name](folder)


def scene_names() -> list[str]:
    """Names of every scene, in table order."""
    return list(_load_scenes())


def _select(names: Sequence[str] | None) -> list[str]:
    every = list(SCENE_NAMES)
    if not names:
        return every
    unknown = [n for n in names if n not in every]
    if unknown:
        raise InvalidInputError(f"scene must be one of {', '.join(every)}, got "
                                f"{', '.join(map(repr, unknown))}", argument="scene")
    return [n for n in every if n in names]


def run_scenes(names: Sequence[str] | None = None, folder: Path | None = None, *,
               jobs: int = 1) -> list[SceneResult]:
    """Run the named scenes (default: all) and return their rows in table order.

    ``jobs > 1`` runs scenes in that many worker processes (spawned, so each compiles
    its own kernels, or loads them from the on-disk cache; results are the same as
    in-process).
    """
    selected = _select(names)
    jobs = max(1, min(int(jobs), len(selected)))
    if jobs == 1:
        return [r for name in selected for r in _run_scene(name, folder)]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # the slowest scenes first, so the two workers finish together
    order = sorted(selected, key=lambda n: -_COST.get(n, 1.0))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {name: pool.submit(_run_scene, name, folder) for name in order}
        done = {name: future.result() for name, future in futures.items()}
    return [r for name in selected for r in done[name]]


#: Rough cold-start cost of each scene (seconds on a 2-core machine, mostly kernel
#: compilation), used only to order the work between processes: the slowest first. A
#: scene's figure is its cost once the scenes before it in this order have written their
#: kernels to the cache: ``footplanter`` and ``rotations`` run ``footplant`` too, which
#: they then load (run beside ``footplant`` instead, they compiled it a second time).
_COST = {"footplant": 14.6, "jacobian": 12.6, "fabrik": 4.2, "rotations": 2.1,
         "footplanter": 1.9, "arm": 1.4, "leg": 0.6, "planar": 0.3}


def default_jobs() -> int:
    """Worker processes for the demo: up to 2, one per available core."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


def run_demo(out: str | Path = "limbik-demo", *, json_output: bool = False,
             pictures: bool = True, scenes: Sequence[str] | None = None,
             jobs: int | None = None) -> int:
    """Run the scenes; print the table (or JSON); return the exit code."""
    folder = Path(out) if pictures else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = run_scenes(scenes, folder, jobs=default_jobs() if jobs is None else jobs)
    elapsed = time.perf_counter() - start
    rows = [r.row() for r in results]
    if json_output:
        print(json.dumps(rows, indent=2))
    else:
        print(format_table(rows))
        if folder is not None:
            n = sum(len(r.pictures) for r in results)
            print(f"\n{n} pictures written to {folder}/ in {elapsed:.1f} s")
    return 0
