"""``FootPlanter`` against an independent port of seed 000's foot-planting loop.

The port below uses 4×4 matrices for CFrames, its own ``solveIK`` (Lua line by line),
scipy quaternions for ``CFrame:Lerp`` and the Quad-Out easing written out; only the
ground heights come from ``limbik.Terrain``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from limbik import Frame, Terrain
from limbik.errors import InvalidInputError
from limbik.rigs import FootPlanter, TweenInfo, ease

# ----------------------------------------------------------------------------- the port


def cf(pos=(0.0, 0.0, 0.0), rot=None):
    m = np.eye(4)
    if rot is not None:
        m[:3, :3] = rot
    m[:3, 3] = pos
    return m


def angles_x(a):
    c, s = math.cos(a), math.sin(a)
    return cf(rot=np.array([[1, 0, 0], [0, c, -s], [0, s, c]]))


def from_axis_angle(axis, angle):
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return cf(rot=np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx)


def solve_ik(origin, target, l1, l2):
    localized = np.linalg.inv(origin) @ np.append(target, 1.0)
    localized = localized[:3]
    l3 = np.linalg.norm(localized)
    unit = localized / l3
    axis = np.cross([0.0, 0.0, -1.0], unit)
    angle = math.acos(max(-1.0, min(1.0, -unit[2])))
    if np.linalg.norm(axis) < 1e-12:  # the thread's fix (behind: half turn about -X)
        axis = np.array([-1.0, 0, 0]) if unit[2] > 0 else np.array([0, 0, -1.0])
        angle = math.pi if unit[2] > 0 else 0.0
    plane = origin @ from_axis_angle(axis, angle)
    if l3 < max(l2, l1) - min(l2, l1):
        return plane @ cf((0, 0, max(l2, l1) - min(l2, l1) - l3)), -math.pi / 2, math.pi
    if l3 > l1 + l2:
        return plane @ cf((0, 0, l1 + l2 - l3)), math.pi / 2, 0.0
    a1 = -math.acos((-(l2 * l2) + (l1 * l1) + (l3 * l3)) / (2 * l1 * l3))
    a2 = math.acos(((l2 * l2) - (l1 * l1) + (l3 * l3)) / (2 * l2 * l3))
    return plane, a1 + math.pi / 2, a2 - a1


def lerp(a, b, t):
    qa = Rotation.from_matrix(a[:3, :3]).as_quat()
    qb = Rotation.from_matrix(b[:3, :3]).as_quat()
    if np.dot(qa, qb) < 0:
        qb = -qb
    th = math.acos(min(1.0, abs(float(np.dot(qa, qb)))))
    if th < 1e-9:
        q = (1 - t) * qa + t * qb
    else:
        q = (math.sin((1 - t) * th) * qa + math.sin(t * th) * qb) / math.sin(th)
    return cf(a[:3, 3] + t * (b[:3, 3] - a[:3, 3]), Rotation.from_quat(q).as_matrix())


class PortTween:
    def __init__(self, start, goal, time):
        self.start, self.goal, self.time, self.elapsed = start, goal, time, 0.0

    def advance(self, dt):
        self.elapsed = min(self.elapsed + dt, self.time)
        t = self.elapsed / self.time
        return lerp(self.start, self.goal, 1 - (1 - t) * (1 - t))  # Quad, Out


class PortLeg:
    """The thread's RenderStepped body; each frame's tweens then advance by dt."""

    def __init__(self, hip_c0, knee_c0, upper, lower, terrain, reach):
        self.HIP_C0_CACHE, self.KNEE_C0_CACHE = hip_c0, knee_c0
        self.hip, self.knee = hip_c0, knee_c0
        self.upper, self.lower, self.terrain, self.reach = upper, lower, terrain, reach
        self.tweens = [None, None]

    def step(self, dt, lower_torso):
        offset = (lower_torso @ self.HIP_C0_CACHE)[:3, 3]
        ground = float(self.terrain.height(offset[0], offset[2]))
        position = np.array([offset[0], ground, offset[2]])
        if offset[1] - ground > 5.0 or offset[1] < ground:
            position = offset + np.array([0.0, -5.0, 0.0]) if offset[1] >= ground else offset
        if np.linalg.norm(offset - position) <= self.reach:
            foot_cframe = lower_torso @ self.HIP_C0_CACHE
            plane, hip_angle, knee_angle = solve_ik(foot_cframe, position, self.upper,
                                                    self.lower)
            self.tweens = [PortTween(self.hip, np.linalg.inv(lower_torso) @ plane
                                     @ angles_x(hip_angle), 0.2),
                           PortTween(self.knee, self.KNEE_C0_CACHE @ angles_x(knee_angle), 0.2)]
        else:
            self.tweens = [PortTween(self.hip, self.HIP_C0_CACHE, 0.5),
                           PortTween(self.knee, self.KNEE_C0_CACHE, 0.5)]
        self.hip = self.tweens[0].advance(dt)
        self.knee = self.tweens[1].advance(dt)
        return self.hip, self.knee


def as_matrix(frame):
    return frame.as_matrix()


# ----------------------------------------------------------------------------- tests


def torso_path(t):
    """A hip walking over hills, rising out of reach at t≈2.3 s and coming back."""
    x = -4.0 + 1.6 * t
    z = 0.4 * math.sin(0.7 * t)
    yaw = 0.3 * math.sin(0.5 * t)
    lift = 1.6 * math.exp(-((t - 3.0) / 0.6) ** 2)
    return x, z, yaw, lift


def test_foot_planter_matches_the_ported_loop_every_frame_at_60_hz():
    terrain = Terrain.hills(seed=3)
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0]) @ Frame.from_euler_xyz(0.0, math.pi, 0.0)
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, terrain, reach=1.9)
    port = PortLeg(as_matrix(hip_c0), as_matrix(knee_c0), 1.0, 1.0, terrain, 1.9)
    dt = 1 / 60
    states = []
    worst = 0.0
    for k in range(360):
        x, z, yaw, lift = torso_path(k * dt)
        ground = float(terrain.height(x, z))
        torso = Frame.from_translation([x, ground + 2.0 + lift, z]) @ Frame.from_euler_xyz(
            0.0, yaw, 0.0)
        hip, knee = planter.step(dt, torso)
        phip, pknee = port.step(dt, as_matrix(torso))
        worst = max(worst, np.abs(as_matrix(hip) - phip).max(), np.abs(as_matrix(knee) - pknee).max())
        states.append(planter.planted)
    assert worst < 1e-6
    # the ground went out of reach and came back within the run
    changes = np.flatnonzero(np.diff(np.array(states, dtype=int)))
    assert states[0] and len(changes) >= 2


def test_foot_planter_plants_the_foot_on_the_ground_once_settled():
    terrain = Terrain.hills(seed=1)
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0]) @ Frame.from_euler_xyz(0.0, math.pi, 0.0)
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, terrain)
    torso = Frame.from_translation([1.0, float(terrain.height(1.5, 0.0)) + 1.8, 0.0])
    for _ in range(120):  # 2 s standing still: the tween converges on the solution
        planter.step(1 / 60, torso)
    hip, knee, ankle = planter.joints(torso)
    assert planter.planted
    assert abs(ankle[1] - float(terrain.height(ankle[0], ankle[2]))) < 1e-6
    np.testing.assert_allclose(np.linalg.norm(knee - hip), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(ankle - knee), 1.0, atol=1e-9)
    # the half-turned hip frame bends the knee forward (toward the torso's -Z)
    mid = (hip + ankle) / 2
    assert knee[2] < mid[2] - 0.05


def test_out_of_reach_tweens_back_to_rest_over_half_a_second():
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0])
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, lambda o, d: None)
    bent = Frame.from_euler_xyz(0.7, 0.0, 0.0, [0.5, -0.2, 0.0])
    planter.hip.value = bent
    hip, _ = planter.step(0.1, Frame())
    assert not planter.planted
    # one frame of a new 0.5 s Quad-Out tween from the bent pose
    expected = bent.lerp(hip_c0, ease(0.1 / 0.5))
    assert hip.isclose(expected, atol=1e-12)
    # every frame restarts the tween from where the joint is, as the seed's loop does, so
    # the joint closes the same fraction, ease(dt / 0.5), of the way each frame
    for _ in range(10):
        hip, knee = planter.step(0.1, Frame())
    angle = 2 * math.atan2(np.linalg.norm(hip.quaternion[:3]), abs(hip.quaternion[3]))
    np.testing.assert_allclose(angle, 0.7 * (1 - ease(0.2)) ** 11, rtol=1e-9)
    assert knee.isclose(knee_c0)


def test_callable_raycast_and_errors():
    hip_c0 = Frame.from_translation([0.0, -0.2, 0.0])
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0,
                          lambda o, d: np.array([o[0], o[1] - 1.5, o[2]]))
    planter.step(1 / 60, Frame())
    assert planter.planted
    np.testing.assert_allclose(planter.ground, [0.0, -1.7, 0.0])
    with pytest.raises(InvalidInputError, match="raycast must be"):
        FootPlanter(hip_c0, knee_c0, 1.0, 1.0, 3)
    with pytest.raises(InvalidInputError, match="part0 must be"):
        planter.step(0.1, None)
    with pytest.raises(InvalidInputError, match="plant must be"):
        FootPlanter(hip_c0, knee_c0, 1.0, 1.0, lambda o, d: None, plant=0.2)
    with pytest.raises(InvalidInputError, match="easing_style"):
        TweenInfo(0.2, "Bounce")


# ----------------------------------------------------------------------------- many legs


def crowd(frames):
    """One batched Frame of the unbatched frames given."""
    return Frame(np.stack([f.quaternion for f in frames]), np.stack([f.position for f in frames]))


def test_a_crowd_steps_each_leg_as_if_it_were_alone():
    terrain = Terrain.hills(seed=3)
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0]) @ Frame.from_euler_xyz(0.0, math.pi, 0.0)
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    # legs of different lengths, on paths that leave reach (the torso lifts) at other times
    uppers = np.array([1.0, 0.9, 1.1, 1.0, 0.8])
    lowers = np.array([1.0, 1.1, 0.9, 1.2, 0.8])
    shifts = np.linspace(0.0, 1.5, len(uppers))
    many = FootPlanter(hip_c0, knee_c0, uppers, lowers, terrain, reach=1.9)
    alone = [FootPlanter(hip_c0, knee_c0, u, v, terrain, reach=1.9)
             for u, v in zip(uppers, lowers, strict=True)]
    dt = 1 / 60
    mixed = 0
    for k in range(300):
        torsos = []
        for s in shifts:
            x, z, yaw, lift = torso_path(k * dt - s)
            ground = float(terrain.height(x, z))
            torsos.append(Frame.from_translation([x, ground + 1.9 + lift, z])
                          @ Frame.from_euler_xyz(0.0, yaw, 0.0))
        hips, knees = many.step(dt, crowd(torsos))
        assert hips.shape == knees.shape == (len(uppers),)
        joints = many.joints(crowd(torsos))
        assert joints.shape == (len(uppers), 3, 3)
        for leg, (planter, torso) in enumerate(zip(alone, torsos, strict=True)):
            hip, knee = planter.step(dt, torso)
            assert planter.planted == many.planted[leg]
            np.testing.assert_allclose(as_matrix(hips[leg]), as_matrix(hip), atol=1e-12)
            np.testing.assert_allclose(as_matrix(knees[leg]), as_matrix(knee), atol=1e-12)
            np.testing.assert_allclose(joints[leg], planter.joints(torso), atol=1e-12)
            if planter.planted:
                np.testing.assert_allclose(many.ground[leg], planter.ground, atol=1e-12)
        mixed += 0 < many.planted.sum() < len(uppers)
    assert mixed > 20  # frames where some legs were planted and others tweened to rest


def test_a_torso_far_beyond_reach_steps_without_warnings():
    """A gap from the hip to the ground whose square overflows is out of reach: the leg
    tweens to rest, with finite C0s and no floating-point warning (warnings fail tests)."""
    planter = FootPlanter(Frame.identity(), Frame.from_translation([0.0, -1.0, 0.0]), 1.0,
                          1.0, Terrain.hills(seed=1), ray_length=1e300)
    for y in (1e300, -1e300, 1.5):
        hip, knee = planter.step(1 / 60, Frame.from_translation([0.0, y, 0.0]))
        assert np.all(np.isfinite(hip.position)) and np.all(np.isfinite(knee.quaternion))
    assert planter.planted  # the last torso stands over the ground


class _RaycastOnly:
    """A ground that offers only ``raycast`` (no straight-down query)."""

    def __init__(self, terrain):
        self.raycast = terrain.raycast


def test_a_terrain_steps_as_its_raycast_would():
    """With a Terrain the planter asks ``ground_below`` for its straight-down rays; the
    C0s, ground points and joints are those of the general ``raycast``, bit for bit,
    for one leg and for a crowd, planted and out of reach."""
    terrain = Terrain.hills(seed=5)
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0]) @ Frame.from_euler_xyz(0.0, math.pi, 0.0)
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    uppers = np.array([1.0, 0.9, 1.1])
    for batch in (False, True):
        lengths = (uppers, uppers[::-1]) if batch else (1.0, 1.0)
        fast = FootPlanter(hip_c0, knee_c0, *lengths, terrain, reach=1.9)
        general = FootPlanter(hip_c0, knee_c0, *lengths, _RaycastOnly(terrain), reach=1.9)
        states = set()
        for k in range(240):
            torsos = []
            for shift in ((0.0, 0.4, 0.9) if batch else (0.0,)):
                x, z, yaw, lift = torso_path(k / 60 - shift)
                torsos.append(Frame.from_translation([x, float(terrain.height(x, z)) + 1.9
                                                      + lift, z])
                              @ Frame.from_euler_xyz(0.0, yaw, 0.0))
            torso = crowd(torsos) if batch else torsos[0]
            a = fast.step(1 / 60, torso)
            b = general.step(1 / 60, torso)
            for x, y in zip(a, b, strict=True):
                assert x.quaternion.tobytes() == y.quaternion.tobytes()
                assert x.position.tobytes() == y.position.tobytes()
            assert np.array_equal(fast.planted, general.planted)
            assert np.asarray(fast.ground).tobytes() == np.asarray(general.ground).tobytes()
            assert fast.joints(torso).tobytes() == general.joints(torso).tobytes()
            states.update(np.atleast_1d(fast.planted).tolist())
        assert states == {True, False}


def test_a_crowd_with_a_callable_raycast_and_a_fixed_batch_shape():
    hip_c0 = Frame.from_translation([0.0, -0.2, 0.0])
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    rays = []

    def floor(origin, direction):
        rays.append(origin)
        return None if origin[0] > 1.0 else np.array([origin[0], -1.5, origin[2]])

    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, floor)
    torsos = Frame.from_translation([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.5, 0.0, 1.0]])
    for _ in range(120):
        planter.step(1 / 60, torsos)
    np.testing.assert_array_equal(planter.planted, [True, False, True])
    assert len(rays) == 3 * 120
    ankles = planter.joints(torsos)[:, 2]
    np.testing.assert_allclose(ankles[[0, 2], 1], -1.5, atol=1e-6)
    # the leg out of reach is back at rest
    assert planter.hip.value[1].isclose(hip_c0) and planter.knee.value[1].isclose(knee_c0)
    with pytest.raises(InvalidInputError, match=r"part0 must have the batch shape .*\(3,\)"):
        planter.step(1 / 60, Frame())
    with pytest.raises(InvalidInputError, match="upper must be > 0"):
        FootPlanter(hip_c0, knee_c0, [1.0, -1.0], 1.0, floor)
    with pytest.raises(InvalidInputError, match="part0"):
        FootPlanter(hip_c0, knee_c0, [1.0, 1.0], 1.0, floor).step(0.1, torsos)


def test_a_crowd_of_mismatched_shapes_is_refused_by_name_and_a_failed_step_fixes_nothing():
    hip_c0 = Frame.from_translation([0.0, -0.2, 0.0])
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    with pytest.raises(InvalidInputError, match=r"upper \(2,\), lower \(3,\)"):
        FootPlanter(hip_c0, knee_c0, [1.0, 1.0], [1.0, 1.0, 1.0], Terrain.flat(0.0))
    planter = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, Terrain.flat(0.0))
    with pytest.raises(InvalidInputError, match=r"ray_origin \(5,\), part0 \(2,\)"):
        planter.step(0.1, Frame.from_translation(np.zeros((2, 3))), ray_origin=np.zeros((5, 3)))
    hip, knee = planter.step(0.1, Frame())  # the failed step fixed no batch shape
    assert hip.shape == knee.shape == () and planter.planted
