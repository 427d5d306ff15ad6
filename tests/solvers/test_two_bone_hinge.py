"""two_bone's anatomical bend (``bend_axis``, with a gated ``reference``) and soft reach."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limbik import two_bone
from limbik.errors import InvalidInputError

LEFT = np.array([1.0, 0.0, 0.0])  # a character facing +Z: knees bend toward +Z


def _leg_paths(rng, n_paths=20, frames=2000):
    """Smooth random ankle paths below a hip at the origin, from bent to past full reach."""
    t = np.linspace(0, 1, frames)[:, None]
    paths = []
    for _ in range(n_paths):
        a, b, c = rng.uniform(-1, 1, (3, 3))
        wiggle = 0.35 * (a * np.sin(2 * np.pi * t + b) + 0.5 * c * np.sin(6 * np.pi * t))
        down = np.array([0.0, -1.0, 0.0]) * rng.uniform(1.2, 2.2)
        paths.append(down + wiggle)
    return np.stack(paths)


def test_hinge_bends_forward_and_keeps_lengths(rng):
    paths = _leg_paths(rng)
    sol = two_bone(np.zeros(3), paths, 1.0, 1.0, bend_axis=LEFT)
    hip, knee, ankle = (sol.positions[..., k, :] for k in range(3))
    np.testing.assert_allclose(np.linalg.norm(knee - hip, axis=-1), 1.0, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(ankle - knee, axis=-1), 1.0, rtol=1e-9)
    u = ankle - hip
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    offset = knee - hip - np.sum((knee - hip) * u, axis=-1, keepdims=True) * u
    forward = np.cross(u, LEFT)
    bent = np.linalg.norm(offset, axis=-1) > 1e-6
    assert np.all(np.sum(offset * forward, axis=-1)[bent] > 0)
    reachable = np.linalg.norm(paths, axis=-1) <= 2.0
    assert np.all(sol.reached[reachable])


def test_noisy_straight_reference_never_flips_the_knee(rng):
    """A nearly straight source leg whose knee jitters behind the line: the knee stays forward
    and moves continuously; a clearly bent reference is followed."""
    paths = _leg_paths(rng)
    frames = paths.shape[1]
    jitter = rng.normal(scale=0.01, size=(paths.shape[0], frames, 3))
    reference = paths / 2 + jitter - np.array([0.0, 0.0, 0.01])
    sol = two_bone(np.zeros(3), paths, 1.0, 1.0, bend_axis=LEFT, reference=reference,
                   softness=0.02)
    knee = sol.positions[..., 1, :]
    ankle = sol.positions[..., 2, :]
    u = ankle / np.linalg.norm(ankle, axis=-1, keepdims=True)
    forward = np.cross(u, LEFT)
    assert np.all(np.sum((knee - np.sum(knee * u, -1, keepdims=True) * u) * forward, -1) > 0)
    step = np.max(np.linalg.norm(np.diff(paths, axis=1), axis=-1))
    jump = np.max(np.linalg.norm(np.diff(knee, axis=1), axis=-1))
    assert jump < 25 * step
    # a clearly bent reference within 60° of the hinge's side is followed exactly
    # (seed 004); one behind the limb is not followed at all
    target = np.array([0.0, -1.2, 0.0])
    side = np.array([0.3, -0.6, 0.5])
    got = two_bone(np.zeros(3), target, 1.0, 1.0, bend_axis=LEFT, reference=side)
    plain = two_bone(np.zeros(3), target, 1.0, 1.0, reference=side)
    np.testing.assert_allclose(got.positions, plain.positions, atol=1e-12)
    behind = np.array([0.1, -0.6, -0.5])
    got = two_bone(np.zeros(3), target, 1.0, 1.0, bend_axis=LEFT, reference=behind)
    hinge = two_bone(np.zeros(3), target, 1.0, 1.0, bend_axis=LEFT)
    np.testing.assert_allclose(got.positions, hinge.positions, atol=1e-12)


@given(st.floats(0.0, 2 * np.pi), st.floats(0.001, 0.2), st.floats(0.5, 2.0))
def test_reference_blend_is_continuous_in_the_reference(angle, offset, lower):
    """Turning the reference about the line, or moving it off the line, moves the knee
    smoothly: no jumps between the hinge-only and the reference-only ranges."""
    target = np.array([0.2, -1.6, 0.1])
    u = target / np.linalg.norm(target)
    e1 = np.cross(u, LEFT)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    reach = 1.0 + lower
    radii = np.linspace(0.0, 0.2, 2001)[:, None] * reach
    ref = 0.5 * target + radii * (np.cos(angle) * e1 + np.sin(angle) * e2)
    sol = two_bone(np.zeros(3), target, 1.0, lower, bend_axis=LEFT, reference=ref)
    knee = sol.positions[:, 1]
    assert np.all(np.isfinite(knee))
    # the bend turns by at most the blend's steepest slope times the step
    assert np.max(np.linalg.norm(np.diff(knee, axis=0), axis=-1)) < 0.02 * reach


def test_soft_reach_eases_to_full_extension():
    reach = 2.0
    d = np.linspace(1.5, 2.5, 10_001)
    target = np.column_stack([np.zeros_like(d), -d, np.zeros_like(d)])
    sol = two_bone(np.zeros(3), target, 1.0, 1.0, softness=0.02, bend_axis=LEFT)
    got = np.linalg.norm(sol.positions[:, 2], axis=-1)
    start = reach * 0.98
    below = d <= start
    np.testing.assert_allclose(got[below], d[below], rtol=1e-12)
    assert np.all(got < reach) and np.all(np.diff(got) >= -1e-12)
    expected = start + 0.04 * (1 - np.exp(-(d[~below] - start) / 0.04))
    np.testing.assert_allclose(got[~below], expected, rtol=1e-12)
    np.testing.assert_allclose(sol.error, np.abs(d - got), atol=1e-12)
    # the knee's flexion changes smoothly through full reach (no snap)
    knee = sol.positions[:, 1]
    assert np.max(np.linalg.norm(np.diff(knee, axis=0), axis=-1)) < 2e-3
    # soft without an axis: same distances, default bend
    plain = two_bone(np.zeros(3), target, 1.0, 1.0, softness=0.02)
    np.testing.assert_allclose(np.linalg.norm(plain.positions[:, 2], axis=-1), got, rtol=1e-12)
    np.testing.assert_allclose(plain.error, sol.error, atol=1e-12)


def test_degenerate_hinge_inputs_are_finite():
    # target at the root, axis along the limb, zero softness, push_root
    for target, axis in (([0, 0, 0], LEFT), ([0, -1.5, 0], [0, 1, 0]), ([3, 0, 0], LEFT)):
        for policy in ("extend", "push_root", "stretch"):
            sol = two_bone(np.zeros(3), np.array(target, float), 1.0, 1.0, bend_axis=axis,
                           unreachable=policy, max_stretch=1.2, softness=0.01)
            assert np.all(np.isfinite(sol.positions))
            stretched = policy == "stretch" and target == [3, 0, 0]
            np.testing.assert_allclose(np.linalg.norm(sol.positions[1] - sol.positions[0]),
                                       1.2 if stretched else 1.0, rtol=1e-9)


def test_push_root_with_a_bend_axis_reports_what_the_other_bend_modes_report(rng):
    """Under push_root the root moves so the end is on the target: every limb is reached,
    its error is rounding only and root_offset says how far the root moved, with a
    bend_axis as with a pole (also written into out)."""
    targets = rng.normal(scale=1.5, size=(64, 3)) + [0.0, -1.0, 0.0]
    hinge = two_bone(np.zeros(3), targets, 1.0, 1.0, bend_axis=LEFT, unreachable="push_root")
    poled = two_bone(np.zeros(3), targets, 1.0, 1.0, pole=[0, 0, 5], unreachable="push_root")
    assert hinge.reached.all()
    assert np.max(hinge.error) < 1e-12
    np.testing.assert_allclose(hinge.positions[:, 2], targets, atol=1e-12)
    np.testing.assert_allclose(hinge.root_offset, poled.root_offset, atol=1e-12)
    assert np.any(np.linalg.norm(hinge.root_offset, axis=-1) > 0.1)  # some were out of reach
    one = two_bone(np.zeros(3), [3.0, 0, 0], 1.0, 1.0, bend_axis=[0, 0, 1],
                   unreachable="push_root")
    assert bool(one.reached) and float(one.error) == 0.0
    np.testing.assert_allclose(one.root_offset, [1.0, 0, 0], atol=1e-15)
    out = two_bone(np.zeros(3), targets, 1.0, 1.0, bend_axis=LEFT, unreachable="push_root")
    out.error[:] = 7.0
    again = two_bone(np.zeros(3), targets, 1.0, 1.0, bend_axis=LEFT, unreachable="push_root",
                     out=out)
    np.testing.assert_array_equal(again.error, hinge.error)
    np.testing.assert_array_equal(again.root_offset, hinge.root_offset)


def test_hinge_errors_name_the_argument():
    with pytest.raises(InvalidInputError, match="bend_axis"):
        two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, bend_axis=[0, 0, 0])
    with pytest.raises(InvalidInputError, match="pole"):
        two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, bend_axis=LEFT, pole=[0, 0, 1])
    with pytest.raises(InvalidInputError, match="softness"):
        two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, softness=-0.1)
    # a fraction of the reach: above 1 the soft zone would start behind the root (and
    # soft * reach overflowed for huge values)
    for bad in (1.5, 1e299, [0.1, 2.0]):
        with pytest.raises(InvalidInputError, match=r"softness must be within \[0, 1\]"):
            two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, softness=bad)
    with pytest.raises(InvalidInputError, match="reference_offsets"):
        two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, bend_axis=LEFT, reference_offsets=(0.2, 0.1))
    with pytest.raises(InvalidInputError, match="reference_offsets"):
        two_bone(np.zeros(3), [0, -1, 0], 1.0, 1.0, reference_offsets=(0.0, 0.1))


@pytest.mark.parametrize("k", [-520, -40, 40, 520])
def test_hinge_and_soft_reach_are_scale_equivariant(rng, k):
    """With bend_axis (and a reference) the limb scaled by 2^k is the same limb scaled,
    bit for bit, as without one; soft reach stays finite and close."""
    s = 2.0 ** k
    root = rng.normal(size=(32, 3))
    target = root + rng.normal(scale=1.2, size=(32, 3))
    ref = root + rng.normal(size=(32, 3))
    plain = two_bone(root, target, 0.7, 0.6, bend_axis=LEFT, reference=ref)
    scaled = two_bone(root * s, target * s, 0.7 * s, 0.6 * s, bend_axis=LEFT, reference=ref * s)
    np.testing.assert_array_equal(scaled.positions / s, plain.positions)
    np.testing.assert_array_equal(scaled.error / s, plain.error)
    soft = two_bone(root, target, 0.7, 0.6, bend_axis=LEFT, softness=0.05)
    soft_scaled = two_bone(root * s, target * s, 0.7 * s, 0.6 * s, bend_axis=LEFT,
                           softness=0.05)
    np.testing.assert_allclose(soft_scaled.positions / s, soft.positions, rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("softness", [0.0, 0.02])
def test_a_target_far_beyond_float_squares_is_a_stretched_limb(softness):
    """A target 1e160 to 1e300 away (its squared distance overflows) gives the limb
    stretched toward it and the distance as the error, with or without an axis."""
    for far in (1e160, 1e300):
        for axis in (None, LEFT):
            sol = two_bone([0.0, 1, 0], [far, 0, 0], 0.5, 0.5, bend_axis=axis,
                           reference=[0, 0.5, 0.05] if axis is not None else None,
                           softness=softness)
            np.testing.assert_allclose(sol.positions[2], [1.0, 1.0, 0.0], atol=1e-12)
            assert float(sol.error) == pytest.approx(far, rel=1e-12)
            assert not sol.reached
