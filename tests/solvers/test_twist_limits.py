"""TwistLimit and SwingTwistLimit: projection to the nearest allowed rotation, and limits
that hold after CCD (point chains) and FABRIK solves."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import Cone, Frame, SwingTwistLimit, TwistLimit, ccd, fabrik
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_multiply,
    quaternion_normalize,
    rotate_vectors,
)

AXIS = np.array([0.0, 0.0, -1.0])


def local_rotations(world):
    """Joint rotations relative to the previous joint (the first: to the world)."""
    return np.concatenate([world[:, :1], quaternion_multiply(
        quaternion_conjugate(world[:, :-2]), world[:, 1:-1])], axis=1)


def test_projection_keeps_allowed_rotations_and_clamps_twist_and_swing(rng):
    limit = SwingTwistLimit(0.7, -0.4, 0.3)
    q = quaternion_normalize(rng.normal(size=(50_000, 4)))
    out = limit.project_rotation(q, AXIS)
    twist, swing = limit.twist_and_swing(out, AXIS)
    assert np.all((twist >= -0.4 - 1e-12) & (twist <= 0.3 + 1e-12))
    assert np.all(swing <= 0.7 + 1e-12)
    # projecting twice changes nothing; an allowed rotation is returned as is (up to sign)
    again = limit.project_rotation(out, AXIS)
    np.testing.assert_allclose(again, out, atol=1e-12)
    t0, s0 = limit.twist_and_swing(q, AXIS)
    inside = (t0 >= -0.4) & (t0 <= 0.3) & (s0 <= 0.7)
    assert inside.any()
    np.testing.assert_allclose(np.abs(np.sum(out[inside] * q[inside], axis=-1)), 1.0, atol=1e-12)


def test_twist_goes_to_the_nearer_end_against_brute_force(rng):
    """For a pure twist limit the swing is kept and the twist lands on the closest allowed
    angle on the circle, checked over 2001 candidate twists."""
    limit = TwistLimit(-0.5, 1.0)
    q = quaternion_normalize(rng.normal(size=(2000, 4)))
    out = limit.project_rotation(q, AXIS)
    t_in, s_in = limit.twist_and_swing(q, AXIS)
    t_out, s_out = limit.twist_and_swing(out, AXIS)
    np.testing.assert_allclose(s_out, s_in, atol=1e-9)
    candidates = np.linspace(-0.5, 1.0, 2001)
    gap = np.abs(np.angle(np.exp(1j * (candidates[None, :] - t_in[:, None]))))
    brute = np.min(gap, axis=1)
    mine = np.abs(np.angle(np.exp(1j * (t_out - t_in))))
    assert np.all(mine <= brute + 1e-9)


def test_swing_cap_moves_the_bone_to_the_nearest_cone_direction(rng):
    limit = SwingTwistLimit(0.5)
    q = quaternion_normalize(rng.normal(size=(5000, 4)))
    out = limit.project_rotation(q, AXIS)
    d_in = rotate_vectors(q, AXIS)
    d_out = rotate_vectors(out, AXIS)
    angle = np.arccos(np.clip(d_out @ AXIS, -1, 1))
    assert np.all(angle <= 0.5 + 1e-9)
    outside = np.arccos(np.clip(d_in @ AXIS, -1, 1)) > 0.5 + 1e-6
    # the new direction lies in the plane of the axis and the old direction (nearest point)
    normal = np.cross(AXIS, d_in[outside])
    assert np.max(np.abs(np.sum(normal * d_out[outside], axis=-1))) < 1e-9


def test_ccd_point_chains_keep_twist_limits_on_1e5_random_solves(rng):
    """Every joint's twist and swing (from its input local rotation, about its bone) stays
    in range; bone lengths are kept and rotations carry each bone onto its solved one."""
    count, n = 100_000, 5
    pts = np.cumsum(rng.normal(size=(count, n, 3)), axis=1)
    start = quaternion_normalize(rng.normal(size=(count, n, 4)))
    target = pts[:, 0] + rng.normal(size=(count, 3)) * 2.0
    limits = [SwingTwistLimit(0.9, -0.3, 0.4), TwistLimit(-0.2, 0.2), None,
              SwingTwistLimit(0.5, 0.0, 0.0)]
    s = ccd(pts, target, constraints=limits, rotations=start, max_iterations=20)
    assert np.all(np.isfinite(s.positions)) and np.all(np.isfinite(s.rotations))
    lengths = np.linalg.norm(np.diff(pts, axis=1), axis=-1)
    np.testing.assert_allclose(np.linalg.norm(np.diff(s.positions, axis=1), axis=-1), lengths,
                               rtol=1e-9)
    reference = local_rotations(start)
    solved = local_rotations(s.rotations)
    for i, limit in enumerate(limits):
        bone = rotate_vectors(quaternion_conjugate(start[:, i]), pts[:, i + 1] - pts[:, i])
        delta = quaternion_multiply(quaternion_conjugate(reference[:, i]), solved[:, i])
        solved_bone = s.positions[:, i + 1] - s.positions[:, i]
        np.testing.assert_allclose(rotate_vectors(s.rotations[:, i], bone), solved_bone,
                                   atol=1e-9)
        if limit is None:
            continue
        twist, swing = limit.twist_and_swing(delta, bone)
        assert np.all(twist >= limit.min_twist - 1e-9), i
        assert np.all(twist <= limit.max_twist + 1e-9), i
        assert np.all(swing <= limit.swing + 1e-9), i
    assert 0.2 < s.reached.mean()


def test_ccd_without_limits_returns_minimal_twist_rotations(rng):
    pts = np.cumsum(rng.normal(size=(100, 4, 3)), axis=1)
    target = pts[:, 0] + rng.normal(size=(100, 3))
    s = ccd(pts, target, return_rotations=True)
    turn = quaternion_multiply(s.rotations[:, :-1], np.array([0.0, 0.0, 0.0, 1.0]))
    for j in range(3):
        axis = s.positions[:, j + 1] - s.positions[:, j]
        spun = quaternion_multiply(quaternion_from_axis_angle(axis, 0.1), turn[:, j])
        plain = 2 * np.arccos(np.clip(np.abs(turn[:, j, 3]), 0, 1))
        other = 2 * np.arccos(np.clip(np.abs(spun[:, 3]), 0, 1))
        assert np.all(plain <= other + 1e-12)


def test_fabrik_reads_a_swing_twist_limit_as_its_cone(rng):
    start = np.cumsum(np.tile([0.0, 0.0, -1.0], (6, 1)), axis=0) - [0, 0, -1.0]
    target = rng.normal(size=(200, 3)) * 3
    a = fabrik(start, target, constraints=[None] + [SwingTwistLimit(0.4, -0.1, 0.1)] * 4)
    b = fabrik(start, target, constraints=[None] + [Cone(0.4)] * 4)
    np.testing.assert_array_equal(a.positions, b.positions)
    with pytest.raises(InvalidInputError, match="twist range must include 0"):
        fabrik(start, target, constraints=[None] + [TwistLimit(0.1, 0.2)] * 4)


def test_bad_limits_raise():
    with pytest.raises(InvalidInputError, match="min_twist must be <= max_twist"):
        TwistLimit(0.5, 0.1)
    with pytest.raises(InvalidInputError, match=r"swing must be in \[0, 3.14159"):
        SwingTwistLimit(4.0)
    pts = np.cumsum(np.ones((3, 3)), axis=0)
    with pytest.raises(InvalidInputError, match="one entry per bone"):
        ccd(pts, [0, 0, 0], constraints=[TwistLimit(-1, 1)])
    with pytest.raises(InvalidInputError, match="must be a SwingTwistLimit, TwistLimit or None"):
        ccd(pts, [0, 0, 0], constraints=[Cone(0.3), None])
    with pytest.raises(InvalidInputError, match=r"rotations must have shape \(\.\.\., 3, 4\)"):
        ccd(pts, [0, 0, 0], rotations=np.ones((2, 4)))


def _local_twists(p_in, q_in, q_out):
    """Each bone's twist (rad) about itself in its joint's rotation relative to its parent,
    measured from the input pose, as the CCD kernel measures it: ``(..., n − 1)``."""
    def conj(q):
        return q * np.array([-1.0, -1.0, -1.0, 1.0])

    out = []
    for i in range(p_in.shape[-2] - 1):
        if i == 0:
            base = q_in[..., 0, :]
        else:
            ref = quaternion_multiply(conj(q_in[..., i - 1, :]), q_in[..., i, :])
            base = quaternion_multiply(q_out[..., i - 1, :], ref)
        delta = quaternion_multiply(conj(base), q_out[..., i, :])
        axis = rotate_vectors(conj(q_in[..., i, :]), p_in[..., i + 1, :] - p_in[..., i, :])
        axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
        delta = np.where(delta[..., 3:] < 0, -delta, delta)
        out.append(2 * np.arctan2((delta[..., :3] * axis).sum(-1), delta[..., 3]))
    return np.stack(out, -1)


@pytest.mark.parametrize("root_frame", [None, Frame.identity()])
def test_fabrik_rotations_keep_twist_limits(rng, root_frame):
    """The rotations fabrik returns with constraints satisfy their twist ranges."""
    count, n = 3000, 6
    p = np.cumsum(rng.normal(size=(count, n, 3)), axis=1)
    q = quaternion_normalize(rng.normal(size=(count, n, 4)))
    t = p[:, 0] + rng.normal(size=(count, 3)) * 2.5
    limit = SwingTwistLimit(1.0, -0.05, 0.05)
    first = [None] if root_frame is None else [limit]
    s = fabrik(p, t, constraints=first + [limit] * (n - 2), rotations=q,
               root_frame=root_frame)
    twist = _local_twists(p, q, s.rotations)[:, 1 if root_frame is None else 0:]
    assert np.abs(twist).max() <= 0.05 + 1e-9
    # the end joint turns with the last bone
    v = rng.normal(size=(count, 3))
    np.testing.assert_allclose(
        rotate_vectors(quaternion_multiply(s.rotations[:, -1], quaternion_conjugate(q[:, -1])), v),
        rotate_vectors(quaternion_multiply(s.rotations[:, -2], quaternion_conjugate(q[:, -2])), v),
        atol=1e-9)
