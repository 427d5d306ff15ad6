"""Solving in units scaled to the problem.

The kernels square and cross lengths, which overflows beyond about 1e154 and
underflows below about 1e-154. The Python wrappers divide every length of a
problem by a power of two near its largest coordinate before calling a kernel
and multiply the results back afterwards; a power of two makes both steps exact,
so results inside the comfortable range are bit-for-bit what they were. A batch
is scaled element by element (:func:`element_units`, :func:`problem_units`), so
each element is solved in its own units whatever it is batched with.
"""

from __future__ import annotations

import math

import numpy as np

# problems whose largest coordinate lies in this range are solved as given
COMFORT_LOW, COMFORT_HIGH = 2.0**-100, 2.0**100


def length_scale(*arrays: np.ndarray | float, always: bool = False) -> float:
    """A power of two at most the largest finite absolute value in ``arrays`` when that lies
    outside [2^-100, 2^100] (or ``always``), else 1.0 (also for all-zero or non-finite
    input). With ``always`` the solve is exactly scale-equivariant, absolute epsilons
    in a kernel included."""
    largest = 0.0
    for a in arrays:
        values = np.asarray(a, dtype=np.float64)
        if not values.size:
            continue
        top = max(float(values.max()), -float(values.min()))  # no temporary array
        if not math.isfinite(top):  # NaN or inf somewhere: the largest finite value
            finite = np.abs(values[np.isfinite(values)])
            top = float(finite.max()) if finite.size else 0.0
        largest = max(largest, top)
    if largest == 0.0 or (not always and COMFORT_LOW <= largest <= COMFORT_HIGH):
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)


def problem_units(*lengths: np.ndarray) -> np.ndarray:
    """Per element, a power of two near the largest of ``lengths`` (broadcast) where that
    lies outside [2^-100, 2^100], else 1.0: divide by it to solve in units of the problem."""
    largest = np.asarray(lengths[0], dtype=np.float64)
    for a in lengths[1:]:
        largest = np.maximum(largest, a)
    comfortable = ((largest >= COMFORT_LOW) & (largest <= COMFORT_HIGH)) | (largest == 0.0) \
        | ~np.isfinite(largest)
    return np.where(comfortable, 1.0, np.ldexp(1.0, np.frexp(largest)[1] - 1))


def element_units(*arrays: np.ndarray) -> np.ndarray:
    """Per element of a batch (the first axis of each array, all of one length ``B``), the
    power of two at most the largest finite absolute value of that element's values
    (1.0 for an element of zeros and non-finite values only): ``(B,)``. Dividing an
    element by its unit solves it exactly as :func:`length_scale` with ``always`` does
    when it is alone."""
    largest = np.zeros(arrays[0].shape[0])
    for a in arrays:
        if not a.size:
            continue
        values = np.abs(a.reshape(a.shape[0], -1))
        if not np.isfinite(values).all():
            values = np.where(np.isfinite(values), values, 0.0)
        np.maximum(largest, values.max(axis=1), out=largest)
    return np.where(largest > 0.0, np.ldexp(1.0, np.frexp(largest)[1] - 1), 1.0)


def unit_groups(units: np.ndarray) -> list[tuple[float, np.ndarray | None]]:
    """The distinct values of ``units (B,)`` with the indices of the elements that have
    each; one group with ``None`` (all elements) where they are all equal."""
    first = float(units[0]) if units.size else 1.0
    if not units.size or bool((units == first).all()):
        return [(first, None)]
    values, inverse = np.unique(units, return_inverse=True)
    return [(float(v), np.flatnonzero(inverse == k)) for k, v in enumerate(values)]
