"""Properties of footplant's stages and of metrics.score_motion on hand-made cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import limbik
from limbik.placement import Terrain
from limbik.placement.contacts import joint_contacts
from limbik.placement.footplant import footplant
from limbik.placement.metrics import score_motion
from limbik.placement.walk import walk_cycle


def _walk() -> limbik.Motion:
    return walk_cycle(cycles=1.0, frame_rate=60.0)


@pytest.mark.parametrize("seed", range(4))
def test_a_held_joint_does_not_slide_during_its_contact(seed: int) -> None:
    """Over a source that skates (a seeded random drift of its root): a held toe does not
    move horizontally, nor does a held ankle whose toe is free (a held ankle turns about
    a held toe as its heel rolls up); vertically a held joint moves no more than its
    source does."""
    rng = np.random.default_rng(seed)
    walk = _walk()
    drift = np.cumsum(rng.normal(0.0, 0.002, (walk.num_frames, 3)), axis=0)
    drift[:, 1] = 0.0
    source = dataclasses.replace(walk, root_positions=walk.root_positions + drift)
    planted, report = footplant(source, Terrain.flat(0.0))
    world = planted.world_positions()
    src = source.world_positions()
    assert np.all(np.isfinite(world))
    for leg in limbik.find_legs(planted.skeleton):
        assert leg.toe is not None
        mask = report.joint_contacts[leg.side]
        both = mask & np.concatenate([[[False, False]], mask[:-1]])
        near_toe = np.convolve(mask[:, 1], np.ones(41), mode="same") > 0  # toe held or easing
        for k, j in enumerate((leg.ankle, leg.toe)):
            held = both[1:, k] & (~near_toe[1:] if k == 0 else True)
            step = np.diff(world[:, j], axis=0)
            assert np.all(np.hypot(step[held, 0], step[held, 2]) <= 1e-9)
            rise = np.abs(np.diff(src[:, j, 1]))
            assert np.all(np.abs(step[both[1:, k], 1]) <= rise[both[1:, k]] + 1e-9)


def test_root_is_the_source_plus_a_constant_on_flat_ground() -> None:
    walk = _walk()
    lifted = dataclasses.replace(walk, root_positions=walk.root_positions - [0.0, 0.05, 0.0])
    planted, report = footplant(lifted, Terrain.flat(0.0))
    change = planted.root_positions - lifted.root_positions
    assert np.allclose(change[:, [0, 2]], 0.0)
    assert np.ptp(change[:, 1]) <= 1e-9
    assert np.ptp(report.pelvis_offset) <= 1e-9


def test_swings_clear_the_terrain_and_nothing_is_nan() -> None:
    walk = _walk()
    legs = limbik.find_legs(walk.skeleton)
    ground = Terrain.hills(3, extent=(-3, 3, -3, 3), amplitude=0.03, wavelength=0.5,
                           cell_size=0.02)
    planted, report = footplant(walk, ground)
    world = planted.world_positions()
    assert np.all(np.isfinite(world))
    for leg in legs:
        for j in (leg.ankle, leg.toe):
            if j is None:
                continue
            under = ground.height(world[:, j, 0], world[:, j, 2])
            assert np.all(world[:, j, 1] >= under - 1e-6)
    assert report.after["penetration"] >= 0.0


def test_score_motion_on_a_hand_made_clip() -> None:
    walk = _walk()
    same = score_motion(walk, source=walk)
    assert same["joint_change"] == pytest.approx(0.0, abs=1e-9)
    assert same["root_change"] == pytest.approx(0.0, abs=1e-9)
    assert same["swing_accel_ratio"] == pytest.approx(1.0)
    # a constant lift changes nothing that joint_change measures
    up = dataclasses.replace(walk, root_positions=walk.root_positions + [0.0, 0.3, 0.0])
    assert score_motion(up, source=walk)["joint_change"] == pytest.approx(0.0, abs=1e-9)
    # a constant sideways shift of 10% of a leg moves every joint by that much
    legs = limbik.find_legs(walk.skeleton)
    sk = walk.skeleton
    leg = float(np.mean([np.linalg.norm(sk.offsets[g.knee]) + np.linalg.norm(sk.offsets[g.ankle])
                         for g in legs]))
    side = dataclasses.replace(walk, root_positions=walk.root_positions + [0.1 * leg, 0, 0])
    assert score_motion(side, source=walk)["joint_change"] == pytest.approx(10.0, rel=1e-6)
    # labels equal to the contacts used give F1 = 1
    n = walk.num_frames
    mask = np.zeros(n, bool)
    mask[: n // 3] = True
    labels = {g.side: mask for g in legs}
    scores = score_motion(walk, contacts=labels, labels=labels)
    assert scores["contact_f1"] == pytest.approx(1.0)
    assert score_motion(walk, contacts=labels, labels={g.side: ~mask for g in legs}
                        )["contact_f1"] == pytest.approx(0.0)


def test_joint_contacts_find_a_skating_stance_and_a_hovering_one() -> None:
    dt, leg = 1 / 60, 1.0
    n = 120
    t = np.arange(n) * dt
    swing = (t % 1.0) >= 0.6
    height = 0.02 + np.where(swing, 0.2 * np.sin(np.pi * ((t % 1.0) - 0.6) / 0.4), 0.0)
    speed = np.where(swing, 3.0, 0.25)  # a planted foot that skates at a quarter leg/s
    mask = joint_contacts(height[:, None], speed[:, None], leg, dt)[:, 0]
    assert np.mean(mask[~swing]) > 0.9 and np.mean(mask[swing]) < 0.2
    # the same on a floor that hovers 0.1 higher: found all the same
    mask2 = joint_contacts(height[:, None] + 0.1, speed[:, None], leg, dt)[:, 0]
    assert np.array_equal(mask, mask2)
