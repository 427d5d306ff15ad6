"""Foot placement: heights kept over terrain, no penetration, locked contacts, no knee pops."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import find_legs, metrics, read_bvh
from limbik.errors import InvalidInputError
from limbik.placement import Terrain
from limbik.placement.footplant import (
    contact_speed_threshold,
    estimate_floor,
    footplant,
    terrain_for_clip,
)
from limbik.placement.walk import walk_cycle


@pytest.fixture(scope="module")
def walk():
    return walk_cycle(cycles=2.0)


def _mask(spans, n):
    m = np.zeros(n, dtype=bool)
    for a, b in spans:
        m[a:b] = True
    return m


def _leg_length(motion, leg):
    off = motion.skeleton.offsets
    return float(np.linalg.norm(off[leg.knee]) + np.linalg.norm(off[leg.ankle]))


def check_planted(source, result, report, terrain, *, pop_slack):
    """The properties every planted clip must have."""
    w_src = source.world_positions()
    w_out = result.world_positions()
    for leg in find_legs(source.skeleton):
        length = _leg_length(source, leg)
        contact = _mask(report.contacts[leg.side], source.num_frames)
        foot = leg.toe if leg.toe is not None else leg.ankle
        # stance heights above the terrain equal the source's above its floor (clamped at 0)
        expected = np.maximum(w_src[contact, foot, 1] - report.floor, 0.0)
        got = w_out[contact, foot, 1] - terrain.height(w_out[contact, foot, 0],
                                                       w_out[contact, foot, 2])
        assert np.max(np.abs(got - expected), initial=0.0) <= 0.01 * length
        # no penetration of ankles or toes
        depth = metrics.penetration(w_out[:, [leg.ankle, foot]], terrain)
        assert depth.max() <= 0.01 * length
        # planted feet do not slide
        _, skate = metrics.foot_skate(w_out[:, foot], contact)
        assert skate <= 1e-6 * length * max(1, contact.sum())
        # knees follow the animation: no new pops
        pop_src = metrics.knee_pop(w_src[:, leg.hip], w_src[:, leg.knee], w_src[:, leg.ankle])
        pop_out = metrics.knee_pop(w_out[:, leg.hip], w_out[:, leg.knee], w_out[:, leg.ankle])
        assert pop_out <= pop_src + pop_slack
    assert metrics.bone_length_drift(w_out, source.skeleton.parents, w_src[0]) < 1e-9
    assert np.isfinite(w_out).all()


def test_built_in_walk_is_clean(walk):
    w = walk.world_positions()
    assert metrics.bone_length_drift(w, walk.skeleton.parents) < 1e-12
    left, right = find_legs(walk.skeleton)
    assert w[:, [left.toe, right.toe], 1].min() >= 0.0
    assert metrics.knee_pop(w[:, left.hip], w[:, left.knee], w[:, left.ankle]) < 8.0


# Knee-pop slack in degrees per frame at the walk's 60 fps. On steps a foot that
# straddles a riser at heel-off tilts by up to max_tilt, which bends the knee quickly.
@pytest.mark.parametrize(("kind", "slack"), [("flat", 1.0), ("hills", 5.0), ("slope", 3.0),
                                             ("steps", 15.0)])
def test_walk_planted_on_procedural_terrain(walk, kind, slack):
    terrain = terrain_for_clip(kind, walk, seed=3)
    result, report = footplant(walk, terrain)
    assert report.floor == 0.0
    assert all(report.contacts[side] for side in ("left", "right"))
    check_planted(walk, result, report, terrain, pop_slack=slack)


def test_unmoved_on_its_own_floor_keeps_the_legs(walk):
    """On the floor it was made on, a clean walk barely changes."""
    result, report = footplant(walk, Terrain.flat(0.0), lock_feet=False)
    np.testing.assert_allclose(result.world_positions(), walk.world_positions(), atol=2e-3)
    assert report.after["left_penetration"] == 0.0


def test_weights_zero_keep_the_source_legs(walk):
    result, _ = footplant(walk, terrain_for_clip("hills", walk), weights=0.0)
    np.testing.assert_allclose(result.world_positions(), walk.world_positions(), atol=1e-9)


def test_given_contacts_and_options(walk):
    n = walk.num_frames
    _, report = footplant(walk, Terrain.flat(), contacts={"left": [(0, 20)],
                                                             "right": np.zeros(n, bool)})
    assert report.contacts["left"] == [(0, 21)] and report.contacts["right"] == []
    with pytest.raises(InvalidInputError, match=r"weights must be within \[0, 1\], got 2.0"):
        footplant(walk, Terrain.flat(), weights=2.0)
    with pytest.raises(InvalidInputError, match="motion must be a Motion"):
        footplant("walk.bvh", Terrain.flat())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"contacts\['left'\] must have shape"):
        footplant(walk, Terrain.flat(), contacts={"left": np.zeros(3, bool)})
    with pytest.raises(InvalidInputError, match="terrain must be one of"):
        terrain_for_clip("lava", walk)


def test_speed_threshold_sits_between_stance_and_swing():
    speeds = np.r_[np.full(60, 0.02), np.full(40, 3.0)]
    thr = contact_speed_threshold(speeds)
    assert 0.02 < thr < 3.0


def test_report_is_json_ready(walk):
    import json

    _, report = footplant(walk, terrain_for_clip("hills", walk))
    data = json.loads(json.dumps(report.to_dict()))
    assert set(data["before"]) == set(data["after"])
    assert "left_skate" in report.summary()


# ---------------------------------------------------------------- real motion capture
WALKS = ["xia_neutral_walk_01_000.bvh", "cmu_131_01_start_walk_stop_meters.bvh"]


def _hills_for(motion, seed):
    left, _ = find_legs(motion.skeleton)
    length = _leg_length(motion, left)
    root = motion.root_positions[:, [0, 2]]
    lo = root.min(axis=0) - 2 * length
    hi = root.max(axis=0) + 2 * length
    rng = np.random.default_rng(seed)
    # an unseen height field, as a user would give in a .npy file
    cell = length / 8
    shape = (int((hi[1] - lo[1]) / cell) + 2, int((hi[0] - lo[0]) / cell) + 2)
    from scipy.ndimage import gaussian_filter

    heights = gaussian_filter(rng.normal(size=shape), 6) * 0.6 * length
    return Terrain.from_array(heights, cell, (float(lo[0]), float(lo[1])))


@pytest.mark.parametrize("name", WALKS)
@pytest.mark.parametrize("seed", [1, 2])
def test_real_walks_over_hills(shared_data, name, seed):
    source = read_bvh(shared_data / "bvh" / name)
    terrain = _hills_for(source, seed)
    result, report = footplant(source, terrain)
    check_planted(source, result, report, terrain, pop_slack=2.0)


def test_raw_footskate_clip_beats_its_authors_fix(shared_data):
    raw = read_bvh(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh")
    fixed = read_bvh(shared_data / "bvh" / "dme_demo_3d_1_fixed_ik.bvh")
    result, report = footplant(raw, Terrain.flat())
    assert report.floor < 0  # the raw clip's feet rest below y = 0
    for leg in find_legs(raw.skeleton):
        ours = result.world_positions()[:, [leg.ankle, leg.toe], 1].min()
        theirs = fixed.world_positions()[:, [leg.ankle, leg.toe], 1].min()
        assert ours >= theirs
        for near in (0.25, 0.5, 1.0):
            ours_v = metrics.speed_near_floor(result.world_positions()[:, leg.toe],
                                              Terrain.flat(), raw.frame_time, near)
            theirs_v = metrics.speed_near_floor(fixed.world_positions()[:, leg.toe],
                                                Terrain.flat(), raw.frame_time, near)
            assert ours_v <= theirs_v + 0.05


def test_floor_estimates_of_the_shared_clips(shared_data):
    expected = {"cmu_131_01_start_walk_stop_meters.bvh": 0.0, "xia_neutral_walk_01_000.bvh": 0.0,
                "dme_demo_3d_1_fixed_ik.bvh": 0.0}
    for name, floor in expected.items():
        m = read_bvh(shared_data / "bvh" / name)
        legs = find_legs(m.skeleton)
        assert estimate_floor(m, legs, _leg_length(m, legs[0])) == floor
