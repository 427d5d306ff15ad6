"""Per-span statistics (all contacts of a joint at once) give NumPy's numbers
bit for bit, span by span."""

from __future__ import annotations

import numpy as np
import pytest

from limbik.placement.contacts import contact_spans, runs, runs_mask, window_reduce
from limbik.placement.spans import span_frames, span_medians, span_percentiles


def _spans(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    mask = rng.random(n) < rng.uniform(0.2, 0.9)
    mask[rng.integers(n)] = True  # at least one span
    return runs(mask)


@pytest.mark.parametrize("seed", range(20))
def test_span_medians_and_percentiles_are_numpys(seed: int) -> None:
    """Spans of one frame up to the whole clip, values with ties (rounded) and without."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    values = rng.normal(size=(n, 2)) * 10.0 ** rng.uniform(-3, 3)
    if seed % 2:
        values = np.round(values, 1)  # ties
    starts, stops = _spans(rng, n)
    medians = span_medians(values, starts, stops)
    for q in (0.0, 5.0, 25.0, 50.0, 99.0, 100.0):
        got = span_percentiles(values[:, 0], starts, stops, q)
        want = [np.percentile(values[a:b, 0], q) for a, b in zip(starts, stops, strict=True)]
        assert np.array_equal(got, want)
    for k, (a, b) in enumerate(zip(starts, stops, strict=True)):
        assert np.array_equal(medians[k], np.median(values[a:b], axis=0))


def test_span_frames_list_every_frame_of_every_span_once() -> None:
    starts, stops = runs(np.array([1, 1, 0, 0, 1, 0, 1, 1, 1], dtype=bool))
    frames, span = span_frames(starts, stops)
    assert frames.tolist() == [0, 1, 4, 6, 7, 8]
    assert span.tolist() == [0, 0, 1, 2, 2, 2]
    empty = runs(np.zeros(5, dtype=bool))
    assert empty[0].size == 0 and empty[1].size == 0


@pytest.mark.parametrize("seed", range(20))
def test_window_reduce_is_each_windows_reduction(seed: int) -> None:
    """Windows apart or touching, the last one at the end of the values or not."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    values = rng.normal(size=(n, 2))
    cuts = np.unique(rng.integers(0, n + 1, size=int(rng.integers(2, 12))))
    if cuts.size < 2:
        cuts = np.array([0, n])
    lo, hi = cuts[:-1], cuts[1:]
    keep = rng.random(lo.size) < 0.7
    keep[0] = True
    lo, hi = lo[keep], hi[keep]
    for ufunc, reduce in ((np.minimum, np.min), (np.maximum, np.max)):
        got = window_reduce(ufunc, values, lo, hi)
        want = np.array([reduce(values[a:b], axis=0) for a, b in zip(lo, hi, strict=True)])
        assert np.array_equal(got, want)


@pytest.mark.parametrize("seed", range(20))
def test_runs_and_their_mask_round_trip(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    mask = rng.random(n) < rng.uniform(0.0, 1.0)
    starts, stops = runs(mask)
    assert list(zip(starts.tolist(), stops.tolist(), strict=True)) == contact_spans(mask)
    assert np.all(stops > starts) and np.all(starts[1:] > stops[:-1])
    assert np.array_equal(runs_mask(starts, stops, n), mask)
