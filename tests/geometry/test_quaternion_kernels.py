"""The kernels' scalar quaternion arithmetic agrees with the NumPy functions."""

from __future__ import annotations

import numpy as np
import pytest

from limbik.geometry._quaternion_kernels import swing_rows
from limbik.geometry.quaternion import quaternion_from_two_vectors, rotate_vectors


@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100, 1e200, 1e300])
def test_swing_rows_turns_as_quaternion_from_two_vectors_at_any_length(scale):
    rng = np.random.default_rng(7)
    a = rng.normal(size=(200, 3))
    b = rng.normal(size=(200, 3))
    b[:20] = -a[:20] * rng.uniform(0.5, 2.0, (20, 1))  # opposite
    b[20:40] = a[20:40] * rng.uniform(0.5, 2.0, (20, 1))  # the same direction
    b[40:45] = 0.0  # no direction
    a, b = a * scale, b * scale
    mine, theirs = swing_rows(a, b), quaternion_from_two_vectors(a, b)
    assert np.all(np.isfinite(mine))
    # (a rotation and its negation are one turn)
    np.testing.assert_allclose(np.abs(np.sum(mine * theirs, axis=-1)), 1.0, atol=1e-9)
    unit_a = a / np.linalg.norm(a / scale, axis=-1, keepdims=True) / scale
    unit_b = b / np.maximum(np.linalg.norm(b / scale, axis=-1, keepdims=True), 1e-300) / scale
    if scale >= 1.0:  # (shorter than EPS_DIRECTION, a vector has no direction: no turn)
        turned = rotate_vectors(mine, unit_a)
        np.testing.assert_allclose(turned[45:], unit_b[45:], atol=1e-9)
