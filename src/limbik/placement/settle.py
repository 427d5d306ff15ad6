"""A clip's white noise settled out of foot paths where the foot stands.

The noise's standard deviation comes from :func:`limbik.placement.contacts.white_noise`.
Over a run of ``m`` frames it reaches about the universal threshold ``σ·√(2 ln m)``
(:func:`~limbik.placement.contacts.universal_band`); a held joint's heights are
soft-thresholded toward the run's median by that band (:func:`settle_in_runs`), and the
paths of joints a standing foot does not hold keep a level within it still and follow a
larger move (:func:`steady_paths`).
"""

from __future__ import annotations

import numpy as np

from limbik.placement._footplant_kernels import steady_runs
from limbik.placement.contacts import runs, universal_band
from limbik.placement.spans import span_frames, span_medians

__all__ = ["median_of_three", "settle_in_runs", "steady_paths"]


def median_of_three(values: np.ndarray, frames: np.ndarray, starts: np.ndarray,
                     stops: np.ndarray) -> np.ndarray:
    """``values`` ``(n,)`` at ``frames`` ``(m,)``, each the median of itself and its two
    neighbours within its run ``[starts, stops)`` ``(m,)`` (a run's first and last frame
    take their own value): a monotone stretch is kept exactly, a one-frame spike is
    removed."""
    before = values[np.maximum(frames - 1, starts)]
    here = values[frames]
    after = values[np.minimum(frames + 1, stops - 1)]
    return np.maximum(np.minimum(before, here), np.minimum(np.maximum(before, here), after))


def settle_in_runs(values: np.ndarray, mask: np.ndarray, noise: float) -> None:
    """``values`` ``(n,)`` (in place) within each run of ``mask`` ``(n,)``, each first
    taken as the median of itself and its neighbours in the run
    (:func:`median_of_three`), soft-thresholded toward the run's median by its
    :func:`universal_band`: jitter about a standing level is removed, a one-frame spike
    beyond the band too, and a larger move (a heel rolling up) keeps its shape less that
    band. A run's first frame keeps its value where it is at or above the run's median
    (a joint touches down where the source's does), not where it is below (it does not
    touch down below where it then stands). Runs of fewer than three frames are left
    as they are."""
    starts, stops = runs(mask)
    keep = stops - starts >= 3  # (two frames tell a level from a move no better than one)
    starts, stops = starts[keep], stops[keep]
    if noise <= 0.0 or starts.size == 0:
        return
    frames, span = span_frames(starts, stops)
    centre = span_medians(values[:, None], starts, stops)[span, 0]
    offset = median_of_three(values, frames, starts[span], stops[span]) - centre
    band = universal_band(stops - starts, noise)[span] * np.where(
        (frames == starts[span]) & (offset >= 0.0), 0.0, 1.0)
    values[frames] = centre + np.sign(offset) * np.maximum(np.abs(offset) - band, 0.0)


def steady_paths(paths: np.ndarray, planted: np.ndarray, noise: float) -> np.ndarray:
    """Foot joint paths ``paths`` ``(F, k, 3)`` with white noise of deviation ``noise``
    held out over each run of ``planted`` ``(F,)`` (:func:`steady_runs` with the run's
    :func:`universal_band`, per coordinate, after a median of three frames): a joint not
    held while its foot stands (a heel rolling up off a held toe, a toe coming down onto
    the ground) moves as the source's does, without its jitter. ``paths`` itself where
    the noise is 0 or nothing is planted."""
    starts, stops = runs(planted)
    if noise <= 0.0 or starts.size == 0:
        return paths
    n, k, _ = paths.shape
    flat = np.ascontiguousarray(paths.reshape(n, 3 * k))
    return steady_runs(flat, starts, stops, universal_band(stops - starts, noise)).reshape(n, k, 3)
