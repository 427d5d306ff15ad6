"""Solvers at any finite scale, and constraints at their degenerate edges.

Every solver must give finite output with bone lengths kept for every finite input;
the same problem scaled by 2^k must give the same answer scaled by 2^k.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import limbik
from limbik import roblox
from limbik.geometry import Frame

from strategies import robust_norm, scales, unit_shapes

CHAIN = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
TARGET = np.array([1.0, 1.5, 0.3])


def assert_lengths(positions: np.ndarray, expected: np.ndarray, rtol: float) -> None:
    got = robust_norm(np.diff(positions, axis=-2))
    np.testing.assert_allclose(got, expected, rtol=rtol)


@settings(max_examples=60, deadline=None)
@given(scale=scales, shape=unit_shapes)
def test_point_chain_solvers_are_scale_equivariant(scale, shape):
    target = TARGET + shape
    for solve in (limbik.fabrik, limbik.ccd):
        unit = solve(CHAIN, target)
        scaled = solve(CHAIN * scale, target * scale)
        assert np.all(np.isfinite(scaled.positions))
        assert bool(scaled.reached) == bool(unit.reached)
        np.testing.assert_allclose(scaled.positions / scale, unit.positions, atol=1e-9)
        assert float(scaled.error) / scale == pytest.approx(float(unit.error), abs=1e-9)
        assert_lengths(scaled.positions / scale, np.ones(3), 1e-9)


@settings(max_examples=40, deadline=None)
@given(scale=scales, shape=unit_shapes)
def test_fabrik_tree_is_scale_equivariant(scale, shape):
    pose = np.array([[0, 0, 0], [0, 1, 0], [1, 2, 0], [-1, 2, 0]], dtype=float)
    tree = limbik.FabrikTree([-1, 0, 1, 1], pose)
    goals = {2: np.array([1.2, 1.5, 0.0]) + 0.2 * shape, 3: np.array([-1.0, 1.8, 0.0])}
    unit = tree.solve(goals)
    scaled = limbik.FabrikTree([-1, 0, 1, 1], pose * scale).solve(
        {j: g * scale for j, g in goals.items()})
    assert np.all(np.isfinite(scaled.positions))
    np.testing.assert_allclose(scaled.positions / scale, unit.positions, atol=1e-9)
    assert bool(scaled.reached) == bool(unit.reached)


@settings(max_examples=80, deadline=None)
@given(scale=scales, shape=unit_shapes, policy=st.sampled_from(["extend", "push_root",
                                                                "stretch"]))
def test_two_bone_is_scale_equivariant(scale, shape, policy):
    target = np.array([0.7, 0.9, 0.2]) + shape
    unit = limbik.two_bone(np.zeros(3), target, 1.0, 0.8, unreachable=policy)
    scaled = limbik.two_bone(np.zeros(3), target * scale, 1.0 * scale, 0.8 * scale,
                             unreachable=policy)
    assert np.all(np.isfinite(scaled.positions))
    np.testing.assert_allclose(scaled.positions / scale, unit.positions, atol=1e-12)
    assert bool(scaled.reached) == bool(unit.reached)


@pytest.mark.parametrize(("args", "kwargs"), [
    (([0, 0, 0], [1e155, 0, 0], 1.0, 1.0), {"unreachable": "push_root"}),
    (([0, 0, 0], [1e155, 0, 0], 1.0, 1.0), {}),
    (([0, 0, 0], [1.0, 0, 0], 1e-160, 1e-160), {}),
    (([0, 0, 0], [1.0, 0, 0], 1e160, 1e160), {"pole": [0, 1e160, 0]}),
    (([0, 0, 0], [1.0, 0, 0], 1.0, 1.0), {"pole": [0, 3e-162, 0]}),
    (([0, 0, 0], [1e-300, 0, 0], 1e-300, 1e-300), {"pole": [0, 1e-310, 0]}),
    (([0, 0, 0], [0, 0, 1e-255], 1.0, 1.0), {}),
    (([0, 0, 0], [0, 0, 2.225073858507e-311], 1.0, 1.0), {}),
    (([0, 0, 0], [0, 0, 5e-324], 1.0, 1.0), {"pole": [5e-324, 0, 0]}),
])
def test_two_bone_reproductions_are_finite_and_keep_lengths(args, kwargs):
    solution = limbik.two_bone(*args, **kwargs)
    assert np.all(np.isfinite(solution.positions))
    assert np.isfinite(float(solution.error))
    root = solution.positions[0]
    if np.max(np.abs(root)) < 1e100 * args[2]:  # a root pushed to 1e155 cannot hold unit bones
        assert_lengths(solution.positions, np.array([args[2], args[3]]), 1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1.0, 1e80, 1e160, 1e300])
def test_roblox_solvers_at_any_scale(scale):
    target = np.array([0.3, -1.2, -0.5])
    _, s1, e1 = roblox.solve_ik(Frame.from_translation([0, 0, 0]), target, 1.0, 0.8)
    plane, s, e = roblox.solve_ik(Frame.from_translation([0, 0, 0]), target * scale,
                                  1.0 * scale, 0.8 * scale)
    assert float(s) == pytest.approx(float(s1), abs=1e-12)
    assert float(e) == pytest.approx(float(e1), abs=1e-12)
    assert np.all(np.isfinite(plane.position))
    _, b1, c1 = roblox.solve_ik_planar([0, 0, 0], target, 1.0, 0.8)
    _, b, c = roblox.solve_ik_planar([0, 0, 0], target * scale, 1.0 * scale, 0.8 * scale)
    assert float(b) == pytest.approx(float(b1), abs=1e-12)
    assert float(c) == pytest.approx(float(c1), abs=1e-12)


def test_roblox_far_target_is_finite_not_an_internal_error():
    plane, shoulder, elbow = roblox.solve_ik(Frame.from_translation([0, 0, 0]),
                                             [1e300, 1e300, 0], 1.0, 1.0)
    assert np.all(np.isfinite(plane.position))
    assert np.isfinite(float(shoulder)) and np.isfinite(float(elbow))


# ------------------------------------------------------------------ cones at the edge
def cone_frame(look: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    look = look / np.linalg.norm(look)
    up = np.cross(look, [1.0, 0.0, 0.0])
    return look, up / np.linalg.norm(up)


def test_cone_project_of_a_bone_folded_back_is_unit_and_on_the_cone():
    """The reported case: d = -look + 3e-12 (look x up) was 8.7e-7 off unit length and
    3.5e-6 rad outside the cone."""
    look, up = cone_frame(np.array([0.3, -0.5, 0.8]))
    d = -look + 3e-12 * np.cross(look, up)
    v = limbik.Cone(1.33).project(d, look=look, up=up)
    assert abs(np.linalg.norm(v) - 1.0) < 1e-15
    assert abs(np.arccos(np.clip(v @ look, -1, 1)) - 1.33) < 1e-12


def test_cone_project_near_the_fold_seeded():
    rng = np.random.default_rng(18)
    for _ in range(300):
        look, up = cone_frame(rng.normal(size=3))
        side = np.cross(look, rng.normal(size=3))
        eps = 10.0 ** rng.uniform(-16, -4)
        d = -look + eps * side / np.linalg.norm(side)
        angle = rng.uniform(0.05, 3.0)
        v = limbik.Cone(angle).project(d / np.linalg.norm(d), look=look, up=up)
        assert abs(np.linalg.norm(v) - 1.0) < 1e-14
        assert np.arccos(np.clip(v @ look, -1, 1)) <= angle + 1e-12


@pytest.mark.parametrize("target", [[-2.0, 0.0, 0.0], [6.0, 0.0, 0.0], [1.5, 0.0, 0.0],
                                    [-0.5, 0.0, 0.0]])
def test_constrained_chain_keeps_bone_lengths_with_target_on_its_line(target):
    chain = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0], [3.0, 0, 0], [4.0, 0, 0]])
    cones = [None] + [limbik.Cone(1.33)] * 3
    solution = limbik.fabrik(chain, target, constraints=cones)
    assert np.all(np.isfinite(solution.positions))
    assert_lengths(solution.positions, np.ones(4), 1e-12)


ARM_URDF = (
    '<robot name="r"><link name="a"/><link name="b"/><link name="c"/><link name="d"/>'
    '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>'
    '<origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="-2.9" upper="2.9"/></joint>'
    '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/>'
    '<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/><limit lower="-3.0" upper="-0.07"/></joint>'
    '<joint name="j3" type="revolute"><parent link="c"/><child link="d"/>'
    '<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1"/></joint>'
    "</robot>")


@pytest.mark.parametrize("target", [[1e155, 0, 0], [1e300, 1e300, 0], [-1e200, 5, 3],
                                    [1e20, 0, 0]])
@pytest.mark.parametrize("method", ["transpose", "pinv", "dls", "svd-dls", "ccd"])
def test_joint_space_solvers_on_huge_targets_respect_limits_and_report_honestly(target,
                                                                                method):
    """q = 0 (outside joint 2's limits) with error 0.0 was returned for 1e155."""
    chain = limbik.parse_urdf(ARM_URDF, "a", "d")
    if method == "ccd":
        solution = limbik.ccd(chain, target)
    else:
        solution = limbik.jacobian_ik(chain, target, method=method)
    q = np.asarray(solution.q)
    assert np.all(q >= chain.lower - 1e-12) and np.all(q <= chain.upper + 1e-12)
    distance = robust_norm(np.asarray(target, dtype=float))
    assert float(solution.error) == pytest.approx(
        float(robust_norm(np.asarray(solution.end_effector) - np.asarray(target))), rel=1e-9)
    assert float(solution.error) >= distance - chain.reach
    assert not bool(solution.reached)
