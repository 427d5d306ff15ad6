"""Render the pictures of docs/footplant.md (run from the repository root).

    PYTHONPATH=src python docs/footplant_figures.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import limbik
from limbik.placement.footplant import footplant, terrain_for_clip
from limbik.placement.walk import walk_cycle
from limbik.viz import save_figure
from limbik.viz.footplant_plot import plot_footplant
from limbik.viz.plots import animate_motion

IMG = Path(__file__).parent / "img"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "bvh"


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


if __name__ == "__main__":
    main()
