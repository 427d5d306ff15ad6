"""Sweep the foot-placement acceptance checks over many unseen height fields.

    PYTHONPATH=src python tools/footplant_sweep.py [--seeds 10] [--first 100] [--kinds ridges noise]

For each shared clip in ``../shared/data/bvh`` and each seed of
``tests/placement/clip_checks.rough_terrain`` (smooth noise and 25° ridges), plants the
clip with :func:`limbik.footplant` and recomputes every height-field check of the
acceptance list from the result's joint positions (``clip_checks.heightfield_checks``).
Prints, per check and per group of clips (style clips, network clips), the worst margin
over all runs (limit minus value: negative is a miss) and the run that gave it, then
every miss. Also runs the network clip against its
authors' clean-up on flat ground and the built-in walk's knee pop on steps.
Too slow for the test suite (a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "placement"))

import clip_checks  # noqa: E402

import limbik  # noqa: E402
from limbik.placement import Terrain  # noqa: E402
from limbik.placement.footplant import footplant, terrain_for_clip  # noqa: E402
from limbik.placement.walk import walk_cycle  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "bvh"
CLIPS = ["cmu_131_01_start_walk_stop_meters.bvh", "xia_neutral_walk_01_000.bvh",
         "dme_demo_3d_1_raw_footskate.bvh", "dme_demo_3d_1_fixed_ik.bvh"]


def heightfield_margins(row: dict[str, float]) -> dict[str, tuple[float, float, float]]:
    """Check name → (value, limit, margin = limit − value) for one leg's row."""
    return {
        "penetration (leg)": (row["penetration"], 0.01),
        "stance height error p99 (leg)": (row["stance_height_error_p99"], 0.01),
        "new backward knee frames": (row["new_backward_frames"], 0.0),
        "knee move per frame (leg)": (row["knee_jump"], row["knee_jump_limit"]),
        "knee pop (deg)": (row["knee_pop"], row["knee_pop_source"] + 2.0),
    }


def sweep(seeds: range, kinds: list[str]) -> list[str]:
    worst: dict[tuple[str, str], tuple[float, str, float, float]] = {}
    misses = []
    for name in CLIPS:
        path = DATA / name
        if not path.exists():
            print(f"skipped {name}: not found")
            continue
        source = limbik.read_bvh(path)
        # the acceptance list checks style clips over height fields; the network clips
        # (which float in stance, and that float is removed) are reported apart
        group = "network" if name.startswith("dme") else "style"
        for kind in kinds:
            for seed in seeds:
                heights, cell, origin = clip_checks.rough_terrain(source, seed, kind)
                terrain = Terrain.from_array(heights, cell, origin)
                result, report = footplant(source, terrain)
                # a floor below 0 (network output) is carried onto the terrain: measure the
                # source's heights above its own floor
                rows = clip_checks.heightfield_checks(source, result, terrain,
                                                      floor=report.floor)
                for side, row in rows.items():
                    run = f"{name[:16]} {kind} {seed} {side}"
                    for check, (value, limit) in heightfield_margins(row).items():
                        margin = limit - value
                        key = (group, check)
                        if key not in worst or margin < worst[key][0]:
                            worst[key] = (margin, run, value, limit)
                        if margin < 0:
                            misses.append(f"MISS {run}: {check} {value:.4g} > {limit:.4g}")
            print(f"  {name} {kind}: done", flush=True)
    print("\nworst margins over all height-field runs (limit - value; < 0 is a miss):")
    for (group, check), (margin, run, value, limit) in sorted(worst.items()):
        print(f"  {group:7s} {check:30s} value {value:8.4g}  limit {limit:8.4g}  "
              f"margin {margin:+8.4g}  ({run})")
    return misses


def network_check() -> None:
    raw_path, fixed_path = DATA / CLIPS[2], DATA / CLIPS[3]
    if not raw_path.exists():
        return
    raw, fixed = limbik.read_bvh(raw_path), limbik.read_bvh(fixed_path)
    result, _ = footplant(raw, terrain_for_clip("flat", raw))
    print("\nnetwork clip on flat ground against its authors' clean-up:")
    for side, row in clip_checks.compare_with_reference(result, fixed).items():
        leg = row["leg"]
        print(f"  {side}: penetration {row['ours_penetration']:.3f} (limit {0.005 * leg:.3f}), "
              f"gap {row['ours_gap']:.3f} (limit {row['theirs_gap'] + 0.01 * leg:.3f}), "
              f"heel {row['ours_heel_speed']:.2f} (limit {row['theirs_heel_speed'] + 0.5:.2f}), "
              f"toe {row['ours_toe_speed']:.2f} (limit {row['theirs_toe_speed'] + 0.5:.2f})")
    print(f"  backward knee frames {clip_checks.backward_frames(result)} (limit "
          f"{min(clip_checks.backward_frames(raw), clip_checks.backward_frames(fixed))}), "
          f"knee move {clip_checks.knee_jump(result):.3f} "
          f"(limit {1.5 * clip_checks.knee_jump(fixed):.3f})")


def steps_check() -> None:
    walk = walk_cycle(cycles=2.0)
    print("\nbuilt-in walk, knee pop (deg/frame at 60 fps): source "
          f"{clip_checks.knee_pop(walk):.2f}")
    for kind in ("flat", "hills", "slope", "steps"):
        for seed in (1, 3):
            result, _ = footplant(walk, terrain_for_clip(kind, walk, seed=seed))
            print(f"  {kind} seed {seed}: {clip_checks.knee_pop(result):.2f}, "
                  f"backward frames {clip_checks.backward_frames(result)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--kinds", nargs="+", default=["ridges", "noise"])
    parser.add_argument("--skip-extra", action="store_true",
                        help="only the height-field sweep")
    args = parser.parse_args()
    misses = sweep(range(args.first, args.first + args.seeds), args.kinds)
    if not args.skip_extra:
        network_check()
        steps_check()
    print(f"\n{len(misses)} misses")
    for line in misses:
        print("  " + line)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
