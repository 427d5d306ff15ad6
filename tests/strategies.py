"""Hypothesis strategies shared by the test suite."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
angles = st.floats(-2 * np.pi, 2 * np.pi, allow_nan=False, allow_infinity=False)
vectors = st.tuples(finite, finite, finite).map(lambda t: np.array(t, dtype=np.float64))
unit_vectors = (
    st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1))
    .map(np.array)
    .filter(lambda v: np.linalg.norm(v) > 1e-3)
    .map(lambda v: v / np.linalg.norm(v))
)
quaternions = (
    st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1))
    .map(np.array)
    .filter(lambda q: np.linalg.norm(q) > 1e-2)
    .map(lambda q: q / np.linalg.norm(q))
)

# ---------------------------------------------------------------- the full float range
# A problem at any finite scale: a unit-size shape times 2^k (k from -1000 to 1000), and
# shapes whose parts differ in scale by up to 1e150 (tiny poles, far targets).
scales = st.integers(-1000, 1000).map(lambda k: float(np.ldexp(1.0, k)))
any_finite = st.floats(allow_nan=False, allow_infinity=False)
any_vectors = st.tuples(any_finite, any_finite, any_finite).map(
    lambda t: np.array(t, dtype=np.float64))
#: components in [-1, 1], none below 1e-6 in size but zero: scaled by any of ``scales``
#: they stay normal floats, so a scaled problem is exactly the same problem (a subnormal
#: component would lose bits, and a nearly symmetric problem may then settle elsewhere)
_unit_floats = st.floats(-1, 1).map(lambda v: 0.0 if abs(v) < 1e-6 else v)
unit_shapes = st.tuples(_unit_floats, _unit_floats, _unit_floats).map(np.array)
lengths_any_scale = st.floats(1e-300, 1e300)


def robust_norm(v: np.ndarray) -> np.ndarray:
    """``|v|`` along the last axis without overflow or underflow."""
    big = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(big > 0, big, 1.0)
    return big[..., 0] * np.linalg.norm(v / safe, axis=-1)
