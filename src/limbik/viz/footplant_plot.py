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
