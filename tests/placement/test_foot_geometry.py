"""Properties of the foot clean-up's geometric steps over seeded random cases: the foot
keeps its length, held joints stay, heights above sloping ground are kept, the swing
raise covers what it must, contacts start where a joint has landed."""

from __future__ import annotations

import numpy as np
import pytest

from limbik.placement import Terrain
from limbik.placement.contacts import LANDED_SHARE, contact_spans, joint_contacts
from limbik.placement.footplant import (
    _hang_over_ground,
    _hold_foot_length,
    _keep_length,
    _smooth_cover,
    _toe_share,
)


def _slope(rng: np.random.Generator) -> Terrain:
    return Terrain.slope(rng.uniform(-0.35, 0.35), direction=rng.uniform(0, 2 * np.pi),
                         extent=(-5, 5, -5, 5))


@pytest.mark.parametrize("seed", range(5))
def test_keep_length_holds_the_length_and_both_heights(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    length = rng.uniform(0.1, 0.3, (n, 1))
    ankle = rng.normal(0, 1, (n, 3))
    toe = ankle + rng.normal(0, 0.2, (n, 3))
    toe[:, 1] = ankle[:, 1] + rng.uniform(-0.9, 0.9, n) * length[:, 0]
    share = rng.uniform(0, 1, (n, 1))
    heading = rng.normal(0, 1, (n, 2))
    a, t = _keep_length(ankle, toe, length, share, heading)
    np.testing.assert_allclose(np.linalg.norm(t - a, axis=1), length[:, 0], rtol=1e-9)
    # a foot up to 45° from level keeps both heights (all but exactly)
    rise = toe[:, 1] - ankle[:, 1]
    level = np.abs(rise) <= np.sqrt(0.5) * np.linalg.norm(toe - ankle, axis=1)
    assert level.sum() > n // 4
    np.testing.assert_allclose(a[level, 1], ankle[level, 1], atol=1e-2 * length.max())
    np.testing.assert_allclose(t[level, 1], toe[level, 1], atol=1e-2 * length.max())
    # any other's rise lies between the kept one and the one along its own line
    along = length[:, 0] * rise / np.linalg.norm(toe - ankle, axis=1)
    got = t[:, 1] - a[:, 1]
    low = np.minimum(along, np.clip(rise, -length[:, 0], length[:, 0]))
    high = np.maximum(along, np.clip(rise, -length[:, 0], length[:, 0]))
    assert np.all((got >= low - 1e-12) & (got <= high + 1e-12))
    # a fully held toe stays, and a foot whose toe takes the change keeps its ankle
    _, t1 = _keep_length(ankle, toe, length, np.ones((n, 1)), heading)
    np.testing.assert_allclose(t1, toe, atol=1e-12)
    a0, _ = _keep_length(ankle, toe, length, np.zeros((n, 1)), heading)
    np.testing.assert_allclose(a0, ankle, atol=1e-12)
    # joints at one place go along the given heading, level
    a2, t2 = _keep_length(ankle, ankle, length, share, heading)
    flat = heading / np.linalg.norm(heading, axis=1, keepdims=True)
    np.testing.assert_allclose((t2 - a2)[:, [0, 2]], length * flat, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_keep_length_is_continuous_as_the_foot_passes_through_the_vertical(seed: int) -> None:
    # a foot turning steadily, in small steps, through pointing straight down (or up),
    # its toe a little nearer or farther than its length and passing a little to one side
    # of the ankle: the kept foot turns in small steps too (a heading over the ground
    # taken alone turns over there, and would throw the toe across in one frame)
    rng = np.random.default_rng(seed)
    n = 401
    length = rng.uniform(0.1, 0.3)
    scale = rng.choice([0.9, 0.97, 1.03, 1.1])
    down = rng.choice([-1.0, 1.0])
    angle = np.linspace(-0.5, 0.5, n)  # from the vertical, in its plane
    yaw = rng.uniform(0, 2 * np.pi)
    side = rng.uniform(-0.02, 0.02) * length
    u = np.array([np.cos(yaw), 0.0, np.sin(yaw)])
    v = np.array([-np.sin(yaw), 0.0, np.cos(yaw)])
    offset = scale * length * (np.sin(angle)[:, None] * u + down * np.cos(angle)[:, None]
                               * np.array([0.0, 1.0, 0.0])) + side * v
    ankle = np.zeros((n, 3)) + rng.normal(0, 1, 3)
    toe = ankle + offset
    share = np.full((n, 1), rng.uniform(0, 1))
    a, t = _keep_length(ankle, toe, np.full((n, 1), length), share,
                        np.broadcast_to(rng.normal(0, 1, 2), (n, 2)))
    step_in = np.linalg.norm(np.diff(offset, axis=0), axis=1).max()
    for joint in (a, t):
        step_out = np.linalg.norm(np.diff(joint, axis=0), axis=1)
        assert step_out.max() < 4.0 * step_in
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(t))


def test_toe_share_follows_the_holds() -> None:
    p = np.linspace(0.0, 1.0, 11)
    ankle, toe = (np.array(v).reshape(-1, 1) for v in np.meshgrid(p, p))
    share = _toe_share(ankle, toe)
    assert np.all((share >= 0.0) & (share <= 1.0))
    assert np.all(share[(toe[:, 0] >= 1.0)] == 1.0)  # a fully held toe stays
    assert np.all(share[(ankle[:, 0] >= 1.0) & (toe[:, 0] < 1.0)] == 0.0)  # so does an ankle
    assert np.all(share[(ankle[:, 0] == 0.0) & (toe[:, 0] == 0.0)] == 0.0)  # a free foot
    # and more hold on the toe never moves the ankle less
    grid = share.reshape(11, 11)  # rows: toe hold, columns: ankle hold
    assert np.all(np.diff(grid[:-1], axis=0) >= -1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_a_hanging_heel_keeps_its_height_above_sloping_ground(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ground = _slope(rng)
    n = 100
    length = rng.uniform(0.15, 0.25, n)
    toe = np.column_stack([rng.uniform(-2, 2, n), np.zeros(n), rng.uniform(-2, 2, n)])
    toe[:, 1] = ground.height(toe[:, 0], toe[:, 2]) + rng.uniform(0.0, 0.02, n)
    pitch = rng.uniform(0.0, 0.6, n)  # the heel up to 0.6 rad above the toe
    yaw = rng.uniform(0, 2 * np.pi, n)
    offset = np.column_stack([np.cos(pitch) * np.cos(yaw), np.sin(pitch),
                              np.cos(pitch) * np.sin(yaw)]) * length[:, None]
    hang = toe + offset
    _hang_over_ground(hang, toe, offset, length, np.arange(n), ground, np.ones(n))
    np.testing.assert_allclose(np.linalg.norm(hang - toe, axis=1), length, rtol=1e-6)
    above_heel = hang[:, 1] - ground.height(hang[:, 0], hang[:, 2])
    above_toe = toe[:, 1] - ground.height(toe[:, 0], toe[:, 2])
    # its height above the ground under it is the toe's above the ground under the toe
    # plus the source's rise over the toe, by the squared cosine of its pitch (the rest:
    # its height over the toe as the source's, whatever the ground does under it)
    weight = np.cos(pitch) ** 2
    kept = toe[:, 1] + offset[:, 1] - ground.height(hang[:, 0], hang[:, 2])
    expected = weight * (above_toe + offset[:, 1]) + (1.0 - weight) * kept
    np.testing.assert_allclose(above_heel, expected, atol=1e-3 * length.max())


@pytest.mark.parametrize("seed", range(5))
def test_a_hanging_heel_passes_smoothly_over_its_toe(seed: int) -> None:
    # the source's heel turning steadily, in small steps, through straight over its toe
    # (a toe-off that ends pointing down): the hanging heel over sloping ground moves in
    # small steps too, rather than jumping from one side of the toe to the other
    rng = np.random.default_rng(seed)
    ground = _slope(rng)
    n = 401
    length = np.full(n, rng.uniform(0.15, 0.25))
    toe = np.column_stack([np.linspace(-0.1, 0.1, n), np.zeros(n), np.zeros(n)])
    toe[:, 1] = ground.height(toe[:, 0], toe[:, 2]) + rng.uniform(0.0, 0.02)
    angle = np.linspace(-0.4, 0.4, n)  # the heel's lean from straight over the toe
    yaw = rng.uniform(0, 2 * np.pi)
    side = rng.uniform(-0.02, 0.02)
    lean = np.column_stack([np.cos(yaw) * np.sin(angle), np.cos(angle),
                            np.sin(yaw) * np.sin(angle)])
    lean += side * np.array([-np.sin(yaw), 0.0, np.cos(yaw)])
    offset = lean / np.linalg.norm(lean, axis=1, keepdims=True) * length[:, None]
    hang = toe + offset
    _hang_over_ground(hang, toe, offset, length, np.arange(n), ground, np.ones(n))
    assert np.all(np.isfinite(hang))
    step_in = np.linalg.norm(np.diff(toe + offset, axis=0), axis=1).max()
    assert np.linalg.norm(np.diff(hang, axis=0), axis=1).max() < 4.0 * step_in


@pytest.mark.parametrize("seed", range(5))
def test_both_held_locks_keep_the_foot_length(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ground = _slope(rng)
    n, length = 120, 0.2
    contacts = np.zeros((n, 2), dtype=bool)
    contacts[10:70, 0] = True  # the heel from 10 to 70
    contacts[30:100, 1] = True  # the toe from 30 to 100: both held from 30 to 70
    locks = np.full((n, 2, 3), np.nan)
    heel = np.array([0.3, 0.0, -0.2])
    toe = heel + np.array([0.17, 0.0, 0.08])
    for j, (at, (s, e)) in enumerate(((heel, (10, 70)), (toe, (30, 100)))):
        locks[s:e, j] = at
        locks[s:e, j, 1] = ground.height(at[0], at[2]) + (0.05 if j == 0 else 0.0)
    locks[50:70, 0, 1] += np.linspace(0.0, 0.04, 20)  # the heel rolls up over the toe
    _hold_foot_length(locks, contacts, length, ground)
    both = contacts.all(axis=1)
    # (to a thousandth: the ground under the turning heel is found in eight rounds; the
    # swing stage then holds the targets' length exactly)
    np.testing.assert_allclose(np.linalg.norm(locks[both, 1] - locks[both, 0], axis=1),
                               length, rtol=1e-3)
    # the toe's lock stays put through its contact, and the heel's moves no more after
    # the both-held span than it got to
    toe_lock = locks[30:100, 1]
    assert np.ptp(toe_lock[:, 0]) == 0 and np.ptp(toe_lock[:, 2]) == 0
    assert np.ptp(locks[10:30, 0, 0]) == 0 and np.ptp(locks[10:30, 0, 2]) == 0


@pytest.mark.parametrize("seed", range(5))
def test_a_heel_that_comes_down_twice_on_one_held_toe_turns_about_it(seed: int) -> None:
    """Two heel contacts within one toe contact, their locks far apart (a skating source):
    the toe keeps the one place the first both-held span gave it, and each span's heel
    lock is the foot's length from it."""
    rng = np.random.default_rng(seed)
    ground = _slope(rng)
    n, length = 160, 0.2
    contacts = np.zeros((n, 2), dtype=bool)
    contacts[30:150, 1] = True  # the toe from 30 to 150
    contacts[40:70, 0] = True  # the heel twice within it
    contacts[100:130, 0] = True
    locks = np.full((n, 2, 3), np.nan)
    toe = np.array([0.5, 0.0, 0.2])
    locks[30:150, 1] = toe + [0.0, ground.height(toe[0], toe[2]), 0.0]
    for (s, e) in ((40, 70), (100, 130)):
        heel = toe + np.append(rng.normal(0.0, 0.15, 1), [0.0, rng.normal(0.0, 0.15)])[[0, 1, 2]]
        heel[1] = ground.height(heel[0], heel[2]) + 0.05
        locks[s:e, 0] = heel
    first = locks[40].copy()
    _hold_foot_length(locks, contacts, length, ground)
    toe_lock = locks[30:150, 1]
    assert np.ptp(toe_lock[:, 0]) == 0 and np.ptp(toe_lock[:, 2]) == 0
    heading = (first[1] - first[0])[[0, 2]]
    placed = first[0][[0, 2]] + heading / np.linalg.norm(heading) * np.linalg.norm(
        (locks[40, 1] - locks[40, 0])[[0, 2]])
    np.testing.assert_allclose(toe_lock[0, [0, 2]], placed, atol=1e-9)
    both = contacts.all(axis=1)
    np.testing.assert_allclose(np.linalg.norm(locks[both, 1] - locks[both, 0], axis=1),
                               length, rtol=1e-3)


@pytest.mark.parametrize("seed", range(5))
def test_the_smooth_cover_meets_every_need_and_falls_away(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(10, 120))
    need = np.maximum(rng.normal(-0.5, 1.0, m), 0.0)
    width = max(2, m // 3)
    cover = _smooth_cover(need, width)
    assert np.all(cover >= need - 1e-12)
    assert cover.max() <= need.max() + 1e-12
    # no need, no raise; one need falls to nothing ``width`` frames away from it
    assert np.all(_smooth_cover(np.zeros(m), width) == 0.0)
    one = np.zeros(m)
    one[m // 2] = 1.0
    lone = _smooth_cover(one, width)
    far = np.abs(np.arange(m) - m // 2) >= width
    assert np.all(lone[far] == 0.0) and lone[m // 2] == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_a_contact_starts_where_its_joint_has_landed(seed: int) -> None:
    """A swinging joint slows down as it comes down onto its floor: its contact starts
    where it is within LANDED_SHARE of the contact height of where it comes to rest,
    not where it has slowed down."""
    rng = np.random.default_rng(seed)
    dt, leg, contact_height = 1 / 120, 1.0, 0.03
    n = 240
    land = int(rng.integers(80, 140))
    t = np.arange(n)
    drop = rng.uniform(0.03, 0.1)
    power = rng.uniform(1.5, 3.0)
    height = np.where(t < land, drop * np.clip((land - t) / 30.0, 0, 1) ** power, 0.0)
    # fast in swing, slow over its last 20 frames in the air: there only the height
    # tells the landing
    speed = np.where(t < land - 20, 2.0, np.where(t < land, 0.02, 0.0))
    mask = joint_contacts(height[:, None], speed[:, None], leg, dt,
                          contact_height=contact_height)[:, 0]
    (start, _), *_ = [s for s in contact_spans(mask) if s[1] > land]
    band = LANDED_SHARE * contact_height * leg
    assert height[start] <= band + 1e-12
    # ...and no later: the first slow frame within that band
    landed = int(np.flatnonzero((height <= band) & (t >= land - 20))[0])
    assert start == landed, (start, landed)


@pytest.mark.parametrize("seed", range(8))
def test_the_raising_rate_limit_never_lowers_a_free_frame(seed: int) -> None:
    from limbik.placement._footplant_kernels import limit_rate

    rng = np.random.default_rng(seed)
    n = 120
    values = np.cumsum(rng.normal(0, 4, n))  # rough, with steps faster than the rates
    values[rng.integers(0, n, 6)] += rng.normal(0, 30, 6)
    rate = rng.uniform(0.5, 3.0, n)
    rate[0] = np.inf
    free = np.ones(n, bool)
    for start in rng.integers(0, n - 10, 3):  # a few kept runs
        free[start:start + rng.integers(1, 10)] = False
    out = limit_rate(values, rate, free, True)
    np.testing.assert_array_equal(out[~free], values[~free])
    # (the kept frames' cones: what the rates let a free frame reach from them)
    cap = np.where(free, np.inf, values)
    for i in range(1, n):
        cap[i] = min(cap[i], cap[i - 1] + rate[i])
    for i in range(n - 2, -1, -1):
        cap[i] = min(cap[i], cap[i + 1] + rate[i + 1])
    reachable = free & (values <= cap)
    assert np.all(out[reachable] >= values[reachable] - 1e-9)
    # and where nothing is kept, the least curve above the values within the rates
    everywhere = limit_rate(values, rate, np.ones(n, bool), True)
    assert np.all(everywhere >= values - 1e-9)
    assert np.all(np.abs(np.diff(everywhere)) <= rate[1:] * (1 + 1e-9))
    lowest = np.max(values[None, :] - np.abs(np.cumsum(np.r_[0.0, rate[1:]])[:, None]
                                             - np.cumsum(np.r_[0.0, rate[1:]])[None, :]),
                    axis=1)
    np.testing.assert_allclose(everywhere, lowest, atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_the_knee_limit_keeps_held_ankles_and_turns_ankles_about_held_toes(seed: int) -> None:
    from limbik.placement.footplant import KNEE_RATE_SLACK, _knee_angles, _knee_continuity
    from limbik.skeleton.limbs import Leg

    rng = np.random.default_rng(seed)
    n, thigh, shin = 90, 0.45, 0.42
    leg = Leg("left", 0, 1, 2, 3)
    # a source leg bending gently, and targets whose reach swings through nearly full
    # length within a few frames (a heel easing in over a dip), toes held on some frames
    t = np.arange(n)
    world = np.zeros((n, 4, 3))
    world[:, 0] = [0.0, 1.0, 0.0]
    world[:, 2, 1] = 1.0 - (0.9 + 0.02 * np.sin(t / 20.0)) * (thigh + shin)
    reach = (0.9 + 0.095 * np.exp(-0.5 * ((t - 45) / rng.uniform(1.5, 3.0)) ** 2)) * (thigh
                                                                                      + shin)
    ankle = np.zeros((n, 3))
    ankle[:, 2] = rng.uniform(0.05, 0.2)
    ankle[:, 1] = 1.0 - np.sqrt(reach ** 2 - ankle[:, 2] ** 2)
    toe = ankle + [0.0, -0.05, 0.15]
    held = np.zeros((n, 2), bool)
    held[:20] = True
    held[40:60, 1] = True  # the toe held, the heel easing in
    flat = Terrain.flat(-5.0)
    a, t_ = _knee_continuity(world, leg, (thigh, shin), np.zeros((n, 3)), ankle, toe, held,
                             flat, 1.0 / 60.0, 0.1)
    np.testing.assert_array_equal(a[:20], ankle[:20])  # held ankles kept
    np.testing.assert_array_equal(t_[held[:, 1]], toe[held[:, 1]])  # held toes kept
    length = np.linalg.norm(toe - ankle, axis=1)
    np.testing.assert_allclose(np.linalg.norm(t_ - a, axis=1), length, rtol=1e-9)
    # the ankles over the held toes were moved, and up only (the knee bends more)
    moved = np.linalg.norm(a - ankle, axis=1) > 1e-9
    assert np.any(moved[40:60])
    assert np.all(a[moved, 1] >= ankle[moved, 1] - 1e-12)
    # a knee at nearly full reach no longer changes by more than the source's + slack
    # (plus what turning about the toe adds) from one frame to the next
    source = _knee_angles(np.linalg.norm(world[:, 2] - world[:, 0], axis=1), thigh, shin)
    before = _knee_angles(np.linalg.norm(ankle - world[:, 0], axis=1), thigh, shin)
    after = _knee_angles(np.linalg.norm(a - world[:, 0], axis=1), thigh, shin)
    allowed = np.abs(np.diff(source)) + KNEE_RATE_SLACK
    assert np.abs(np.diff(before)).max() > 2 * allowed.max()
    assert np.abs(np.diff(after))[30:].max() <= 1.5 * allowed.max()


@pytest.mark.parametrize("seed", range(5))
def test_the_root_stands_over_the_ground_under_a_held_ankle(seed: int) -> None:
    from limbik.placement.footplant import LegTrack, _stage_locks
    from limbik.skeleton.limbs import Leg

    rng = np.random.default_rng(seed)
    n, thigh, shin = 120, 0.45, 0.42
    ground = _slope(rng)
    # a foot standing flat from frame 20 to 80 (ankle and toe held), heel and toe over
    # different heights of the slope, swinging before and after
    source = np.zeros((n, 2, 3))
    heading = rng.normal(0, 1, 2)
    heading /= np.linalg.norm(heading)
    source[:, 0, [0, 2]] = rng.uniform(-1, 1, 2) + np.linspace(-0.4, 0.4, n)[:, None] * heading
    source[20:80, 0, [0, 2]] = source[50, 0, [0, 2]]
    source[:, 1, [0, 2]] = source[:, 0, [0, 2]] + 0.16 * heading
    source[:, 0, 1], source[:, 1, 1] = 0.08, 0.02
    source[:20, :, 1] += 0.1
    source[80:, :, 1] += 0.1
    contacts = np.zeros((n, 2), bool)
    contacts[20:80] = True
    track = LegTrack(Leg("left", 0, 1, 2, 3), thigh, shin, [2, 3], source,
                     np.array([0.08, 0.02]), contacts=contacts)
    hip = source[:, 0] + [0.0, 0.8 * (thigh + shin), 0.0]
    _stage_locks(track, ground, 0.0, 0.0, hip, True, 1.0 / 60.0)
    assert track.locks is not None and track.root_ground is not None
    ankle = track.locks[50, 0]
    np.testing.assert_allclose(track.root_ground[20:80], ground.height(ankle[0], ankle[2]))
    # (the foot's own path keeps the ground under both its joints)
    toe = track.locks[50, 1]
    np.testing.assert_allclose(track.ground[20:80], 0.5 * (
        ground.height(ankle[0], ankle[2]) + ground.height(toe[0], toe[2])))


@pytest.mark.parametrize("seed", range(5))
def test_a_point_on_two_spheres_or_as_near_as_they_allow(seed: int) -> None:
    from limbik.placement.footplant import _on_two_spheres

    rng = np.random.default_rng(seed)
    n = 400
    hip = rng.normal(0, 1, (n, 3))
    toe = hip + rng.normal(0, 1, (n, 3))
    length = rng.uniform(0.1, 0.4, n)
    d = np.linalg.norm(toe - hip, axis=1)
    wanted = np.abs(d + rng.uniform(-1.5, 1.5, n) * length)  # within and beyond reach
    near = toe + rng.normal(0, 1, (n, 3))
    out = _on_two_spheres(hip, wanted, toe, length, near)
    np.testing.assert_allclose(np.linalg.norm(out - toe, axis=1), length, rtol=1e-9)
    got = np.linalg.norm(out - hip, axis=1)
    # as near the wanted distance from the hip as a point at the length from the toe is
    best = np.clip(wanted, np.abs(d - length), d + length)
    np.testing.assert_allclose(got, best, rtol=1e-7, atol=1e-9)
    # and continuous as the wanted distance crosses the spheres' parting
    for sign in (-1.0, 1.0):
        edge = d + sign * length
        a = _on_two_spheres(hip, edge * (1 - 1e-9), toe, length, near)
        b = _on_two_spheres(hip, edge * (1 + 1e-9), toe, length, near)
        assert np.abs(a - b).max() < 1e-3 * length.min()


@pytest.mark.parametrize("seed", range(6))
def test_a_swing_keeps_its_leg_shape_as_the_root_moves_on_its_own_schedule(seed: int) -> None:
    # a swing from one ground level to another while the root, carried by the other
    # foot, goes from one to the other on a different schedule (later or earlier, with a
    # bump): the swing leg's vertical hip-to-ankle offset against the source's moves
    # from its value at lift-off to its value at landing, not beyond, where the swing is
    # in full (before, it followed the root's schedule and stretched out of reach or
    # folded); planted frames are untouched, and a root that is not carried leaves the
    # swing on its ground path
    from limbik.placement.footplant import LegTrack, _level_path, _stage_clearance
    from limbik.skeleton.limbs import Leg

    rng = np.random.default_rng(seed)
    n, start, stop = 120, 25, 95
    thigh, shin = 0.45, 0.42
    ground = Terrain.flat(-10.0)  # (far below: no clearance raise)
    levels = rng.uniform(-0.2, 0.2, 2)
    path = _level_path([(0, start, levels[0]), (stop, n, levels[1])], n)
    source = np.zeros((n, 2, 3))
    source[:, 0, 0] = np.linspace(0.0, 1.5, n)
    source[:, 1, 0] = source[:, 0, 0] + 0.16
    s = np.clip((np.arange(n) - start + 1) / (stop - start + 1), 0, 1)
    source[:, 0, 1] = 0.08 + 0.12 * np.sin(np.pi * s) ** 2
    source[:, 1, 1] = source[:, 0, 1] - 0.06
    contacts = np.zeros((n, 2), bool)
    contacts[:start] = contacts[stop:] = True
    track = LegTrack(Leg("left", 0, 1, 2, 3), thigh, shin, [2, 3], source,
                     np.array([0.08, 0.02]), contacts=contacts)
    track.ground = path
    track.pins = contacts.astype(float)
    track.targets = source + path[:, None, None] * [0.0, 1.0, 0.0]
    before = track.targets.copy()
    shift = rng.uniform(-0.3, 0.3)
    root = (levels[0] + (levels[1] - levels[0]) * np.clip((s - shift), 0, 1)
            + rng.uniform(-0.05, 0.05) * np.sin(np.pi * s))
    drop = rng.uniform(0.0, 0.02)
    _stage_clearance(track, ground, 0.0, 0.0, root, drop, np.ones(n))
    np.testing.assert_array_equal(track.targets[contacts[:, 0]], before[contacts[:, 0]])
    arch = np.sin(np.pi * s) ** 2
    # the root's lowering by ``drop`` is shared by the swing (as its arch)
    off = (root - drop * arch) - (track.targets[:, 0, 1] - source[:, 0, 1])
    ends = off[start - 1], off[stop]
    full = (arch >= 0.999) & ~contacts[:, 0]
    assert full.sum() > 0
    assert np.all(off[full] >= min(ends) - 1e-3) and np.all(off[full] <= max(ends) + 1e-3)
    # not carried: the swing stays on its ground path, lowered by the drop
    track.targets = before.copy()
    _stage_clearance(track, ground, 0.0, 0.0, root, drop, np.zeros(n))
    np.testing.assert_allclose(track.targets[..., 1], before[..., 1]
                               - drop * (arch * ~contacts[:, 0])[:, None], atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_a_foot_standing_on_its_way_down_is_not_lifted_for_one_joint(seed: int) -> None:
    # a swing whose ankle dips below the source's clearance twice, once in its first
    # half and once in its second, where the foot already stands as it comes down: the
    # first dip is covered (every joint at least its clearance), the second is raised
    # less, as far as the foot stands there (it follows the ground under each joint)
    from limbik.placement.footplant import LegTrack, _stage_clearance
    from limbik.skeleton.limbs import Leg

    rng = np.random.default_rng(seed)
    n, start, stop = 100, 20, 80
    ground = Terrain.flat(0.0)
    source = np.zeros((n, 2, 3))
    source[:, 0, 0] = np.linspace(0.0, 1.0, n)
    source[:, 1, 0] = source[:, 0, 0] + 0.15
    s = np.clip((np.arange(n) - start + 1) / (stop - start + 1), 0, 1)
    source[:, 0, 1] = 0.08 + 0.1 * np.sin(np.pi * s) ** 2
    source[:, 1, 1] = 0.02 + 0.1 * np.sin(np.pi * s) ** 2
    contacts = np.zeros((n, 2), bool)
    contacts[:start] = contacts[stop:] = True
    track = LegTrack(Leg("left", 0, 1, 2, 3), 0.45, 0.42, [2, 3], source,
                     np.array([0.08, 0.02]), contacts=contacts)
    track.ground = np.zeros(n)
    track.pins = contacts.astype(float)
    track.targets = source.copy()
    early, late = rng.integers(start + 16, start + 24), rng.integers(stop - 10, stop - 4)
    for f in (early, late):
        track.targets[f - 2:f + 3, 0, 1] -= rng.uniform(0.03, 0.06)
    stand = np.zeros(n)
    stand[late - 8:] = rng.choice([0.5, 1.0])
    stand[contacts[:, 0]] = 1.0
    track.stand = stand
    before = track.targets.copy()
    _stage_clearance(track, ground, 0.0, 0.0, np.zeros(n), 0.0, np.zeros(n))
    raised = track.targets[..., 1] - before[..., 1]
    middle = source[start + (stop - start) // 4:stop - (stop - start) // 4, :, 1].min(axis=0)
    clearance = np.minimum(source[early, :, 1], middle)
    assert np.all(track.targets[early, :, 1] >= clearance - 1e-9)
    need = np.maximum(clearance - before[late, :, 1], 0.0).max()
    # (the fading grows over the swing's second half: a smoothstep from its middle)
    x = np.clip(2.0 * s[late] - 1.0, 0.0, 1.0)
    assert raised[late, 0] <= (1.0 - stand[late] * x * x * (3.0 - 2.0 * x)) * need + 1e-9
    assert raised[late, 0] < need - 1e-9
    assert np.all(raised >= -1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_a_swing_that_would_fold_its_leg_is_lowered_as_far_as_the_ground_allows(
        seed: int) -> None:
    # a swing lifted toward its hip (a ground path left up at a flank while the root
    # stays down): where the ankle would come nearer the hip than FOLD_SHARE of the
    # source's distance it is lowered to that distance, smoothly, where the ground leaves
    # room; no foot joint comes nearer the ground under it than the source's height
    # above its floor; planted frames are untouched; a swing near the ground (no room)
    # and one that keeps its distance are not moved at all
    from limbik.placement.footplant import FOLD_SHARE, LegTrack, _stage_unfold
    from limbik.skeleton.limbs import Leg

    rng = np.random.default_rng(seed)
    n, start, stop = 120, 25, 95
    thigh, shin = 0.45, 0.42
    size = thigh + shin
    hip = np.zeros((n, 3))
    hip[:, 0] = np.linspace(0.0, 1.2, n)
    hip[:, 1] = 0.85
    s = np.clip((np.arange(n) - start + 1) / (stop - start + 1), 0, 1)
    source = np.zeros((n, 2, 3))
    source[:, 0, 0] = hip[:, 0] + 0.3 * np.cos(np.pi * s)
    source[:, 0, 1] = 0.08 + rng.uniform(0.25, 0.4) * np.sin(np.pi * s) ** 2
    source[:, 1] = source[:, 0] + [0.15, -0.06, 0.0]
    source_reach = np.linalg.norm(source[:, 0] - hip, axis=1)
    contacts = np.zeros((n, 2), bool)
    contacts[:start] = contacts[stop:] = True
    track = LegTrack(Leg("left", 0, 1, 2, 3), thigh, shin, [2, 3], source,
                     np.array([0.08, 0.02]), contacts=contacts)
    track.pins = contacts.astype(float)
    track.stand = contacts[:, 0].astype(float)
    lifted = rng.uniform(0.3, 0.4) * size * np.sin(np.pi * s) ** 2
    track.targets = source + lifted[:, None, None] * [0.0, 1.0, 0.0]
    before = track.targets.copy()
    ground = Terrain.flat(0.0)
    _stage_unfold(track, ground, 0.0, 0.0, hip, source_reach)
    after = track.targets
    np.testing.assert_array_equal(after[contacts[:, 0]], before[contacts[:, 0]])
    moved = after[:, 0, 1] - before[:, 0, 1]
    np.testing.assert_allclose(after[..., [0, 2]], before[..., [0, 2]])
    np.testing.assert_allclose(after[:, 1, 1] - before[:, 1, 1], moved, atol=1e-12)
    assert np.all(moved <= 1e-12)
    near_before = np.linalg.norm(before[:, 0] - hip, axis=1) < FOLD_SHARE * source_reach
    assert near_before.any()
    # where the foot is clear of its ends (no lock, not standing), the ankle keeps at
    # least FOLD_SHARE of the source's distance, to a little of the smoothing
    d = np.linalg.norm(after[:, 0] - hip, axis=1)
    assert np.all(d[near_before] >= FOLD_SHARE * source_reach[near_before] - 0.01 * size)
    # never nearer the ground than the source is above its floor
    assert np.all(after[..., 1] >= source[..., 1] - 1e-9)
    # smooth: second differences of the drop small against the drop itself
    assert np.abs(np.diff(moved, 2)).max() <= 0.05 * np.abs(moved).max()
    # no room (the ground as high as the lift: every joint at the source's height above
    # it) or no fold (the source's own targets): nothing moves
    for targets, floor in ((before, lifted.max()), (source, 0.0)):
        track.targets = targets.copy()
        _stage_unfold(track, Terrain.flat(floor), 0.0, 0.0, hip, source_reach)
        np.testing.assert_array_equal(track.targets, targets)
