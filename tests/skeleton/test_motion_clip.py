"""Clip utilities: resampling and trimming."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from bvh_samples import corner_case_bvh

import limbik
from limbik.errors import InvalidInputError


def smooth_motion(frames=61, frame_time=1 / 60):
    """A slowly turning clip (small per-frame rotations) with animated translations."""
    base = limbik.parse_bvh(corner_case_bvh(frames=frames, seed=3, crlf=False))
    t = np.arange(frames)[:, None, None] * frame_time
    axes = np.random.default_rng(0).normal(size=(1, base.num_joints, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    angle = 0.8 * np.sin(2 * t)
    rot = np.concatenate([axes * np.sin(angle / 2), np.cos(angle / 2) * np.ones((1, base.num_joints, 1))], axis=-1)
    root = np.concatenate([np.sin(t[:, 0]), np.cos(t[:, 0]), t[:, 0]], axis=-1)
    return dataclasses.replace(base, rotations=rot, root_positions=root, frame_time=frame_time)


def test_same_rate_is_identity():
    m = smooth_motion()
    r = limbik.resample(m, m.frame_rate)
    assert r.num_frames == m.num_frames
    np.testing.assert_allclose(r.world_positions(), m.world_positions(), atol=1e-12)


def test_downsampling_picks_every_nth_frame():
    m = smooth_motion(frames=61, frame_time=1 / 60)
    r = limbik.resample(m, 15.0)
    assert r.num_frames == 16
    assert r.frame_time == pytest.approx(1 / 15)
    np.testing.assert_allclose(r.world_positions(), m.world_positions()[::4], atol=1e-12)
    assert set(r.joint_translations) == set(m.joint_translations)


def test_upsampling_interpolates_between_frames():
    """Doubling the rate keeps the old frames and puts slerp/lerp midpoints between."""
    m = smooth_motion(frames=21)
    r = limbik.resample(m, 2 * m.frame_rate)
    assert r.num_frames == 41
    np.testing.assert_allclose(r.world_positions()[::2], m.world_positions(), atol=1e-12)
    np.testing.assert_allclose(r.root_positions[1::2],
                               0.5 * (m.root_positions[:-1] + m.root_positions[1:]), atol=1e-12)
    # slerp midpoint: equal angles to both neighbours
    q0, q1, qm = m.rotations[:-1], m.rotations[1:], r.rotations[1::2]
    d0 = np.abs(np.sum(q0 * qm, axis=-1))
    d1 = np.abs(np.sum(q1 * qm, axis=-1))
    np.testing.assert_allclose(d0, d1, atol=1e-12)
    back = limbik.resample(r, m.frame_rate)
    np.testing.assert_allclose(back.world_positions(), m.world_positions(), atol=1e-12)


def test_non_integer_ratio_stays_within_the_clip(shared_data):
    m = limbik.read_bvh(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh")
    r = limbik.resample(m, 24.0)
    assert r.num_frames == int(np.floor(m.duration * 24.0 + 1e-9)) + 1
    assert r.duration <= m.duration + 1e-12
    assert np.all(np.isfinite(r.world_positions()))
    np.testing.assert_allclose(r.world_positions()[0], m.world_positions()[0], atol=1e-12)


def test_single_frame_and_bad_rate():
    m = limbik.trim(smooth_motion(), 3, 4)
    assert limbik.resample(m, 10.0).num_frames == 1
    with pytest.raises(InvalidInputError, match="frame_rate must be > 0"):
        limbik.resample(m, 0)


def test_trim_like_slicing():
    m = smooth_motion(frames=30)
    t = limbik.trim(m, 5, 12)
    assert t.num_frames == 7
    np.testing.assert_array_equal(t.world_positions(), m.world_positions()[5:12])
    assert limbik.trim(m, -3).num_frames == 3
    assert limbik.trim(m, stop=-10).num_frames == 20
    for j, v in t.joint_translations.items():
        np.testing.assert_array_equal(v, m.joint_translations[j][5:12])
    with pytest.raises(InvalidInputError, match="at least one of 30 frames"):
        limbik.trim(m, 12, 5)
    with pytest.raises(InvalidInputError, match="start must be an int"):
        limbik.trim(m, 1.5)


def test_a_rate_that_would_exhaust_the_memory_is_refused():
    """A billion frames a second is refused before anything is allocated; the limit
    leaves room for long clips at any usual rate."""
    from limbik.placement.walk import walk_cycle
    from limbik.skeleton.clip import MAX_RESAMPLED_JOINT_FRAMES

    motion = walk_cycle(cycles=1)
    with pytest.raises(InvalidInputError, match=r"frame_rate must give at most") as caught:
        limbik.resample(motion, 1e9)
    assert caught.value.argument == "frame_rate"
    # ten minutes at 120 fps of a 60-joint skeleton fit
    assert 10 * 60 * 120 * 60 <= MAX_RESAMPLED_JOINT_FRAMES
    assert limbik.resample(motion, 1000.0).num_frames > motion.num_frames
