"""Boundary validation: numbers that are not quite numbers get a clear, named error."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik._validation import as_flag, as_float, as_float_array, as_int
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
