"""Properties of limbik.two_bone: lengths kept, reachable targets reached, bend side,
reference optimality (seed 004), root_frame = the seed's elbow, policies, degenerate input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import limbik
from limbik import Frame, roblox, two_bone
from limbik.errors import InvalidInputError, NonFiniteInputError
from limbik.geometry import quaternion_from_axis_angle, rotate_vectors

N = 100_000


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def reachable_cases(rng, n, scale=1.0):
    """Random roots, lengths and targets with |upper - lower| <= d <= upper + lower."""
    root = rng.uniform(-10, 10, (n, 3)) * scale
    l1 = rng.uniform(0.1, 10, n) * scale
    l2 = rng.uniform(0.1, 10, n) * scale
    lo, hi = np.abs(l1 - l2), l1 + l2
    d = lo + rng.uniform(0, 1, n) * (hi - lo)
    target = root + d[:, None] * unit(rng.normal(size=(n, 3)))
    return root, target, l1, l2


def perpendicular_part(v, axis):
    return v - np.sum(v * axis, axis=-1, keepdims=True) * axis


def check_lengths_and_reach(sol, root, target, l1, l2):
    pos = sol.positions
    np.testing.assert_array_equal(pos[:, 0], root)
    upper = np.linalg.norm(pos[:, 1] - pos[:, 0], axis=-1)
    lower = np.linalg.norm(pos[:, 2] - pos[:, 1], axis=-1)
    assert np.max(np.abs(upper / l1 - 1)) <= 1e-9
    assert np.max(np.abs(lower / l2 - 1)) <= 1e-9
    assert np.max(np.linalg.norm(pos[:, 2] - target, axis=-1) / (l1 + l2)) <= 1e-9
    assert sol.reached.all()
    assert np.max(sol.error / (l1 + l2)) <= 1e-9
    assert (sol.iterations == 0).all()


def test_reachable_pole_cases_keep_lengths_reach_and_bend_toward_the_pole(rng):
    """10^5 random reachable cases: lengths within 1e-9, targets within 1e-9, pole side."""
    root, target, l1, l2 = reachable_cases(rng, N)
    pole = rng.uniform(-20, 20, (N, 3))
    sol = two_bone(root, target, l1, l2, pole=pole)
    assert sol.shape == (N,) and sol.positions.shape == (N, 3, 3)
    check_lengths_and_reach(sol, root, target, l1, l2)
    axis = unit(target - root)
    mid_side = perpendicular_part(sol.positions[:, 1] - root, axis)
    pole_side = perpendicular_part(pole - root, axis)
    bent = np.linalg.norm(mid_side, axis=-1) > 1e-9 * l1
    assert np.all(np.sum(mid_side * pole_side, axis=-1)[bent] > 0)
    # the mid joint is in the plane of root, target and pole
    normal = unit(np.cross(target - root, pole - root))
    assert np.max(np.abs(np.sum((sol.positions[:, 1] - root) * normal, axis=-1)) / l1) <= 1e-9


def test_scales_from_micro_to_mega_are_exact(rng):
    for scale in (1e-6, 1e6):
        root, target, l1, l2 = reachable_cases(rng, 10_000, scale)
        pole = rng.uniform(-20, 20, (10_000, 3)) * scale
        check_lengths_and_reach(two_bone(root, target, l1, l2, pole=pole), root, target, l1, l2)


def test_equal_bones_pole_gives_exactly_sixty_degrees_at_the_mid_joint():
    sol = two_bone([0, 0, 0], [0, 10, 0], 10, 10, pole=[10, 5, 0])
    root, mid, end = sol.positions
    a, b = root - mid, end - mid
    cos_mid = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    assert np.degrees(np.arccos(cos_mid)) == pytest.approx(60.0, abs=1e-12)
    assert mid[0] > 0
    np.testing.assert_allclose(mid, [np.sqrt(75.0), 5.0, 0.0], atol=1e-12)
    assert bool(sol.reached) and float(sol.error) == 0.0


# ----------------------------------------------------------------------------- reference


def seed004_mid(root, target, l1, l2, reference):
    """Seed 004 verbatim: an arbitrary law-of-cosines solution, then θ from d(cos δ)/dθ = 0."""
    axis = unit(target - root)
    d = np.linalg.norm(target - root, axis=-1)
    cos_a = np.clip((l1**2 + d**2 - l2**2) / (2 * l1 * d), -1, 1)
    alpha = np.arccos(cos_a)
    e1 = unit(perpendicular_part(np.tile([0.3, 0.8, 0.5], (len(d), 1)), axis))
    e2 = np.cross(axis, e1)
    v = np.cos(alpha)[:, None] * axis + np.sin(alpha)[:, None] * e1  # arbitrary thigh
    k = unit(reference - root)  # posed thigh direction
    # cos δ(θ) = v'(θ)·k, v'(θ) = cosα a + sinα (cosθ e1 + sinθ e2)
    # d/dθ: sinα(−sinθ e1·k + cosθ e2·k) = 0 → two roots θ0, θ0 + π
    theta0 = np.arctan(np.sum(e2 * k, -1) / np.sum(e1 * k, -1))
    second = lambda th: -np.sin(alpha) * (np.cos(th) * np.sum(e1 * k, -1) + np.sin(th) * np.sum(e2 * k, -1))  # noqa: E731
    theta = np.where(second(theta0) < 0, theta0, theta0 + np.pi)  # keep the maximum
    q = quaternion_from_axis_angle(axis, theta)
    return root + l1[:, None] * rotate_vectors(q, v)


def rotations_about_axis(root, target, mid, n_angles):
    """The mid joint rotated about the root->target axis by n_angles even steps: (n, k, 3)."""
    axis = unit(target - root)
    centre = root + np.sum((mid - root) * axis, -1, keepdims=True) * axis
    r1 = mid - centre
    r2 = np.cross(axis, r1)
    angles = np.linspace(0, 2 * np.pi, n_angles, endpoint=False)[None, :, None]
    return centre[:, None] + np.cos(angles) * r1[:, None] + np.sin(angles) * r2[:, None]


def test_reference_mode_is_seed_004s_theta_and_the_closest_rotation(rng):
    n = 5_000
    root, target, l1, l2 = reachable_cases(rng, n)
    reference = root + rng.uniform(-10, 10, (n, 3))
    sol = two_bone(root, target, l1, l2, reference=reference)
    check_lengths_and_reach(sol, root, target, l1, l2)
    mid = sol.positions[:, 1]
    np.testing.assert_allclose(mid, seed004_mid(root, target, l1, l2, reference),
                               atol=1e-7 * l1.max())
    # dense sweep of rotations about the root->target axis: none is closer to the reference
    swept = rotations_about_axis(root, target, mid, 1440)
    best = np.min(np.linalg.norm(swept - reference[:, None, :], axis=-1), axis=1)
    got = np.linalg.norm(mid - reference, axis=-1)
    assert np.all(got <= best + 1e-9 * (l1 + l2))


def test_reference_mode_on_100k_cases_beats_a_coarse_sweep(rng):
    root, target, l1, l2 = reachable_cases(rng, N)
    reference = root + rng.uniform(-10, 10, (N, 3))
    sol = two_bone(root, target, l1, l2, reference=reference)
    check_lengths_and_reach(sol, root, target, l1, l2)
    swept = rotations_about_axis(root, target, sol.positions[:, 1], 36)
    best = np.min(np.linalg.norm(swept - reference[:, None, :], axis=-1), axis=1)
    assert np.all(np.linalg.norm(sol.positions[:, 1] - reference, axis=-1) <= best + 1e-9 * (l1 + l2))


def test_foot_placement_call_shape(rng):
    """two_bone(hip, ankle_target, thigh, shin, reference=knee) over a clip of F frames."""
    f = 500
    hip = np.column_stack([np.zeros(f), np.full(f, 1.0), np.linspace(0, 5, f)])
    ankle = hip + [0.1, -0.85, -0.1]
    knee = hip + [0.0, -0.45, -0.1]
    sol = two_bone(hip, ankle, 0.45, 0.45, reference=knee)
    assert sol.shape == (f,) and sol.reached.all()
    assert np.all(sol.positions[:, 1, 2] < hip[:, 2])  # knee forward (-Z), like the reference


# ----------------------------------------------------------------------------- root_frame


def random_frames(rng, n):
    q = unit(rng.normal(size=(n, 4)))
    return Frame(q, rng.uniform(-5, 5, (n, 3)))


def test_root_frame_mid_joint_is_the_seeds_elbow(rng):
    n = N
    origin = random_frames(rng, n)
    l1 = rng.uniform(0.2, 3, n)
    l2 = rng.uniform(0.2, 3, n)
    lo, hi = np.abs(l1 - l2), l1 + l2
    d = lo + rng.uniform(0, 1, n) * (hi - lo)
    target = origin.position + d[:, None] * unit(rng.normal(size=(n, 3)))
    sol = two_bone(origin.position, target, l1, l2, root_frame=origin)
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    upper, _ = roblox.build_arm(plane, s, e, l1, l2)
    elbow = upper.apply(np.stack([0 * l1, -l1 / 2, 0 * l1], axis=-1))
    np.testing.assert_allclose(sol.positions[:, 1], elbow, atol=1e-9)
    check_lengths_and_reach(sol, origin.position, target, l1, l2)


def test_root_frame_straight_ahead_and_behind_follow_the_thread_fix():
    ahead = two_bone([0, 0, 0], [0, 0, -1.5], 1.0, 1.0, root_frame=Frame.identity())
    behind = two_bone([0, 0, 0], [0, 0, 1.5], 1.0, 1.0, root_frame=Frame.identity())
    assert ahead.positions[1, 1] < 0 < behind.positions[1, 1]  # elbow down, then up
    np.testing.assert_allclose(ahead.positions[1, [0, 2]], [0.0, -0.75])


def test_default_bend_is_the_world_rolled_plane(rng):
    root, target, l1, l2 = reachable_cases(rng, 1000)
    default = two_bone(root, target, l1, l2)
    rolled = two_bone(root, target, l1, l2, root_frame=Frame.identity((1000,)))
    np.testing.assert_allclose(default.positions, rolled.positions, atol=1e-12)
    assert default.positions[0, 1, 1] == pytest.approx(two_bone(root[:1], target[:1], l1[:1], l2[:1]).positions[0, 1, 1])


# ----------------------------------------------------------------------------- policies


@pytest.fixture
def far_and_close(rng):
    n = 2000
    root = rng.uniform(-5, 5, (n, 3))
    l1 = rng.uniform(0.5, 2, n)
    l2 = rng.uniform(0.5, 2, n)
    d = np.where(np.arange(n) % 2 == 0, (l1 + l2) * rng.uniform(1.01, 3, n),
                 np.abs(l1 - l2) * rng.uniform(0, 0.99, n))
    u = unit(rng.normal(size=(n, 3)))
    target = root + d[:, None] * u
    pole = root + rng.normal(size=(n, 3)) * 3
    return root, target, l1, l2, pole, d, u


def bone_lengths(pos):
    return (np.linalg.norm(pos[..., 1, :] - pos[..., 0, :], axis=-1),
            np.linalg.norm(pos[..., 2, :] - pos[..., 1, :], axis=-1))


def test_extend_keeps_the_root_and_reaches_the_closest_point(far_and_close):
    root, target, l1, l2, pole, d, u = far_and_close
    sol = two_bone(root, target, l1, l2, pole=pole)
    pos = sol.positions
    np.testing.assert_array_equal(pos[:, 0], root)
    a, b = bone_lengths(pos)
    np.testing.assert_allclose(a, l1, rtol=1e-12)
    np.testing.assert_allclose(b, l2, rtol=1e-12)
    clamped = np.clip(d, np.abs(l1 - l2), l1 + l2)
    np.testing.assert_allclose(pos[:, 2], root + clamped[:, None] * u, atol=1e-12)
    # mid on the target line: straight (far) or folded flat (close)
    line = unit(target - root)
    np.testing.assert_allclose(np.linalg.norm(np.cross(pos[:, 1] - root, line), axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(sol.error, np.abs(d - clamped), rtol=1e-12)
    assert not sol.reached.any()
    # too close: the longer bone points at the target, the shorter folds back
    close = d < np.abs(l1 - l2)
    toward = np.sum((pos[:, 1] - root) * u, axis=-1) > 0
    np.testing.assert_array_equal(toward[close], (l1 > l2)[close])


def test_push_root_moves_the_root_so_the_end_reaches(far_and_close):
    root, target, l1, l2, pole, d, u = far_and_close
    sol = two_bone(root, target, l1, l2, pole=pole, unreachable="push_root")
    pos = sol.positions
    np.testing.assert_allclose(pos[:, 2], target, atol=1e-12)
    a, b = bone_lengths(pos)
    np.testing.assert_allclose(a, l1, rtol=1e-12)
    np.testing.assert_allclose(b, l2, rtol=1e-12)
    clamped = np.clip(d, np.abs(l1 - l2), l1 + l2)
    np.testing.assert_allclose(pos[:, 0], root + (d - clamped)[:, None] * u, atol=1e-12)
    # the end is on the target, so every element is reached; the root's move is its own field
    assert sol.reached.all()
    assert np.all(sol.error <= 1e-12 * (1 + np.abs(target).max(axis=-1)))
    np.testing.assert_allclose(sol.root_offset, pos[:, 0] - root, atol=0)
    np.testing.assert_allclose(np.linalg.norm(sol.root_offset, axis=-1), np.abs(d - clamped),
                               rtol=1e-9, atol=1e-12)


def test_push_root_matches_the_seed_when_the_lower_bone_is_longer(rng):
    """Seed 000's push (too far, and too close with l2 > l1) with root_frame."""
    origin = random_frames(rng, 500)
    l1, l2 = 1.0, 1.6
    d = np.where(np.arange(500) % 2 == 0, 3.5, 0.3)
    target = origin.apply(d[:, None] * unit(rng.normal(size=(500, 3))))
    sol = two_bone(origin.position, target, l1, l2, root_frame=origin, unreachable="push_root")
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    upper, lower = roblox.build_arm(plane, s, e, l1, l2)
    np.testing.assert_allclose(sol.positions[:, 0], plane.position, atol=1e-9)
    np.testing.assert_allclose(sol.positions[:, 1], upper.apply([0, -l1 / 2, 0]), atol=1e-9)
    np.testing.assert_allclose(sol.positions[:, 2], lower.apply([0, -l2 / 2, 0]), atol=1e-9)


def test_stretch_scales_bones_up_to_max_stretch(far_and_close):
    root, target, l1, l2, pole, d, _ = far_and_close
    sol = two_bone(root, target, l1, l2, pole=pole, unreachable="stretch", max_stretch=1.5)
    pos = sol.positions
    np.testing.assert_array_equal(pos[:, 0], root)
    far = d > l1 + l2
    scale = np.where(far, np.minimum(d / (l1 + l2), 1.5), 1.0)
    a, b = bone_lengths(pos)
    np.testing.assert_allclose(a, l1 * scale, rtol=1e-12)
    np.testing.assert_allclose(b, l2 * scale, rtol=1e-12)
    within = far & (d <= 1.5 * (l1 + l2))
    assert sol.reached[within].all() and not sol.reached[~within].any()
    np.testing.assert_allclose(pos[within, 2], target[within], atol=1e-12)
    # too close folds exactly as "extend"
    close = ~far
    extend = two_bone(root, target, l1, l2, pole=pole)
    np.testing.assert_allclose(pos[close], extend.positions[close], atol=1e-15)


def test_stretch_with_max_stretch_one_is_extend(far_and_close):
    root, target, l1, l2, pole, _, _ = far_and_close
    a = two_bone(root, target, l1, l2, pole=pole, unreachable="stretch", max_stretch=1.0)
    b = two_bone(root, target, l1, l2, pole=pole)
    np.testing.assert_allclose(a.positions, b.positions, atol=1e-15)


# ----------------------------------------------------------------------------- degenerate


@pytest.mark.parametrize("policy", ["extend", "push_root", "stretch"])
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_degenerate_inputs_are_finite(policy, scale):
    o = np.array([1.0, 2.0, 3.0]) * scale
    cases = [
        dict(root=o, target=o, upper=1.0, lower=2.0),  # target at root
        dict(root=o, target=o, upper=1.5, lower=1.5),  # equal bones, target at root
        dict(root=o, target=o, upper=1.5, lower=1.5, pole=o),  # ... and pole at root
        dict(root=o, target=o + [0, 1, 0], upper=1, lower=1, pole=o + [0, 5, 0]),  # pole on the line
        dict(root=o, target=o + [0, 1, 0], upper=1, lower=1, pole=o - [0, 5, 0]),
        dict(root=o, target=o + [0, 1, 0], upper=1, lower=1, pole=o),  # pole at root
        dict(root=o, target=o + [0, 1, 0], upper=1, lower=1, reference=o + [0, 0.5, 0]),
        dict(root=o, target=o + [0, 0, 1.0], upper=1, lower=1),  # straight behind
        dict(root=o, target=o + [0, 0, 5.0], upper=1, lower=1, root_frame=Frame.identity()),
        dict(root=o, target=o, upper=1, lower=1, root_frame=Frame.from_axis_angle([1, 2, 3], 2.0)),
        dict(root=o, target=o + [0, 0, 1e-300], upper=1, lower=1),
        dict(root=o, target=o + [3, 0, 0], upper=1, lower=1),  # exactly full reach
        dict(root=o, target=o + [1e-9, 0, 0], upper=1, lower=1 + 1e-12),
    ]
    for case in cases:
        case = dict(case)
        for key in ("upper", "lower"):
            case[key] = case[key] * scale
        for key in ("target", "pole", "reference"):
            if key in case and key != "target":
                case[key] = np.asarray(case[key], float)
        case["target"] = np.asarray(case["target"], float)
        for batched in (False, True):
            kwargs = dict(case)
            if batched:
                kwargs = {k: (np.asarray(v)[None] if isinstance(v, np.ndarray) else v)
                          for k, v in kwargs.items()}
            sol = two_bone(**kwargs, unreachable=policy, max_stretch=1.3)
            for value in (sol.positions, sol.error):
                assert np.all(np.isfinite(value)), (case, policy)
            a, b = bone_lengths(sol.positions)
            stretched = policy == "stretch" and np.any(a > case["upper"] * (1 + 1e-9))
            if not stretched:
                np.testing.assert_allclose(a, case["upper"], rtol=1e-9)
                np.testing.assert_allclose(b, case["lower"], rtol=1e-9)


def test_target_at_root_uses_minus_z_of_the_root_frame():
    sol = two_bone([0, 0, 0], [0, 0, 0], 2.0, 1.0)
    np.testing.assert_allclose(sol.positions, [[0, 0, 0], [0, 0, -2], [0, 0, -1]], atol=1e-15)
    frame = Frame.from_axis_angle([0, 1, 0], np.pi / 2)  # -Z turns to -X
    sol = two_bone([0, 0, 0], [0, 0, 0], 2.0, 1.0, root_frame=frame)
    np.testing.assert_allclose(sol.positions[2], [-1, 0, 0], atol=1e-15)
    sol = two_bone([0, 0, 0], [0, 0, 0], 1.0, 1.0)  # equal bones: mid at 90°, end at root
    np.testing.assert_allclose(sol.positions, [[0, 0, 0], [0, -1, 0], [0, 0, 0]], atol=1e-15)


def test_continuity_along_a_smooth_target_path():
    """Small target moves give small joint moves (no flips) for pole and default modes."""
    s = np.linspace(0, 2 * np.pi, 20_001)
    target = np.column_stack([1.2 * np.cos(s), 0.3 * np.sin(2 * s) - 0.5, 1.2 * np.sin(s) - 0.2])
    step = np.max(np.linalg.norm(np.diff(target, axis=0), axis=-1))
    for kwargs in ({"pole": [0.0, 0.0, -5.0]}, {"reference": [0.0, -1.0, -1.0]}, {}):
        sol = two_bone([0.0, 0.0, 0.0], target, 1.0, 0.8, **kwargs)
        jump = np.max(np.linalg.norm(np.diff(sol.positions[:, 1], axis=0), axis=-1))
        assert jump < 50 * step, kwargs


# ----------------------------------------------------------------------------- API


def test_single_fast_path_equals_the_batched_path(rng):
    root, target, l1, l2 = reachable_cases(rng, 300)
    target[::3] = root[::3] + (target[::3] - root[::3]) * 3  # some out of reach
    pole = rng.normal(size=(300, 3)) * 5
    for policy in ("extend", "push_root", "stretch"):
        for mode in ("pole", "reference", None):
            kw = {} if mode is None else {mode: pole}
            batch = two_bone(root, target, l1, l2, unreachable=policy, max_stretch=1.2, **kw)
            for i in range(0, 300, 7):
                kwi = {} if mode is None else {mode: pole[i]}
                one = two_bone(root[i], target[i], float(l1[i]), float(l2[i]),
                               unreachable=policy, max_stretch=1.2, **kwi)
                assert one.shape == ()
                np.testing.assert_allclose(one.positions, batch.positions[i], rtol=1e-13, atol=1e-13)
                assert bool(one.reached) == bool(batch.reached[i])
                assert float(one.error) == pytest.approx(float(batch.error[i]), abs=1e-12)


def test_broadcasting_scalar_lengths_and_shared_pole(rng):
    root = rng.normal(size=(4, 1, 3))
    target = rng.normal(size=(5, 3))
    sol = two_bone(root, target, 1.0, [1.5], pole=[0.0, 0.0, -3.0])
    assert sol.shape == (4, 5) and sol.positions.shape == (4, 5, 3, 3)
    one = two_bone(root[2, 0], target[3], 1.0, 1.5, pole=np.array([0.0, 0.0, -3.0]))
    np.testing.assert_allclose(sol.positions[2, 3], one.positions, atol=1e-14)
    frames = random_frames(rng, 5)
    sol = two_bone(np.zeros(3), target, np.full(5, 1.0), 1.0, root_frame=frames)
    assert sol.shape == (5,)
    assert two_bone(np.zeros((0, 3)), np.zeros((0, 3)), 1.0, 1.0).shape == (0,)


def test_exports():
    assert limbik.two_bone is two_bone
    assert limbik.solvers.two_bone is two_bone
    assert limbik.roblox is roblox


def test_errors_name_the_argument():
    with pytest.raises(InvalidInputError, match=r"target must have shape \(\.\.\., 3\), got \(2,\)"):
        two_bone([0, 0, 0], [0, 1], 1, 1)
    with pytest.raises(NonFiniteInputError, match=r"target must be finite, got NaN at index \(1,\)"):
        two_bone([0, 0, 0], [0, np.nan, 1], 1, 1)
    with pytest.raises(NonFiniteInputError, match="root must be finite, got inf"):
        two_bone(np.array([[0, 0, np.inf]]), np.zeros((1, 3)), 1.0, 1.0)
    with pytest.raises(NonFiniteInputError, match="pole must be finite"):
        two_bone(np.zeros(3), np.ones(3), 1.0, 1.0, pole=np.array([0, np.nan, 0]))
    with pytest.raises(NonFiniteInputError, match="reference must be finite"):
        two_bone(np.zeros((2, 3)), np.ones((2, 3)), 1.0, 1.0, reference=np.array([0, np.inf, 0]))
    with pytest.raises(InvalidInputError, match=r"upper must be > 0, got 0\.0"):
        two_bone([0, 0, 0], [0, 1, 1], 0.0, 1)
    with pytest.raises(InvalidInputError, match=r"lower must be > 0, got -2\.0"):
        two_bone(np.zeros((3, 3)), np.ones((3, 3)), 1.0, np.array([1.0, -2.0, 1.0]))
    with pytest.raises(InvalidInputError, match="pass at most one of pole, reference and root_frame, got pole and reference"):
        two_bone([0, 0, 0], [0, 1, 1], 1, 1, pole=[1, 0, 0], reference=[1, 0, 0])
    with pytest.raises(InvalidInputError, match="unreachable must be one of 'extend', 'push_root', 'stretch', got 'clamp'"):
        two_bone([0, 0, 0], [0, 1, 1], 1, 1, unreachable="clamp")
    with pytest.raises(InvalidInputError, match=r"max_stretch must be >= 1\.0, got 0\.5"):
        two_bone(np.zeros(3), np.ones(3), 1.0, 1.0, unreachable="stretch", max_stretch=0.5)
    with pytest.raises(InvalidInputError, match="root_frame must be a limbik Frame, got ndarray"):
        two_bone([0, 0, 0], [0, 1, 1], 1, 1, root_frame=np.eye(4))
    with pytest.raises(InvalidInputError, match="batch shapes must broadcast together"):
        two_bone(np.zeros((2, 3)), np.zeros((3, 3)), 1, 1)
    with pytest.raises(InvalidInputError, match="upper must be a numeric array"):
        two_bone([0, 0, 0], [0, 1, 1], "long", 1)


def test_single_fast_path_accepts_strided_views_and_reports_bad_input():
    """(3,) float64 views of any strides are read correctly; invalid single-limb input
    falls through to the batched path's checks."""
    m = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    target, pole = np.array([0.0, 10.0, 0.0]), np.array([10.0, 5.0, 0.0])
    strided = two_bone(m.T[0], target, 10.0, 10.0, pole=pole)
    np.testing.assert_array_equal(strided.positions, two_bone(m.T[0].copy(), target, 10.0, 10.0, pole=pole).positions)
    np.testing.assert_array_equal(strided.positions[0], [1.0, 2.0, 3.0])
    with pytest.raises(InvalidInputError, match=r"lower must be > 0, got -1\.0"):
        two_bone(np.zeros(3), target, 1.0, -1.0)
    with pytest.raises(NonFiniteInputError, match=r"target must be finite, got inf at index \(2,\)"):
        two_bone(np.zeros(3), np.array([0.0, 1.0, np.inf]), 1.0, 1.0)
    with pytest.raises(NonFiniteInputError, match="max_stretch must be finite"):
        two_bone(np.zeros(3), target, 1.0, 1.0, unreachable="stretch", max_stretch=np.inf)
    with pytest.raises(InvalidInputError, match="unreachable must be one of"):
        two_bone(np.zeros(3), target, 1.0, 1.0, unreachable="EXTEND")


points = st.tuples(*[st.floats(-1e6, 1e6, allow_nan=False)] * 3).map(np.array)
lengths = st.floats(1e-6, 1e6)


@given(root=points, target=points, pole=st.one_of(st.none(), points), upper=lengths,
       lower=lengths, policy=st.sampled_from(["extend", "push_root", "stretch"]))
def test_any_finite_input_gives_finite_output_with_lengths_kept(root, target, pole, upper,
                                                                 lower, policy):
    sol = two_bone(root, target, upper, lower, pole=pole, unreachable=policy, max_stretch=1.25)
    assert np.all(np.isfinite(sol.positions)) and np.isfinite(sol.error)
    a, b = bone_lengths(sol.positions)
    d = np.linalg.norm(target - root)
    scale = min(max(d / (upper + lower), 1.0), 1.25) if policy == "stretch" else 1.0
    # rounding scales with the largest coordinate given, too: a far root pushed to the
    # target carries its magnitude's rounding into the end effector
    slack = 1e-12 * (max(np.abs(sol.positions).max(), np.abs(root).max(), np.abs(target).max())
                     + upper + lower)
    assert abs(a - upper * scale) <= slack + 1e-9 * upper
    assert abs(b - lower * scale) <= slack + 1e-9 * lower
    if policy == "push_root":
        # the moved root is computed from the input root, so rounding scales with it too
        moved = 1e-12 * (np.abs(root).max() + np.abs(target).max())
        assert np.linalg.norm(sol.positions[2] - target) <= slack + moved
    else:
        np.testing.assert_array_equal(sol.positions[0], root)


@pytest.mark.parametrize("policy", ["extend", "push_root", "stretch"])
@pytest.mark.parametrize("fast", [True, False])
def test_a_single_limb_gets_numpy_scalars_on_both_paths(policy, fast):
    """The docstring's promise: batch shape () gives np.bool_ and np.float64."""
    root, target = np.zeros(3), np.array([0.7, 0.1, 0.0])
    if not fast:  # lists take the batched path
        root, target = root.tolist(), target.tolist()
    sol = two_bone(root, target, 0.3, 0.2, unreachable=policy, max_stretch=1.5)
    assert isinstance(sol.reached, np.bool_) and isinstance(sol.error, np.float64)
    assert sol.shape == ()
    if policy == "push_root":
        assert sol.reached and sol.error <= 1e-15
        np.testing.assert_allclose(sol.root_offset, sol.positions[0] - np.asarray(root))
        assert np.linalg.norm(sol.root_offset) == pytest.approx(np.linalg.norm(target) - 0.5)
    else:
        assert sol.root_offset is None


def test_push_root_offset_is_zero_in_reach_and_survives_indexing(rng):
    root = rng.normal(size=(50, 3))
    target = root + unit(rng.normal(size=(50, 3))) * rng.uniform(0.2, 0.45, (50, 1))
    sol = two_bone(root, target, 0.3, 0.2, unreachable="push_root")
    np.testing.assert_array_equal(sol.root_offset, 0.0)
    assert sol[3].root_offset.shape == (3,) and "root_offset" in sol.to_dict()


def test_a_target_at_the_root_reports_the_true_miss():
    """Within 1e-15 of the reach the limb points along -Z; error is the real distance."""
    for lengths, target in (((1e16, 1e16), [1.0, 0.0, 0.0]), ((1.0, 1.0), [0.0, 1e-16, 0.0])):
        for policy in ("extend", "stretch", "push_root"):
            s = two_bone(np.zeros(3), np.array(target), *lengths, unreachable=policy)
            miss = np.linalg.norm(s.positions[2] - s.positions[0] - target)
            assert float(s.error) == pytest.approx(miss, rel=1e-12, abs=1e-300)
            batch = two_bone(np.zeros((2, 3)), np.array([target] * 2), *lengths,
                             unreachable=policy)
            assert np.array_equal(batch.error, [s.error] * 2)
