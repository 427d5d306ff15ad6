"""Foot clean-up of generated joint positions with seeded defects, against the clean original.

Each clean clip of ``../shared/data/bvh/`` with CMU joint names becomes SMPL-order joint
positions in metres at 20 fps, and for every seed a defective copy: planted feet that
slide (a hip sway at one stride per second, 2–6% of a leg), bones whose lengths wobble
(each by up to ±``--wobble``, smoothly) and white jitter of ``--jitter`` metres on every
joint and frame. The copy is cleaned with :func:`limbik.placement.footplant_positions`
and measured against the clean original:

- ``held``: on the frames where the clean original's foot stands still (ankle and toe
  slower than 0.1 m/s on average), the mean speed of the cleaned ankle and toe, m/s;
  ``held_in``: the same for the defective input;
- ``skate``: the foot-skating ratio (GMD's thresholds) of the result minus the clean
  original's, each above its own floor (the lowest foot joint's 5th-percentile height);
  ``skate_y0``: the same with heights above y = 0, as GMD's code measures them (the
  clip is cleaned onto the plane y = 0, as ``limbik footplant`` does by default, and
  the clean original stands where its capture put it);
- ``penetration``: the deepest foot joint below the floor (the lowest foot joint's
  5th-percentile height), % of a leg;
- ``bones``: the largest relative spread of a bone's length over the frames;
- ``upper``: the largest change of a joint above the pelvis relative to the pelvis, m;
- ``change``: the mean joint change from the input, m.

Printed: the distribution over clips and seeds (median, 95th percentile, worst) for
each ``--jitter`` level.

    PYTHONPATH=src python benchmarks/generated_cleanup.py [--seeds 4] [--jitter 0 0.005 0.01]
"""

from __future__ import annotations

import argparse

import numpy as np

import limbik
from limbik import metrics
from limbik.placement.positions import footplant_positions
from limbik.skeleton import resample
from limbik.skeleton.positions import position_layout
from positions import CMU_FOR_SMPL22, CMU_UNIT, DATA  # benchmarks/positions.py

FPS = 20.0
FEET = (7, 10, 8, 11)  # left ankle, left toe, right ankle, right toe
TOES = (10, 11)
UPPER = (3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)


def sources() -> list[tuple[str, limbik.Motion]]:
    """Each CMU-named clean clip at 20 fps."""
    out = [(path.stem, resample(limbik.read_bvh(path), FPS))
           for path in sorted((DATA / "bvh").glob("xia_*.bvh"))]
    if not out:
        raise SystemExit(f"no CMU-skeleton clips in {DATA / 'bvh'} (set LIMBIK_SHARED_DATA)")
    return out


def defective(motion: limbik.Motion, rng: np.random.Generator, jitter: float,
              wobble: float) -> tuple[np.ndarray, np.ndarray]:
    """The clean clip's SMPL positions ``(T, 22, 3)`` (metres) and a copy with sliding
    feet, wobbling bones and jitter."""
    from limbik.geometry.quaternion import quaternion_from_axis_angle, quaternion_multiply

    clean = motion.world_positions(joints=CMU_FOR_SMPL22) * CMU_UNIT
    n = motion.num_frames
    t = np.arange(n) / FPS
    sway = np.arcsin(rng.uniform(0.02, 0.06)) * np.sin(2 * np.pi * t + rng.uniform(0, 2 * np.pi))
    rotations = motion.rotations.copy()
    for leg in limbik.find_legs(motion.skeleton):
        side = 1.0 if leg.side == "left" else -1.0
        turn = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), side * sway)
        rotations[:, leg.hip] = quaternion_multiply(rotations[:, leg.hip], turn)
    slid = limbik.Motion(motion.skeleton, motion.root_positions, rotations, motion.frame_time)
    sliding = slid.world_positions(joints=CMU_FOR_SMPL22) * CMU_UNIT
    _, parents = position_layout("smpl22")
    scale = 1.0 + wobble * np.sin(2 * np.pi * rng.uniform(0.2, 1.0, 22) * t[:, None]
                                  + rng.uniform(0, 2 * np.pi, 22))
    out = sliding.copy()
    for j in range(1, 22):  # parents come before their children in SMPL's order
        out[:, j] = out[:, parents[j]] + (sliding[:, j] - sliding[:, parents[j]]) * scale[:, j:j + 1]
    return clean, out + rng.normal(0.0, jitter, out.shape)


def speeds(p: np.ndarray) -> np.ndarray:
    """Per-frame speed ``(T, k)`` of points ``(T, k, 3)`` (backward differences), m/s."""
    v = np.zeros(p.shape[:2])
    v[1:] = np.linalg.norm(np.diff(p, axis=0), axis=-1) * FPS
    return v


def measure(clean: np.ndarray, source: np.ndarray, result: np.ndarray) -> dict[str, float]:
    vc, vs, vr = speeds(clean[:, FEET]), speeds(source[:, FEET]), speeds(result[:, FEET])
    held, held_in = [], []
    for pair in ((0, 1), (2, 3)):
        still = vc[:, pair].mean(axis=1) < 0.1
        still[0] = False
        if still.any():
            held.append(vr[still][:, pair].mean())
            held_in.append(vs[still][:, pair].mean())
    _, parents = position_layout("smpl22")
    lengths = np.linalg.norm(result[:, 1:] - result[:, parents[1:]], axis=-1)
    lengths = lengths[:, lengths.mean(axis=0) > 0]  # (a joint on its parent has no bone)
    before = metrics.score_positions(clean, "smpl22", fps=FPS)
    after = metrics.score_positions(result, "smpl22", fps=FPS, reference=source)
    leg = after["leg_length"]
    relative = (result[:, UPPER] - result[:, :1]) - (source[:, UPPER] - source[:, :1])
    return {"held": float(np.mean(held)), "held_in": float(np.mean(held_in)),
            "skate": after["skate_ratio"] - before["skate_ratio"],
            "skate_y0": (metrics.foot_skating_ratio(result, TOES, FPS)
                         - metrics.foot_skating_ratio(clean, TOES, FPS)),
            "penetration": 100 * after["penetration"] / leg,
            "bones": float((np.ptp(lengths, axis=0) / lengths.mean(axis=0)).max()),
            "upper": float(np.abs(relative).max()), "change": after["joint_change"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--jitter", type=float, nargs="+", default=[0.0, 0.005, 0.01],
                        help="white jitter, metres (standard deviation per axis)")
    parser.add_argument("--wobble", type=float, default=0.02,
                        help="bone-length wobble, a fraction of each bone")
    args = parser.parse_args()
    clips = sources()
    keys = ("held", "held_in", "skate", "skate_y0", "penetration", "bones", "upper",
            "change")
    print(f"{len(clips)} clips x {args.seeds} seeds at 20 fps (smpl22), bones wobbling "
          f"±{100 * args.wobble:g}%; median / 95th percentile / worst")
    for jitter in args.jitter:
        rows = []
        for k, (_, motion) in enumerate(clips):
            for seed in range(args.seeds):
                rng = np.random.default_rng(1000 * k + seed)
                clean, source = defective(motion, rng, jitter, args.wobble)
                result, _ = footplant_positions(source, "smpl22", fps=FPS, terrain="flat")
                rows.append(measure(clean, source, result))
        print(f"\njitter {1000 * jitter:g} mm: {len(rows)} runs")
        for key in keys:
            v = np.array([r[key] for r in rows])
            print(f"  {key:12s} {np.median(v):10.4g} {np.percentile(v, 95):10.4g} "
                  f"{v.max():10.4g}")


if __name__ == "__main__":
    main()
