"""aim, aim_chain and look_at: the aim axis reaches its target (or the cone's boundary),
per-bone weights split the turn as documented, weights blend from the input pose."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.body.look_at import look_at
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import quaternion_multiply, quaternion_normalize, rotate_vectors
from limbik.solvers.aim import aim, aim_chain, limit_to_cone

AXIS = np.array([0.0, 0.0, -1.0])


def angle(a, b):
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_aim_points_the_axis_at_the_target(rng):
    q = quaternion_normalize(rng.normal(size=(20_000, 4)))
    p = rng.normal(size=(20_000, 3))
    t = rng.normal(size=(20_000, 3)) * 3
    out = aim(q, p, t)
    assert np.max(angle(rotate_vectors(out, AXIS), unit(t - p))) < 1e-9
    # the turn is the smallest one: the axis perpendicular to both directions is fixed
    side = np.cross(rotate_vectors(q, AXIS), unit(t - p))
    turn = quaternion_multiply(out, q * [-1, -1, -1, 1])
    np.testing.assert_allclose(rotate_vectors(turn, side), side, atol=1e-9)


def test_aim_cone_limit_reaches_the_target_or_the_boundary(rng):
    q = quaternion_normalize(rng.normal(size=(20_000, 4)))
    p = rng.normal(size=(20_000, 3))
    t = rng.normal(size=(20_000, 3)) * 3
    cone = unit(rng.normal(size=(20_000, 3)))
    out = aim(q, p, t, limit=0.6, cone_axis=cone)
    got = rotate_vectors(out, AXIS)
    want = unit(t - p)
    inside = angle(cone, want) <= 0.6
    assert np.max(angle(got[inside], want[inside])) < 1e-9
    np.testing.assert_allclose(angle(cone[~inside], got[~inside]), 0.6, atol=1e-9)
    # on the boundary, the aim is the cone direction closest to the target
    normal = np.cross(cone[~inside], want[~inside])
    assert np.max(np.abs(np.sum(normal * got[~inside], axis=-1))) < 1e-9
    assert np.all(angle(got[~inside], want[~inside]) <= angle(cone[~inside], want[~inside]))


def test_limit_to_cone_degenerate_directions():
    out = limit_to_cone([[0, 0, 1.0], [0, 0, -1.0]], [0, 0, -1.0], 0.5)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(angle(out, np.array([0, 0, -1.0])), [0.5, 0.0], atol=1e-12)


def test_aim_at_its_own_position_keeps_the_rotation(rng):
    q = quaternion_normalize(rng.normal(size=(10, 4)))
    p = rng.normal(size=(10, 3))
    out = aim(q, p, p, up=[0, 1, 0])
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(rotate_vectors(out, AXIS), rotate_vectors(q, AXIS), atol=1e-12)
    chain = aim_chain(np.zeros((3, 3)), np.tile([0, 0, 0, 1.0], (3, 1)), np.zeros(3))
    assert np.all(np.isfinite(chain.rotations)) and chain.reached


def test_aim_up_axis_and_weights(rng):
    q = quaternion_normalize(rng.normal(size=(1000, 4)))
    p = np.zeros(3)
    t = rng.normal(size=(1000, 3))
    out = aim(q, p, t, up=[0, 1, 0], world_up=[0, 1, 0])
    assert np.max(angle(rotate_vectors(out, AXIS), unit(t))) < 1e-9
    # the local up lies in the plane of the aim direction and world up, on its side
    up = rotate_vectors(out, [0, 1, 0])
    assert np.max(np.abs(np.sum(up * np.cross(rotate_vectors(out, AXIS), [0, 1, 0]), -1))) < 1e-9
    assert np.all(up[:, 1] >= -1e-12)
    assert np.array_equal(aim(q, p, t, weight=0.0), q)
    half = aim(q, p, t, weight=0.5)
    full_turn = angle(rotate_vectors(q, AXIS), unit(t))
    np.testing.assert_allclose(angle(rotate_vectors(q, AXIS), rotate_vectors(half, AXIS)),
                               0.5 * full_turn, atol=1e-9)


def test_aim_chain_weights_split_the_turn_as_documented(rng):
    """With all joints at one point, bone i turns by w_i · Π_{k<i} (1 − w_k) of the angle."""
    n = 4
    p = np.zeros((n, 3))
    q = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    target = np.array([np.sin(1.2), 0.0, -np.cos(1.2)])
    weights = np.array([0.3, 0.5, 0.2, 1.0])
    s = aim_chain(p, q, target, weights=weights)
    turned = 2 * np.arccos(np.clip(s.rotations[:, 3], -1, 1))
    per_bone = np.diff(np.concatenate([[0.0], turned]))
    expected = 1.2 * weights * np.cumprod(np.concatenate([[1.0], 1 - weights[:-1]]))
    np.testing.assert_allclose(per_bone, expected, atol=1e-12)
    assert s.iterations == 1 and s.reached


def test_aim_chain_weights_below_one_share_as_repeated_passes_would(rng):
    """At one point: one pass gives w_i · Π_{k<i} (1 − w_k) / (1 − Π_k (1 − w_k))."""
    n = 3
    p = np.zeros((n, 3))
    q = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    target = np.array([np.sin(1.2), 0.0, -np.cos(1.2)])
    weights = np.array([0.2, 0.3, 0.5])
    s = aim_chain(p, q, target, weights=weights)
    turned = 2 * np.arccos(np.clip(s.rotations[:, 3], -1, 1))
    per_bone = np.diff(np.concatenate([[0.0], turned]))
    raw = weights * np.cumprod(np.concatenate([[1.0], 1 - weights[:-1]]))
    np.testing.assert_allclose(per_bone, 1.2 * raw / raw.sum(), atol=1e-12)
    assert s.iterations == 1 and s.reached


def test_aim_chain_with_a_last_weight_below_one_converges_within_the_default(rng):
    """Spine, neck, head weighted (0.2, 0.3, 0.5), targets 0.3 m from the head."""
    pos = np.array([[0.0, 1.25, 0.0], [0.0, 1.45, 0.0], [0.0, 1.6, 0.0]])
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (3, 1))
    target = pos[-1] + 0.3 * unit(rng.normal(size=(2000, 3)))
    for axis in ((0, 0, 1), (0, 0, -1)):
        s = aim_chain(pos, rot, target, axis=axis, weights=[0.2, 0.3, 0.5])
        assert s.reached.mean() >= 0.99
        assert s.error.max() <= 1e-9


def test_aim_axis_defaults_are_stated_and_kept():
    """aim and aim_chain aim local −Z by default, look_at local +Z (docs/aim.md)."""
    import inspect

    assert inspect.signature(aim).parameters["axis"].default == (0.0, 0.0, -1.0)
    assert inspect.signature(aim_chain).parameters["axis"].default == (0.0, 0.0, -1.0)
    assert inspect.signature(look_at).parameters["axis"].default == (0.0, 0.0, 1.0)
    q = aim([0.0, 0, 0, 1], [0.0, 0, 0], [1.0, 0, 0])
    np.testing.assert_allclose(rotate_vectors(q, [0, 0, -1.0]), [1.0, 0, 0], atol=1e-12)


def test_aim_chain_converges_and_keeps_bones(rng):
    count, n = 5000, 4
    p = np.cumsum(rng.normal(size=(count, n, 3)) * 0.2, axis=1)
    q = quaternion_normalize(rng.normal(size=(count, n, 4)))
    t = p[:, -1] + unit(rng.normal(size=(count, 3))) * rng.uniform(1.0, 5.0, (count, 1))
    for weights in (None, [0.2, 0.2, 0.3, 0.6]):
        s = aim_chain(p, q, t, weights=weights, max_iterations=60)
        aim_dir = rotate_vectors(s.rotations[:, -1], rotate_vectors(q[:, -1] * [-1, -1, -1, 1],
                                                                    rotate_vectors(q[:, -1], AXIS)))
        assert np.max(angle(aim_dir, unit(t - s.positions[:, -1]))) < 1e-9
        assert np.all(s.reached)
        np.testing.assert_allclose(np.linalg.norm(np.diff(s.positions, axis=1), axis=-1),
                                   np.linalg.norm(np.diff(p, axis=1), axis=-1), rtol=1e-9)
        np.testing.assert_array_equal(s.positions[:, 0], p[:, 0])
    zero = aim_chain(p, q, t, weight=0.0)
    assert np.array_equal(zero.positions, p) and np.array_equal(zero.rotations, q)
    steps = np.linspace(0, 1, 101)[:, None]
    path = aim_chain(p[:20], q[:20], t[:20], weight=steps).positions
    assert np.max(np.linalg.norm(np.diff(path, axis=0), axis=-1)) < 0.1


def test_look_at_turns_a_clip_head_toward_a_moving_target():
    names = ["root", "spine", "neck", "head"]
    sk = limbik.Skeleton(names, [-1, 0, 1, 2], [[0, 1, 0], [0, 0.5, 0], [0, 0.3, 0], [0, 0.2, 0]])
    motion = limbik.Motion.rest(sk, num_frames=60)
    time = np.linspace(0, 2 * np.pi, 60)
    target = np.stack([3 * np.sin(time), 1.5 + 0 * time, 3 * np.cos(time)], axis=-1)
    out = look_at(motion, ["spine", "neck", "head"], target, axis=(0, 0, 1))
    head = out.world_positions()[:, 3]
    forward = rotate_vectors(out.world_rotations()[:, 3], [0, 0, 1.0])
    assert np.max(angle(forward, unit(target - head))) < 1e-9
    np.testing.assert_allclose(out.world_positions()[:, :2], motion.world_positions()[:, :2])
    assert np.max(np.linalg.norm(np.diff(forward, axis=0), axis=-1)) < 0.2


def test_look_at_on_the_cmu_clip(shared_data):
    motion = limbik.read_bvh(shared_data / "bvh" / "cmu_131_01_start_walk_stop_meters.bvh")
    time = np.arange(motion.num_frames) / 120.0
    target = np.stack([2 * np.sin(time), 1.6 + 0 * time, 2 + np.cos(time)], axis=-1)
    out = look_at(motion, ["Chest2", "Neck", "Head"], target, axis=(0, 0, 1), max_iterations=30)
    head = out.world_positions()[:, motion.skeleton.index("Head")]
    forward = rotate_vectors(out.world_rotations()[:, motion.skeleton.index("Head")], [0, 0, 1.0])
    assert np.max(angle(forward, unit(target - head))) < 1e-9


def test_aim_bad_input():
    with pytest.raises(InvalidInputError, match="axis must be non-zero vectors"):
        aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], axis=[0, 0, 0])
    with pytest.raises(InvalidInputError, match=r"axis must have shape \(3,\), got \(2, 3\)"):
        aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], axis=np.ones((2, 3)))
    with pytest.raises(InvalidInputError, match=r"weight must be in \[0, 1\]"):
        aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], weight=2.0)
    with pytest.raises(InvalidInputError, match=r"weights must have shape \(\.\.\., 2\)"):
        aim_chain(np.zeros((2, 3)), np.tile([0, 0, 0, 1.0], (2, 1)), [1, 0, 0], weights=[1.0])
    sk = limbik.Skeleton(["a", "b", "c"], [-1, 0, 0], [[0, 0, 0], [0, 1, 0], [1, 0, 0]])
    with pytest.raises(InvalidInputError, match="from ancestor to descendant"):
        look_at(limbik.Motion.rest(sk), ["b", "c"], [0, 0, 1])
