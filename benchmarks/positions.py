"""Foot clean-up of generated joint positions: clips per second, and against the same clips as BVH.

Makes ``--clips`` clips of ``--frames`` frames at 20 fps in SMPL's 22-joint order from
the clean clips in ``../shared/data/bvh/`` (resampled to 20 fps, mirrored, time-warped by
±15%, cut into windows, in metres), writes them as one ``.npy`` file each, and cleans
the folder with the batch runner (``limbik footplant DIR -o OUT --skeleton smpl22``) on
``--jobs`` processes. Then the same clips as BVH files (each the SMPL-order positions
fitted with :meth:`limbik.skeleton.Motion.from_positions`) through the same runner.
Last, the commands as a user types them, timed from outside (interpreter start, imports
and the kernels' loading count too): ``limbik footplant DIR -o OUT --skeleton smpl22
--fps 20`` on the folder (default processes, its summary report included), and the same
clips as one batch file ``(N, J, 3, T)`` (as MDM writes its samples).
Printed: seconds and clips per second for each, and the ratio measured in this run.

    PYTHONPATH=src python benchmarks/positions.py [--clips 1000] [--frames 196] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import limbik
from limbik.app.batch import footplant_library
from limbik.skeleton import Motion, resample

DATA = Path(os.environ.get("LIMBIK_SHARED_DATA",
                           Path(__file__).resolve().parents[1].parent / "shared" / "data"))
#: SMPL's 22 joints on a CMU-named skeleton.
CMU_FOR_SMPL22 = ("Hips", "LeftUpLeg", "RightUpLeg", "LowerBack", "LeftLeg", "RightLeg", "Spine",
                  "LeftFoot", "RightFoot", "Spine1", "LeftToeBase", "RightToeBase", "Neck",
                  "LeftShoulder", "RightShoulder", "Head", "LeftArm", "RightArm", "LeftForeArm",
                  "RightForeArm", "LeftHand", "RightHand")
#: Left/right joint pairs of SMPL's order, for mirroring.
MIRROR = (0, 2, 1, 3, 5, 4, 6, 8, 7, 9, 11, 10, 12, 14, 13, 15, 17, 16, 19, 18, 21, 20)
#: CMU units (about 5.6 cm) in metres.
CMU_UNIT = 0.056


def sources() -> list[np.ndarray]:
    """Each CMU-named clean clip as SMPL-order positions in metres at 20 fps."""
    out = []
    for path in sorted((DATA / "bvh").glob("xia_*.bvh")):
        clip = resample(limbik.read_bvh(path), 20.0)
        out.append(clip.world_positions(joints=CMU_FOR_SMPL22) * CMU_UNIT)
    if not out:
        raise SystemExit(f"no CMU-skeleton clips in {DATA / 'bvh'} (set LIMBIK_SHARED_DATA)")
    return out


def make_clips(count: int, frames: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``count`` clips ``(frames, 22, 3)``: time-warped, mirrored, looped windows."""
    base = sources()
    clips = []
    for k in range(count):
        clip = base[k % len(base)]
        speed = rng.uniform(0.85, 1.15)
        t = np.arange(frames) * speed
        t = t % (len(clip) - 1)  # loop the source
        i = np.floor(t).astype(int)
        w = (t - i)[:, None, None]
        window = (1 - w) * clip[i] + w * clip[i + 1]
        if k % 2:
            window = window[:, MIRROR] * np.array([-1.0, 1.0, 1.0])
        clips.append(window.astype(np.float32))
    return clips


def timed_library(folder: Path, out: Path, jobs: int, **options: object) -> float:
    start = time.perf_counter()
    summary = footplant_library(folder, out, jobs=jobs, report=False, **options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    failed = summary.failed
    if failed:
        raise SystemExit(f"{len(failed)} clips failed, e.g. {failed[0]['error']}")
    return seconds


def timed_command(source: Path, out: Path) -> float:
    """Seconds ``limbik footplant SOURCE -o OUT --skeleton smpl22 --fps 20`` takes."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "limbik", "footplant", str(source), "-o", str(out),
                    "--skeleton", "smpl22", "--fps", "20"], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=196)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    clips = make_clips(args.clips, args.frames, np.random.default_rng(0))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "npy").mkdir()
        (root / "bvh").mkdir()
        for k, clip in enumerate(clips):
            np.save(root / "npy" / f"clip{k:04d}.npy", clip)
            motion = Motion.from_positions(clip.astype(np.float64), "smpl22", frame_time=0.05)
            limbik.write_bvh(motion, root / "bvh" / f"clip{k:04d}.bvh")
        # compile and load the kernels once, outside the timing
        timed_library(root / "npy" / "clip0000.npy", root / "warm", 1, skeleton="smpl22",
                      fps=20.0)
        positions = timed_library(root / "npy", root / "npy_out", args.jobs,
                                  skeleton="smpl22", fps=20.0)
        bvh = timed_library(root / "bvh", root / "bvh_out", args.jobs)
        np.save(root / "batch.npy", np.stack(clips).transpose(0, 2, 3, 1))
        command, batch = (timed_command(root / name, root / out) for name, out in (
            ("npy", "cli_out"), ("batch.npy", "batch_out.npy")))
    n = args.clips
    print(f"{n} clips of {args.frames} frames at 20 fps (smpl22), {args.jobs} processes")
    print(f"  positions (.npy)   {positions:7.2f} s   {n / positions:8.1f} clips/s")
    print(f"  same clips as BVH  {bvh:7.2f} s   {n / bvh:8.1f} clips/s")
    print(f"  positions / BVH throughput: {bvh / positions:.2f}x")
    print("  the command line, start-up included:")
    print(f"    limbik footplant DIR (and its summary report)  {command:7.2f} s   "
          f"{n / command:8.1f} clips/s")
    print(f"    limbik footplant BATCH.npy (N, J, 3, T)        {batch:7.2f} s   "
          f"{n / batch:8.1f} clips/s")


if __name__ == "__main__":
    main()
