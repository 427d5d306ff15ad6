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


def test_local_minimum_finds_hovering_stances():
    """Stances that hover at different heights (network output) read as ~0 above their
    local minimum and are all found; swings are not."""
    from limbik.placement import detect_contacts, local_minimum

    frames = np.arange(600)
    phase = (frames % 120) / 120
    hover = np.repeat([0.0, 0.06, 0.09, 0.03, 0.07], 120)
    swing = np.where(phase < 0.4, np.sin(np.pi * phase / 0.4) * 0.25, 0.0)
    height = hover + swing + 0.002 * np.sin(frames)
    speed = np.where(phase < 0.4, 2.0, 0.05)
    above = height - local_minimum(height, 48)
    mask = detect_contacts(above, speed, enter_height=0.03, exit_height=0.09,
                           enter_speed=0.5, exit_speed=1.0, min_frames=3)
    stance = phase >= 0.45
    assert mask[stance].mean() > 0.95
    assert not mask[(phase > 0.1) & (phase < 0.3)].any()
    # with heights above the global minimum the hovering stances are missed
    missed = detect_contacts(height - height.min(), speed, enter_height=0.03,
                             exit_height=0.09, enter_speed=0.5, exit_speed=1.0)
    assert missed[stance].mean() < 0.6
    np.testing.assert_array_equal(local_minimum([3.0, 1.0, 2.0, 5.0, 4.0], 1),
                                  [1.0, 1.0, 1.0, 2.0, 4.0])


def test_knee_metrics_see_backward_bends_and_flips():
    n = 50
    hip = np.zeros((n, 3))
    ankle = np.tile([0.0, -1.9, 0.0], (n, 1))
    forward = np.array([0.0, 0.0, 1.0])
    side = np.where(np.arange(n) < 25, 1.0, -1.0)  # the bend flips at frame 25
    knee = np.column_stack([np.zeros(n), np.full(n, -0.95), 0.3 * side])
    bend = metrics.knee_bend_angles(hip, knee, ankle, forward)
    assert np.all(bend[:25] > 0) and np.all(bend[25:] < 0)
    assert metrics.backward_knee_frames(hip, knee, ankle, forward) == 25
    # the flexion angle does not change, so knee_pop misses the flip; the jump sees it
    assert metrics.knee_pop(hip, knee, ankle) < 1e-9
    assert metrics.knee_displacement(hip, knee) == pytest.approx(0.6)
    tiny = knee.copy()
    tiny[:, 2] = -0.01  # 1.2° behind the line: within the 2° allowance
    assert metrics.backward_knee_frames(hip, tiny, ankle, forward) == 0


def test_stance_gap_and_contact_speed():
    from limbik.placement import Terrain

    n = 20
    points = np.zeros((n, 2, 3))
    points[:, 0, 1] = 0.3  # heel joint above the toe
    points[:, 1, 1] = 0.05
    points[:, 1, 0] = np.arange(n) * 0.01  # the toe slides 0.01 per frame
    contact = np.zeros(n, dtype=bool)
    contact[5:15] = True
    assert metrics.stance_gap(points, Terrain.flat(0.0), contact) == pytest.approx(0.05)
    assert metrics.stance_gap(points, Terrain.flat(0.0), np.zeros(n, bool)) == 0.0
    assert metrics.contact_speed(points[:, 1], contact, 0.1) == pytest.approx(0.1)
    assert metrics.contact_speed(points[:, 0], contact, 0.1) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_pivot_slide_is_zero_for_a_foot_rolling_about_a_held_point(seed):
    """A foot that turns about its held heel, then about its held toe, does not slide; the
    same foot translated by a slide scores that slide (seeded random turns)."""
    rng = np.random.default_rng(seed)
    n = 30
    yaw = np.cumsum(rng.normal(0.0, 0.05, n))
    pitch = np.cumsum(rng.normal(0.0, 0.05, n))
    length = rng.uniform(0.1, 0.3)
    foot = length * np.stack([np.cos(pitch) * np.cos(yaw), np.sin(pitch),
                              np.cos(pitch) * np.sin(yaw)], axis=1)
    heel = np.zeros((n, 3))
    toe = heel + foot
    half = n // 2
    # second half: the toe stays where it was, the heel follows the foot's turn
    toe[half:] = toe[half]
    heel[half:] = toe[half:] - foot[half:]
    contact = np.ones(n, dtype=bool)
    per_frame, total = metrics.pivot_slide(heel, toe, contact)
    assert per_frame.shape == (n,)
    assert total == pytest.approx(0.0, abs=1e-12)
    slide = np.zeros((n, 3))
    slide[:, 0] = 0.2 * np.arange(n)
    _, slid = metrics.pivot_slide(heel + slide, toe + slide, contact)
    # each frame the held end moves by exactly the slide (0.2) and the rolling end by the
    # slide plus a roll of at most a few centimetres
    assert 0.5 * 0.2 * (n - 1) <= slid <= 0.2 * (n - 1) + 1e-9
    outside = np.zeros(n, dtype=bool)
    assert metrics.pivot_slide(heel + slide, toe + slide, outside)[1] == 0.0
    with pytest.raises(InvalidInputError, match="toe"):
        metrics.pivot_slide(heel, toe[:-1], contact)


def test_foot_turn_sees_a_foot_that_snaps_round():
    n = 40
    ankle = np.zeros((n, 3))
    pitch = np.radians(np.linspace(0.0, -60.0, n))  # a smooth turn, 1.54° a frame
    toe = np.column_stack([np.cos(pitch), np.sin(pitch), np.zeros(n)]) * 0.2
    assert metrics.foot_turn(ankle, toe) == pytest.approx(60.0 / (n - 1))
    snapped = toe.copy()
    snapped[20:] = [0.0, -0.2, 0.0]  # straight down from frame 20
    assert metrics.foot_turn(ankle, snapped) == pytest.approx(90.0 - 60.0 * 19 / (n - 1))
    # a move without a turn is none; the size of the numbers does not matter
    assert metrics.foot_turn(ankle + [[5.0, 1.0, 0.0]] * np.arange(n)[:, None],
                             toe + [[5.0, 1.0, 0.0]] * np.arange(n)[:, None]) == pytest.approx(
        60.0 / (n - 1))
    assert metrics.foot_turn(ankle * 1e300, snapped * 1e300) == metrics.foot_turn(ankle, snapped)
    with pytest.raises(InvalidInputError, match="toe"):
        metrics.foot_turn(ankle, toe[:3])
    # a foot of no length (toe on the ankle) has no direction to turn from or to
    flat = toe.copy()
    flat[10] = ankle[10]
    assert metrics.foot_turn(ankle, flat) == pytest.approx(60.0 / (n - 1))


def test_a_contact_ends_where_the_foot_lifts_off():
    """A foot that stands, then rises slowly out of the hysteresis band (slower than the
    exit speed) before it leaves: where that rise is marked ``lifting`` (a toe-off), the
    contact ends at the last frame within the enter height, so every contact frame is
    within it; unmarked rises, and contacts that last to the clip's end, keep the band."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        stand, rise, swing = rng.integers(5, 40), rng.integers(3, 30), rng.integers(5, 20)
        top = rng.uniform(0.1, 0.3)
        height = np.r_[rng.uniform(-0.01, 0.02, stand), np.linspace(0.0, top, rise + 1)[1:],
                       np.full(swing, top)]
        height += rng.normal(0.0, 0.002, height.size)
        speed = np.full(height.size, 0.1)
        lifting = np.zeros(height.size, dtype=bool)
        lifting[stand + rng.integers(0, rise):] = True
        options = dict(enter_height=0.03, exit_height=0.09, enter_speed=0.5, exit_speed=1.0,
                       min_frames=3)
        held = detect_contacts(height, speed, **options)
        cut = detect_contacts(height, speed, lifting=lifting, **options)
        spans = contact_spans(cut)
        assert spans and spans[0][0] == 0
        stop = spans[0][1]
        # the last contact frame is the last one within the band before the lift
        # (or the first lifting frame), and nothing in the band before it is lost
        within = (height <= 0.03) | ~lifting
        assert within[stop - 1]
        assert not np.any(within[stop:contact_spans(held)[0][1]])
        assert cut[:stop].all() and np.array_equal(cut & held, cut)
        # without the marks, the band keeps the contact until the foot exits it
        assert held[stop:][height[stop:] <= 0.09].all() or stop == contact_spans(held)[0][1]
        # a contact that lasts to the last frame is kept whatever the marks say
        end = stand + int(np.argmax(height[stand:] > 0.08))
        tail = detect_contacts(height[:end], speed[:end], lifting=np.ones(end, dtype=bool),
                               **options)
        assert tail.all()
    with pytest.raises(InvalidInputError, match="lifting must have shape"):
        detect_contacts(np.zeros(5), np.zeros(5), enter_height=0.03, exit_height=0.09,
                        enter_speed=0.5, exit_speed=1.0, lifting=np.zeros(4, dtype=bool))


def test_a_contact_starts_where_the_foot_lands():
    """A foot that comes down slowly through the hysteresis band (slower than the enter
    speed) before it stands: where that descent is marked ``landing``, the contact starts
    at the first unmarked frame, and keeps every frame from there; without the marks, or
    for a contact from the clip's first frame, the band starts it as before."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        swing, fall, stand = rng.integers(5, 20), rng.integers(3, 30), rng.integers(8, 40)
        top = rng.uniform(0.1, 0.3)
        height = np.r_[np.full(swing, top), np.linspace(top, 0.0, fall + 1)[1:],
                       rng.uniform(-0.01, 0.02, stand)]
        height += rng.normal(0.0, 0.002, height.size)
        speed = np.full(height.size, 0.1)
        landing = np.zeros(height.size, dtype=bool)
        landed = swing + fall - rng.integers(0, fall)
        landing[:landed] = True
        options = dict(enter_height=0.03, exit_height=0.09, enter_speed=0.5, exit_speed=1.0,
                       min_frames=3)
        early = detect_contacts(height, speed, **options)
        cut = detect_contacts(height, speed, landing=landing, **options)
        (start, stop), = contact_spans(early)
        # the contact starts at the first frame no longer marked, or where the band did
        assert contact_spans(cut) == [(max(start, landed), stop)]
        assert np.array_equal(cut & early, cut)
        # a contact from the first frame is kept whatever the marks say
        head = detect_contacts(height[start:], speed[start:],
                               landing=np.ones(height.size - start, dtype=bool), **options)
        assert np.array_equal(head, early[start:])
    # a contact that is all landing is no contact
    height = np.linspace(0.02, 0.0, 10)
    assert not detect_contacts(np.r_[0.2, height], np.zeros(11), landing=np.ones(11, bool),
                               enter_height=0.03, exit_height=0.09, enter_speed=0.5,
                               exit_speed=1.0).any()
    with pytest.raises(InvalidInputError, match="landing must have shape"):
        detect_contacts(np.zeros(5), np.zeros(5), enter_height=0.03, exit_height=0.09,
                        enter_speed=0.5, exit_speed=1.0, landing=np.zeros(4, dtype=bool))
