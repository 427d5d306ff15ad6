"""Render the pictures of docs/footplant.md (run from the repository root).

    PYTHONPATH=src python docs/footplant_figures.py
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import limbik
from limbik.placement import Terrain
from limbik.placement.footplant import footplant, terrain_for_clip
from limbik.placement.walk import walk_cycle
from limbik.viz import save_figure
from limbik.viz.footplant_plot import plot_footplant, plot_legs_side
from limbik.viz.plots import animate_motion

IMG = Path(__file__).parent / "img"
DATA = Path(os.environ.get("LIMBIK_SHARED_DATA")
            or Path(__file__).resolve().parents[2] / "shared" / "data") / "bvh"


def side_view(motion: limbik.Motion, terrain_kind: str, name: str, title: str) -> None:
    terrain = terrain_for_clip(terrain_kind, motion, seed=1)
    result, report = footplant(motion, terrain)
    legs = limbik.find_legs(motion.skeleton)
    fig = plot_footplant(motion, result, terrain, legs, report.contacts, floor=report.floor,
                         title=title)
    save_figure(fig, IMG / name, dpi=100)


def main() -> None:
    walk = walk_cycle()
    side_view(walk, "hills", "footplant_walk_hills.png", "built-in walk planted on hills")
    terrain = terrain_for_clip("hills", walk, seed=1)
    result, _ = footplant(walk, terrain)
    legs = limbik.find_legs(walk.skeleton)
    ax = animate_motion(result, terrain=terrain, compare=walk, view="profile",
                        traces=[leg.toe for leg in legs], stride=2, label="planted",
                        compare_label="source, on its own flat floor",
                        trace_labels=[f"path of the planted {leg.side} toe" for leg in legs],
                        title="the built-in walk planted on hills")
    fig = ax.figure
    animation = fig.limbik_animation
    animation._func(70)  # draw one frame as a still
    save_figure(fig, IMG / "footplant_walk_frame.png", dpi=100)
    animation.save(IMG / "footplant_walk.gif", writer="pillow", fps=15, dpi=100)
    clip = DATA / "cmu_131_01_start_walk_stop_meters.bvh"
    if clip.exists():
        side_view(limbik.read_bvh(clip), "hills", "footplant_cmu_hills.png",
                  "CMU 131_01 (stylised walk) planted on hills")
        legs_view(limbik.read_bvh(clip), ridges(limbik.read_bvh(clip)), range(560, 700, 6),
                  "footplant_cmu_ridges_legs.png", "CMU 131_01 over 25° ridges")
    raw = DATA / "dme_demo_3d_1_raw_footskate.bvh"
    if raw.exists():
        legs_view(limbik.read_bvh(raw), Terrain.flat(0.0), range(0, 48, 2),
                  "footplant_dme_flat_legs.png",
                  "network output on flat ground at y = 0 (source drawn lifted onto it)")


def ridges(motion: limbik.Motion) -> Terrain:
    """Parallel ridges across the clip's path with 25° flanks."""
    import numpy as np
    from scipy.ndimage import gaussian_filter

    leg = limbik.find_legs(motion.skeleton)[0]
    off = motion.skeleton.offsets
    length = float(np.linalg.norm(off[leg.knee]) + np.linalg.norm(off[leg.ankle]))
    root = motion.root_positions[:, [0, 2]]
    lo = root.min(axis=0) - 2 * length
    hi = root.max(axis=0) + 2 * length
    cell = length / 16
    x = lo[0] + cell * np.arange(int((hi[0] - lo[0]) / cell) + 2)
    z = lo[1] + cell * np.arange(int((hi[1] - lo[1]) / cell) + 2)
    X, Z = np.meshgrid(x, z)
    wavelength = 2 * length
    phase = np.mod((0.8 * X + 0.6 * Z) / wavelength, 1.0)
    heights = gaussian_filter(1 - np.abs(2 * phase - 1), 1.5) * np.tan(np.radians(25)) * length
    return Terrain.from_array(heights, cell, (float(lo[0]), float(lo[1])))


def legs_view(motion: limbik.Motion, terrain: Terrain, frames: range, name: str,
              title: str) -> None:
    result, report = footplant(motion, terrain)
    fig = plot_legs_side(motion, result, terrain, limbik.find_legs(motion.skeleton),
                         floor=report.floor, frames=list(frames), title=title)
    save_figure(fig, IMG / name, dpi=80)


if __name__ == "__main__":
    main()
