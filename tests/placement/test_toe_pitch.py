"""Toe pitch: a foot held at heel and toe whose toe stays up through its contact stands flat."""

from __future__ import annotations

import dataclasses

import numpy as np

from limbik import find_legs
from limbik.geometry.quaternion import quaternion_from_axis_angle, quaternion_multiply
from limbik.placement.footplant import FLOAT_KEPT, footplant
from limbik.placement.walk import SHIN, THIGH, walk_cycle

LEG = THIGH + SHIN


def pitched_walk(rng):
    """The built-in walk (60 Hz, three cycles) with the left foot's second stance pitched
    toe-up about the ankle (the heel stays down) by a seeded 0.1-0.2 rad through the
    whole stance, eased in and out over the frames either side: ``(motion, stance frames)``."""
    motion = walk_cycle(cycles=3.0, frame_rate=60.0, duty=rng.uniform(0.58, 0.66))
    n = motion.num_frames
    t = np.arange(n) * motion.frame_time
    planted = (t % 1.0) < 0.6
    second = (t >= 1.0) & (t < 2.0) & planted
    wide = np.convolve(second.astype(float), np.ones(9), mode="same") > 0  # 4 frames more
    ease = np.hanning(9)[1:-1]
    weight = np.convolve(wide.astype(float), ease / ease.sum(), mode="same")
    angle = -rng.uniform(0.1, 0.2) * weight  # about +x, negative: the toe goes up
    leg = next(g for g in find_legs(motion.skeleton) if g.side == "left")
    turn = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), angle)
    rotations = motion.rotations.copy()
    rotations[:, leg.ankle] = quaternion_multiply(rotations[:, leg.ankle], turn)
    return dataclasses.replace(motion, rotations=rotations), np.flatnonzero(second)


def test_a_toe_held_up_through_its_contact_is_laid_flat():
    for seed in range(6):
        rng = np.random.default_rng(seed)
        source, stance = pitched_walk(rng)
        leg = next(g for g in find_legs(source.skeleton) if g.side == "left")
        result, report = footplant(source)
        src = source.world_positions()[:, [leg.ankle, leg.toe], 1] - report.floor
        out = result.world_positions()[:, [leg.ankle, leg.toe], 1]
        both = report.joint_contacts["left"].all(axis=1)
        # the middle of the pitched stance, clear of its landing and lifting frames
        middle = stance[len(stance) // 4: -(len(stance) // 4)]
        held = middle[both[middle]]
        assert held.size, seed
        rest = np.percentile(src, 5, axis=0)
        up = src[held, 1] - rest[1]
        assert up.min() > 3 * FLOAT_KEPT * LEG, (seed, float(up.min() / LEG))  # pitched
        # the toe stands at its rest where the heel's height allows (within FLOAT_KEPT and
        # the foot's flat pitch)
        heel = np.maximum(out[held, 0] - rest[0], 0.0)
        assert np.all(out[held, 1] - rest[1] <= heel + 2 * FLOAT_KEPT * LEG), (
            seed, float(((out[held, 1] - rest[1]) - heel).max() / LEG))
        # the other stances keep the source's toe heights
        first = np.flatnonzero(both & (np.arange(len(both)) < stance[0] - 10))
        np.testing.assert_allclose(out[first, 1], src[first, 1], atol=FLOAT_KEPT * LEG)
