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
