"""The free quaternion functions against scipy, plus degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from scipy.spatial.transform import Rotation

from limbik.geometry import (
    axis_angle_from_quaternion,
    matrix_from_quaternion,
    quaternion_from_matrix,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_slerp,
    rotate_vectors,
)

from strategies import quaternions, unit_vectors


def test_against_scipy(rng):
    a = Rotation.random(2000, random_state=3)
    b = Rotation.random(2000, random_state=4)
    v = rng.normal(size=(2000, 3))
    np.testing.assert_allclose(matrix_from_quaternion(a.as_quat()), a.as_matrix(), atol=1e-12)
    np.testing.assert_allclose(rotate_vectors(a.as_quat(), v), a.apply(v), atol=1e-12)
    ab = quaternion_multiply(a.as_quat(), b.as_quat())
    np.testing.assert_allclose(matrix_from_quaternion(ab), (a * b).as_matrix(), atol=1e-12)
    q = quaternion_from_matrix(a.as_matrix())
    np.testing.assert_allclose(np.abs(np.sum(q * a.as_quat(), axis=1)), 1.0, atol=1e-12)


def test_from_matrix_half_turns():
    for axis in np.eye(3):
        m = Rotation.from_rotvec(np.pi * axis).as_matrix()
        np.testing.assert_allclose(matrix_from_quaternion(quaternion_from_matrix(m)), m,
                                   atol=1e-12)


@given(unit_vectors, unit_vectors)
def test_two_vectors_rotates_a_onto_b_minimally(a, b):
    q = quaternion_from_two_vectors(a, b)
    np.testing.assert_allclose(rotate_vectors(q, a), b, atol=1e-9)
    _, angle = axis_angle_from_quaternion(q)
    expected = np.arccos(np.clip(np.dot(a, b), -1, 1))
    assert abs(angle - expected) < 1e-6


def test_two_vectors_degenerate():
    q = quaternion_from_two_vectors([0, 0, 1.0], [0, 0, -1.0])
    assert np.isfinite(q).all()
    np.testing.assert_allclose(rotate_vectors(q, [0, 0, 1.0]), [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(quaternion_from_two_vectors([0, 0, 0.0], [1, 0, 0.0]),
                               [0, 0, 0, 1])


@given(quaternions, quaternions)
def test_slerp_stays_unit_and_hits_endpoints(q0, q1):
    for t in (0.0, 0.3, 1.0):
        q = quaternion_slerp(q0, q1, t)
        assert abs(np.linalg.norm(q) - 1) < 1e-12
    assert abs(abs(np.dot(quaternion_slerp(q0, q1, 1.0), q1)) - 1) < 1e-9


def test_two_vectors_nearly_opposite_keeps_the_angle():
    # 1 + a·b cancels to rounding here; the rotation must still land on b
    for eps in (1.6e-7, 3e-8, 1e-6, 1e-5):
        for a in (np.array([0.0, 0.0, 1.0]), np.array([0.6, 0.0, 0.8])):
            b = -a + np.array([0.0, eps, 0.0])
            b /= np.linalg.norm(b)
            q = quaternion_from_two_vectors(a, b)
            np.testing.assert_allclose(rotate_vectors(q, a), b, atol=1e-12)


def test_single_vectors_give_the_batched_bits():
    """One quaternion and one vector take a Python-float path in quaternion_multiply and
    rotate_vectors: the same bits as the same rows in a batch where the result is finite,
    over values from 1e-300 to 1e300 and signed zeros; with infinities and NaN, the same
    values (NumPy's path, with its warnings)."""
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 1.0])
    with np.errstate(all="ignore"):
        for trial in range(3000):
            a = rng.normal(size=4) * 10.0 ** rng.integers(-300, 300, size=4)
            b = rng.normal(size=4)
            v = rng.normal(size=3) * 10.0 ** rng.integers(-300, 300, size=3)
            if trial % 3 == 0:  # specials anywhere, in both operands
                for array in (a, b, v):
                    picks = rng.integers(len(array), size=rng.integers(1, 3))
                    array[picks] = rng.choice(special, size=picks.size)
            for single, batched in ((quaternion_multiply(a, b),
                                     quaternion_multiply(a[None], b[None])[0]),
                                    (rotate_vectors(a, v), rotate_vectors(a[None], v[None])[0])):
                assert single.shape == batched.shape and single.dtype == np.float64
                if np.isfinite(single).all():
                    assert single.tobytes() == batched.tobytes()
                else:  # NumPy's own NaN signs differ between one row and a batch
                    assert np.array_equal(single, batched, equal_nan=True)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="overflow"):
        rotate_vectors(np.full(4, 1e200), np.full(3, 1e200))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        quaternion_multiply(np.full(4, 1e200), np.full(4, 1e200))
    # other dtypes and shapes take the array path
    assert rotate_vectors(np.array([0, 0, 0, 1]), np.array([1, 2, 3])).tolist() == [1, 2, 3]
    assert quaternion_multiply(np.eye(4)[3], np.eye(4)[:2]).shape == (2, 4)
