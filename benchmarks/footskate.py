"""Foot clean-up on clips it has never seen: seeded defects, generated terrains, distributions.

Every clean clip in ``../shared/data/bvh/`` (all but the ``dme_demo`` network pair) is
given seeded, network-like defects: foot sliding of known size during stance (a hip
sway at step frequency), a root drift, a floor offset, smooth per-joint rotation noise,
a time warp, and every other seed is mirrored left/right. Each is cleaned with
``limbik.footplant`` on flat ground and on generated terrains (smooth noise with bumps
about half a leg wide, ridges up to 25°, steps), and measured with
:func:`limbik.metrics.score_motion` against the defective source and against the clean
original (recovery: how fast the clean original's stance joints move, and how far
their heights above the ground are from the clean original's). The distribution over
seeds and clips (median, 95th percentile, worst) is printed per terrain, followed by the
network clip against its authors' clean-up.

    PYTHONPATH=src python benchmarks/footskate.py [--seeds 3] [--long] [--terrains flat,noise]
        [--baseline OTHER/footplant.py]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

import limbik
from limbik.geometry.quaternion import quaternion_from_axis_angle, quaternion_multiply
from limbik.metrics import score_motion
from limbik.placement import Terrain
from limbik.placement.contacts import joint_contacts, smoothed_speed
from limbik.placement.footplant import _leg_lengths, estimate_floor, footplant

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "bvh"
TERRAINS = ("flat", "noise", "ridges", "steps")
#: the scores printed, with the direction that is better
#: (slide speeds in % of a leg per second, other lengths in % of a leg)
SHOWN = ("skate_ratio", "slide_speed", "penetration", "float", "joint_change",
         "root_change", "stance_height_p99", "swing_accel_ratio", "swing_clearance",
         "clearance_ratio", "foot_turn", "knee_move_ratio", "knee_pop_excess",
         "backward_knee_excess", "recovered_slide", "recovered_height_p99")


def clean_clips() -> list[Path]:
    return sorted(p for p in DATA.glob("*.bvh") if not p.name.startswith("dme_"))


def _mirror(motion: limbik.Motion) -> limbik.Motion:
    """The clip mirrored across the x = 0 plane, left and right joints swapped (the
    skeleton is taken as symmetric)."""
    names = motion.skeleton.names
    index = {n: k for k, n in enumerate(names)}
    swap = []
    for n in names:
        other = (n.replace("Left", "\0").replace("Right", "Left").replace("\0", "Right"))
        swap.append(index.get(other, index[n]))
    q = motion.rotations[:, swap].copy()
    q[..., 1] *= -1.0
    q[..., 2] *= -1.0
    root = motion.root_positions.copy()
    root[:, 0] *= -1.0
    return dataclasses.replace(motion, rotations=q, root_positions=root)


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, ...], frames: int,
                  width: int) -> np.ndarray:
    """Gaussian noise ``(frames, *shape)`` low-passed over about ``width`` frames, unit std."""
    raw = rng.standard_normal((frames + 4 * width, *shape))
    kernel = np.hanning(2 * width + 3)[1:-1]
    out = np.apply_along_axis(lambda v: np.convolve(v, kernel, mode="same"), 0, raw)
    out = out[2 * width:2 * width + frames]
    return out / max(float(out.std()), 1e-12)


def inject(clean: limbik.Motion, seed: int) -> tuple[limbik.Motion, limbik.Motion, dict]:
    """The clean clip (mirrored for odd seeds, time-warped) and a defective copy of it
    with the same frames; and the defect sizes."""
    rng = np.random.default_rng(seed)
    motion = _mirror(clean) if seed % 2 else clean
    legs = limbik.find_legs(motion.skeleton)
    leg = float(np.mean([sum(_leg_lengths(motion, g)) for g in legs]))
    n, dt = motion.num_frames, motion.frame_time
    # time warp: a smooth monotone reparametrisation, up to ±15% in speed
    warp = 1.0 + 0.15 * _smooth_noise(rng, (), n, max(2, round(0.5 / dt))).clip(-1, 1)
    t = np.concatenate([[0.0], np.cumsum(warp[:-1])])
    t *= (n - 1) / t[-1]
    i = np.minimum(np.floor(t).astype(int), n - 2) if n > 1 else np.zeros(n, int)
    a = (t - i)[:, None] if n > 1 else np.zeros((n, 1))
    from limbik.geometry.quaternion import quaternion_slerp
    rot = quaternion_slerp(motion.rotations[i], motion.rotations[np.minimum(i + 1, n - 1)],
                           np.broadcast_to(a, (n, motion.num_joints)))
    root = motion.root_positions[i] * (1 - a) + motion.root_positions[np.minimum(i + 1, n - 1)] * a
    clean_w = dataclasses.replace(motion, rotations=rot, root_positions=root)
    # defects
    sizes = {"noise_deg": float(rng.uniform(0.5, 2.0)), "drift": float(rng.uniform(0.01, 0.04)),
             "floor": float(rng.uniform(-0.08, 0.08)), "slide": float(rng.uniform(0.02, 0.06))}
    q = rot.copy()
    noise = np.radians(sizes["noise_deg"]) * _smooth_noise(
        rng, (motion.num_joints, 3), n, max(1, round(0.08 / dt)))
    angle = np.linalg.norm(noise, axis=-1)
    axis = noise / np.maximum(angle[..., None], 1e-12)
    q = quaternion_multiply(q, quaternion_from_axis_angle(axis, angle))
    # foot sliding: the hips sway fore and aft at step frequency, so planted feet slide
    period = 1.0  # seconds per stride
    sway = np.arcsin(min(sizes["slide"], 0.5)) * np.sin(2 * np.pi * np.arange(n) * dt / period)
    for g in legs:
        side = 1.0 if g.side == "left" else -1.0
        q[:, g.hip] = quaternion_multiply(
            q[:, g.hip], quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), side * sway))
    drift = sizes["drift"] * leg * _smooth_noise(rng, (2,), n, max(2, round(0.4 / dt)))
    r = root.copy()
    r[:, [0, 2]] += drift
    r[:, 1] += sizes["floor"] * leg
    return clean_w, dataclasses.replace(motion, rotations=q, root_positions=r), sizes


def make_terrain(kind: str, motion: limbik.Motion, seed: int) -> Terrain:
    legs = limbik.find_legs(motion.skeleton)
    leg = float(np.mean([sum(_leg_lengths(motion, g)) for g in legs]))
    root = motion.root_positions[:, [0, 2]]
    lo, hi = root.min(axis=0) - 2 * leg, root.max(axis=0) + 2 * leg
    extent = (float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]))
    if kind == "flat":
        return Terrain.flat(0.0)
    if kind == "noise":
        return Terrain.hills(seed, extent=extent, amplitude=0.05 * leg, wavelength=1.0 * leg,
                             cell_size=0.04 * leg)
    rng = np.random.default_rng(seed + 1000)
    cell = 0.03 * leg
    xs = np.arange(extent[0], extent[1] + cell, cell)
    zs = np.arange(extent[2], extent[3] + cell, cell)
    X, Z = np.meshgrid(xs, zs)
    travel = root[-1] - root[0]
    heading = float(np.arctan2(travel[1], travel[0])) if np.any(travel) else 0.0
    along = np.cos(heading) * X + np.sin(heading) * Z
    if kind == "ridges":
        wavelength = rng.uniform(1.2, 2.0) * leg
        slope = np.tan(np.radians(rng.uniform(15.0, 25.0)))
        amplitude = slope * wavelength / (2 * np.pi)
        h = amplitude * np.sin(2 * np.pi * along / wavelength + rng.uniform(0, 2 * np.pi))
    else:
        step = rng.uniform(0.6, 1.0) * leg
        h = 0.08 * leg * np.floor(along / step + rng.uniform(0, 1))
        h -= np.median(h)
    return Terrain(h, cell, (extent[0], extent[2]), name=kind)


def recovery(planted: limbik.Motion, clean: limbik.Motion, terrain: Terrain) -> dict[str, float]:
    """How well the clean original's stances come back: mean speed of its stance joints
    (ankle, toe) in the result, and the 99th percentile of their height change above the
    ground (result on ``terrain``, clean on its own floor), % leg. The clean stances are
    found with fixed thresholds (3% of a leg, the clip's own speed threshold), not the
    library's defaults, so that the yardstick does not move with them."""
    legs = limbik.find_legs(clean.skeleton)
    leg = float(np.mean([sum(_leg_lengths(clean, g)) for g in legs]))
    dt = clean.frame_time
    cw = clean.world_positions()
    pw = planted.world_positions()
    floor = estimate_floor(clean, legs, leg)
    speeds, heights = [], []
    for g in legs:
        joints = [g.ankle] + ([g.toe] if g.toe is not None else [])
        c = cw[:, joints]
        ch = c[..., 1] - floor
        cv = np.stack([smoothed_speed(c[:, k], dt) for k in range(len(joints))], axis=1)
        mask = joint_contacts(ch, cv, leg, dt, contact_height=0.03)
        p = pw[:, joints]
        ph = p[..., 1] - terrain.height(p[..., 0], p[..., 2])
        v = np.zeros(ph.shape)
        v[1:] = np.hypot(*np.moveaxis(np.diff(p[..., [0, 2]], axis=0), -1, 0)) / dt
        inner = mask.copy()
        inner[1:] &= mask[:-1]
        speeds.append(v[inner])
        heights.append(np.abs(ph - ch)[mask])
    s, h = np.concatenate(speeds), np.concatenate(heights)
    return {"recovered_slide": float(s.mean()) / leg if s.size else 0.0,
            "recovered_height_p99": 100 * float(np.percentile(h, 99)) / leg if h.size else 0.0}


def run_case(clip: Path, seed: int, kind: str) -> dict[str, float]:
    clean, source = inject(limbik.read_bvh(clip), seed)[:2]
    terrain = make_terrain(kind, source, seed)
    planted, _ = footplant(source, terrain)
    s = score_motion(planted, source=source, terrain=terrain)
    src = score_motion(source, source=source)
    s["clearance_ratio"] = (s["swing_clearance"] / src["swing_clearance"]
                            if src["swing_clearance"] > 0 else np.nan)
    s["knee_move_ratio"] = s["knee_move"] / max(src["knee_move"], 1e-9)
    s["knee_pop_excess"] = s["knee_pop"] - src["knee_pop"]
    s["backward_knee_excess"] = s["backward_knee_frames"] - src["backward_knee_frames"]
    s.update(recovery(planted, clean, terrain))
    s["recovered_slide"] *= 100.0  # % leg per second
    legs = limbik.find_legs(source.skeleton)
    s["slide_speed"] *= 100.0 / float(np.mean([sum(_leg_lengths(source, g)) for g in legs]))
    return s


def real_world() -> dict[str, dict[str, float]]:
    """The network clip, limbik's clean-up on flat ground and its authors' clean-up,
    scored against the raw clip, with the authors' held frames as labels."""
    raw = limbik.read_bvh(DATA / "dme_demo_3d_1_raw_footskate.bvh")
    ref = limbik.read_bvh(DATA / "dme_demo_3d_1_fixed_ik.bvh")
    legs = limbik.find_legs(raw.skeleton)
    leg = float(np.mean([sum(_leg_lengths(raw, g)) for g in legs]))
    rw = ref.world_positions()
    labels = {}
    for g in legs:  # held: ankle and toe slower than 10% of a leg per second on average
        joints = [g.ankle] + ([g.toe] if g.toe is not None else [])
        v = np.zeros((ref.num_frames, len(joints)))
        v[1:] = np.linalg.norm(np.diff(rw[:, joints], axis=0), axis=-1) / ref.frame_time
        labels[g.side] = v.mean(axis=1) < 0.1 * leg
    planted, _ = footplant(raw, Terrain.flat(0.0))
    return {name: score_motion(m, source=raw, labels=labels,
                               terrain=None if name == "raw" else Terrain.flat(
                                   estimate_floor(m, legs, leg)) if name == "reference"
                               else Terrain.flat(0.0))
            for name, m in (("raw", raw), ("limbik", planted), ("reference", ref))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4, help="seeds per clip and terrain")
    parser.add_argument("--long", action="store_true", help="12 seeds per clip and terrain")
    parser.add_argument("--terrains", default=",".join(TERRAINS))
    parser.add_argument("--baseline", type=Path, default=None,
                        help="measure the footplant of another copy of footplant.py")
    args = parser.parse_args()
    if args.baseline is not None:
        import importlib.util
        spec = importlib.util.spec_from_file_location("limbik.placement._baseline",
                                                      args.baseline)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        import sys
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        global footplant
        footplant = module.footplant
    seeds = 12 if args.long else args.seeds
    clips = clean_clips()
    start = time.perf_counter()
    for kind in args.terrains.split(","):
        rows = [run_case(c, s, kind) for c in clips for s in range(seeds)]
        print(f"\n== terrain {kind}: {len(rows)} runs ({len(clips)} clips x {seeds} seeds)")
        print(f"{'score':24s} {'median':>9s} {'p95':>9s} {'worst':>9s}")
        for key in SHOWN:
            v = np.array([r.get(key, np.nan) for r in rows], dtype=float)
            v = v[np.isfinite(v)]
            if not v.size:
                continue
            worst = (v.min() if key in ("swing_clearance", "clearance_ratio")
                     else v.max())
            p95 = np.percentile(v, 5 if key in ("swing_clearance", "clearance_ratio") else 95)
            print(f"{key:24s} {np.median(v):9.3f} {p95:9.3f} {worst:9.3f}")
    print("\n== network clip, flat ground (dme_demo_3d_1): raw, limbik, authors' clean-up")
    table = real_world()
    keys = list(table["reference"])
    print(f"{'score':24s} " + " ".join(f"{k:>10s}" for k in table))
    for key in keys:
        print(f"{key:24s} " + " ".join(f"{table[k].get(key, np.nan):10.3f}" for k in table))
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
