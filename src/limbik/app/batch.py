"""Foot placement over a whole library of clips, on all local cores or on a Dask cluster.

:func:`footplant_library` finds the motion clips (``.bvh``, ``.glb``, ``.gltf``) under a
folder (or a glob), plants
each one exactly as ``limbik footplant CLIP`` does (both go through
:func:`plant_clip`), writes the results into an output folder that mirrors the input
tree, and writes ``summary.json``, ``summary.csv``, ``summary.html`` and
``summary.png`` there. Each clip is one unit of work:

- with ``jobs=1`` it runs in this process;
- by default it runs in a pool of worker processes, one per available core;
- with ``scheduler="tcp://HOST:PORT"`` each clip is one task on an existing Dask
  distributed cluster whose workers see the same paths (a shared file system).

A task reads its input and writes its output atomically (temporary file, then
rename), so a task that is run twice, or killed and run again on another worker,
leaves the same complete file. A clip that fails is recorded with its error and the
others go on. A re-run skips clips whose records say they are up to date; the
summary is also written every :data:`CHECKPOINT_SECONDS` while a run goes on and
when it is interrupted, so an interrupted run keeps the clips it finished.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from limbik._runtime.atomic import atomic_write
from limbik._runtime.validation import choice
from limbik.errors import InvalidInputError, LimbikError
from limbik.io.files import MOTION_FORMATS, motion_format, read_motion, write_motion
from limbik.io.units import UP_AXES, unit_scale
from limbik.placement.footplant import (
    PROCEDURAL_TERRAINS,
    FootplantReport,
    footplant,
    terrain_for_clip,
)
from limbik.placement.terrain import Terrain
from limbik.skeleton.limbs import Leg, find_legs
from limbik.skeleton.motion import Motion

__all__ = [
    "BatchSummary",
    "PlantedClip",
    "find_clips",
    "footplant_library",
    "plant_clip",
]

Progress = Callable[[int, int, str], None]

#: file names written into the output folder
#: seconds between the summaries written while a run goes on
CHECKPOINT_SECONDS = 30.0
#: the clip files a library holds, for messages
_CLIP_FILES = "/".join(MOTION_FORMATS)
SUMMARY_FILES = ("summary.json", "summary.csv", "summary.html", "summary.png")
#: summary record fields that come before the metrics, in column order
RECORD_FIELDS = ("clip", "status", "skipped", "frames", "seconds", "error", "terrain", "floor",
                 "legs", "leg_length")
#: how many times the local pool is restarted after its worker processes died
_POOL_ROUNDS = 3


@dataclasses.dataclass(frozen=True)
class PlantedClip:
    """One clip planted: the source, the result, the ground and legs used, the report."""

    source: Motion
    planted: Motion
    terrain: Terrain
    legs: tuple[Leg, ...]
    report: FootplantReport


def plant_clip(motion: Motion, *, terrain: str | Terrain = "flat",
               terrain_options: Mapping[str, Any] | None = None,
               progress: Progress | None = None, up: str = "y",
               unit: str | float | None = None, **footplant_options: Any) -> PlantedClip:
    """Plant one clip the way ``limbik footplant`` does: legs, terrain, then :func:`footplant`.

    ``terrain`` is a :class:`Terrain`, a procedural kind or a ``.npy``/``.png`` height
    field, and ``terrain_options`` the keywords of :func:`terrain_for_clip` (``seed``,
    ``cell_size``, ``origin``, ``height_scale``) for a kind or file; every other keyword
    goes to :func:`limbik.footplant`. A height-field file and ``floor`` are given in the
    frame of the clip's file: its ``up`` axis and length ``unit`` (as for
    :func:`limbik.io.files.read_motion`).
    """
    scale = unit_scale(unit)
    if footplant_options.get("floor") is not None:
        footplant_options["floor"] = footplant_options["floor"] * scale
    legs = find_legs(motion.skeleton)
    ground = (terrain if isinstance(terrain, Terrain) else
              terrain_for_clip(terrain, motion, legs=legs, up=up, scale=scale,
                               **dict(terrain_options or {})))
    planted, report = footplant(motion, ground, legs=legs, progress=progress,
                                **footplant_options)
    return PlantedClip(motion, planted, ground, tuple(legs), report)


# ---------------------------------------------------------------------------- finding clips

def _has_magic(text: str) -> bool:
    return any(c in text for c in "*?[")


#: Files of joint positions (motion-generation output), clips where a skeleton is given.
POSITION_FORMATS = (".npy", ".npz")


def is_position_file(path: str | Path) -> bool:
    """Whether ``path`` names a file of joint positions (``.npy``/``.npz``)."""
    return Path(path).suffix.lower() in POSITION_FORMATS


def _is_clip(path: Path, positions: bool = False) -> bool:
    suffix = path.suffix.lower()
    return (suffix in MOTION_FORMATS or (positions and suffix in POSITION_FORMATS)) and \
        path.is_file()


def find_clips(source: str | Path | Sequence[str | Path], *, positions: bool = False
               ) -> tuple[Path, list[Path]]:
    """The motion clips (``.bvh``, ``.glb``, ``.gltf``; with ``positions`` also ``.npy``
    and ``.npz`` files of joint positions) of a folder (searched recursively), a glob, a
    single file, or a list of these (say a glob the shell expanded).

    Returns ``(root, clips)``: outputs mirror each clip's path relative to ``root``
    (the folder, the glob's folder part before its first wildcard, or the file's
    folder; for a list, the folder all of theirs lie in). Hidden files and folders
    (names starting with ``.``) are left out. Clips are sorted by path, each once.
    """
    if isinstance(source, list | tuple):
        if not source:
            raise InvalidInputError("source must name at least one clip, got an empty list",
                                    argument="source")
        found_all = [find_clips(entry, positions=positions) for entry in source]
        root = Path(os.path.commonpath([found.absolute() for found, _ in found_all]))
        return root, sorted({clip.absolute() for _, clips in found_all for clip in clips})
    text = str(source)
    path = Path(text)
    if path.is_dir():
        root = path
        found: Iterable[Path] = path.rglob("*")
    elif path.is_file():
        root = path.parent
        found = [path]
    elif _has_magic(text):
        import glob

        parts = path.parts
        fixed = next(k for k, part in enumerate(parts) if _has_magic(part))
        root = Path(*parts[:fixed]) if fixed else Path(".")
        found = (Path(p) for p in glob.glob(text, recursive=True))
    else:
        raise InvalidInputError(f"source must be a folder, a glob or a clip file, got {text!r} "
                                "(no such file or folder)", argument="source")
    clips = []
    for clip in found:
        relative = clip.relative_to(root) if clip.is_relative_to(root) else Path(clip.name)
        if any(part.startswith(".") for part in relative.parts) or not _is_clip(clip, positions):
            continue
        clips.append(clip)
    if not clips:
        raise InvalidInputError(f"source must hold {_CLIP_FILES} clips, got none in {text!r}",
                                argument="source")
    return root, sorted(clips)


# ---------------------------------------------------------------------------- one clip

@dataclasses.dataclass(frozen=True)
class _ClipJob:
    """Everything one task needs; plain data so it pickles to any worker."""

    clip: str
    source: str
    output: str
    terrain: str
    terrain_options: dict[str, Any]
    footplant_options: dict[str, Any]
    up: str = "y"
    unit: str | float | None = None
    skin: int | str | None = None
    animation: int | str | None = None
    skeleton: Any = None
    fps: float | None = None
    html: bool = False


def _describe(exc: BaseException) -> str:
    """One line for the summary: limbik's and the OS's messages as they are."""
    if isinstance(exc, LimbikError | OSError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


#: a record key for the driver only: whether a failure may pass on a re-run (the file
#: system, a worker's death), unlike a bad clip, which fails again on the same input
_RETRY = "_retry"


def _failed(job: _ClipJob, error: str, *, retry: bool = True) -> dict[str, Any]:
    return {"clip": job.clip, "status": "failed", "skipped": False, "frames": None,
            "seconds": None, "error": error, _RETRY: retry}


def _run_clip(job: _ClipJob) -> dict[str, Any]:
    """Read, plant and write one clip; returns its summary record (never raises)."""
    start = time.perf_counter()
    record = _failed(job, "")
    if job.skeleton is not None and is_position_file(job.source):
        _run_positions(job, record)
        record["seconds"] = time.perf_counter() - start
        return record
    try:
        frame: dict[str, Any] = {"up": job.up, "unit": job.unit}
        if motion_format(job.source) == "gltf":
            frame.update(skin=job.skin, animation=job.animation)
        motion = read_motion(job.source, **frame)
        record["frames"] = motion.num_frames
        done = plant_clip(motion, terrain=job.terrain, terrain_options=job.terrain_options,
                          up=job.up, unit=job.unit, **job.footplant_options)
        Path(job.output).parent.mkdir(parents=True, exist_ok=True)
        write_motion(done.planted, job.output, source=job.source, **frame)
        if job.html:
            from limbik.viz.web import footplant_page

            footplant_page(job.output + ".html", motion, done.planted, done.terrain,
                           done.legs, done.report, name=job.clip)
            record["viewer"] = f"{job.clip}.html"
    except Exception as exc:  # one bad clip must not stop the library
        record["error"] = _describe(exc)
        record[_RETRY] = not isinstance(exc, LimbikError)
    else:
        report = done.report
        record.update(status="ok", error=None, terrain=done.terrain.name, floor=report.floor,
                      legs=" ".join(report.legs), leg_length=_leg_length(motion, done.legs))
        record.update({f"before_{k}": v for k, v in report.before.items()})
        record.update({f"after_{k}": v for k, v in report.after.items()})
    record["seconds"] = time.perf_counter() - start
    return record


def skeleton_layout(skeleton: Any) -> tuple[tuple[str, ...], Any]:
    """Names and parents of a position skeleton given as a built-in name or as
    ``(names, parents)`` (as ``limbik footplant --skeleton FILE.json`` reads it)."""
    from limbik.skeleton.positions import position_layout

    if isinstance(skeleton, str):
        return position_layout(skeleton)
    return position_layout(skeleton[1], skeleton[0])


def plant_positions_file(source: str | Path, output: str | Path, skeleton: Any, *,
                         fps: float = 20.0, terrain: str | Terrain = "flat",
                         terrain_options: Mapping[str, Any] | None = None, up: str = "y",
                         unit: str | float | None = None, layout: str | None = None,
                         key: str | None = None, html: str | Path | None = None,
                         jobs: int | None = None, **footplant_options: Any) -> dict[str, Any]:
    """Clean the feet of every clip in a file of joint positions and write them to
    ``output`` in the input's layout, dtype and array name, with its other entries
    (:func:`limbik.io.positions.write_positions`). A file that pads its clips (a
    dictionary with ``lengths``, as MDM's ``results.npy``) has each clip cleaned over its
    own frames; the padding is written back as it is. A file of several clips is cleaned
    on ``jobs`` worker processes (default: one per available core; 1 cleans here), in
    chunks of clips. An ``output`` ending in ``.bvh`` takes a file of one clip and writes
    it as a rotational motion (:meth:`limbik.skeleton.Motion.from_positions`) in the
    file's up axis and units.

    ``skeleton`` is a name from :data:`~limbik.skeleton.positions.POSITION_SKELETONS` or
    ``(names, parents)``; ``unit`` the file's length unit (positions are cleaned in metres
    and written back in it, as clips are); ``layout`` and ``key`` as for
    :func:`limbik.io.positions.read_positions`; the rest as for
    :func:`limbik.placement.positions.footplant_positions`. ``html`` also writes one
    viewer page there (:func:`limbik.viz.web.footplant_positions_page`): every clip
    before and after, Y up, in metres with ``unit`` (else the file's units), on the
    terrain; a file of several clips on a procedural terrain other than ``flat`` (sized
    to each clip, so one ground per clip) is refused before any clip is cleaned.
    Returns a summary record:
    ``clips`` and ``frames`` (cleaned) in the file, the largest bone-length wobble before
    (``bone_wobble``, a fraction of the bone), and each report metric's mean over the
    clips (``before_*``, ``after_*``).
    """
    import numpy as np

    from limbik.io.positions import read_positions, write_positions

    names, parents = skeleton_layout(skeleton)
    read = read_positions(source, joints=len(names), layout=layout, key=key)
    as_bvh = Path(output).suffix.lower() == ".bvh"
    if as_bvh and len(read.positions) != 1:
        raise InvalidInputError(f"output must be .npy or .npz for a file of "
                                f"{len(read.positions)} clips ({source}); a .bvh file holds "
                                f"one clip, got {output}", argument="output")
    if html is not None and len(read.positions) > 1 and isinstance(terrain, str) \
            and terrain in PROCEDURAL_TERRAINS and terrain != "flat":
        raise InvalidInputError(
            f"html (--html) must draw one ground: {source} holds {len(read.positions)} clips "
            f"and terrain {terrain!r} is sized to each clip; use flat or a height-field file, "
            f"or one clip per file", argument="html")
    scale = unit_scale(unit)
    cleaned = read.positions.copy()  # (a padded file's padding is written back as it is)
    clips = [read.clip(n) * scale for n in range(len(read.positions))]
    done = _clean_positions(clips, default_jobs() if jobs is None else jobs, skeleton=parents,
                            names=names, fps=fps, terrain=terrain,
                            terrain_options=terrain_options, up=up, **footplant_options)
    reports = [info.report for _, info in done]
    wobble = max(float(info.length_variation.max()) for _, info in done)
    frames = sum(len(clip) for clip in clips)
    for n, (result, _) in enumerate(done):
        cleaned[n, :len(clips[n])] = result / scale
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    if as_bvh:  # (the clip as a rotational motion: one length per bone, as cleaned)
        from limbik.io.bvh import write_bvh
        from limbik.placement.positions import to_y_up
        from limbik.skeleton.motion import Motion

        write_bvh(Motion.from_positions(to_y_up(cleaned[0, :len(clips[0])], up), parents,
                                        names=names, frame_time=1.0 / fps), output, up=up)
    else:
        write_positions(output, cleaned, read)
    if html is not None:
        from limbik.placement.positions import to_y_up
        from limbik.viz.web import footplant_positions_page

        info = done[-1][1]
        footplant_positions_page(
            html, [to_y_up(clip, up) for clip in clips],
            [to_y_up(result, up) for result, _ in done], parents, names, info.terrain,
            info.legs, reports, frame_time=1.0 / fps, name=Path(source).name)
    record: dict[str, Any] = {"clips": len(reports), "frames": frames,
                              "bone_wobble": wobble, "legs": " ".join(reports[0].legs),
                              "floor": float(np.mean([r.floor for r in reports]))}
    for when in ("before", "after"):
        keys = list(getattr(reports[0], when))
        # (each metric's values in a row of their own: the same mean as each alone)
        values = np.array([[getattr(r, when)[k] for r in reports] for k in keys])
        record.update(zip((f"{when}_{k}" for k in keys), values.mean(axis=1).tolist(),
                          strict=True))
    return record


def _clean_positions_chunk(task: tuple[list[Any], dict[str, Any]]) -> list[Any]:
    """:func:`limbik.placement.positions.footplant_positions` of each clip of a chunk."""
    from limbik.placement.positions import footplant_positions

    clips, options = task
    return [footplant_positions(clip, **options) for clip in clips]


def _clean_positions(clips: list[Any], workers: int, **options: Any) -> list[Any]:
    """``(positions, PositionCleanup)`` of each clip, in order: here, or on up to
    ``workers`` processes (:func:`_worker_pool`), a few chunks of consecutive clips each."""
    workers = min(workers, len(clips))
    if workers <= 1:
        return _clean_positions_chunk((clips, options))
    edges = [round(k * len(clips) / (4 * workers)) for k in range(4 * workers + 1)]
    chunks = [(clips[a:b], options) for a, b in itertools.pairwise(edges) if b > a]
    with _worker_pool(workers) as pool:
        return [done for chunk in pool.map(_clean_positions_chunk, chunks) for done in chunk]


def _run_positions(job: _ClipJob, record: dict[str, Any]) -> None:
    """:func:`plant_positions_file` for one job, its outcome in ``record``."""
    try:
        done = plant_positions_file(job.source, job.output, job.skeleton, fps=job.fps or 20.0,
                                    terrain=job.terrain, terrain_options=job.terrain_options,
                                    up=job.up, unit=job.unit,
                                    html=job.output + ".html" if job.html else None,
                                    jobs=1, **job.footplant_options)
    except Exception as exc:  # one bad file must not stop the library
        record["error"] = _describe(exc)
        record[_RETRY] = not isinstance(exc, LimbikError)
    else:
        record.update(status="ok", error=None, terrain=job.terrain, **done)
        if job.html:
            record["viewer"] = f"{job.clip}.html"


def _leg_length(motion: Motion, legs: Sequence[Leg]) -> float:
    """Mean hip-to-ankle length of the legs (thigh plus shin), in the motion's units
    (metres where the library was given a ``unit``)."""
    import numpy as np

    offsets = motion.skeleton.offsets
    return float(np.mean([np.linalg.norm(offsets[leg.knee]) + np.linalg.norm(offsets[leg.ankle])
                          for leg in legs]))


def _warm_up() -> None:
    """Load the compiled kernels once per process, on a short built-in walk (as a clip
    and as joint positions)."""
    from limbik.placement.positions import footplant_positions
    from limbik.placement.walk import walk_cycle

    walk = walk_cycle(cycles=0.5, frame_rate=30.0)
    plant_clip(walk)
    footplant_positions(walk.world_positions(), walk.skeleton.parents, names=walk.names,
                        fps=walk.frame_rate)


# ---------------------------------------------------------------------------- engines

Deliver = Callable[[_ClipJob, dict[str, Any]], None]


def _run_here(jobs: Sequence[_ClipJob], deliver: Deliver) -> None:
    _warm_up()  # so that the first clip's seconds count its own work only
    for job in jobs:
        deliver(job, _run_clip(job))


def _start_worker(warm_up: bool) -> None:
    """A worker process solves on one thread (a forked one would keep its parent's
    count), and loads the kernels first if it did not fork from a warmed-up process."""
    from limbik.threads import set_num_threads

    set_num_threads(1)
    # SIGTERM ends a worker (a forked one would keep the command line's handler, which
    # turns it into an exception that the pool reports and the worker survives)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _end_with_parent()
    if warm_up:
        _warm_up()


def _end_with_parent() -> None:
    """End this worker process when its parent ends: a parent killed outright cannot stop
    its workers, which would go on writing clips and hold its output open."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.25)
        # a clip being written removes its temporary file first (see limbik._runtime.atomic)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="limbik parent watch", daemon=True).start()


def _stop_workers(pool: Any) -> None:
    """Cancel the queued clips and end ``pool``'s worker processes (a clip being written
    loses only its temporary file), waiting up to 10 s for them to go."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + 10.0
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))


@contextlib.contextmanager
def _one_thread_per_process() -> Any:
    """Worker processes each use one thread: N processes on N cores, no oversubscription."""
    names = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    saved = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.setdefault(name, "1")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _worker_pool(workers: int) -> Any:
    """A pool of ``workers`` processes, one thread each. Where ``fork`` exists, the pool
    forks this process, warmed up first, so each worker starts with the kernels loaded;
    elsewhere each worker warms up once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    forking = "fork" in multiprocessing.get_all_start_methods()
    if forking:
        _warm_up()
    with _one_thread_per_process(), ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(
                "fork" if forking else "spawn"),
            initializer=_start_worker, initargs=(not forking,)) as pool:
        yield pool


def _run_pool(jobs: Sequence[_ClipJob], workers: int, deliver: Deliver) -> None:
    """Each clip a task on :func:`_worker_pool`. Clips of a pool whose process died are
    run again in a new pool."""
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    # largest files first, so the last clips to finish are short ones
    remaining = sorted(jobs, key=lambda job: -_size(job.source))
    for _ in range(_POOL_ROUNDS):
        if not remaining:
            return
        lost: list[_ClipJob] = []
        with _worker_pool(min(workers, len(remaining))) as pool:
            futures = {pool.submit(_run_clip, job): job for job in remaining}
            try:
                for future in as_completed(futures):
                    try:
                        record = future.result()
                    except BrokenProcessPool:
                        lost.append(futures[future])
                        continue
                    deliver(futures[future], record)
            except BaseException:  # Ctrl-C or SIGTERM: stop now rather than finish the queue
                _stop_workers(pool)
                raise
        remaining = lost
    for job in remaining:
        deliver(job, _failed(job, f"worker processes died {_POOL_ROUNDS} times running it"))


#: Task slots (worker threads) of the Dask workers on this machine: set on each worker
#: when a run starts (at most the run's clip count), else asked of the scheduler by a
#: worker's first task.
_machine_slots: int | None = None


def _remember_machine_slots(slots: int | None) -> None:
    global _machine_slots
    _machine_slots = slots


def _task_threads(slots: int | None) -> int:
    """Batch threads for one task on a machine whose Dask workers run ``slots`` tasks at
    once in all: its share of the cores, at least one."""
    from limbik.threads import most_threads

    return max(1, most_threads() // max(1, slots or 1))


def _scheduler_workers(client: Any) -> dict[str, Any]:
    """Every worker's information from the scheduler: address -> {"host", "nthreads", ...}."""
    try:
        return dict(client.scheduler_info(n_workers=-1)["workers"])  # all, not the first 5
    except TypeError:  # a Dask release before n_workers: it lists all
        return dict(client.scheduler_info()["workers"])


def _slots_by_host(workers: dict[str, Any]) -> dict[str, tuple[int, list[str]]]:
    """host -> (task slots of its workers together, their addresses)."""
    out: dict[str, tuple[int, list[str]]] = {}
    for address, info in workers.items():
        host = str(info.get("host", address))
        slots, addresses = out.get(host, (0, []))
        out[host] = (slots + int(info.get("nthreads", 1) or 1), [*addresses, address])
    return out


def _machine_slots_here() -> int:
    """The task slots of this machine's workers, for a task running on one of them."""
    global _machine_slots
    if _machine_slots is not None:
        return _machine_slots
    from distributed import get_client, get_worker

    try:
        worker = get_worker()
    except ValueError:  # not in a worker: one task at a time
        return 1
    own = int(getattr(getattr(worker, "state", worker), "nthreads", 1) or 1)
    try:  # a worker that joined after the run started: ask the scheduler, once
        workers = _scheduler_workers(get_client())
        host = str(workers[worker.address].get("host", worker.address))
        _machine_slots = _slots_by_host(workers)[host][0]
    except Exception:  # no answer: the worker's own thread count, from now on
        _machine_slots = own
    return _machine_slots


def _with_task_threads(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a Dask task, its batches on the task's share of the cores
    (the machine's workers run that many tasks at once, and each using every core would
    oversubscribe them); the worker thread's count is restored after."""
    from limbik.threads import num_threads

    with num_threads(_task_threads(_machine_slots_here())):
        return function(*args)


def _tell_workers_their_slots(client: Any, jobs: int) -> None:
    """Tell every worker how many of the run's ``jobs`` tasks the workers on its machine
    run at once. A worker lost meanwhile is skipped (its tasks run elsewhere)."""
    for slots, addresses in _slots_by_host(_scheduler_workers(client)).values():
        try:
            client.run(_remember_machine_slots, min(slots, jobs), workers=addresses,
                       on_error="ignore")
        except TypeError:  # a Dask release before on_error
            with contextlib.suppress(OSError, TimeoutError):
                client.run(_remember_machine_slots, min(slots, jobs), workers=addresses)


def _run_dask(jobs: Sequence[_ClipJob], scheduler: str, deliver: Deliver) -> None:
    """One task per clip on the Dask cluster at ``scheduler``.

    The scheduler re-runs the tasks of a worker that dies on other workers (up to its
    ``distributed.scheduler.allowed-failures`` setting, then the clip is recorded as
    failed with the cluster's error). Tasks are idempotent: each writes its output
    atomically, so a re-run task replaces a finished file with an identical one.
    """
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InvalidInputError(
            f"scheduler {scheduler!r} needs Dask distributed, which is not installed; "
            "install it with: pip install \"limbik[dask]\"", argument="scheduler") from None
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:  # ValueError: no port, bad protocol
        raise InvalidInputError(f"scheduler must be the address of a running Dask scheduler "
                                f"(tcp://HOST:PORT), got {scheduler!r}: {exc}",
                                argument="scheduler") from None
    with client:
        client.run(_warm_up)  # each worker process loads the kernels once, all at a time
        _tell_workers_their_slots(client, len(jobs))
        futures = {client.submit(_with_task_threads, _run_clip, job,
                                 key=f"limbik-footplant-{k}-{job.clip}", pure=False): job
                   for k, job in enumerate(sorted(jobs, key=lambda job: -_size(job.source)))}
        for future in as_completed(futures):
            job = futures[future]
            try:
                record = future.result()
            except Exception as exc:  # KilledWorker, lost scheduler...: the clip failed
                record = _failed(job, f"the cluster could not run it: {_describe(exc)}")
            deliver(job, record)
            future.release()


# ---------------------------------------------------------------------------- the library

@dataclasses.dataclass(frozen=True)
class BatchSummary:
    """The result of :func:`footplant_library`.

    Attributes
    ----------
    records : one dict per clip, in path order: ``clip`` (path relative to the input
        root), ``status`` (``"ok"`` or ``"failed"``), ``skipped`` (true when the
        record was carried over from an earlier run because the output was up to
        date), ``frames``, ``seconds`` (read, plant and write), ``error``,
        ``terrain``, ``floor``, ``legs``, ``leg_length`` (thigh plus shin, in the
        clip's units), then ``before_<metric>`` and
        ``after_<metric>`` for every metric of :class:`FootplantReport`.
    output : the output folder.
    ran : clips planted by this run (the others were up to date).
    seconds : wall time of the whole run.
    engine : ``"in-process"``, ``"N processes"`` or the scheduler address.
    """

    records: list[dict[str, Any]]
    output: Path
    ran: int
    seconds: float
    engine: str

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The records of the clips that failed."""
        return [r for r in self.records if r["status"] != "ok"]

    def to_dataframe(self) -> Any:
        """The records as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("BatchSummary.to_dataframe needs pandas: pip install pandas; "
                              "the records are in .records") from None
        return pd.DataFrame.from_records(self.records, columns=_columns(self.records))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _fingerprint(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _columns(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Record fields first, then every other key in order of first appearance."""
    seen = dict.fromkeys(RECORD_FIELDS)
    for record in records:
        seen.update(dict.fromkeys(record))
    return list(seen)


def _defaults(function: Callable[..., Any], leave_out: Iterable[str]) -> dict[str, Any]:
    import inspect

    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.kind is p.KEYWORD_ONLY and p.default is not p.empty and name not in leave_out}


def _settings(terrain: str, terrain_options: Mapping[str, Any] | None,
              footplant_options: Mapping[str, Any] | None,
              reading: Mapping[str, Any]) -> dict[str, Any]:
    """Everything that decides an output, defaults filled in, as JSON values: two runs
    with equal settings make equal files (the limbik version is part of it)."""
    from limbik import __version__

    return _jsonable({
        "limbik": __version__, "terrain": terrain, **reading,
        "terrain_options": {**_defaults(terrain_for_clip, ["legs", "up", "scale"]),
                            **(terrain_options or {})},
        "footplant_options": {**_defaults(footplant, ["legs", "progress"]),
                              **(footplant_options or {})}})


def _previous_run(folder: Path, settings: Mapping[str, Any]) -> dict[str, Any]:
    """Per clip, ``(record, state)`` from the last summary made with the same settings."""
    try:
        last = json.loads((folder / SUMMARY_FILES[0]).read_text())
        if last.get("settings") != settings:
            return {}
        return {r["clip"]: (r, last["state"][r["clip"]]) for r in last["clips"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _up_to_date(previous: tuple[dict[str, Any], dict[str, Any]] | None, source: Path,
                output: Path) -> bool:
    """Same input as last time, and, if it succeeded, its output complete and newer."""
    if previous is None:
        return False
    record, state = previous
    if state.get("input") != _fingerprint(source):
        return False
    if record.get("status") != "ok":
        return not state.get("retry", True)  # a bad clip fails again on the same input
    out = _fingerprint(output)
    return out is not None and out[0] == state.get("output_size") and out[1] >= state["input"][1]


def _remove_temporaries(outputs: Iterable[Path]) -> None:
    """Temporary files of the atomic writer (``.NAME.*.tmp``) that a killed worker left
    beside outputs; each output folder is listed once."""
    names: dict[Path, set[str]] = {}
    for output in outputs:
        names.setdefault(output.parent, set()).add(output.name)
    for folder, outs in names.items():
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if not (entry.startswith(".") and entry.endswith(".tmp")):
                continue
            core = entry[1:-4]  # NAME.* less the last dot: NAME is core up to one of its dots
            if any(core[:i] in outs for i, c in enumerate(core) if c == "."):
                with contextlib.suppress(OSError):
                    (folder / entry).unlink()


def default_jobs() -> int:
    """Worker processes by default: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def footplant_library(source: str | Path | Sequence[str | Path], output: str | Path, *,
                      terrain: str = "flat",
                      terrain_options: Mapping[str, Any] | None = None,
                      footplant_options: Mapping[str, Any] | None = None,
                      jobs: int | None = None, scheduler: str | None = None,
                      force: bool = False, progress: Progress | None = None,
                      report: bool = True, up: str = "y",
                      unit: str | float | None = None, skin: int | str | None = None,
                      animation: int | str | None = None, skeleton: Any = None,
                      fps: float | None = None, html: bool = False) -> BatchSummary:
    """Plant every clip under ``source`` and write them, mirrored, under ``output``.

    Parameters
    ----------
    source : a folder (searched recursively), a glob such as ``"mocap/**/*.bvh"``, one
        ``.bvh``, ``.glb`` or ``.gltf`` file, or a list of these (see :func:`find_clips`).
        A glTF clip's output is a copy of its file with the planted animation.
    output : the output folder (created); it must not be the input folder.
    terrain, terrain_options, footplant_options : as in :func:`plant_clip`.
    jobs : worker processes (default: one per available core; 1 runs in this process).
    scheduler : ``"tcp://HOST:PORT"`` of a Dask distributed scheduler: each clip is one
        task there, and ``jobs`` is ignored. Workers must see ``source`` and ``output``
        at the same paths.
    force : plant every clip, even those whose output is up to date.
    progress : called as ``progress(done, total, clip)`` after each clip.
    report : also write ``summary.html`` and ``summary.png``.
    up, unit : the clips' up axis and length unit, as for
        :func:`limbik.io.files.read_motion`; outputs are written in the same frame,
        and a terrain file and ``footplant_options["floor"]`` are given in it too.
    skin, animation : for glTF clips, the skin and animation to plant (name or index;
        default the first), as for :func:`limbik.io.files.read_motion`.
    skeleton, fps : with a skeleton (a name such as ``"smpl22"``, or ``(names,
        parents)``), ``.npy``/``.npz`` files of joint positions are clips too, at ``fps``
        frames per second (default 20), each cleaned by :func:`plant_positions_file`.
    html : also write each clip's 3-D viewer page beside its output (``OUT.bvh.html``,
        :func:`limbik.viz.web.footplant_page`; a position file's ``OUT.npy.html`` shows
        each of its clips, see :func:`plant_positions_file`), linked from
        ``summary.html``.

    Returns the :class:`BatchSummary`; ``summary.json`` and ``summary.csv`` in
    ``output`` hold the same records. A clip is up to date when the last summary
    in ``output`` was made with the same settings, the input is unchanged since,
    and its output exists, has the recorded size and is newer than the input. A clip
    that failed with a limbik error (a bad file, no legs) on an unchanged input is not
    tried again; one that failed otherwise (the file system, a worker's death) is.
    """
    start = time.perf_counter()
    out = Path(output)
    root, clips = find_clips(source, positions=skeleton is not None)
    resolved = out.resolve()
    if resolved == root.resolve():
        raise InvalidInputError(f"output must be a folder other than the input folder, got "
                                f"{str(output)!r}", argument="output")
    inside = [clip for clip in clips if clip.resolve().is_relative_to(resolved)]
    if inside and isinstance(source, list | tuple):  # named, so not silently left out
        raise InvalidInputError(f"source clips must lie outside the output folder "
                                f"{str(output)!r}, got {str(inside[0])!r}", argument="source")
    clips = [clip for clip in clips if clip not in inside]
    if not clips:
        raise InvalidInputError(f"source must hold {_CLIP_FILES} clips outside the output folder "
                                f"{str(output)!r}, got none", argument="source")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise InvalidInputError(f"jobs must be a positive integer, got {jobs!r}",
                                argument="jobs")
    choice(up, "up", UP_AXES)
    unit_scale(unit)  # a bad unit fails here, not once per clip
    settings = _settings(terrain, terrain_options, footplant_options,
                         {"up": up, "unit": unit, "skin": skin, "animation": animation,
                          "skeleton": skeleton, "fps": fps,
                          **({"html": True} if html else {})})
    out.mkdir(parents=True, exist_ok=True)
    previous = {} if force else _previous_run(out, settings)

    records: dict[str, dict[str, Any]] = {}
    state: dict[str, dict[str, Any]] = {}
    todo: list[_ClipJob] = []
    for clip in clips:
        name = clip.relative_to(root).as_posix() if clip.is_relative_to(root) else clip.name
        target = out / name
        last = previous.get(name)
        if _up_to_date(last, clip, target):
            assert last is not None
            records[name] = {**last[0], "skipped": True}
            state[name] = last[1]
            continue
        # absolute paths: a worker elsewhere may start in another folder
        todo.append(_ClipJob(name, str(clip.absolute()), str(target.absolute()), terrain,
                             dict(terrain_options or {}), dict(footplant_options or {}),
                             up, unit, skin, animation, skeleton, fps, bool(html)))

    workers = default_jobs() if jobs is None else jobs
    if scheduler is not None:
        engine = scheduler
    elif workers == 1 or len(todo) <= 1:
        engine = "in-process"
    else:
        engine = f"{min(workers, len(todo))} processes"
    done = 0
    saved = time.monotonic()

    def summary_now() -> BatchSummary:
        ordered = [records[k] for k in sorted(records)]
        return BatchSummary(ordered, out, done, time.perf_counter() - start, engine)

    def deliver(job: _ClipJob, record: dict[str, Any]) -> None:
        nonlocal done, saved
        retry = bool(record.pop(_RETRY, True))
        records[job.clip] = record
        output_size = _fingerprint(Path(job.output)) if record["status"] == "ok" else None
        state[job.clip] = {"input": _fingerprint(Path(job.source)),
                           "output_size": output_size[0] if output_size else None,
                           "retry": retry}
        done += 1
        if time.monotonic() - saved >= CHECKPOINT_SECONDS and done < len(todo):
            _write_summary(summary_now(), settings, state, source, root, complete=False)
            saved = time.monotonic()
        if progress is not None:
            progress(done, len(todo), job.clip)

    try:
        if scheduler is not None:
            if todo:
                _run_dask(todo, scheduler, deliver)
        elif engine == "in-process":
            _run_here(todo, deliver)
        else:
            _run_pool(todo, workers, deliver)
    except BaseException:
        # interrupted (Ctrl-C, a lost scheduler): keep what was done, so that the next
        # run skips it
        _remove_temporaries(Path(job.output) for job in todo)
        with contextlib.suppress(Exception):
            _write_summary(summary_now(), settings, state, source, root, complete=False)
        raise
    _remove_temporaries(Path(job.output) for job in todo)

    summary = summary_now()
    _write_summary(summary, settings, state, source, root, complete=True)
    if report:
        from limbik.viz.batch_report import write_batch_report

        write_batch_report(summary.records, out / SUMMARY_FILES[2], out / SUMMARY_FILES[3],
                           title=f"footplant: {_source_text(source)[:80]}")
    return summary


def _source_text(source: str | Path | Sequence[str | Path]) -> str:
    """``source`` as text: a list of clips as their paths joined by spaces."""
    if isinstance(source, list | tuple):
        return " ".join(str(entry) for entry in source)
    return str(source)


def _write_summary(summary: BatchSummary, settings: Mapping[str, Any],
                   state: Mapping[str, Any], source: str | Path | Sequence[str | Path],
                   root: Path, *,
                   complete: bool) -> None:
    """``summary.json`` (records, settings and up-to-date state) and ``summary.csv``.

    ``complete`` is False for the checkpoints written while a run goes on and for
    the summary of an interrupted run: they hold the clips finished so far.
    """
    import csv

    folder = summary.output
    with atomic_write(folder / SUMMARY_FILES[0], encoding="utf-8") as handle:
        json.dump({"source": _source_text(source), "root": str(root), "engine": summary.engine,
                   "complete": complete, "ran": summary.ran,
                   "failed": len(summary.failed),
                   "seconds": summary.seconds, "settings": settings,
                   "clips": summary.records, "state": dict(state)}, handle, indent=1)
    columns = _columns(summary.records)
    with atomic_write(folder / SUMMARY_FILES[1], encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        for record in summary.records:
            writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
