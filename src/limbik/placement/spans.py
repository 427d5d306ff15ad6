"""Statistics over many half-open frame spans ``[start, stop)`` of one clip at once (the
contacts of a joint, the planted spans of a foot): their frames, and per span the
median or a percentile, the same numbers as NumPy's on each span alone."""

from __future__ import annotations

import numpy as np

__all__ = ["span_frames", "span_medians", "span_percentiles", "span_sorted"]


def span_frames(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The frames of the half-open spans ``[starts, stops)`` ``(S,)`` (none empty), span by
    span ``(m,)``, and the index of the span each lies in ``(m,)``."""
    lengths = stops - starts
    span = np.repeat(np.arange(len(starts)), lengths)
    first = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum())) - first[span] + starts[span], span


def span_sorted(values: np.ndarray, starts: np.ndarray, stops: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values ``(n,)`` of the spans ``[starts, stops)`` (none empty), sorted within
    each span ``(m,)``, with each span's first place among them and its length ``(S,)``."""
    frames, span = span_frames(starts, stops)
    lengths = stops - starts
    v = values[frames]
    return v[np.lexsort((v, span))], np.cumsum(lengths) - lengths, lengths


def span_medians(values: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Per span ``[start, stop)`` (none empty), ``np.median(values[start:stop], axis=0)``
    of ``values`` ``(n, d)``: ``(S, d)``, the same numbers (the middle value, or the mean
    of the middle two)."""
    out = np.empty((len(starts), values.shape[1]))
    for c in range(values.shape[1]):
        v, first, lengths = span_sorted(values[:, c], starts, stops)
        out[:, c] = (v[first + (lengths - 1) // 2] + v[first + lengths // 2]) / 2.0
    return out


def span_percentiles(values: np.ndarray, starts: np.ndarray, stops: np.ndarray,
                      q: float) -> np.ndarray:
    """Per span ``[start, stop)`` (none empty), ``np.percentile(values[start:stop], q)``
    of ``values`` ``(n,)``: ``(S,)``, the same numbers (linear between the two sorted
    values around ``(length − 1) · q / 100``, as NumPy interpolates)."""
    v, first, lengths = span_sorted(values, starts, stops)
    place = (lengths - 1) * (q / 100.0)
    below = np.floor(place)
    t = place - below
    lo = first + np.minimum(below.astype(np.int64), lengths - 1)
    a, b = v[lo], v[np.minimum(lo + 1, first + lengths - 1)]
    step = b - a
    return np.where(t >= 0.5, b - step * (1 - t), a + step * t)
