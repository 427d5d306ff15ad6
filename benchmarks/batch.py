"""Throughput of ``footplant_library``: worker processes (or a Dask cluster) against one
process, on the same library of clips in one run.

The library is ``--copies`` copies of each clip in ../shared/data/bvh (or of generated
walks where that folder is absent). Every engine plants every clip (``force=True``)
once per round, taking turns, for ``--repeat`` rounds; the ratio printed is the
median over rounds of serial time over the engine's time. The serial run and the pool
both start warm (the kernels loaded in this process, which the pool's workers fork
from), so the ratio is of steady throughput; ``--cold`` also times the whole command,
start-up included.

    PYTHONPATH=src python benchmarks/batch.py [--clips DIR] [--copies 8] [--jobs N]
        [--scheduler tcp://HOST:PORT] [--cold]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from limbik.batch import _warm_up, default_jobs, footplant_library

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


def timed(source: Path, out: Path, **engine) -> tuple[float, list[float]]:
    """Wall time of one forced run, and its per-clip seconds."""
    start = time.perf_counter()
    summary = footplant_library(source, out, force=True, report=False, **engine)
    seconds = time.perf_counter() - start
    assert not summary.failed, summary.failed
    return seconds, [r["seconds"] for r in summary.records]


def command_seconds(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "limbik.cli", *args], check=True,
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
        per_clip: list[float] = []
        for _ in range(args.repeat):  # engines take turns, so load from others hits all
            for name, engine in engines.items():
                seconds, clip_seconds = timed(folder, Path(tmp) / "out", **engine)
                times[name].append(seconds)
                if name == "serial":
                    per_clip += clip_seconds
        print(f"{clips} clips, {args.repeat} rounds; per clip (serial) "
              f"{statistics.mean(per_clip) * 1e3:.0f} ms mean, "
              f"{statistics.median(per_clip) * 1e3:.0f} ms median (read, plant, write)")
        for name, seconds in times.items():
            ratios = [s / t for s, t in zip(times["serial"], seconds, strict=True)]
            print(f"{name:<14} {clips / min(seconds):7.2f} clips/s (best round)   "
                  f"{statistics.median(ratios):.2f}x serial (median of rounds; "
                  f"{min(ratios):.2f}-{max(ratios):.2f})")
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
