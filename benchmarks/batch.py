"""Throughput of ``footplant_library``: worker processes (or a Dask cluster) against one
process, on the same library of clips in one run.

The library is ``--copies`` copies of each clip in ../shared/data/bvh (or of generated
walks where that folder is absent). Every engine plants every clip (``force=True``)
once per round, taking turns, for ``--repeat`` rounds; the ratio printed is the
median over rounds of serial time over the engine's time. The serial run and the pool
both start warm (the kernels loaded in this process, which the pool's workers fork
from), so the ratio is of steady throughput; ``--cold`` also times the whole command,
start-up included. A control, a busy loop run the same two ways each round, shows the
speed-up the machine itself allowed meanwhile (on a shared machine, other work takes
its share).

    PYTHONPATH=src python benchmarks/batch.py [--clips DIR] [--copies 8] [--jobs N]
        [--scheduler tcp://HOST:PORT] [--cold]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from limbik.app.batch import _warm_up, default_jobs, footplant_library

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "bvh"


def build_library(folder: Path, copies: int, clips: Path) -> int:
    """Copies of the clips in ``clips`` (or of generated walks) in ``folder``; returns the
    count."""
    sources = sorted(clips.glob("*.bvh")) if clips.is_dir() else []
    if not sources:
        from limbik import write_bvh
        from limbik.placement.walk import walk_cycle

        generated = folder.parent / "generated"
        generated.mkdir()
        for k in range(3):
            write_bvh(walk_cycle(cycles=2 + k, frame_rate=120.0), generated / f"walk{k}.bvh")
        sources = sorted(generated.glob("*.bvh"))
    for c in range(copies):
        sub = folder / f"take{c:03d}"
        sub.mkdir(parents=True)
        for source in sources:
            shutil.copy(source, sub / source.name)
    return copies * len(sources)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the pool's workers)."""
    me, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(source: Path, out: Path, **engine) -> tuple[float, float, list[float]]:
    """Wall and CPU time of one forced run, and its per-clip seconds."""
    start, cpu = time.perf_counter(), cpu_seconds()
    summary = footplant_library(source, out, force=True, report=False, **engine)
    seconds = time.perf_counter() - start
    assert not summary.failed, summary.failed
    return seconds, cpu_seconds() - cpu, [r["seconds"] for r in summary.records]


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def control_ratio(jobs: int, n: int = 1_500_000) -> float:
    """The same busy loop ``jobs`` times, in this process and in ``jobs`` processes: the
    speed-up this machine allows right now (other work on it takes its share)."""
    import multiprocessing

    start = time.perf_counter()
    for _ in range(jobs):
        _burn(n)
    serial = time.perf_counter() - start
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pool.map(_burn, [n] * jobs)
    return serial / (time.perf_counter() - start)


def command_seconds(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "limbik", *args], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=Path, default=SHARED, help="a folder of .bvh clips "
                        "to copy (default ../shared/data/bvh; generated walks if absent)")
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--repeat", type=int, default=3, help="rounds")
    parser.add_argument("--scheduler", help="also time this Dask scheduler")
    parser.add_argument("--cold", action="store_true", help="also time the whole command")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="limbik-batch-") as tmp:
        folder = Path(tmp) / "clips"
        clips = build_library(folder, args.copies, args.clips)
        _warm_up()
        engines: dict[str, dict] = {"serial": {"jobs": 1},
                                    f"{args.jobs} processes": {"jobs": args.jobs}}
        if args.scheduler:
            engines["dask"] = {"scheduler": args.scheduler}
        times: dict[str, list[float]] = {name: [] for name in engines}
        cpu: dict[str, list[float]] = {name: [] for name in engines}
        per_clip: list[float] = []
        control: list[float] = []
        for _ in range(args.repeat):  # engines take turns, so load from others hits all
            control.append(control_ratio(args.jobs))
            for name, engine in engines.items():
                seconds, cpu_used, clip_seconds = timed(folder, Path(tmp) / "out", **engine)
                times[name].append(seconds)
                cpu[name].append(cpu_used)
                if name == "serial":
                    per_clip += clip_seconds
        print(f"{clips} clips, {args.repeat} rounds; per clip (serial) "
              f"{statistics.mean(per_clip) * 1e3:.0f} ms mean, "
              f"{statistics.median(per_clip) * 1e3:.0f} ms median (read, plant, write)")
        for name, seconds in times.items():
            ratios = [s / t for s, t in zip(times["serial"], seconds, strict=True)]
            # CPU per clip against serial: the engine's own overhead, whatever the load
            # (a Dask cluster's workers are not this process's children: not counted)
            overhead = ("" if name == "dask" else
                        f"; CPU {statistics.median(cpu[name]) / statistics.median(cpu['serial']):.2f}x serial's")
            print(f"{name:<14} {clips / min(seconds):7.2f} clips/s (best round)   "
                  f"{statistics.median(ratios):.2f}x serial (median of rounds; "
                  f"{min(ratios):.2f}-{max(ratios):.2f}){overhead}")
        print(f"control: a busy loop in {args.jobs} processes ran "
              f"{statistics.median(control):.2f}x its serial speed (median of rounds; "
              f"{min(control):.2f}-{max(control):.2f}): the most this machine gave meanwhile")
        if args.cold:
            out = str(Path(tmp) / "cold")
            one = command_seconds(["footplant", str(folder), "-o", out, "--jobs", "1",
                                   "--force", "--no-progress"])
            many = command_seconds(["footplant", str(folder), "-o", out, "--jobs",
                                    str(args.jobs), "--force", "--no-progress"])
            print(f"whole command (start-up included): {one:.1f} s with --jobs 1, "
                  f"{many:.1f} s with --jobs {args.jobs}: {one / many:.2f}x")


if __name__ == "__main__":
    main()
