"""Real-time factor of foot placement on the CMU walk, and the batched pipeline against a
per-frame loop.

The real-time factor is the clip's duration divided by the processing time of
``limbik.footplant(motion, Terrain.flat())`` (contacts, locking, pelvis, leg IK,
applying the result, and the before/after metrics). The per-frame loop is seed 000's
recipe run frame by frame: a ray down under each foot, ``two_bone`` with the
animated knee as reference, ``apply_ik`` on that frame.

    PYTHONPATH=src python benchmarks/footplant.py [--clip PATH] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import limbik
from limbik.placement import Terrain
from limbik.placement.footplant import footplant, terrain_for_clip

CLIP = (Path(__file__).resolve().parents[2] / "shared" / "data" / "bvh"
        / "cmu_131_01_start_walk_stop_meters.bvh")


def best(fn, repeat: int) -> float:
    """Fastest of ``repeat`` runs, seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def per_frame(motion: limbik.Motion, terrain: Terrain) -> None:
    """Seed 000's loop: each frame on its own."""
    legs = limbik.find_legs(motion.skeleton)
    for f in range(motion.num_frames):
        frame = limbik.trim(motion, f, f + 1)
        world = frame.world_positions()
        positions = {}
        for leg in legs:
            hip = world[:, leg.hip]
            _, _, ground, _ = terrain.raycast(hip, [0.0, -1.0, 0.0])
            target = world[:, leg.ankle].copy()
            target[:, 1] = np.maximum(target[:, 1], ground[:, 1] + 0.05)
            off = motion.skeleton.offsets
            sol = limbik.two_bone(hip, target, np.linalg.norm(off[leg.knee]),
                                  np.linalg.norm(off[leg.ankle]), reference=world[:, leg.knee])
            positions[leg.knee] = sol.positions[:, 1]
            positions[leg.ankle] = sol.positions[:, 2]
        limbik.apply_ik(frame, positions=positions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clip", type=Path, default=CLIP)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    motion = limbik.read_bvh(args.clip)
    flat = Terrain.flat()
    hills = terrain_for_clip("hills", motion, seed=1)
    footplant(motion, flat)  # compile the kernels
    t_flat = best(lambda: footplant(motion, flat), args.repeat)
    t_hills = best(lambda: footplant(motion, hills), args.repeat)
    per_frame(limbik.trim(motion, 0, 5), flat)
    t_loop = best(lambda: per_frame(motion, flat), max(1, args.repeat // 3))
    print(f"{args.clip.name}: {motion.num_frames} frames at {motion.frame_rate:g} Hz "
          f"({motion.duration:.2f} s), {motion.num_joints} joints")
    print(f"real-time factor, flat terrain:  {motion.duration / t_flat:8.0f}x  (goal >= 200x)")
    print(f"real-time factor, hills:         {motion.duration / t_hills:8.0f}x")
    print(f"batched footplant vs per-frame seed loop (which does less: no locking, "
          f"pelvis or metrics): {t_loop / t_flat:6.1f}x faster")


if __name__ == "__main__":
    main()
