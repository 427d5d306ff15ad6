"""Joint constraints: cones hold after solves, true nearest ellipse point, the seed's port."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from limbik import Cone, EllipticalCone, Frame, Hinge, fabrik
from limbik.errors import InvalidInputError
from limbik.solvers.constraints import ellipse_nearest_point

DEG30 = math.radians(30.0)


def random_chains(rng, batch, n=10):
    d = rng.normal(size=(batch, n - 1, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(d, axis=1)], axis=1)


def straight_chains(batch, n=10):
    p = np.zeros((batch, n, 3))
    p[:, :, 2] = -np.arange(n)
    return p


def bends(p):
    d = np.diff(p, axis=-2)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    return np.arccos(np.clip(np.sum(d[..., 1:, :] * d[..., :-1, :], axis=-1), -1.0, 1.0))


def carried_frames(p, look=(0.0, 0.0, -1.0), up=(0.0, 1.0, 0.0)):
    """Bone frames (look, up, right) carried with minimal twist, computed independently."""
    d = np.diff(p, axis=0)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    lk, u = np.array(look), np.array(up)
    frames = []
    for i in range(len(d)):
        axis = np.cross(lk, d[i])
        s, c = np.linalg.norm(axis), float(np.dot(lk, d[i]))
        if s > 1e-15:
            k = axis / s
            ang = math.atan2(s, c)
            u = u * math.cos(ang) + np.cross(k, u) * math.sin(ang) + k * np.dot(k, u) * (1 - math.cos(ang))
        u = u - np.dot(u, d[i]) * d[i]
        u /= np.linalg.norm(u)
        lk = d[i]
        frames.append((lk, u, np.cross(lk, u)))
    return d, frames


@pytest.mark.parametrize("constraint", [Cone(DEG30), EllipticalCone(DEG30, DEG30, DEG30, DEG30),
                                        EllipticalCone(DEG30, DEG30, DEG30, DEG30, method="seed")],
                         ids=["cone", "ellipse", "ellipse-seed"])
def test_no_bend_exceeds_30_degrees_after_random_solves(rng, constraint):
    """Random starts (which violate the limits) and random targets: every bend <= 30° + 1e-9."""
    start = random_chains(rng, 500)
    target = rng.normal(size=(500, 3)) * 4.0
    s = fabrik(start, target, constraints=[None] + [constraint] * 8)
    assert np.all(np.isfinite(s.positions))
    assert bends(s.positions).max() <= DEG30 + 1e-9
    assert np.abs(np.linalg.norm(np.diff(s.positions, axis=1), axis=-1) - 1.0).max() <= 1e-9
    assert s.reached.any() and not s.reached.all()


def test_constraint_holds_for_unreachable_targets(rng):
    start = straight_chains(100)
    target = rng.normal(size=(100, 3)) * 40.0
    cone = Cone(0.2)
    root = Frame()  # constrain bone 0 too, around -Z
    s = fabrik(start, target, constraints=[cone] * 9, root_frame=root)
    assert not s.reached.any()
    assert bends(s.positions).max() <= 0.2 + 1e-9
    d0 = s.positions[:, 1] - s.positions[:, 0]
    assert np.arccos(np.clip(-d0[:, 2], -1, 1)).max() <= 0.2 + 1e-9


def test_bone_zero_is_free_without_root_frame(rng):
    """...and the call says so, naming constraints[0] and root_frame."""
    start = straight_chains(1)[0]
    with pytest.warns(UserWarning, match=r"constraints\[0\].*root_frame"):
        s = fabrik(start, [6.0, 0.0, 0.0], constraints=[Cone(0.1)] * 9)
    d0 = s.positions[1] - s.positions[0]
    assert math.acos(-d0[2]) > 0.5  # bone 0 turned far from -Z


def test_asymmetric_elliptical_cone_holds_in_the_carried_frames(rng):
    """Every bone lies inside its parent's four-angle cone, in independently carried frames."""
    cone = EllipticalCone(math.radians(10), math.radians(40), math.radians(25), math.radians(5))
    start = straight_chains(300)
    target = rng.normal(size=(300, 3)) * 3.0
    s = fabrik(start, target, constraints=[None] + [cone] * 8)
    tl, tr, tu, td = np.tan([cone.left, cone.right, cone.up, cone.down])
    worst = 0.0
    for p in s.positions:
        d, frames = carried_frames(p)
        for i in range(1, len(d)):
            lk, u, r = frames[i - 1]
            h, x, y = d[i] @ lk, d[i] @ r, d[i] @ u
            assert h > 0
            a = tr if x >= 0 else tl
            b = tu if y >= 0 else td
            worst = max(worst, math.hypot(x / h / a, y / h / b))
    assert worst <= 1 + 1e-9
    assert s.reached.any()


def test_inside_directions_are_unchanged(rng):
    cone = EllipticalCone(0.3, 0.4, 0.5, 0.6)
    v = np.array([0.1, 0.05, -1.0])
    v /= np.linalg.norm(v)
    np.testing.assert_array_equal(cone.project(v), v)
    np.testing.assert_array_equal(Cone(0.3).project(v), v)


def sample_ellipse(a, b, m=100_000):
    t = np.linspace(0.0, 2 * np.pi, m, endpoint=False)
    return np.stack([a * np.cos(t), b * np.sin(t)], axis=-1)


@settings(max_examples=30)
@given(a=st.floats(0.05, 5.0), b=st.floats(0.05, 5.0), x=st.floats(-6.0, 6.0),
       y=st.floats(-6.0, 6.0))
def test_ellipse_nearest_point_beats_dense_sampling(a, b, x, y):
    """The 2D nearest point is on the ellipse and no sampled boundary point is closer."""
    q = ellipse_nearest_point([a, b], [x, y])
    assert abs((q[0] / a) ** 2 + (q[1] / b) ** 2 - 1.0) < 1e-9
    samples = sample_ellipse(a, b)
    best = np.min(np.linalg.norm(samples - [x, y], axis=-1))
    assert np.linalg.norm(q - [x, y]) <= best + 1e-12


def test_ellipse_nearest_point_degenerate_axes():
    np.testing.assert_allclose(ellipse_nearest_point([2.0, 0.0], [3.0, 1.0]), [2.0, 0.0])
    np.testing.assert_allclose(ellipse_nearest_point([0.0, 1.5], [0.2, -3.0]), [0.0, -1.5])
    np.testing.assert_allclose(ellipse_nearest_point([0.0, 0.0], [1.0, 1.0]), [0.0, 0.0])
    np.testing.assert_allclose(ellipse_nearest_point([2.0, 1.0], [0.0, 0.0]), [0.0, 1.0])


def test_default_projection_is_the_nearest_point_of_the_cross_section(rng):
    """3D: an out-of-cone bone lands on the nearest point of its height's quarter ellipses."""
    angles = (0.2, 0.5, 0.35, 0.1)  # left, right, up, down
    cone = EllipticalCone(*angles)
    tl, tr, tu, td = np.tan(angles)
    boundary = []
    for (sx, a), (sy, b) in [((1, tr), (1, tu)), ((-1, tl), (1, tu)), ((-1, tl), (-1, td)),
                             ((1, tr), (-1, td))]:
        t = np.linspace(0, np.pi / 2, 25_000)
        boundary.append(np.stack([sx * a * np.cos(t), sy * b * np.sin(t)], axis=-1))
    boundary = np.concatenate(boundary)
    for _ in range(50):
        x, y = rng.uniform(-1.5, 1.5, size=2)
        v = np.array([x, y, -1.0])  # look -Z, up +Y, right +X; height 1
        out = cone.project(v / np.linalg.norm(v))
        q = out[:2] / -out[2]  # back to the unit-height cross-section
        p2 = np.array([x, y])
        inside = (x / (tr if x >= 0 else tl)) ** 2 + (y / (tu if y >= 0 else td)) ** 2 <= 1
        if inside:
            np.testing.assert_allclose(q, p2, atol=1e-12)
        else:
            best = np.min(np.linalg.norm(boundary - p2, axis=-1))
            assert np.linalg.norm(q - p2) <= best + 1e-9


def seed_constrain_reference(calc, line, cf_up, cf_right, left, right, up, down):
    """The seed's Lua ``chain:constrain``, transcribed statement by statement."""
    scalar = calc @ line / np.linalg.norm(line)
    proj = scalar * line / np.linalg.norm(line)
    ups = sorted([cf_up, -cf_up], key=lambda a: np.linalg.norm(a - calc))
    rights = sorted([cf_right, -cf_right], key=lambda a: np.linalg.norm(a - calc))
    upvec, rightvec = ups[0], rights[0]
    adjust = calc - proj
    if scalar < 0:
        proj = -proj
    xaspect = adjust @ rightvec
    yaspect = adjust @ upvec
    pm = np.linalg.norm(proj)
    lb, rb = -(pm * math.tan(left)), pm * math.tan(right)
    ub, db = pm * math.tan(up), -(pm * math.tan(down))
    xbound = rb if xaspect >= 0 else lb
    ybound = ub if yaspect >= 0 else db
    ellipse = xaspect**2 / xbound**2 + yaspect**2 / ybound**2
    inbounds = ellipse <= 1 and scalar >= 0
    f = calc
    if not inbounds:
        a = math.atan2(yaspect, xaspect)
        x = xbound * math.cos(a)
        y = ybound * math.sin(a)
        v = proj + rightvec * x + upvec * y
        f = v / np.linalg.norm(v) * np.linalg.norm(calc)
    return f


def test_seed_method_matches_the_seed_lua(rng):
    angles = (0.3, 0.6, 0.45, 0.2)
    cone = EllipticalCone(*angles, method="seed")
    frame = Frame.from_euler_xyz(0.3, -0.7, 1.1)
    look, up, right = frame.look, frame.up, frame.right
    count_moved = 0
    for _ in range(300):
        calc = rng.normal(size=3)
        calc /= np.linalg.norm(calc)
        expected = seed_constrain_reference(calc, look, up, right, *angles)
        got = cone.project(calc, look, up)
        np.testing.assert_allclose(got, expected, atol=1e-12)
        count_moved += not np.allclose(expected, calc)
    assert count_moved > 200  # most random directions are outside and beyond 90° half the time


def test_beyond_90_degrees_goes_to_the_boundary_continuously():
    cone = EllipticalCone(0.3, 0.5, 0.4, 0.2)
    for method in ("nearest", "seed"):
        c = EllipticalCone(cone.left, cone.right, cone.up, cone.down, method=method)
        behind = c.project([0.3, 0.2, 0.8])  # more than 90° from look = -Z
        assert behind[2] < 0  # moved in front, onto the cone
        opposite = c.project([0.0, 0.0, 1.0])
        assert np.all(np.isfinite(opposite)) and opposite[2] < 0
        perpendicular = c.project([1.0, 0.0, 0.0])
        assert np.all(np.isfinite(perpendicular)) and perpendicular[2] < 0
    # default: continuous across 90°
    eps = 1e-7
    front = cone.project(np.array([0.6, 0.8, -eps]))
    back = cone.project(np.array([0.6, 0.8, eps]))
    np.testing.assert_allclose(front, back, atol=1e-5)


def test_hinge_keeps_bones_in_its_plane_and_range(rng):
    hinge = Hinge([1.0, 0.0, 0.0], -0.2, 1.2)
    start = straight_chains(200)
    target = rng.normal(size=(200, 3)) * 4.0
    s = fabrik(start, target, constraints=[None] + [hinge] * 8)
    for p in s.positions[:40]:
        d, frames = carried_frames(p)
        for i in range(1, len(d)):
            lk, _, r = frames[i - 1]
            assert abs(d[i] @ r) <= 1e-9  # stays in the plane perpendicular to the hinge axis
            w = np.cross(r, lk)
            theta = math.atan2(d[i] @ w, d[i] @ lk)
            assert -0.2 - 1e-9 <= theta <= 1.2 + 1e-9
    assert np.all(np.isfinite(s.positions))


def test_hinge_projection_picks_the_nearer_end():
    hinge = Hinge([0.0, 1.0, 0.0], 0.0, 0.5)
    # axis +Y, look -Z: positive angles turn -Z toward -X (right-hand rule about +Y)
    out = hinge.project([-1.0, 0.0, -1.0] / np.sqrt(2))
    np.testing.assert_allclose(out, [-math.sin(0.5), 0.0, -math.cos(0.5)], atol=1e-12)
    out = hinge.project([0.3, 0.0, -1.0] / np.linalg.norm([0.3, 0.0, -1.0]))
    np.testing.assert_allclose(out, [0.0, 0.0, -1.0], atol=1e-12)


def test_constraint_validation():
    with pytest.raises(InvalidInputError, match=r"angle must be in \[0, 3.14159\]"):
        Cone(-0.1)
    with pytest.raises(InvalidInputError, match=r"up must be in \[0, 1.5708\)"):
        EllipticalCone(0.1, 0.1, math.pi / 2, 0.1)
    with pytest.raises(InvalidInputError, match="method must be one of 'nearest', 'seed'"):
        EllipticalCone(0.1, 0.1, 0.1, 0.1, method="atan2")
    with pytest.raises(InvalidInputError, match="axis must be a non-zero vector perpendicular"):
        Hinge([0.0, 0.0, 1.0], 0.0, 1.0)
    with pytest.raises(InvalidInputError, match="min_angle must be <= max_angle"):
        Hinge([1.0, 0.0, 0.0], 1.0, 0.0)
    with pytest.raises(AttributeError, match="immutable"):
        Cone(0.3).angle = 1.0  # type: ignore[misc]


def _cone_pose(rng, n, angle, lengths):
    """A random chain whose every bend is within ``angle`` of its parent bone."""
    d = rng.normal(size=3)
    d /= np.linalg.norm(d)
    points = [np.zeros(3)]
    for i in range(n - 1):
        if i:
            side = np.cross(d, rng.normal(size=3))
            side /= np.linalg.norm(side)
            bend = angle * (np.sqrt(rng.uniform()) if rng.uniform() < 0.7
                            else rng.uniform(0.9, 1.0))
            d = np.cos(bend) * d + np.sin(bend) * side
        points.append(points[-1] + lengths[i] * d)
    return np.array(points)


def _random_cone_chain(rng):
    """Joint count 4-11, a cone angle of 10-60°, bone lengths 0.5-1.5."""
    n = int(rng.integers(4, 12))
    return n, np.radians(rng.uniform(10, 60)), rng.uniform(0.5, 1.5, n - 1)


def test_cones_reach_truly_reachable_targets_from_a_straight_chain(rng):
    """Targets are end points of random poses within the cones; FABRIK starts straight."""
    reached, count = 0, 300
    for _ in range(count):
        n, angle, lengths = _random_cone_chain(rng)
        target = _cone_pose(rng, n, angle, lengths)[-1]
        start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * [0.0, 1.0, 0.0]
        s = fabrik(start, target, constraints=[None] + [Cone(angle)] * (n - 2))
        reached += bool(s.reached)
        bones = np.diff(s.positions, axis=0)
        bones /= np.linalg.norm(bones, axis=-1, keepdims=True)
        bend = np.arccos(np.clip(np.sum(bones[1:] * bones[:-1], -1), -1, 1))
        assert bend.max() <= angle + 1e-9
        np.testing.assert_allclose(np.linalg.norm(np.diff(s.positions, axis=0), axis=-1),
                                   lengths, rtol=1e-9)
    assert reached >= 0.99 * count


def test_readme_cone_example_reaches():
    chain = fabrik(np.c_[np.zeros(10), np.arange(10.0), np.zeros(10)], [3.0, 5.0, 2.0],
                   constraints=[None] + [Cone(np.radians(30))] * 8)
    assert chain.reached
    bones = np.diff(chain.positions, axis=0)
    bones /= np.linalg.norm(bones, axis=-1, keepdims=True)
    assert np.arccos(np.clip(np.sum(bones[1:] * bones[:-1], -1), -1, 1)).max() \
        <= np.radians(30) + 1e-9


def test_cones_from_the_root_frame_reach_truly_reachable_targets(rng):
    """Bone 0 limited against root_frame too (look −Z)."""
    reached, count = 0, 300
    for _ in range(count):
        n, angle, lengths = _random_cone_chain(rng)
        pose = _cone_pose(rng, n + 1, angle, np.r_[1e-3, lengths])  # bone 0 of the pose:
        first = pose[1] - pose[0]  # a direction for the frame's look
        look = Frame.look_at(np.zeros(3), first)
        target = pose[-1] - pose[1]
        start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * first / np.linalg.norm(
            first)
        s = fabrik(start, target, constraints=[Cone(angle)] * (n - 1), root_frame=look)
        reached += bool(s.reached)
        bones = np.diff(s.positions, axis=0)
        bones = np.vstack([first / np.linalg.norm(first), bones / np.linalg.norm(
            bones, axis=-1, keepdims=True)])
        assert np.arccos(np.clip(np.sum(bones[1:] * bones[:-1], -1), -1, 1)).max() \
            <= angle + 1e-9
    assert reached >= 0.98 * count


def _ellipse_excess(p, cones, look=(0.0, 0.0, -1.0), up=(0.0, 1.0, 0.0), first=1):
    """Largest ``(x/a)² + (y/b)² − 1`` over bones ``first``.. of pose ``p`` (n, 3): each
    bone's cross-section point in its parent's carried frame against its cone's ellipse."""
    d, frames = carried_frames(p, look, up)
    frames = [(np.array(look), np.array(up), np.cross(look, up))] + frames
    worst = -1.0
    for i in range(first, len(d)):
        lk, u, r = frames[i]
        c = cones[i]
        h = float(d[i] @ lk)
        assert h > 0.0
        x, y = float(d[i] @ r) / h, float(d[i] @ u) / h
        a = math.tan(c.right if x >= 0 else c.left)
        b = math.tan(c.up if y >= 0 else c.down)
        excess = (x / a) ** 2 if a > 0 else (0.0 if abs(x) < 1e-12 else np.inf)
        excess += (y / b) ** 2 if b > 0 else (0.0 if abs(y) < 1e-12 else np.inf)
        worst = max(worst, excess - 1.0)
    return worst


def _ellipse_chain(rng, n, low=5.0):
    lengths = rng.uniform(0.5, 1.5, n - 1)
    cones = [None] + [EllipticalCone(*np.radians(rng.uniform(low, 60, 4))) for _ in range(n - 2)]
    return lengths, cones


def test_elliptical_cones_reach_targets_their_poses_allow(rng):
    """Targets: random poses made admissible by the constraints' own forward pass (most
    bends on a limit), a different ellipse on every joint; FABRIK starts straight."""
    reached, count = 0, 300
    for _ in range(count):
        n = int(rng.integers(4, 13))
        lengths, limits = _ellipse_chain(rng, n)
        bones = rng.normal(size=(n - 1, 3))
        bones *= (lengths / np.linalg.norm(bones, axis=-1))[:, None]
        raw = np.concatenate([[np.zeros(3)], np.cumsum(bones, axis=0)])
        target = fabrik(raw, raw[-1], constraints=limits, max_iterations=0).positions[-1]
        start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * [0.0, 1.0, 0.0]
        s = fabrik(start, target, constraints=limits)
        reached += bool(s.reached)
        assert s.reached == (s.error <= 1e-6 * lengths.sum())
        assert _ellipse_excess(s.positions, limits) <= 1e-9
        np.testing.assert_allclose(np.linalg.norm(np.diff(s.positions, axis=0), axis=-1),
                                   lengths, rtol=1e-9)
        # admissible: the forward pass leaves it where it is
        again = fabrik(s.positions, target, constraints=limits, max_iterations=0).positions
        np.testing.assert_allclose(again, s.positions, atol=1e-9)
    assert reached >= 0.99 * count


def test_elliptical_cones_with_zero_angles_and_a_limited_root_bone(rng):
    """Degenerate ellipses (zero angles: a segment or a point) and bone 0 limited against
    root_frame: every result within its limits, and targets on the root stay finite."""
    for k in range(60):
        n = int(rng.integers(4, 9))
        lengths = rng.uniform(0.5, 1.5, n - 1)
        angles = np.radians(rng.uniform(5, 60, (n - 1, 4)))
        angles[rng.uniform(size=angles.shape) < 0.3] = 0.0
        limits = [EllipticalCone(*a) for a in angles]
        raw = np.concatenate([[np.zeros(3)], np.cumsum(
            rng.normal(size=(n - 1, 3)) * lengths[:, None], axis=0)])
        frame = Frame.identity()
        target = fabrik(raw, raw[-1], constraints=limits, root_frame=frame,
                        max_iterations=0).positions[-1]
        if k % 10 == 0:
            target = np.zeros(3)
        start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * [0.0, 0.0, -1.0]
        s = fabrik(start, target, constraints=limits, root_frame=frame)
        assert np.all(np.isfinite(s.positions))
        assert _ellipse_excess(np.vstack([[0.0, 0.0, 1.0], s.positions]),
                               [None] + limits) <= 1e-9


def test_elliptical_cones_keep_lengths_for_targets_at_the_root_and_in_batches(rng):
    """A target on the root (free bone 0), and a batch solved at once or one by one."""
    n = 6
    lengths, limits = _ellipse_chain(rng, n)
    start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * [0.0, 1.0, 0.0]
    targets = np.vstack([np.zeros(3), rng.normal(size=(40, 3)) * 1.5])
    batch = fabrik(start, targets, constraints=limits)
    for k, target in enumerate(targets):
        one = fabrik(start, target, constraints=limits)
        np.testing.assert_array_equal(one.positions, batch.positions[k])
        assert np.all(np.isfinite(one.positions))
        np.testing.assert_allclose(np.linalg.norm(np.diff(one.positions, axis=0), axis=-1),
                                   lengths, rtol=1e-9)
        assert _ellipse_excess(one.positions, limits) <= 1e-9
