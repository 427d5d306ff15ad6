"""The exception tree and the boundary validators."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik._runtime import validation as v
from limbik.errors import (
    BVHParseError,
    InvalidInputError,
    LimbikError,
    NonFiniteInputError,
    URDFError,
)


def test_hierarchy():
    assert issubclass(InvalidInputError, LimbikError)
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(NonFiniteInputError, InvalidInputError)
    assert issubclass(BVHParseError, LimbikError)


def test_parse_error_carries_file_and_line():
    e = URDFError("robot.urdf", 12, "a <joint> element", got="</robot>")
    assert e.line == 12 and e.path == "robot.urdf"
    assert str(e) == "robot.urdf:12: expected a <joint> element, got </robot>"


def test_shape_message_names_argument_expected_and_received():
    with pytest.raises(InvalidInputError, match=r"target must have shape \(\.\.\., 3\), got \(4,\)"):
        v.as_points([1, 2, 3, 4], "target")


def test_nan_and_inf_have_their_own_message():
    with pytest.raises(NonFiniteInputError, match=r"target must be finite, got NaN at index \(0, 2\)"):
        v.as_points([[0, 0, np.nan]], "target")
    with pytest.raises(NonFiniteInputError, match="tolerance must be finite, got inf"):
        v.as_float(np.inf, "tolerance")


def test_scalars_and_options():
    with pytest.raises(InvalidInputError, match=r"upper must be > 0, got -1\.0"):
        v.as_positive([1.0, -1.0], "upper")
    with pytest.raises(InvalidInputError, match="unreachable must be one of 'extend', 'fold', got 'x'"):
        v.choice("x", "unreachable", ("extend", "fold"))
    with pytest.raises(InvalidInputError, match="max_iterations must be >= 1, got 0"):
        v.as_int(0, "max_iterations", minimum=1)
    with pytest.raises(InvalidInputError, match="max_iterations must be an int, got bool"):
        v.as_int(True, "max_iterations")
    with pytest.raises(InvalidInputError, match="quaternion must be a non-zero quaternion"):
        v.as_quaternions([0, 0, 0, 0], "quaternion")


def test_broadcast_error_names_the_arguments():
    with pytest.raises(InvalidInputError, match=r"root \(2,\), target \(3,\)"):
        v.broadcast_shapes(("root", (2,)), ("target", (3,)))


@pytest.mark.parametrize("reader", ["read_bvh", "read_gltf", "read_motion"])
def test_readers_name_a_missing_or_unreadable_path(tmp_path, reader):
    from limbik.errors import UnreadableFileError

    read = getattr(limbik, reader)
    suffix = ".glb" if reader == "read_gltf" else ".bvh"
    missing = tmp_path / f"nope{suffix}"
    with pytest.raises(UnreadableFileError, match=r"path: cannot read .*nope.* No such file"):
        read(missing)
    with pytest.raises(FileNotFoundError) as info:  # what reading it directly raises
        read(missing)
    assert info.value.errno == 2 and info.value.filename == str(missing)
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="Is a directory"):  # an OSError, as before
        read(folder)
    for value in (None, 5, b"x.bvh", f"a\0b{suffix}", tmp_path / f"a\0b{suffix}"):
        with pytest.raises(limbik.InvalidInputError, match="path must be a file path"):
            read(value)
