"""metrics.score_motion and contacts.joint_contacts on hand-made cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import limbik
from limbik.placement.contacts import joint_contacts
from limbik.placement.metrics import score_motion
from limbik.placement.walk import walk_cycle


def _walk() -> limbik.Motion:
    return walk_cycle(cycles=1.0, frame_rate=60.0)


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
