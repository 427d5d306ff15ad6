"""The before/after side view of a foot-placement run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from limbik.viz.plots import _pyplot


def walk_direction(root_xz: np.ndarray) -> np.ndarray:
    """Unit horizontal direction ``(2,)`` (x, z) along which the root travels most."""
    centred = root_xz - root_xz.mean(axis=0)
    if np.ptp(centred, axis=0).max(initial=0.0) < 1e-9:
        return np.array([0.0, 1.0])
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    d = vt[0]
    if np.dot(root_xz[-1] - root_xz[0], d) < 0:
        d = -d
    return d / np.linalg.norm(d)


def plot_footplant(source: Any, result: Any, terrain: Any, legs: Sequence[Any],
                   contacts: dict[str, list[tuple[int, int]]], *, floor: float = 0.0,
                   title: str | None = None) -> Any:
    """One panel per leg: distance along the walk (x) against height (y, exaggerated).

    The ground under the planted foot is filled grey; the source foot is dashed grey
    (drawn on its own floor, shifted onto the ground it would stand on is not possible,
    so its raw height above ``floor`` is used); the result is coloured, and frames in
    contact are drawn as thick dots inside shaded spans. Returns the figure.
    """
    plt = _pyplot()
    fig, axes = plt.subplots(len(legs), 1, figsize=(8, 2.3 * len(legs) + 0.4), sharex=True,
                             squeeze=False)
    src_w = source.world_positions()
    out_w = result.world_positions()
    d = walk_direction(src_w[:, 0, [0, 2]])
    for ax, leg in zip(axes[:, 0], legs, strict=True):
        j = leg.toe if leg.toe is not None else leg.ankle
        name = "toe" if leg.toe is not None else "ankle"
        s = src_w[:, j]
        o = out_w[:, j]
        s_along = s[:, [0, 2]] @ d
        o_along = o[:, [0, 2]] @ d
        # the ground along the walk, on the line the foot keeps to on average
        across = np.array([-d[1], d[0]])
        offset = float(np.mean(o[:, [0, 2]] @ across))
        line = np.linspace(o_along.min(), o_along.max(), 400)
        xz = line[:, None] * d + offset * across
        ground = terrain.height(xz[:, 0], xz[:, 1])
        base = min(float(ground.min()), float(s[:, 1].min() - floor)) - 0.05 * max(
            float(np.ptp(o[:, 1])), 1e-6)
        ax.fill_between(line, ground, base, color="0.75", lw=0, label="ground along the walk")
        ax.plot(s_along, s[:, 1] - floor, "--", color="0.45", lw=1,
                label=f"source {name} (height above its floor)")
        ax.plot(o_along, o[:, 1], "-", color="C0", lw=1.2, label=f"planted {name}")
        for k, (start, stop) in enumerate(contacts.get(leg.side, [])):
            lo, hi = o_along[start:stop].min(), o_along[start:stop].max()
            ax.axvspan(lo - 0.01, hi + 0.01, color="C2", alpha=0.15, lw=0,
                       label="contact" if k == 0 else None)
            ax.plot(o_along[start:stop], o[start:stop, 1], ".", color="C2", ms=3)
        ax.set_ylabel(f"{leg.side} {name}\nheight (y up)")
        ax.set_ylim(base, None)
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=2)
    axes[-1, 0].set_xlabel("distance along the walk")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
