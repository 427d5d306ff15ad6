"""Contacts on noisy foot paths: the clip's standing jitter is measured, and a noisy clip's
foot heights are lowered to their low-pass before contacts are found."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.placement.contacts import (
    CLEAN_NOISE,
    NOISE_TIME,
    NOISY_NOISE,
    joint_contacts,
    low_pass,
    noise_smoothing,
    smoothed_speed,
    standing_noise,
    white_noise,
)

DT = 1 / 60
LEG = 1.0


def walking_foot(frames: int, rng: np.random.Generator, jitter: float) -> tuple:
    """A foot path ``(frames, 3)`` that stands 0.6 s and swings 0.4 s, over and over,
    with white jitter of ``jitter`` leg lengths (standard deviation per axis) added; and
    its true stance mask."""
    t = np.arange(frames) * DT
    phase = (t % 1.0) / 1.0
    swing = phase > 0.6
    s = np.clip((phase - 0.6) / 0.4, 0.0, 1.0)
    step = np.floor(t) * 0.8 + 0.8 * (s * s * (3 - 2 * s))
    height = np.where(swing, 0.15 * np.sin(np.pi * s), 0.0)
    path = np.stack([step, height, np.zeros(frames)], axis=1)
    return path + rng.normal(0.0, jitter, path.shape), ~swing


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_low_pass_keeps_constants_and_lines_and_evens_out_noise(rng, sigma):
    frames = 200
    assert np.allclose(low_pass(np.full((frames, 3), 2.5), sigma), 2.5)
    line = np.arange(frames, dtype=float)
    inner = slice(10, -10)  # (the edges are padded with the end values)
    assert np.allclose(low_pass(line, sigma)[inner], line[inner])
    noise = rng.normal(size=(frames, 4))
    smooth = low_pass(noise, sigma)
    assert smooth.shape == noise.shape
    assert smooth[inner].std() < noise[inner].std()
    assert np.array_equal(low_pass(noise, 0.0), noise)


@pytest.mark.parametrize("seed", range(4))
def test_standing_noise_measures_the_jitter_of_a_standing_foot(seed):
    rng = np.random.default_rng(seed)
    clean, _ = walking_foot(600, rng, 0.0)
    assert standing_noise(clean[:, None], DT) < 1e-3
    for jitter in (0.004, 0.01):
        noisy, _ = walking_foot(600, rng, jitter)
        measured = standing_noise(noisy[:, None], DT)
        # (the median distance from the low-pass of 3-D noise is about 1.5 sigma, less what
        # the low-pass keeps of it)
        assert 0.7 * jitter < measured < 2.0 * jitter, (jitter, measured)


def test_noise_smoothing_is_none_for_clean_paths_and_full_for_noisy_ones(rng):
    clean, _ = walking_foot(600, rng, 0.0)
    assert noise_smoothing(clean[:, None], DT, LEG) == 0.0
    noisy, _ = walking_foot(600, rng, 2 * NOISY_NOISE)
    assert noise_smoothing(noisy[:, None], DT, LEG) == NOISE_TIME
    between, _ = walking_foot(600, rng, 0.5 * (CLEAN_NOISE + NOISY_NOISE) / 1.5)
    assert 0.0 < noise_smoothing(between[:, None], DT, LEG) < NOISE_TIME
    with pytest.raises(limbik.LimbikError, match="paths"):
        standing_noise(np.zeros((10, 3)), DT)


def test_shared_motion_capture_is_taken_as_it_is(shared_data):
    """The shared clips recorded in a studio are clean: no low-pass."""
    for name in ("cmu_131_01_start_walk_stop_meters.bvh", "xia_neutral_walk_01_000.bvh",
                 "xia_depressed_13_000.bvh"):
        motion = limbik.read_bvh(shared_data / "bvh" / name)
        legs = limbik.find_legs(motion.skeleton)
        joints = [j for leg in legs for j in (leg.ankle, leg.toe)]
        length = float(np.mean([np.linalg.norm(motion.skeleton.offsets[leg.knee])
                                + np.linalg.norm(motion.skeleton.offsets[leg.ankle])
                                for leg in legs]))
        paths = motion.world_positions()[:, joints]
        assert noise_smoothing(paths, motion.frame_time, length) == 0.0, name


@pytest.mark.parametrize("seed", range(6))
def test_jittering_stances_are_found_and_touch_downs_are_not_delayed(seed):
    rng = np.random.default_rng(seed)
    path, truth = walking_foot(600, rng, 0.012)
    smoothing = noise_smoothing(path[:, None], DT, LEG)
    assert smoothing > 0
    height = path[:, 1:2] - np.percentile(path[:, 1], 2)
    speed = smoothed_speed(path, DT)[:, None]
    plain = joint_contacts(height, speed, LEG, DT)[:, 0]
    found = joint_contacts(height, speed, LEG, DT, smoothing=smoothing)[:, 0]
    recall = lambda mask: (mask & truth).sum() / truth.sum()  # noqa: E731
    assert recall(found) > recall(plain)
    assert recall(found) > 0.8, recall(found)
    assert (found & ~truth).sum() <= 0.05 * found.sum()
    # a contact found with the low-pass starts no later than the plain one that overlaps it
    starts = np.flatnonzero(found[1:] & ~found[:-1]) + 1
    for start in np.flatnonzero(plain[1:] & ~plain[:-1]) + 1:
        later = starts[(starts >= start - 30) & (starts <= start + 30)]
        assert later.size == 0 or later.min() <= start, (start, later)


def test_smoothing_zero_finds_the_same_contacts(rng):
    path, _ = walking_foot(300, rng, 0.003)
    height = path[:, 1:2] - path[:, 1].min()
    speed = smoothed_speed(path, DT)[:, None]
    assert np.array_equal(joint_contacts(height, speed, LEG, DT),
                          joint_contacts(height, speed, LEG, DT, smoothing=0.0))


@pytest.mark.parametrize("seed", range(8))
def test_a_landing_is_told_from_jitter_by_the_measured_white_noise(seed):
    """At 20 fps the landing test looks 4 frames ahead: jitter of 1% of a leg comes that
    much lower by chance, so without the noise most touch-downs read as still landing."""
    rng = np.random.default_rng(seed)
    t = np.arange(400) / 20.0
    phase = t % 1.0
    swing = phase > 0.6
    s = np.clip((phase - 0.6) / 0.4, 0.0, 1.0)
    path = np.stack([np.floor(t) * 0.8 + 0.8 * s * s * (3 - 2 * s),
                     np.where(swing, 0.15 * np.sin(np.pi * s), 0.0), np.zeros(t.size)], axis=1)
    noisy = path + rng.normal(0.0, 0.01, path.shape)
    noise = white_noise(noisy[:, None], 0.05)
    assert 0.006 < noise < 0.014  # (it measures the jitter)
    height = noisy[:, 1:2] - np.percentile(noisy[:, 1], 2)
    smoothing = noise_smoothing(noisy[:, None], 0.05, LEG)
    speed = smoothed_speed(noisy, 0.05, smoothing)[:, None]
    plain = joint_contacts(height, speed, LEG, 0.05, smoothing=smoothing)[:, 0]
    found = joint_contacts(height, speed, LEG, 0.05, smoothing=smoothing, noise=noise)[:, 0]
    stance = ~swing
    recall = lambda mask: (mask & stance).sum() / stance.sum()  # noqa: E731
    assert recall(found) > recall(plain) + 0.03 and recall(found) > 0.85, recall(found)
    assert (found & swing).sum() <= 0.05 * found.sum()
    # each contact starts no later than the one found without the noise
    starts = np.flatnonzero(found[1:] & ~found[:-1]) + 1
    for start in np.flatnonzero(plain[1:] & ~plain[:-1]) + 1:
        near = starts[np.abs(starts - start) <= 6]
        assert near.size and near.min() <= start, (start, near)
    # a clean path finds the same contacts with its own (tiny) noise as with none
    clean_height = path[:, 1:2]
    clean_speed = smoothed_speed(path, 0.05)[:, None]
    assert np.array_equal(
        joint_contacts(clean_height, clean_speed, LEG, 0.05),
        joint_contacts(clean_height, clean_speed, LEG, 0.05,
                       noise=white_noise(path[:, None], 0.05)))


@pytest.mark.parametrize("bad, error", [(-1.0, "noise must be >= 0"),
                                        (float("nan"), "noise must be finite")])
def test_a_bad_noise_is_refused_by_name(bad, error):
    from limbik.errors import LimbikError

    h = np.zeros((20, 1))
    with pytest.raises(LimbikError, match=error):
        joint_contacts(h, h, LEG, 0.05, noise=bad)
