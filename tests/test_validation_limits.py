"""Boundary validation: numbers that are not quite numbers get a clear, named error."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik._runtime.validation import as_flag, as_float, as_float_array, as_int
from limbik.errors import InvalidInputError, LimbikError, NonFiniteInputError

NOT_NUMBERS = [True, False, np.bool_(True), "1.5", b"1", 1 + 0j, np.complex128(2.0),
               np.array([1 + 2j, 3]), [1.0, "2"], [[1.0, 2.0], [3.0]], None, object(),
               np.array(["1"]), {"a": 1}]


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=lambda v: type(v).__name__)
def test_arrays_reject_what_is_not_a_real_number(value):
    with pytest.raises(InvalidInputError) as info:
        as_float_array(value, "target")
    assert info.value.argument == "target"
    assert str(info.value).startswith("target must be")


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=lambda v: type(v).__name__)
def test_scalars_reject_what_is_not_a_real_number(value):
    with pytest.raises(InvalidInputError) as info:
        as_float(value, "tolerance")
    assert info.value.argument == "tolerance"


@pytest.mark.parametrize("value", [10**400, -(10**400), [1.0, 10**400], [[0, 0, 10**309]]])
def test_integers_beyond_the_float_range_are_non_finite(value):
    with pytest.raises(NonFiniteInputError, match="beyond the float range"):
        as_float_array(value, "x")
    if isinstance(value, int):
        with pytest.raises(NonFiniteInputError, match="beyond the float range"):
            as_float(value, "x")


@pytest.mark.parametrize("value", [3, 2.5, np.float32(1.5), np.int64(7), np.array(4.0),
                                   [1, 2, 3], np.arange(6).reshape(2, 3), 10**300])
def test_real_numbers_are_accepted(value):
    out = as_float_array(value, "x")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.asarray(value, dtype=float))


@pytest.mark.parametrize("value", ["yes", 1, 0, None, np.array([True]), 1.0])
def test_flags_are_booleans_only(value):
    with pytest.raises(InvalidInputError, match="fixed_root must be True or False"):
        as_flag(value, "fixed_root")
    assert as_flag(np.bool_(False), "f") is False


def test_ints_reject_booleans():
    with pytest.raises(InvalidInputError):
        as_int(np.bool_(True), "n")


def test_public_solvers_use_the_rules():
    chain = [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    with pytest.raises(InvalidInputError, match="fixed_root"):
        limbik.fabrik(chain, [1, 1, 0], fixed_root="yes")
    with pytest.raises(InvalidInputError, match="return_rotations"):
        limbik.fabrik(chain, [1, 1, 0], return_rotations="no")
    tree = limbik.FabrikTree([-1, 0, 1], chain)
    with pytest.raises(InvalidInputError, match="fixed_root"):
        tree.solve({2: [1, 1, 0]}, fixed_root="yes")
    with pytest.raises(InvalidInputError, match="target"):
        limbik.fabrik(chain, np.array([1 + 1j, 0, 0]))
    with pytest.raises(NonFiniteInputError, match="target"):
        limbik.fabrik(chain, [10**400, 0, 0])
    with pytest.raises(LimbikError):
        limbik.two_bone([0, 0, 0], [1, 0, 0], True, 1.0)
    with pytest.raises(LimbikError):
        limbik.two_bone([0, 0, 0], [1, 0, 0], "1.5", 1.0)


def test_negative_terrain_seed_is_a_named_error():
    with pytest.raises(InvalidInputError, match="seed must be >= 0") as info:
        limbik.Terrain.hills(seed=-1)
    assert info.value.argument == "seed"


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**400,
                                   pytest.param(10**5000, id="10**5000")])
def test_ints_beyond_int64_are_rejected(value):
    """The long JSON fuzz run found max_iterations = 2**63 reaching a kernel."""
    with pytest.raises(InvalidInputError, match="64-bit"):
        as_int(value, "max_iterations")
    with pytest.raises(InvalidInputError, match="max_iterations"):
        limbik.fabrik([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [1, 1, 0], max_iterations=value)


def _panda_like():
    return limbik.JointChain.from_points(np.c_[np.arange(5.0) / 4, np.zeros(5), np.zeros(5)])


@pytest.mark.parametrize("target", ["point", "pose"])
@pytest.mark.parametrize("name, value", [("position_weight", np.nan), ("position_weight", -1.0),
                                         ("orientation_weight", 1e160),
                                         ("orientation_weight", "1")])
def test_weights_are_checked_for_point_and_pose_targets(target, name, value):
    goal = [0.5, 0.2, 0.1] if target == "point" else limbik.Frame([0, 0, 0, 1], [0.5, 0.2, 0])
    for solve in (limbik.jacobian_ik, limbik.ccd):
        with pytest.raises(InvalidInputError) as info:
            solve(_panda_like(), goal, **{name: value})
        assert info.value.argument == name


def test_damping_beyond_its_range_is_an_error_not_an_overflow():
    with pytest.raises(InvalidInputError, match=r"damping must be <= 1e\+06"):
        limbik.jacobian_ik(_panda_like(), [0.5, 0.2, 0.1], damping=1e300)


def test_joints_check_their_limits_and_magnitudes():
    with pytest.raises(InvalidInputError, match="lower limit of joint 'a' must be a number"):
        limbik.Joint("a", lower="0")
    with pytest.raises(InvalidInputError, match=r"within ±1e\+100"):
        limbik.Joint("a", "prismatic", lower=-1e200, upper=1e200)
    with pytest.raises(InvalidInputError, match=r"within ±1e\+100"):
        limbik.Joint("a", origin=limbik.Frame.from_translation([1e120, 0, 0]))
    with pytest.raises(InvalidInputError, match=r"positions must be within ±1e\+100"):
        limbik.JointChain.from_points([[0, 0, 0], [1e155, 0, 0]])
    assert limbik.Joint("a", "prismatic", lower=-np.inf, upper=1e100).upper == 1e100


def test_tiny_and_huge_joint_axes_are_directions():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = limbik.Joint("a", axis=[0, 1e300, 1e300]).axis
        tiny = limbik.Joint("b", axis=[0, 0, 1e-300]).axis
    np.testing.assert_allclose(huge, [0, 2**-0.5, 2**-0.5], rtol=1e-15)
    assert tiny.tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(InvalidInputError, match=r"must be non-zero, got \(0, 0, 0\)"):
        limbik.Joint("c", axis=[0, 0, 0])


def test_options_that_do_not_apply_are_errors_not_ignored():
    chain = np.c_[np.arange(4.0), np.zeros(4), np.zeros(4)]
    for name, value in (("angle_tolerance", np.nan), ("patience", -1),
                        ("return_rotations", 1)):
        with pytest.raises(InvalidInputError) as info:
            limbik.ccd(chain, [1.0, 1.0, 0.0], **{name: value})
        assert info.value.argument == name
    for name, value in (("constraints", [None] * 3), ("rotations", np.zeros((4, 4))),
                        ("return_rotations", True)):
        with pytest.raises(InvalidInputError, match="applies to point chains only"):
            limbik.ccd(_panda_like(), [0.5, 0.2, 0.1], **{name: value})
    with pytest.raises(InvalidInputError, match="local must be True or False"):
        limbik.rotations_from_positions(chain, chain, local="no")


@pytest.mark.parametrize("kwargs", [{"up": [0, 0, 0]}, {"up": [0, 1, 0], "world_up": [0, 0, 0]},
                                    {"limit": 0.3, "cone_axis": [0, 0, 0]}])
def test_aim_directions_must_not_be_zero(kwargs):
    with pytest.raises(InvalidInputError, match="must be non-zero vectors"):
        limbik.aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], **kwargs)
    points = np.c_[np.arange(3.0), np.zeros(3), np.zeros(3)]
    rotations = np.tile([0.0, 0, 0, 1], (3, 1))
    with pytest.raises(InvalidInputError, match="must be non-zero vectors"):
        limbik.aim_chain(points, rotations, [1, 1, 0], **kwargs)


def test_extreme_but_valid_input_never_gives_nan():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = limbik.aim([0, 0, 0, 1], [1e308, 0, 0], [-1e308, 0, 0])
        assert np.all(np.isfinite(q))
        np.testing.assert_allclose(q, limbik.aim([0, 0, 0, 1], [1, 0, 0], [-1, 0, 0]))
        pts = np.c_[np.arange(3.0) * 1e307, np.zeros(3), np.zeros(3)]
        chain = limbik.aim_chain(pts, np.tile([0.0, 0, 0, 1], (3, 1)), [1e307, 1e307, 0])
        assert np.all(np.isfinite(chain.positions)) and chain.reached
        stretched = limbik.two_bone(np.zeros(3), [1e155, 0, 0], 1.0, 1.0,
                                    unreachable="stretch", max_stretch=1e6)
        assert np.all(np.isfinite(stretched.positions)) and not stretched.reached
    with pytest.raises(InvalidInputError, match=r"max_stretch must be <= 1e\+06"):
        limbik.two_bone(np.zeros(3), [1e155, 0, 0], 1.0, 1.0, unreachable="stretch",
                        max_stretch=1e300)
    tree = limbik.FabrikTree([-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [1, 2, 0], [-1, 2, 0.0]])
    with pytest.raises(InvalidInputError, match=r"weights\[2\] must be within"):
        tree.solve({2: [1.5, 1.5, 0], 3: [-1.5, 1.5, 0]}, weights={2: 1e308, 3: 1e308})


def test_constructors_and_clip_tools_name_what_they_got():
    from limbik.placement.walk import walk_cycle

    motion = walk_cycle()
    for call, match in (
            (lambda: limbik.JointChain(None), "joints must be a sequence of Joint"),
            (lambda: limbik.Skeleton(None, None, None), "names must be a sequence"),
            (lambda: limbik.Motion.rest(motion.skeleton, -1), "num_frames must be >= 1"),
            (lambda: limbik.Motion.rest(None), "skeleton must be a Skeleton"),
            (lambda: limbik.trim(None), "motion must be a Motion"),
            (lambda: limbik.resample("clip", 30), "motion must be a Motion"),
            (lambda: limbik.apply_ik(motion, positions=[1, 2]), "positions must be a mapping"),
            (lambda: limbik.Terrain.hills().height(np.zeros(3), np.zeros(2)),
             r"x \(3,\), z \(2,\)")):
        with pytest.raises(InvalidInputError, match=match):
            call()


def test_metrics_check_their_arguments():
    from limbik import metrics

    legs = np.zeros((5, 3))
    contact = np.ones(5, dtype=bool)
    for call, argument in (
            (lambda: metrics.bone_length_drift(np.zeros((0, 3, 3)), [-1, 0, 1]),
             "world_positions"),
            (lambda: metrics.bone_length_drift(np.zeros((2, 3, 3)), [-1, 0, 7]), "parents"),
            (lambda: metrics.bone_length_drift(np.zeros((2, 3, 3)), [-1, 0, 1],
                                               reference=np.zeros((2, 3))), "reference"),
            (lambda: metrics.knee_angles(legs, np.zeros((4, 3)), legs), None),
            (lambda: metrics.penetration(legs, 5), "ground"),
            (lambda: metrics.stance_gap(np.zeros((5, 2, 3)), None, contact), "ground"),
            (lambda: metrics.floating(legs, None, contact), "ground"),
            (lambda: metrics.contact_speed(legs, contact, 0), "dt"),
            (lambda: metrics.speed_near_floor(legs, limbik.Terrain.hills(), np.nan, 0.1),
             "dt")):
        with pytest.raises(InvalidInputError) as info:
            call()
        assert argument is None or info.value.argument == argument


def test_knee_angles_of_huge_coordinates_are_finite():
    from limbik import metrics

    hip = np.array([[0.0, 1e308, 0.0]] * 3)
    knee = np.array([[0.0, 0.0, 1e307]] * 3)
    ankle = np.array([[0.0, -1e308, 0.0]] * 3)
    np.testing.assert_array_equal(metrics.knee_angles(hip, knee, ankle),
                                  metrics.knee_angles(hip / 2**1000, knee / 2**1000,
                                                      ankle / 2**1000))


def test_reasonable_numbers_in_other_forms_are_accepted():
    from limbik import metrics
    from limbik.placement.walk import walk_cycle

    assert limbik.Motion.rest(walk_cycle().skeleton, 3.0).num_frames == 3
    with pytest.raises(InvalidInputError, match="num_frames must be an int"):
        limbik.Motion.rest(walk_cycle().skeleton, 2.5)
    assert limbik.Joint("a", lower=np.array(-1.0)).lower == -1.0
    points = np.ones((2, 3, 3)) * np.arange(3.0)[:, None]
    assert metrics.bone_length_drift(points, np.array([-1.0, 0, 1])) == 0.0
    assert metrics.speed_near_floor(np.zeros((3, 3)), limbik.Terrain.hills(), 0.1,
                                    np.inf) == 0.0


def test_speed_near_floor_refuses_a_flag_for_near():
    from limbik import metrics

    with pytest.raises(InvalidInputError, match="near must be a number"):
        metrics.speed_near_floor(np.zeros((3, 3)), limbik.Terrain.hills(), 0.1, True)


def _direction_calls(vector):
    """Each call that takes a direction vector, with ``vector`` as that direction."""
    pts = np.c_[np.arange(3.0), np.zeros(3), np.zeros(3)]
    rotations = np.tile([0.0, 0, 0, 1], (3, 1))
    limit = limbik.SwingTwistLimit(swing=0.5, min_twist=-0.2, max_twist=0.2)
    return [
        ("direction", lambda: limbik.fabrik(pts, [1.0, 1.0, 0.0], direction=vector)),
        ("axis", lambda: limbik.aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], axis=vector)),
        ("up", lambda: limbik.aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], up=vector)),
        ("world_up", lambda: limbik.aim_chain(pts, rotations, [1, 1, 0], up=[0, 1, 0],
                                              world_up=vector)),
        ("cone_axis", lambda: limbik.aim([0, 0, 0, 1], [0, 0, 0], [1, 0, 0], limit=0.3,
                                         cone_axis=vector)),
        ("axis", lambda: limit.project_rotation([0, 0, 0, 1], vector)),
        ("up", lambda: limbik.Frame.look_at([0, 0, 0], [1, 0, 0], up=vector)),
    ]


@pytest.mark.parametrize("size", [0.0, 1e-13, 1e-300])
def test_directions_shorter_than_eps_direction_are_refused_by_name(size):
    for name, call in _direction_calls([0.0, size, 0.0]):
        with pytest.raises(InvalidInputError, match=f"{name} must be non-zero vectors") as got:
            call()
        assert got.value.argument == name


def test_directions_just_longer_than_eps_direction_are_taken():
    for _, call in _direction_calls([0.0, 1e-11, 0.0]):
        result = call()
        for field in ("positions", "quaternion"):  # a Solution, a Frame
            result = getattr(result, field, result)
        assert np.all(np.isfinite(result))
