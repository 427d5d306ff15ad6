"""Springs, contact detection and the metrics."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import metrics
from limbik.errors import InvalidInputError
from limbik.placement import (
    Terrain,
    contact_spans,
    contacts_from_ranges,
    detect_contacts,
    smooth_damp,
    smooth_zero_lag,
)


def test_spring_converges_without_overshoot():
    step = np.r_[np.zeros(10), np.ones(200)]
    out = smooth_damp(step, dt=1 / 60, smooth_time=0.2)
    assert out.max() <= 1.0 + 1e-12
    assert abs(out[-1] - 1.0) < 1e-3
    assert np.all(np.diff(out) >= -1e-12)


def test_zero_lag_spring_is_symmetric_and_smooth():
    step = np.r_[np.zeros(100), np.ones(100)]
    out = smooth_zero_lag(step, dt=1 / 60, smooth_time=0.1)
    assert np.all(np.diff(out) >= -1e-12)
    assert out.max() <= 1 + 1e-12 and out.min() >= -1e-12
    # much smaller per-frame jumps than the step
    assert np.max(np.abs(np.diff(out))) < 0.2
    multi = smooth_zero_lag(np.stack([step, 2 * step], -1), 1 / 60, 0.1)
    np.testing.assert_allclose(multi[:, 1], 2 * out)


def test_spring_zero_time_is_identity(rng):
    x = rng.normal(size=(30, 2))
    np.testing.assert_array_equal(smooth_damp(x, 0.1, 0.0), x)


def test_hysteresis_contacts():
    h = np.r_[np.full(10, 0.0), np.linspace(0, 1, 10), np.full(10, 1.0), np.full(10, 0.0)]
    v = np.zeros_like(h)
    c = detect_contacts(h, v, enter_height=0.05, exit_height=0.1, enter_speed=1, exit_speed=2)
    assert c[:10].all() and not c[22:30].any() and c[30:].all()
    # a short blip above exit height inside a contact is a gap shorter than min_frames
    h2 = np.zeros(30)
    h2[15] = 1.0
    c2 = detect_contacts(h2, np.zeros(30), enter_height=0.05, exit_height=0.1, enter_speed=1,
                         exit_speed=2, min_frames=3)
    assert c2.all()
    assert contact_spans(c) == [(0, 12), (30, 40)] or contact_spans(c)[1] == (30, 40)


def test_contacts_from_ranges():
    m = contacts_from_ranges([(2, 4), (7, 7)], 10)
    assert contact_spans(m) == [(2, 5), (7, 8)]
    with pytest.raises(InvalidInputError, match="0 <= first <= last < 10"):
        contacts_from_ranges([(5, 12)], 10)


def test_metrics_on_known_trajectories():
    n = 50
    pos = np.zeros((n, 3))
    pos[:, 0] = np.linspace(0, 1, n)  # sliding 1 unit during a full contact
    pos[:, 1] = -0.1
    contact = np.ones(n, dtype=bool)
    per_frame, total = metrics.foot_skate(pos, contact)
    assert np.isclose(total, 1.0) and per_frame[0] == 0
    np.testing.assert_allclose(metrics.penetration(pos, Terrain.flat()), 0.1)
    assert metrics.floating(pos, Terrain.flat(-0.3), contact).max() == pytest.approx(0.2)
    assert metrics.speed_near_floor(pos, Terrain.flat(), dt=0.1, near=0.05) == pytest.approx(
        (1 / (n - 1)) / 0.1)
    hip = np.tile([0, 2.0, 0], (3, 1))
    knee = np.tile([0, 1.0, 0], (3, 1))
    ankle = np.array([[0, 0, 0], [1, 1, 0], [0, 0, 0.0]])
    np.testing.assert_allclose(metrics.knee_angles(hip, knee, ankle), [180, 90, 180])
    assert metrics.knee_pop(hip, knee, ankle) == pytest.approx(90)
    world = np.array([[[0, 0, 0], [1, 0, 0.0]], [[0, 0, 0], [1.1, 0, 0.0]]])
    assert metrics.bone_length_drift(world, [-1, 0]) == pytest.approx(0.1)
