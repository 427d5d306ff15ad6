"""The before/after side view of a foot-placement run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik.viz.plots import _pyplot, walk_direction


def plot_footplant(source: Any, result: Any, terrain: Any, legs: Sequence[Any],
                   contacts: dict[str, list[tuple[int, int]]], *, floor: float = 0.0,
                   title: str | None = None, units: str = "m") -> Any:
    """One panel per leg: the toe's height (y) against time, before and after.

    The ground under the planted toe is filled grey; the source toe is dashed grey (its
    height above ``floor``, where it stood on its own flat floor); the planted toe is
    blue, and the detected contacts are green spans. Returns the figure.
    """
    plt = _pyplot()
    fig, axes = plt.subplots(len(legs), 1, figsize=(10, 2.9 * len(legs) + 0.9), sharex=True,
                             squeeze=False)
    src_w = source.world_positions()
    out_w = result.world_positions()
    time = np.arange(result.num_frames) * float(result.frame_time)
    suffix = f" ({units})" if units else ""
    for ax, leg in zip(axes[:, 0], legs, strict=True):
        j = leg.toe if leg.toe is not None else leg.ankle
        name = "toe" if leg.toe is not None else "ankle"
        s = src_w[:, j]
        o = out_w[:, j]
        ground = terrain.height(o[:, 0], o[:, 2])
        lifted = s[:, 1] - floor
        base = min(float(ground.min()), float(lifted.min()), float(o[:, 1].min())) - 0.08 * max(
            float(np.ptp(o[:, 1])), 1e-6)
        ax.fill_between(time, ground, base, color="0.78", lw=0,
                        label=f"ground under the planted {name}")
        for k, (start, stop) in enumerate(contacts.get(leg.side, [])):
            ax.axvspan(time[start], time[max(stop - 1, start)], color="C2", alpha=0.2, lw=0,
                       label="contact (foot planted)" if k == 0 else None)
        ax.plot(time, lifted, "--", color="0.35", lw=1.2,
                label=f"source {name}, height above its own floor")
        ax.plot(time, o[:, 1], "-", color="C0", lw=1.6, label=f"planted {name}")
        ax.set_ylabel(f"{leg.side} {name}\nheight{suffix}")
        ax.set_ylim(base, None)
        ax.set_xlim(time[0], time[-1])
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.02), fontsize=9, ncol=4,
                      frameon=False, borderaxespad=0.0)
    axes[-1, 0].set_xlabel("time (s)")
    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


def plot_legs_side(source: Any, result: Any, terrain: Any, legs: Sequence[Any], *,
                   floor: float = 0.0, frames: Sequence[int] | None = None,
                   title: str | None = None) -> Any:
    """Side views of the legs, source (top, drawn on its floor moved to the terrain's
    level under the root) and planted (bottom), at ``frames`` (default: 24 spread over
    the clip). Hip–knee–ankle–toe polylines, left leg blue, right orange; the ground
    under the root's path is grey, and dotted in each leg's colour is the ground under
    that leg's foot (for the source: its own floor, which is where it stands). Knees
    that bend backward or feet in the ground show at a glance. Returns the figure."""
    plt = _pyplot()
    src_w = source.world_positions()
    out_w = result.world_positions()
    n = source.num_frames
    picks = (np.linspace(0, n - 1, min(n, 24)).round().astype(int) if frames is None
             else np.asarray(frames, dtype=int))
    d = walk_direction(src_w[:, 0, [0, 2]])
    root = out_w[:, 0, [0, 2]]
    lift = float(np.median(terrain.height(root[:, 0], root[:, 1]))) - floor
    fig, axes = plt.subplots(2, 1, figsize=(11, 5.6), sharex=True)
    along_all = out_w[:, :, [0, 2]] @ d
    line = np.linspace(along_all.min() - 0.1, along_all.max() + 0.1, 600)
    origin = root.mean(axis=0)
    across = np.array([-d[1], d[0]])
    offset = float(origin @ across)
    xz = line[:, None] * d + offset * across
    ground = terrain.height(xz[:, 0], xz[:, 1])
    for ax, world, shift, label in ((axes[0], src_w, lift, "source"),
                                    (axes[1], out_w, 0.0, "planted")):
        ax.fill_between(line, ground, ground.min() - 0.05 * np.ptp(out_w[..., 1]),
                        color="0.85", lw=0)
        for leg, colour in zip(legs, ("C0", "C1"), strict=False):
            # the ground under this foot's own path (the filled profile is under the root)
            foot = world[:, leg.toe if leg.toe is not None else leg.ankle]
            order = np.argsort(foot[:, [0, 2]] @ d)
            under = (np.full(len(order), floor + lift) if label == "source"
                     else terrain.height(foot[order, 0], foot[order, 2]))
            ax.plot((foot[:, [0, 2]] @ d)[order], under, ":", color=colour, lw=1.0)
        for f in picks:
            for leg, colour in zip(legs, ("C0", "C1"), strict=False):
                chain = [leg.hip, leg.knee, leg.ankle] + ([leg.toe] if leg.toe is not None
                                                          else [])
                p = world[f, chain]
                ax.plot(p[:, [0, 2]] @ d, p[:, 1] + shift, "-", color=colour, lw=1.1,
                        alpha=0.85)
                ax.plot((p[1, [0, 2]] @ d,), (p[1, 1] + shift,), "o", color=colour, ms=2.5)
        ax.set_ylabel(f"{label}\nheight")
        low = min(float(ground.min()), float(world[picks][..., 1].min() + shift))
        high = float(world[picks][:, [leg.hip for leg in legs], 1].max() + shift)
        pad = 0.05 * (high - low)
        ax.set_ylim(low - pad, high + pad)
        ax.set_aspect("equal", adjustable="box")
    axes[1].set_xlabel("distance along the walk (left leg blue, right orange; dots: knees)")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
