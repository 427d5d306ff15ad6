"""Direction arguments are directions at any length: a vector of 1e200 gives what its
unit vector gives (their squared norms would overflow)."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.geometry.vectors import norm, normalize

CHAIN = np.c_[np.arange(5.0), np.zeros(5), np.zeros(5)]


@pytest.mark.parametrize("scale", [1e155, 1e200, 1e300])
def test_long_direction_arguments_are_their_unit_directions(scale):
    unit = np.array([0.0, 0.6, 0.8])
    for direction in (unit * scale, -unit * scale):
        short = direction / scale
        got = limbik.fabrik(CHAIN, [2.0, 2.0, 1.0], direction=direction)
        want = limbik.fabrik(CHAIN, [2.0, 2.0, 1.0], direction=short)
        np.testing.assert_array_equal(got.positions, want.positions)
        bent = limbik.two_bone(np.zeros(3), [1.0, 1.0, 0.0], 1.0, 1.0, bend_axis=direction)
        plain = limbik.two_bone(np.zeros(3), [1.0, 1.0, 0.0], 1.0, 1.0, bend_axis=short)
        np.testing.assert_allclose(bent.positions, plain.positions, atol=1e-15)
        np.testing.assert_allclose(
            limbik.aim([0, 0, 0, 1.0], np.zeros(3), [1.0, 0, 0], axis=direction),
            limbik.aim([0, 0, 0, 1.0], np.zeros(3), [1.0, 0, 0], axis=short), atol=1e-15)
        np.testing.assert_allclose(limbik.Frame.from_axis_angle(direction, 1.0).quaternion,
                                   limbik.Frame.from_axis_angle(short, 1.0).quaternion,
                                   atol=1e-15)
        np.testing.assert_allclose(limbik.Hinge(direction * [1, 1, 0], -1, 1).axis,
                                   limbik.Hinge(short * [1, 1, 0], -1, 1).axis, atol=1e-15)
    far = limbik.Frame.look_at(np.zeros(3), [scale, scale, 0.0])
    near = limbik.Frame.look_at(np.zeros(3), [1.0, 1.0, 0.0])
    np.testing.assert_allclose(far.quaternion, near.quaternion, atol=1e-15)


def test_normalize_keeps_long_vectors_and_ordinary_bits():
    rng = np.random.default_rng(5)
    v = rng.normal(size=(50, 3))
    np.testing.assert_array_equal(normalize(v), v / norm(v)[:, None])  # no rescaling
    huge = v * 2.0**1000
    np.testing.assert_allclose(normalize(huge), normalize(v), atol=1e-15)
    assert np.all(np.isfinite(normalize(np.array([1e308, -1e308, 1e308]))))
    assert norm(np.array([1e308, -1e308, 1e308])) == pytest.approx(3**0.5 * 1e308)
    assert norm(np.array([[1e200, 0, 0], [3, 4, 0]])).tolist() == [1e200, 5.0]


def test_too_short_bend_axis_is_refused_with_its_threshold():
    with pytest.raises(limbik.LimbikError, match=r"bend_axis must be non-zero vectors "
                       r"\(norm >= 1e-12\)") as caught:
        limbik.two_bone(np.zeros(3), [1.0, 1.0, 0.0], 1.0, 1.0, bend_axis=[0, 0, 1e-13])
    assert caught.value.argument == "bend_axis"
