"""Batched 3-vector helpers."""

from __future__ import annotations

import numpy as np


def test_cross_has_the_bits_of_numpys_cross():
    from limbik.geometry.vectors import cross

    rng = np.random.default_rng(11)
    for shape in [(3,), (7, 3), (2, 5, 3)]:
        a = rng.normal(size=shape) * 10.0 ** rng.integers(-100, 100, size=shape)
        b = rng.normal(size=shape)
        assert np.array_equal(cross(a, b), np.cross(a, b))
        assert np.array_equal(cross(a, b[..., :1, :] if b.ndim > 1 else b),
                              np.cross(a, b[..., :1, :] if b.ndim > 1 else b))
