"""limbik.roblox against an independent, per-element port of the seeds' Lua.

The reference below builds every CFrame as a 4×4 matrix by hand (plain NumPy per case,
no limbik geometry), following the Lua line by line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from limbik import Frame, roblox
from limbik.errors import InvalidInputError, NonFiniteInputError

# ----------------------------------------------------------------------------- reference


def cf_new(x=0.0, y=0.0, z=0.0):
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def cf_rot(r, p=(0.0, 0.0, 0.0)):
    m = np.eye(4)
    m[:3, :3] = r
    m[:3, 3] = p
    return m


def angles(x, y, z):
    cx, sx, cy, sy, cz, sz = math.cos(x), math.sin(x), math.cos(y), math.sin(y), math.cos(z), math.sin(z)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return cf_rot(rx @ ry @ rz)


def from_axis_angle(axis, angle):
    k = np.asarray(axis, float) / math.sqrt(sum(a * a for a in axis))
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    r = np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * (kx @ kx)
    return cf_rot(r)


def point_to_object_space(m, p):
    return m[:3, :3].T @ (np.asarray(p) - m[:3, 3])


def lua_acos(x):
    return math.acos(min(1.0, max(-1.0, x)))


def ratio(num, den):
    return 0.0 if den == 0 else num / den


def lua_solve_ik(origin, target, l1, l2):
    localized = point_to_object_space(origin, target)
    l3 = math.sqrt(localized @ localized)
    unit = localized / l3 if l3 > 0 else np.array([0.0, 0.0, -1.0])
    axis = np.cross([0.0, 0.0, -1.0], unit)
    angle = lua_acos(-unit[2])
    if np.all(axis == 0):
        axis = [-1.0, 0.0, 0.0] if angle == math.pi else [0.0, 0.0, -1.0]
    plane = origin @ from_axis_angle(axis, angle)
    if l3 < max(l2, l1) - min(l2, l1):
        return plane @ cf_new(0, 0, max(l2, l1) - min(l2, l1) - l3), -math.pi / 2, math.pi
    if l3 > l1 + l2:
        return plane @ cf_new(0, 0, l1 + l2 - l3), math.pi / 2, 0.0
    a1 = -lua_acos(ratio(-(l2 * l2) + (l1 * l1) + (l3 * l3), 2 * l1 * l3))
    a2 = lua_acos(ratio((l2 * l2) - (l1 * l1) + (l3 * l3), 2 * l2 * l3))
    return plane, a1 + math.pi / 2, a2 - a1


def lua_look_at(pos, look_at):
    d = np.asarray(look_at, float) - np.asarray(pos, float)
    n = math.sqrt(d @ d)
    if n == 0:
        return cf_rot(np.eye(3), pos)
    look = d / n
    right = np.cross(look, [0.0, 1.0, 0.0])
    right = right / math.sqrt(right @ right)
    up = np.cross(right, look)
    return cf_rot(np.column_stack([right, up, -look]), pos)


def lua_solve_ik_planar(originpos, targetpos, a, b, angle):
    plane = lua_look_at(originpos, targetpos) @ angles(0, 0, math.radians(angle))
    diff = np.asarray(originpos) - np.asarray(targetpos)
    c = math.sqrt(diff @ diff)
    if c < max(a, b) - min(a, b):
        x = 1 if a < b else 0
        return plane, math.pi * x, math.pi
    if c > a + b:
        return plane, 0.0, 0.0
    big_b = -lua_acos(ratio(a * a + c * c - b * b, 2 * a * c))
    big_c = math.pi - lua_acos(ratio(a * a + b * b - c * c, 2 * a * b))
    return plane, big_b, big_c


def random_rotation(rng):
    axis = rng.normal(size=3)
    return from_axis_angle(axis, rng.uniform(-math.pi, math.pi))[:3, :3]


def random_cases(rng, n):
    """Origins (matrices), targets and lengths covering close, far and reachable."""
    origins, targets, l1s, l2s, kinds = [], [], [], [], []
    for i in range(n):
        origin = cf_rot(random_rotation(rng), rng.uniform(-5, 5, 3))
        l1, l2 = rng.uniform(0.2, 3.0, 2)
        lo, hi = abs(l1 - l2), l1 + l2
        kind = i % 3
        l3 = [rng.uniform(0, lo), rng.uniform(hi * 1.001, 3 * hi), rng.uniform(lo, hi)][kind]
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        origins.append(origin)
        targets.append(origin[:3, :3] @ (l3 * direction) + origin[:3, 3])
        l1s.append(l1)
        l2s.append(l2)
        kinds.append(kind)
    return np.array(origins), np.array(targets), np.array(l1s), np.array(l2s), np.array(kinds)


# ----------------------------------------------------------------------------- solve_ik


def check_solve_ik(origins, targets, l1s, l2s):
    plane, shoulder, elbow = roblox.solve_ik(Frame.from_matrix(origins), targets, l1s, l2s)
    got = plane.as_matrix()
    for i in range(len(targets)):
        ref_plane, ref_s, ref_e = lua_solve_ik(origins[i], targets[i], l1s[i], l2s[i])
        np.testing.assert_allclose(got[i], ref_plane, atol=1e-9, rtol=0, err_msg=f"case {i}")
        assert abs(shoulder[i] - ref_s) <= 1e-9, i
        assert abs(elbow[i] - ref_e) <= 1e-9, i
    return plane, shoulder, elbow


def test_solve_ik_matches_the_lua_on_random_cases(rng):
    """Thousands of cases, all three branches: plane matrices and angles within 1e-9."""
    origins, targets, l1s, l2s, kinds = random_cases(rng, 3000)
    assert set(kinds) == {0, 1, 2}
    check_solve_ik(origins, targets, l1s, l2s)


def test_solve_ik_degenerate_axes_match_the_lua(rng):
    """Targets exactly straight ahead and straight behind (the thread's axis fix)."""
    n = 400
    origins = np.array([cf_new(*rng.uniform(-5, 5, 3)) for _ in range(n)])
    sign = np.where(np.arange(n) % 2 == 0, -1.0, 1.0)  # ahead (-Z), behind (+Z)
    dist = rng.uniform(0.01, 8.0, n)
    targets = origins[:, :3, 3] + np.stack([0 * dist, 0 * dist, sign * dist], axis=-1)
    l1s, l2s = rng.uniform(0.2, 3.0, n), rng.uniform(0.2, 3.0, n)
    plane, _, _ = check_solve_ik(origins, targets, l1s, l2s)
    # straight ahead: no roll; straight behind: half turn about -X (up flips to -Y)
    ups = plane.up
    np.testing.assert_allclose(ups[sign < 0], np.tile([0.0, 1.0, 0.0], (n // 2, 1)), atol=1e-12)
    np.testing.assert_allclose(ups[sign > 0], np.tile([0.0, -1.0, 0.0], (n // 2, 1)), atol=1e-12)


def test_solve_ik_target_at_origin_and_full_reach_are_finite():
    """Documented answers: at the origin (equal and unequal bones), exactly at full reach."""
    origin = Frame.identity()
    plane, s, e = roblox.solve_ik(origin, [0.0, 0.0, 0.0], 1.0, 1.0)
    assert (float(s), float(e)) == (0.0, np.pi)
    np.testing.assert_allclose(plane.as_matrix(), np.eye(4), atol=1e-15)
    plane, s, e = roblox.solve_ik(origin, [0.0, 0.0, 0.0], 2.0, 0.5)
    assert (float(s), float(e)) == (-np.pi / 2, np.pi)
    np.testing.assert_allclose(plane.position, [0.0, 0.0, 1.5])
    plane, s, e = roblox.solve_ik(origin, [0.0, -3.0, 0.0], 1.0, 2.0)  # exactly l1 + l2
    assert float(s) == pytest.approx(np.pi / 2) and float(e) == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(plane.position, 0.0)
    for value in (plane.as_matrix(), s, e):
        assert np.all(np.isfinite(value))


def test_solve_ik_arm_reaches_reachable_targets(rng):
    """Building the arm out per seed 000 puts the hand on the target."""
    origins, targets, l1s, l2s, kinds = random_cases(rng, 300)
    plane, s, e = roblox.solve_ik(Frame.from_matrix(origins), targets, l1s, l2s)
    _, lower = roblox.build_arm(plane, s, e, l1s, l2s)
    hand = lower.apply(np.stack([0 * l2s, -l2s / 2, 0 * l2s], axis=-1))
    reach = kinds == 2
    np.testing.assert_allclose(hand[reach], targets[reach], atol=1e-9)
    # the too-far branch pushes the plane forward so the hand still reaches
    np.testing.assert_allclose(hand[kinds == 1], targets[kinds == 1], atol=1e-9)


def test_build_arm_matches_the_lua_chain(rng):
    origins, targets, l1s, l2s, _ = random_cases(rng, 200)
    plane, s, e = roblox.solve_ik(Frame.from_matrix(origins), targets, l1s, l2s)
    upper, lower = roblox.build_arm(plane, s, e, l1s, l2s)
    pm = plane.as_matrix()
    for i in range(len(targets)):
        ref_upper = pm[i] @ angles(s[i], 0, 0) @ cf_new(0, -l1s[i] / 2, 0)
        ref_lower = ref_upper @ cf_new(0, -l1s[i] / 2, 0) @ angles(e[i], 0, 0) @ cf_new(0, -l2s[i] / 2, 0)
        np.testing.assert_allclose(upper.as_matrix()[i], ref_upper, atol=1e-9)
        np.testing.assert_allclose(lower.as_matrix()[i], ref_lower, atol=1e-9)


def test_motor6d_helpers_place_the_parts_like_build_arm(rng):
    """shoulder.C0 / elbow.C0 through a Motor6D give the same parts as building it out."""
    n = 50
    torso = Frame.from_matrix(np.array([cf_rot(random_rotation(rng), rng.uniform(-3, 3, 3))
                                        for _ in range(n)]))
    shoulder_c0_rest = Frame.from_translation([1.5, 0.5, 0.0])
    origin = torso @ shoulder_c0_rest
    l1, l2 = 1.4, 1.2
    targets = origin.apply(rng.uniform(-1.5, 1.5, (n, 3)))
    plane, s, e = roblox.solve_ik(origin, targets, l1, l2)
    upper, lower = roblox.build_arm(plane, s, e, l1, l2)
    c0 = roblox.shoulder_motor_c0(torso, plane, s)
    upper_m = roblox.motor6d_part1(torso, c0, Frame.from_translation([0.0, l1 / 2, 0.0]))
    elbow_rest = Frame.from_translation([0.0, -l1 / 2, 0.0])
    lower_m = roblox.motor6d_part1(upper_m, roblox.elbow_motor_c0(elbow_rest, e),
                                   Frame.from_translation([0.0, l2 / 2, 0.0]))
    np.testing.assert_allclose(upper_m.as_matrix(), upper.as_matrix(), atol=1e-9)
    np.testing.assert_allclose(lower_m.as_matrix(), lower.as_matrix(), atol=1e-9)
    ident = roblox.motor6d_part1(torso, c0, Frame.identity(), transform=Frame.identity())
    np.testing.assert_allclose(ident.as_matrix(), (torso @ c0).as_matrix(), atol=1e-12)


# ----------------------------------------------------------------------------- planar


def test_solve_ik_planar_matches_the_lua_on_random_cases(rng):
    n = 3000
    o = rng.uniform(-5, 5, (n, 3))
    a, b = rng.uniform(0.2, 3.0, n), rng.uniform(0.2, 3.0, n)
    lo, hi = np.abs(a - b), a + b
    kind = np.arange(n) % 3
    c = np.where(kind == 0, rng.uniform(0, 1, n) * lo,
                 np.where(kind == 1, hi * rng.uniform(1.001, 3, n), lo + rng.uniform(0, 1, n) * (hi - lo)))
    d = rng.normal(size=(n, 3))
    t = o + c[:, None] * d / np.linalg.norm(d, axis=1, keepdims=True)
    roll = rng.uniform(-360, 360, n)
    plane, big_b, big_c = roblox.solve_ik_planar(o, t, a, b, roll)
    got = plane.as_matrix()
    for i in range(n):
        ref, rb, rc = lua_solve_ik_planar(o[i], t[i], a[i], b[i], roll[i])
        np.testing.assert_allclose(got[i], ref, atol=1e-9, rtol=0, err_msg=f"case {i}")
        assert abs(big_b[i] - rb) <= 1e-9 and abs(big_c[i] - rc) <= 1e-9, i
    # seed 002's part placement: the tip reaches reachable targets, and points at far ones
    part_a, part_b = roblox.build_planar(plane, big_b, big_c, a, b)
    tip = part_b.apply(np.stack([0 * b, 0 * b, -b / 2], axis=-1))
    np.testing.assert_allclose(tip[kind == 2], t[kind == 2], atol=1e-9)
    far_dir = (t - o) / c[:, None]
    np.testing.assert_allclose(tip[kind == 1], (o + hi[:, None] * far_dir)[kind == 1], atol=1e-9)
    # too close: the x flag keeps the tip on the target line at |a - b| from the origin
    np.testing.assert_allclose(np.linalg.norm(tip - o, axis=1)[kind == 0], lo[kind == 0], atol=1e-9)
    pm = plane.as_matrix()
    for i in range(20):
        ref_a = pm[i] @ angles(big_b[i], 0, 0) @ cf_new(0, 0, -a[i] / 2)
        ref_b = ref_a @ cf_new(0, 0, -a[i] / 2) @ angles(big_c[i], 0, 0) @ cf_new(0, 0, -b[i] / 2)
        np.testing.assert_allclose(part_a.as_matrix()[i], ref_a, atol=1e-9)
        np.testing.assert_allclose(part_b.as_matrix()[i], ref_b, atol=1e-9)


def test_solve_ik_planar_degenerate_inputs_are_finite():
    plane, big_b, big_c = roblox.solve_ik_planar([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 2.0, 2.0)
    assert (float(big_b), float(big_c)) == (-np.pi / 2, np.pi)
    plane, big_b, big_c = roblox.solve_ik_planar([0.0, 0.0, 0.0], [0.0, 5.0, 0.0], 2.0, 2.0, 30.0)
    assert np.all(np.isfinite(plane.as_matrix()))
    np.testing.assert_allclose(plane.look, [0.0, 1.0, 0.0], atol=1e-12)


def test_roblox_errors_name_the_argument():
    with pytest.raises(InvalidInputError, match="origin must be a limbik Frame, got list"):
        roblox.solve_ik([0, 0, 0], [0, 0, 1], 1, 1)
    with pytest.raises(InvalidInputError, match=r"l2 must be > 0, got -1\.0"):
        roblox.solve_ik(Frame.identity(), [0, 0, 1], 1, -1)
    with pytest.raises(InvalidInputError, match=r"target must have shape \(\.\.\., 3\), got \(2,\)"):
        roblox.solve_ik(Frame.identity(), [0, 1], 1, 1)
    with pytest.raises(NonFiniteInputError, match="target_position must be finite"):
        roblox.solve_ik_planar([0, 0, 0], [0, np.nan, 1], 1, 1)
    with pytest.raises(InvalidInputError, match="batch shapes must broadcast"):
        roblox.solve_ik_planar(np.zeros((2, 3)), np.ones((3, 3)), 1, 1)


def test_lateral_c1_offset_compensation_recipe():
    """docs/two_bone.md's recipe: turn the plane about its Y axis by −asin(c1x / l3), solve
    the triangle on the in-plane distance √(l3² − c1x²); the offset arm then reaches."""
    torso = Frame.from_axis_angle([0.2, 1.0, 0.1], 0.7, position=[0.0, 3.0, 0.0])
    origin = torso @ Frame.from_translation([1.0, 0.5, 0.0])  # shoulder C0
    l1, l2, c1x = 1.0, 1.1, 0.25
    targets = origin.apply(np.array([[0.4, -0.8, -1.2], [-0.3, 0.5, -1.0], [0.9, -0.2, 0.6]]))
    elbow_rest = Frame.from_translation([0.0, -l1 / 2, 0.0])
    shoulder_c1 = Frame.from_translation([c1x, l1 / 2, 0.0])  # arm hangs c1x to the side
    wrist_c1 = Frame.from_translation([0.0, l2 / 2, 0.0])

    def hand(plane, s, e):
        upper = roblox.motor6d_part1(torso, roblox.shoulder_motor_c0(torso, plane, s), shoulder_c1)
        lower = roblox.motor6d_part1(upper, roblox.elbow_motor_c0(elbow_rest, e), wrist_c1)
        return lower.apply([0.0, -l2 / 2, 0.0])

    plane, s, e = roblox.solve_ik(origin, targets, l1, l2)
    miss = np.linalg.norm(hand(plane, s, e) - targets, axis=-1)
    np.testing.assert_allclose(miss, c1x, rtol=1e-12)  # uncompensated: off by the offset
    l3 = np.linalg.norm(targets - origin.position, axis=-1)
    turned = plane @ Frame.from_euler_xyz(0.0, -np.arcsin(c1x / l3), 0.0)
    in_plane = np.sqrt(l3**2 - c1x**2)
    flat, s, e = roblox.solve_ik(Frame.identity(), np.stack([0 * l3, 0 * l3, -in_plane], -1), l1, l2)
    np.testing.assert_allclose(hand(turned @ flat, s, e), targets, atol=1e-12)
