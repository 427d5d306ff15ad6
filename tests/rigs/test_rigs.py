"""Per-frame rigs: smoothing independent of the frame rate, warm starts, tweens."""

from __future__ import annotations

import math

import numpy as np
import pytest

from limbik import FabrikTree, Frame, fabrik, roblox, two_bone
from limbik.errors import InvalidInputError
from limbik.rigs import (
    CriticallyDamped,
    FabrikChainRig,
    FabrikTreeRig,
    Tween,
    TweenedFrame,
    TweenInfo,
    TwoBoneRig,
    ease,
)

REST = np.array([[0.0, 0.0, 0.0], [0.0, -1.0, -0.1], [0.0, -1.9, 0.0]])


def target_path(t):
    """A hand sweeping a figure of eight in front of the shoulder."""
    return np.array([0.6 * math.sin(2.1 * t), -1.2 + 0.3 * math.sin(4.2 * t),
                     -0.5 - 0.2 * math.cos(1.3 * t)])


def run_limb(rate, seconds=2.0, smooth_time=0.15):
    rig = TwoBoneRig(REST, smooth_time=smooth_time)
    dt = 1.0 / rate
    rig.step(0.0, target_path(0.0), pole=[0.0, 0.0, -1.0])  # every run starts at t = 0
    out = {}
    for k in range(1, round(seconds * rate) + 1):
        t = k * dt
        sol = rig.step(dt, target_path(t), pole=[0.0, 0.0, -1.0])
        out[round(t, 9)] = np.array(sol.positions)
    return out


def test_two_bone_rig_smoothing_is_the_same_at_30_60_and_240_hz():
    """Same motion, three frame rates: joints at common times agree within 1% of the reach."""
    runs = {rate: run_limb(rate) for rate in (30, 60, 240)}
    reach = float(np.sum(np.linalg.norm(np.diff(REST, axis=0), axis=1)))
    common = sorted(set(runs[30]))
    worst = 0.0
    for t in common:
        for rate in (60, 240):
            worst = max(worst, float(np.abs(runs[rate][t] - runs[30][t]).max()))
    assert worst < 0.01 * reach
    # and the smoothing did something: the hand lags the moving target
    lag = max(np.linalg.norm(runs[240][t][2] - target_path(t)) for t in common)
    assert lag > 0.1 and lag > 100 * worst


def test_critically_damped_is_exact_for_linear_goals_and_never_overshoots_a_step():
    for dt in (1 / 30, 1 / 60, 1 / 240, 0.013):
        s = CriticallyDamped(np.zeros(2), 0.2)
        t = 0.0
        while t < 0.6 - 1e-12:
            t += dt
            v = s.step(np.array([1.0, -2.0]) * t, dt)
        # the closed form for a ramp goal g = c t starting at rest on 0:
        w = 10.0
        c = np.array([1.0, -2.0])
        e = -2 * c / w + (2 * c / w + (-c + w * 2 * c / w) * t) * math.exp(-w * t)
        np.testing.assert_allclose(v, c * t + e, atol=1e-12)
    step = CriticallyDamped([0.0], 0.3)
    values = [step.step([1.0], 1 / 60)[0] for _ in range(400)]
    assert np.all(np.diff(values) >= 0) and max(values) <= 1.0
    assert values[-1] > 0.999
    snap = CriticallyDamped([0.0], 0.0)
    assert snap.step([5.0], 0.1)[0] == 5.0


def test_two_bone_rig_without_smoothing_is_two_bone_each_frame():
    rig = TwoBoneRig(REST)
    for k in range(20):
        t = k / 10
        root = np.array([0.1 * t, 0.0, 0.0])
        sol = rig.step(0.1, target_path(t), root=root, pole=[0, 0, -1])
        ref = two_bone(root, target_path(t), float(np.linalg.norm(REST[1] - REST[0])),
                       float(np.linalg.norm(REST[2] - REST[1])), pole=[0, 0, -1])
        np.testing.assert_allclose(sol.positions, ref.positions, atol=1e-12)


def test_two_bone_rig_root_frame_bends_as_the_seed_solver():
    rig = TwoBoneRig(REST)
    origin = Frame.from_euler_xyz(0.2, 0.5, -0.1)
    target = np.array([0.4, -1.1, -0.6])
    sol = rig.step(1 / 60, target, root_frame=origin)
    l1 = float(np.linalg.norm(REST[1] - REST[0]))
    l2 = float(np.linalg.norm(REST[2] - REST[1]))
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    upper, _ = roblox.build_arm(plane, s, e, l1, l2)
    np.testing.assert_allclose(sol.positions[1], upper.apply([0.0, -l1 / 2, 0.0]), atol=1e-9)
    np.testing.assert_allclose(sol.positions[2], target, atol=1e-9)
    with pytest.raises(InvalidInputError, match="at most one of pole and root_frame"):
        rig.step(0.1, target, pole=[0, 0, -1], root_frame=origin)


def test_two_bone_rig_weight_blends_from_the_animation():
    rig = TwoBoneRig(REST, weight=0.0)
    sol = rig.step(0.1, [0.5, -1.0, -0.5])
    np.testing.assert_allclose(sol.positions[2], REST[2], atol=1e-9)
    rig = TwoBoneRig(REST, weight=0.5)
    sol = rig.step(0.1, REST[2] + [0.4, 0.2, 0.0])
    np.testing.assert_allclose(sol.positions[2], REST[2] + [0.2, 0.1, 0.0], atol=1e-9)
    with pytest.raises(InvalidInputError, match="weight must be <= 1"):
        TwoBoneRig(REST, weight=2.0)
    with pytest.raises(InvalidInputError, match="rest must have shape"):
        TwoBoneRig(np.zeros((2, 3)))
    with pytest.raises(InvalidInputError, match="target must have shape"):
        TwoBoneRig(REST).step(0.1, [1.0, 2.0])


def chain_rest(n=6):
    return np.stack([np.zeros(n), -np.arange(n) * 0.5, np.zeros(n)], axis=-1)


def test_fabrik_chain_rig_warm_starts_from_the_last_frame():
    rest = chain_rest()
    rig = FabrikChainRig(rest, tolerance=1e-9, max_iterations=3)
    cold_iters, warm_iters = [], []
    prev = rest
    for k in range(60):
        t = k / 60
        target = np.array([0.8 * math.sin(t), -1.8 + 0.2 * math.cos(2 * t), 0.6 * t])
        sol = rig.step(1 / 60, target)
        # the same solve started from the last frame's pose
        ref = fabrik(prev, target, tolerance=1e-9, max_iterations=3)
        np.testing.assert_allclose(sol.positions, ref.positions, atol=1e-12)
        prev = sol.positions
        warm_iters.append(float(sol.error))
        cold_iters.append(float(fabrik(rest, target, tolerance=1e-9, max_iterations=3).error))
        np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 0.5,
                                   rtol=1e-9)
    # three iterations a frame from the last pose follow the target better than from rest
    assert np.mean(warm_iters[10:]) < 0.5 * np.mean(cold_iters[10:])


def test_fabrik_chain_rig_with_the_seed_settings_follows_chain_solve():
    rest = chain_rest(4)
    rig = FabrikChainRig(rest, tolerance=0.1, max_iterations=11, min_improvement=-np.inf)
    chain = roblox.FabrikChain(rest, rest[-1])
    for k in range(30):
        target = np.array([0.5 * math.sin(k / 7), -1.0, 0.4 * math.cos(k / 5)])
        chain.target = target
        chain.solve()
        sol = rig.step(1 / 60, target)
        np.testing.assert_allclose(sol.positions, chain.joints, atol=1e-9)


def test_fabrik_tree_rig_tracks_two_effectors():
    parents = np.array([-1, 0, 1, 2, 3, 2, 5])
    pose = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [-0.5, 2.6, 0], [-1, 3.2, 0],
                     [0.5, 2.6, 0], [1, 3.2, 0]], dtype=float)
    tree = FabrikTree(parents, pose)
    rig = FabrikTreeRig(tree, max_iterations=50, tolerance=1e-6)
    lengths = np.linalg.norm(pose[1:] - pose[parents[1:]], axis=1)
    for k in range(40):
        t = k / 40
        targets = {4: [-0.9 + 0.3 * t, 3.0, 0.2 * t], 6: [0.9, 3.0 - 0.4 * t, 0.1]}
        sol = rig.step(1 / 60, targets, root=[0.05 * t, 0, 0])
        p = sol.positions
        np.testing.assert_allclose(p[0], [0.05 * t, 0, 0], atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(p[1:] - p[parents[1:]], axis=1), lengths,
                                   rtol=1e-9)
        assert sol.error < 1e-3
    with pytest.raises(InvalidInputError, match="tree must be a FabrikTree"):
        FabrikTreeRig(None)


def arc_chain(n=5, bend=0.8, length=4.0):
    """A chain curled one way: joints on a circular arc of ``length``, bones of equal
    length (chords)."""
    a = np.linspace(0.0, bend, n)
    radius = length / bend
    return np.c_[radius * (1 - np.cos(a)), radius * np.sin(a), np.zeros(n)]


def out_of_reach_and_back(frames=240):
    """Targets along a line from the root, out beyond the chain's reach and back again."""
    for k in range(frames):
        s = k / frames
        r = 2.5 + 2.5 * math.sin(math.pi * s)
        yield k, np.array([r * math.sin(0.6), r * math.cos(0.6), 0.3 * math.sin(2 * math.pi * s)])


def bends_alternate(p):
    """Whether consecutive joints of the chain ``p (n, 3)`` bend about opposite axes."""
    b = np.diff(p, axis=0)
    axes = np.cross(b[:-1], b[1:])
    size = np.linalg.norm(axes, axis=1)
    if size.min() < 1e-6:
        return False  # straight: no bend to compare
    axes /= size[:, None]
    return bool(np.min(np.sum(axes[:-1] * axes[1:], axis=1)) < 0.0)


def test_a_rest_started_chain_comes_back_from_out_of_reach_bent_as_it_left():
    """Warm-started FABRIK pulls a chain that was stretched out of reach back in as a
    zig-zag; started from the rest pose every step it bends as the rest pose does, and
    its pose at a target is the same on the way out and on the way back."""
    rest = arc_chain()
    rig = FabrikChainRig(rest, start="rest", tolerance=1e-9, max_iterations=50)
    poses = {}
    for k, target in out_of_reach_and_back():
        p = rig.step(1 / 60, target).positions
        assert not bends_alternate(p), k
        np.testing.assert_allclose(np.linalg.norm(np.diff(p, axis=0), axis=1),
                                   np.linalg.norm(np.diff(rest, axis=0), axis=1), rtol=1e-9)
        np.testing.assert_array_equal(p[0], rest[0])
        poses[k] = np.array(p)
    for k in range(1, 120):  # frame 240 - k has frame k's target mirrored in z
        mirrored = poses[240 - k] * [1.0, 1.0, -1.0]
        np.testing.assert_allclose(mirrored, poses[k], atol=1e-9)
    # the last frame's pose, as the default does, folds into a zig-zag on the way back
    warm = FabrikChainRig(rest, tolerance=1e-9, max_iterations=50)
    folded = [bends_alternate(warm.step(1 / 60, target).positions)
              for _, target in out_of_reach_and_back()]
    assert not any(folded[:100]) and any(folded[140:])


def test_a_rest_started_rig_moves_with_its_root():
    rest = arc_chain()
    rig = FabrikChainRig(rest, start="rest")
    sol = rig.step(1 / 60, [1.0, 2.0, 0.5], root=[0.3, -0.2, 0.1])
    np.testing.assert_allclose(sol.positions[0], [0.3, -0.2, 0.1], atol=1e-15)
    expected = fabrik(rest + [0.3, -0.2, 0.1], [1.0, 2.0, 0.5])
    np.testing.assert_array_equal(sol.positions, expected.positions)
    # without a root, the root stays where the last step put it
    again = rig.step(1 / 60, [1.0, 2.0, 0.5])
    np.testing.assert_array_equal(again.positions, expected.positions)
    with pytest.raises(InvalidInputError, match="start must be one of 'last', 'rest', got 'x'"):
        FabrikChainRig(rest, start="x")


def test_a_rest_started_tree_rig_is_a_function_of_its_targets():
    parents = np.array([-1, 0, 1, 2, 3, 2, 5])
    pose = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [-0.5, 2.6, 0], [-1, 3.2, 0],
                     [0.5, 2.6, 0], [1, 3.2, 0]], dtype=float)
    tree = FabrikTree(parents, pose)
    rig = FabrikTreeRig(tree, start="rest", max_iterations=50, tolerance=1e-9)
    targets = [{4: [-0.9 + 0.3 * t, 3.0, 0.2 * t], 6: [0.9, 3.0 - 0.4 * t, 0.1]}
               for t in np.linspace(0.0, 1.0, 20)]
    first = [np.array(rig.step(1 / 60, goal).positions) for goal in targets]
    back = [np.array(rig.step(1 / 60, goal).positions) for goal in reversed(targets)]
    for a, b in zip(first, reversed(back), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first[-1], tree.solve(targets[-1], start=pose,
                                                        max_iterations=50,
                                                        tolerance=1e-9).positions)
    with pytest.raises(InvalidInputError, match="start must be one of"):
        FabrikTreeRig(tree, start="first")


@pytest.mark.parametrize("first_pole", [True, False])
def test_a_two_bone_rig_eases_its_mid_joint_when_its_pole_comes_or_goes(first_pole):
    """Giving or dropping the pole swings the elbow to another side: over ``smooth_time``,
    not in one frame; the hand still reaches its goal and the bones keep their lengths,
    and once eased in the rig is the rig that never switched."""
    pole = [1.0, 0.0, -1.0]

    def run(smooth_time, switch_at):
        rig = TwoBoneRig(REST, smooth_time=smooth_time)
        mids, hands = [], []
        for k in range(240):
            with_pole = (k < switch_at) == first_pole
            sol = rig.step(1 / 60, target_path(k / 60), **({"pole": pole} if with_pole else {}))
            p = np.array(sol.positions)
            np.testing.assert_allclose(np.linalg.norm(np.diff(p, axis=0), axis=1),
                                       [rig.upper, rig.lower], rtol=1e-12)
            mids.append(p[1])
            hands.append(p[2])
        return np.array(mids), np.array(hands)

    length = 1.9
    switched, hands = run(0.15, 120)
    steady, steady_hands = run(0.15, 0)  # in the second way from the start
    np.testing.assert_allclose(hands, steady_hands, atol=1e-12)  # the goal is unchanged
    step = np.linalg.norm(np.diff(switched, axis=0), axis=1)
    assert step.max() < 0.05 * length, step.max()
    assert np.max(np.linalg.norm(switched[120] - steady[120])) > 0.2 * length  # a real swing
    np.testing.assert_array_equal(switched[200:], steady[200:])
    # no kink: the mid joint keeps its velocity through the change, and its acceleration
    # (second difference) grows from the steady one instead of jumping
    accel = np.linalg.norm(switched[2:] - 2 * switched[1:-1] + switched[:-2], axis=1)
    steady_accel = np.linalg.norm(steady[2:] - 2 * steady[1:-1] + steady[:-2], axis=1)
    assert accel[117:120].max() < 3 * steady_accel.max(), accel[115:125]
    assert accel.max() < 0.01 * length, accel.max()
    # smooth_time 0 follows at once
    instant, _ = run(0.0, 120)
    at_once, _ = run(0.0, 0)
    np.testing.assert_array_equal(instant[120:], at_once[120:])
    assert np.linalg.norm(instant[120] - instant[119]) > 0.2 * length


@pytest.mark.parametrize("rate", [30, 60, 240])
def test_an_eased_change_of_bend_is_the_same_at_any_frame_rate(rate):
    """The easing is a function of the time since the change: sampled at 30 or 240 Hz it
    puts the elbow where 60 Hz does (to the smoothing's own frame-rate dependence), and a
    change on a step of no time, or on the rig's second step, starts where the elbow was."""
    pole = [1.0, 0.0, -1.0]

    def run(hz):
        rig = TwoBoneRig(REST, smooth_time=0.15)
        mids = {}
        for k in range(2 * hz):
            t = k / hz
            sol = rig.step(1 / hz, target_path(t), **({"pole": pole} if t < 1.0 else {}))
            mids[round(t * 240)] = np.array(sol.positions[1])
        return mids

    here, reference = run(rate), run(60)
    for tick in (240, 264, 288, 312, 336):  # 1 s (the change) and after
        np.testing.assert_allclose(here[tick], reference[tick], atol=0.003)
    rig = TwoBoneRig(REST, smooth_time=0.15)
    before = np.array(rig.step(1 / 60, target_path(0.0), pole=pole).positions[1])
    after = np.array(rig.step(1 / 60, target_path(0.0)).positions[1])  # second step
    np.testing.assert_allclose(after, before, atol=1e-9)
    now = np.array(rig.step(0.0, target_path(0.0), pole=pole).positions[1])  # no time
    np.testing.assert_allclose(now, after, atol=1e-9)
    for _ in range(60):
        last = rig.step(1 / 60, target_path(0.0), pole=pole)
    assert np.all(np.isfinite(last.positions))


def test_tween_values_follow_quad_out_and_cancel():
    a = Frame.from_translation([0.0, 0.0, 0.0])
    b = Frame.from_euler_xyz(0.0, 1.0, 0.0, [2.0, 0.0, 0.0])
    tw = Tween(a, b, TweenInfo(0.5))
    v = tw.advance(0.1)
    assert v.isclose(a.lerp(b, 1 - (1 - 0.2) ** 2))
    tw.cancel()
    assert tw.advance(0.3).isclose(v) and tw.done
    assert Tween(a, b, TweenInfo(0.5)).advance(0.7).isclose(b)
    prop = TweenedFrame(a)
    prop.play(b, TweenInfo(1.0))
    prop.advance(0.5)
    first = prop.tween
    halfway = prop.value
    prop.play(a, TweenInfo(1.0))  # cancels the running tween, starts from where it is
    assert first is not None and first.cancelled
    assert prop.tween is not None and prop.tween.start.isclose(halfway)
    for style in ("Linear", "Sine", "Quad", "Cubic", "Quart", "Quint"):
        for direction in ("In", "Out", "InOut"):
            xs = np.linspace(0, 1, 41)
            ys = [ease(x, style, direction) for x in xs]
            assert ys[0] == 0.0 and ys[-1] == 1.0 and np.all(np.diff(ys) >= 0)
    assert ease(0.5, "Quad", "Out") == 0.75


@pytest.mark.parametrize("rate", [30, 60, 240])
def test_a_leg_without_a_pole_keeps_its_knee_forward_through_the_swing(rate):
    """The foot swings from behind to in front of the hip, across the line through the rest
    knee: the knee stays on its animated (forward, -Z) side and moves smoothly."""
    rest = np.array([[0.0, 0.9, 0.0], [0.0, 0.48, -0.04], [0.0, 0.05, 0.0]])
    rig = TwoBoneRig(rest)
    previous = None
    for k in range(2 * rate + 1):
        t = k / rate
        target = np.array([0.0, 0.12, 0.35 * math.cos(math.pi * t)])
        root, knee, end = rig.step(1 / rate, target).positions
        u = (end - root) / np.linalg.norm(end - root)
        side = (knee - root) - np.dot(knee - root, u) * u
        assert side[2] <= 1e-12  # forward (0 where the leg is straight, out of reach)
        if previous is not None:  # no jump: at most ~2x the foot's own step
            step = 0.35 * math.pi / rate
            assert np.linalg.norm(knee - previous) < 2.0 * step
        previous = knee


def test_a_straight_rest_pose_follows_its_mid_joint():
    rest = np.array([[0.0, 0.9, 0.0], [0.0, 0.5, 0.0], [0.0, 0.1, 0.0]])
    sol = TwoBoneRig(rest).step(1 / 60, [0.0, 0.3, -0.2])
    assert np.all(np.isfinite(sol.positions)) and sol.reached


def test_a_batched_tweened_frame_tweens_each_element_on_its_own():
    rest = Frame.from_translation(np.zeros((3, 3)))
    up = Frame.from_euler_xyz(0.4, 0.0, 0.0, [0.0, 1.0, 0.0])
    prop = TweenedFrame(rest)
    prop.play(up, TweenInfo(1.0))
    prop.advance(0.5)
    halfway = prop.value
    # elements 0 and 2 start a new tween back; element 1 goes on with the first one
    prop.play(Frame(), TweenInfo(0.5, "Linear"), where=np.array([True, False, True]))
    value = prop.advance(0.25)
    assert value.shape == (3,)
    assert value[1].isclose(rest[1].lerp(up, ease(0.75)), atol=1e-15)
    for i in (0, 2):
        assert value[i].isclose(halfway[i].lerp(Frame(), 0.5), atol=1e-15)
    value = prop.advance(1.0)
    assert value[1].isclose(up) and value[0].isclose(Frame()) and value[2].isclose(Frame())
    # unbatched: play without where cancels the running tween
    single = TweenedFrame(Frame())
    first = single.play(up, TweenInfo(1.0))
    single.play(Frame(), TweenInfo(1.0), where=True)
    assert first.cancelled
    with pytest.raises(InvalidInputError, match="where must be booleans"):
        prop.play(up, TweenInfo(1.0), where=[1, 0, 1])
    with pytest.raises(InvalidInputError, match=r"where must broadcast to the batch shape \(3,\)"):
        prop.play(up, TweenInfo(1.0), where=np.array([True, False]))
    with pytest.raises(InvalidInputError, match=r"goal must broadcast to the batch shape \(3,\)"):
        prop.play(Frame.from_translation(np.zeros((2, 3))), TweenInfo(1.0))
    with pytest.raises(InvalidInputError, match=r"goal must have the batch shape of start"):
        Tween(rest, up, TweenInfo(1.0))
    with pytest.raises(InvalidInputError, match="goal must be a Frame"):
        prop.play(None, TweenInfo(1.0))


@pytest.mark.parametrize("smooth_time", [0.0, 0.1])
def test_two_bone_rig_stays_finite_after_a_target_beyond_float_squares(smooth_time):
    """A target 1e200 away (its squared distance overflows) stretches the limb toward it;
    the smoothing state stays finite and later steps come back (a spring from 1e200
    away takes tens of seconds of smooth_time 0.1 to return)."""
    rest = np.array([[0, 1, 0], [0, 0.5, 0.05], [0, 0, 0.0]])
    rig = TwoBoneRig(rest, smooth_time=smooth_time)
    far = rig.step(1 / 60, [1e200, 0, 0])
    reach = np.linalg.norm(np.diff(rest, axis=0), axis=-1).sum()
    np.testing.assert_allclose(far.positions[2], [reach, 1.0, 0.0], atol=1e-9)
    for _ in range(3000):
        sol = rig.step(1 / 60, [0.2, 0.2, 0.1])
        assert np.all(np.isfinite(sol.positions))
    np.testing.assert_allclose(sol.positions[2], [0.2, 0.2, 0.1], atol=1e-6)
