"""Skeleton work on a whole clip: forward kinematics, applying IK, BVH reading.

Uses the CMU walk from ``../shared/data/bvh/`` (995 frames, 31 joints). Each limbik
call handles all frames at once; each baseline does the same work one frame at a
time in Python, which is what a frame-by-frame loop (or a port of the seeds' C0
application) costs. Prints speed ratios measured in this run.

    PYTHONPATH=src python benchmarks/skeleton_clip.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import limbik

CLIP = (Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bvh"
        / "cmu_131_01_start_walk_stop_meters.bvh")


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def fk_per_frame(motion):
    """Baseline: 4x4 matrices, one frame and one joint at a time."""
    parents = motion.skeleton.parents
    translations = motion.local_translations()
    out = np.empty((motion.num_frames, motion.num_joints, 3))
    for f in range(motion.num_frames):
        mats = Rotation.from_quat(motion.rotations[f]).as_matrix()
        world = np.empty((motion.num_joints, 4, 4))
        for j in range(motion.num_joints):
            local = np.eye(4)
            local[:3, :3] = mats[j]
            local[:3, 3] = translations[f, j]
            world[j] = local if parents[j] < 0 else world[parents[j]] @ local
        out[f] = world[:, :3, 3]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not CLIP.is_file():
        raise SystemExit(f"clip not found: {CLIP}")
    t_read = best_time(lambda: limbik.read_bvh(CLIP), args.repeat)
    motion = limbik.read_bvh(CLIP)
    F, J = motion.num_frames, motion.num_joints
    print(f"clip: {CLIP.name}, {F} frames, {J} joints")

    t_fk = best_time(motion.world_positions, args.repeat)
    t_fk_base = best_time(lambda: fk_per_frame(motion), 1)
    assert np.abs(motion.world_positions() - fk_per_frame(motion)).max() < 1e-9
    print(f"forward kinematics: limbik batched vs per-frame 4x4 loop: "
          f"{t_fk_base / t_fk:.1f}x faster")

    legs = limbik.find_legs(motion.skeleton)
    pos = motion.world_positions()
    rng = np.random.default_rng(0)
    angle = rng.uniform(-0.3, 0.3, size=F)
    targets = {}
    for leg in legs:
        axis = pos[:, leg.ankle] - pos[:, leg.hip]
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        q = np.concatenate([axis * np.sin(angle / 2)[:, None], np.cos(angle / 2)[:, None]], -1)
        knee = pos[:, leg.hip] + limbik.geometry.rotate_vectors(q, pos[:, leg.knee] - pos[:, leg.hip])
        targets.update({leg.hip: pos[:, leg.hip], leg.knee: knee, leg.ankle: pos[:, leg.ankle]})

    def per_frame_apply():
        for f in range(F):
            one = dataclasses.replace(motion, rotations=motion.rotations[f:f + 1],
                                      root_positions=motion.root_positions[f:f + 1])
            limbik.apply_ik(one, {j: t[f:f + 1] for j, t in targets.items()})

    t_apply = best_time(lambda: limbik.apply_ik(motion, targets), args.repeat)
    t_apply_base = best_time(per_frame_apply, 1)
    print(f"apply_ik (both legs): whole clip in one call vs one call per frame: "
          f"{t_apply_base / t_apply:.1f}x faster")
    print(f"read_bvh vs forward kinematics of the same clip: {t_read / t_fk:.1f}x the FK time")


if __name__ == "__main__":
    main()
