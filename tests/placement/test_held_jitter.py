"""Held feet of a jittering clip stand still: the clip's white noise is measured
(:func:`~limbik.placement.contacts.white_noise`) and settled out of the held heights and
of the joints a standing foot does not hold."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.placement._footplant_kernels import steady_runs
from limbik.placement.contacts import universal_band, white_noise
from limbik.placement.footplant import _contact_distances, _ease_ramps, _held_back_on_release
from limbik.placement.positions import footplant_positions
from limbik.placement.settle import settle_in_runs

#: SMPL's 22 joints taken from a CMU-named clip (the same anatomical points).
CMU_FOR_SMPL22 = ("Hips", "LeftUpLeg", "RightUpLeg", "LowerBack", "LeftLeg", "RightLeg", "Spine",
                  "LeftFoot", "RightFoot", "Spine1", "LeftToeBase", "RightToeBase", "Neck",
                  "LeftShoulder", "RightShoulder", "Head", "LeftArm", "RightArm", "LeftForeArm",
                  "RightForeArm", "LeftHand", "RightHand")
FEET = ((7, 10), (8, 11))  # (ankle, toe) per leg in SMPL's order


def walking_feet(frames: int, dt: float, rng: np.random.Generator, jitter: float) -> np.ndarray:
    """Two feet ``(frames, 2, 3)`` (leg lengths) that each stand 0.6 s and swing 0.4 s over
    and over, half a cycle apart, with white jitter of standard deviation ``jitter`` per
    axis."""
    t = np.arange(frames) * dt
    out = []
    for shift in (0.0, 0.5):
        phase = (t + shift) % 1.0
        s = np.clip((phase - 0.6) / 0.4, 0.0, 1.0)
        step = np.floor(t + shift) * 0.8 + 0.8 * (s * s * (3 - 2 * s))
        height = np.where(phase > 0.6, 0.15 * np.sin(np.pi * s), 0.0)
        out.append(np.stack([step, height, np.full(frames, 0.2 * shift)], axis=1))
    paths = np.stack(out, axis=1)
    return paths + rng.normal(0.0, jitter, paths.shape)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fps", [20.0, 60.0, 120.0])
def test_white_noise_measures_per_frame_jitter_and_not_the_motion(seed, fps):
    rng = np.random.default_rng(seed)
    frames = int(10 * fps)
    assert white_noise(walking_feet(frames, 1 / fps, rng, 0.0), 1 / fps) < 1e-9
    for jitter in (0.002, 0.01):
        measured = white_noise(walking_feet(frames, 1 / fps, rng, jitter), 1 / fps)
        assert 0.75 * jitter < measured < 1.3 * jitter, (jitter, measured)


def test_white_noise_of_too_few_frames_is_zero_and_bad_paths_are_refused():
    assert white_noise(np.ones((4, 2, 3)), 0.1) == 0.0
    assert white_noise(np.ones((10, 0, 3)), 0.1) == 0.0
    with pytest.raises(limbik.LimbikError, match="paths"):
        white_noise(np.zeros((10, 3)), 0.1)


def test_shared_motion_capture_has_almost_no_white_noise(shared_data):
    """Studio recordings at their own rates: under 0.01% of a leg."""
    for name in ("cmu_131_01_start_walk_stop_meters.bvh", "xia_neutral_walk_01_000.bvh",
                 "xia_depressed_13_000.bvh"):
        motion = limbik.read_bvh(shared_data / "bvh" / name)
        legs = limbik.find_legs(motion.skeleton)
        length = float(np.mean([np.linalg.norm(motion.skeleton.offsets[leg.knee])
                                + np.linalg.norm(motion.skeleton.offsets[leg.ankle])
                                for leg in legs]))
        paths = motion.world_positions()[:, [j for leg in legs for j in (leg.ankle, leg.toe)]]
        assert white_noise(paths, motion.frame_time) < 1e-4 * length, name


@pytest.mark.parametrize("seed", range(8))
def test_steady_runs_hold_a_level_follow_a_ramp_and_stay_within_the_band(seed):
    rng = np.random.default_rng(seed)
    n, band = 60, 0.1
    level = np.full(n, rng.uniform(-1, 1)) + rng.uniform(-0.5 * band, 0.5 * band, n)
    ramp = np.linspace(0.0, 3.0 * n * band, n)  # (3 bands a frame)
    values = np.stack([level, ramp, rng.normal(size=n)], axis=1)
    starts, stops = np.array([5, 40]), np.array([30, 55])
    out = steady_runs(values, starts, stops, np.full(2, band))
    # (within the band of each frame's median with its neighbours in its run)
    middle = values.copy()
    for a, b in zip(starts, stops, strict=True):
        frames = np.arange(a, b)
        middle[a:b] = np.median(np.stack([values[np.maximum(frames - 1, a)], values[a:b],
                                          values[np.minimum(frames + 1, b - 1)]]), axis=0)
    assert np.all(np.abs(out - middle) <= band + 1e-12)
    outside = ~np.isin(np.arange(n), np.r_[5:30, 40:55])
    assert np.array_equal(out[outside], values[outside])
    for a, b in zip(starts, stops, strict=True):
        assert np.ptp(out[a:b, 0]) < 1e-12  # (jitter within the band is held out)
        np.testing.assert_allclose(out[a + 1:b - 1, 1], ramp[a + 1:b - 1], atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_a_one_frame_spike_moves_neither_a_steady_nor_a_settled_level(seed):
    rng = np.random.default_rng(seed)
    n, noise = 40, 0.01
    band = float(universal_band(n, noise))
    values = 0.2 + rng.uniform(-0.5 * band, 0.5 * band, n)
    spike = int(rng.integers(1, n - 1))
    values[spike] += rng.choice([-1.0, 1.0]) * rng.uniform(2.0, 50.0) * band
    out = steady_runs(values[:, None], np.array([0]), np.array([n]), np.array([band]))
    assert np.ptp(out) < 1e-12
    settled = values.copy()
    settle_in_runs(settled, np.ones(n, dtype=bool), noise)
    assert np.ptp(settled[1:]) < 1e-12


@pytest.mark.parametrize("seed", range(8))
def test_settling_flattens_a_standing_level_and_keeps_a_rise(seed):
    rng = np.random.default_rng(seed)
    n, noise = 80, 0.01
    mask = np.zeros(n, dtype=bool)
    mask[10:50] = True
    band = float(universal_band(40, noise))
    heights = np.full(n, 0.3)
    heights[10:50] = 0.05 + rng.uniform(-0.5 * band, 0.5 * band, 40)
    heights[40:50] += np.linspace(0.1, 0.5, 10)  # (the heel rolls up at the end)
    for first in (0.05 + band, 0.05 - 0.5 * band):  # (coming down onto it; a dip below)
        heights[10] = first
        settled = heights.copy()
        settle_in_runs(settled, mask, noise)
        if first > 0.05:  # (a joint touches down where the source's does)
            assert settled[10] == heights[10]
            assert np.ptp(settled[11:40]) < 1e-12
        else:  # (but not below where it then stands)
            assert np.ptp(settled[10:40]) < 1e-12
        assert np.all(np.abs(settled - heights) <= band + 1e-12)
        assert np.all(np.diff(settled[40:50]) > 0)
    assert np.array_equal(settled[~mask], heights[~mask])
    unchanged = heights.copy()
    settle_in_runs(unchanged, mask, 0.0)
    assert np.array_equal(unchanged, heights)
    two = np.zeros(n, dtype=bool)
    two[20:22] = True  # (two frames tell a level from a move no better than one)
    short = heights.copy()
    settle_in_runs(short, two, noise)
    assert np.array_equal(short, heights)


def test_jittering_generated_feet_stand_still_where_the_clean_clip_does(shared_data):
    """A walk as SMPL positions (metres, 20 fps) with 5 mm of white jitter: on the frames
    where the clean walk's foot stands still, the cleaned ankle and toe move at most a
    third as fast as the jittering input's, and slower than 0.06 m/s."""
    clip = limbik.skeleton.resample(
        limbik.read_bvh(shared_data / "bvh" / "xia_neutral_walk_01_000.bvh"), 20.0)
    clean = clip.world_positions(joints=CMU_FOR_SMPL22) * 0.056

    def speeds(p):
        return np.linalg.norm(np.diff(p, axis=0), axis=-1) * 20.0

    for seed in range(4):
        source = clean + np.random.default_rng(seed).normal(0.0, 0.005, clean.shape)
        result, _ = footplant_positions(source, "smpl22", fps=20.0)
        for foot in FEET:
            still = speeds(clean[:, foot]).mean(axis=1) < 0.1
            held = speeds(result[:, foot])[still].mean()
            before = speeds(source[:, foot])[still].mean()
            assert held < before / 3 and held < 0.06, (seed, foot, held, before)


@pytest.mark.parametrize("seed", range(8))
def test_a_released_joint_follows_its_source_less_a_band_that_the_lock_lets_go(seed):
    rng = np.random.default_rng(seed)
    n, ease_in, ease_out = 40, 2, int(rng.integers(1, 6))
    held = np.zeros(n, dtype=bool)
    held[5:15] = True
    held[30:34] = True
    base = np.cumsum(rng.normal(0.0, 0.02, (n, 3)), axis=0)
    band = float(rng.uniform(0.0, 0.05))
    moved = _held_back_on_release(base, held, ease_in, ease_out, band)
    since, until = _contact_distances(held)
    _, out_of = _ease_ramps(since, until, ease_in, ease_out)
    easing = ~held & (since <= until)
    expected = out_of[:, None] * np.clip(base - base[14], -band, band)
    np.testing.assert_allclose(moved[15:30], expected[15:30], atol=1e-12)
    assert np.all(moved[~easing] == 0.0)
    assert np.all(np.abs(moved) <= band + 1e-12)
    # (a band of 0 holds nothing back: a clip without noise is released as before)
    assert np.all(_held_back_on_release(base, held, ease_in, ease_out, 0.0) == 0.0)


def test_a_jittering_heel_that_lands_as_the_clip_ends_stands_still(shared_data):
    """The walk of the test above, with 5 mm of jitter, cut 3 frames after each left heel
    strike: the heel's last two heights in that contact (it has come down) stay
    together, where the input's jitter apart."""
    clip = limbik.skeleton.resample(
        limbik.read_bvh(shared_data / "bvh" / "xia_neutral_walk_01_000.bvh"), 20.0)
    clean = clip.world_positions(joints=CMU_FOR_SMPL22) * 0.056
    ankle = FEET[0][0]
    moved, jitter = [], []
    for seed in range(4):
        source = clean + np.random.default_rng(seed).normal(0.0, 0.005, clean.shape)
        _, info = footplant_positions(source, "smpl22", fps=20.0)
        heel = np.asarray(info.report.joint_contacts["left"])[:, 0]
        for start in np.flatnonzero(heel[1:] & ~heel[:-1]) + 1:
            cut = source[:start + 3]
            result, cleaned = footplant_positions(cut, "smpl22", fps=20.0)
            if np.asarray(cleaned.report.joint_contacts["left"])[-3:, 0].all():
                moved.append(np.ptp(result[-2:, ankle, 1]))
                jitter.append(np.ptp(cut[-2:, ankle, 1]))
    assert len(moved) >= 4
    assert np.median(moved) < 1e-3 and np.mean(moved) < 0.4 * np.mean(jitter), (moved, jitter)
