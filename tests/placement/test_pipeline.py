"""Properties of footplant's stages on hand-made cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import limbik
from limbik.placement import Terrain
from limbik.placement.footplant import footplant
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
