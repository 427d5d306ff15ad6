"""BVH reading and writing on hostile input: bounded memory, linear cost, one rule for digits."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.errors import BVHParseError, InvalidInputError
from limbik.io.bvh import MAX_DEPTH, MAX_INDENT, format_bvh, parse_bvh

NO_CHANNELS = ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\n"
               "Frames: {frames}\nFrame Time: 0.1\n")


def chain_bvh(joints: int, *, frames: int = 1, nested: bool = True) -> str:
    """A root with one rotation channel and ``joints`` channel-less joints below it."""
    out = ["HIERARCHY", "ROOT r", "{", "OFFSET 0 0 0", "CHANNELS 1 Xrotation"]
    for i in range(joints):
        out += [f"JOINT j{i}", "{", "OFFSET 0 1 0", "CHANNELS 0"]
        if not nested:
            out.append("}")
    out += ["}"] * (joints if nested else 0)
    out += ["}", "MOTION", f"Frames: {frames}", "Frame Time: 0.1"] + ["5"] * frames
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("frames", [10_000_000, 10**9, 10**17])
def test_frame_count_the_data_does_not_back_is_rejected(frames):
    """The 85-byte file that asked for 10^7 frames (1.5 GB) is an error on the Frames line."""
    with pytest.raises(BVHParseError) as info:
        parse_bvh(NO_CHANNELS.replace("{frames}", str(frames)))
    assert info.value.line == 8
    assert "backed by the data" in str(info.value)


def test_frame_count_beyond_any_int64_is_a_parse_error():
    with pytest.raises(BVHParseError) as info:
        parse_bvh(NO_CHANNELS.replace("{frames}", str("9" * 5000)))
    assert info.value.line == 8


def test_zero_channel_frames_are_one_line_each():
    motion = parse_bvh(NO_CHANNELS.replace("{frames}", str(3)) + "\n\n\n")
    assert motion.num_frames == 3
    # what the writer produces for a channel-less clip reads back
    again = parse_bvh(format_bvh(motion))
    assert again.num_frames == 3


def test_frames_times_joints_is_bounded_by_the_file_size():
    """Many channel-less joints times many one-value frames would decode to far more
    memory than the file holds; the parser refuses before allocating."""
    text = chain_bvh(3000, frames=100_000, nested=False)
    with pytest.raises(BVHParseError) as info:
        parse_bvh(text)
    assert info.value.line == text.splitlines().index("Frames: 100000") + 1
    assert "joints in a file of this size" in str(info.value)
    # the same skeleton with a modest clip is fine
    assert parse_bvh(chain_bvh(3000, frames=100, nested=False)).num_frames == 100


def test_long_joint_name_is_kept_exactly():
    """A 1 MB joint name (with inner spacing) is read as written, in linear time."""
    name = "a  b\tc " * 150_000
    text = chain_bvh(1).replace("JOINT j0", f"JOINT   {name.strip()}   ")
    motion = parse_bvh(text)
    assert motion.names[1] == name.strip()


def test_joint_name_before_a_brace_on_the_same_line():
    text = chain_bvh(1).replace("JOINT j0\n{", "JOINT Left  Arm {")
    assert parse_bvh(text).names[1] == "Left  Arm"


def test_nesting_limit_is_a_parse_error_with_its_line():
    text = chain_bvh(MAX_DEPTH + 5)
    with pytest.raises(BVHParseError) as info:
        parse_bvh(text)
    assert f"{MAX_DEPTH} levels" in str(info.value)
    assert text.splitlines()[info.value.line - 1] == f"JOINT j{MAX_DEPTH - 1}"
    assert parse_bvh(chain_bvh(MAX_DEPTH - 1)).skeleton.num_joints == MAX_DEPTH


def test_deep_skeleton_writes_linear_indentation_and_round_trips():
    motion = parse_bvh(chain_bvh(MAX_DEPTH - 1))
    text = format_bvh(motion)
    widest = max(len(line) - len(line.lstrip("\t")) for line in text.splitlines())
    assert widest == MAX_INDENT
    assert len(text) < 100 * MAX_DEPTH * MAX_INDENT
    again = parse_bvh(text)
    assert again.names == motion.names
    np.testing.assert_array_equal(again.skeleton.parents, motion.skeleton.parents)


@pytest.mark.parametrize("where", ["offset", "data", "channels", "frames"])
def test_non_ascii_digits_are_rejected_everywhere(where):
    arabic_one = "\u0661"
    text = chain_bvh(1)
    if where == "offset":
        text = text.replace("OFFSET 0 1 0", f"OFFSET 0 {arabic_one} 0")
    elif where == "data":
        text = text.replace("\n5\n", f"\n{arabic_one}\n")
    elif where == "channels":
        text = text.replace("CHANNELS 1 Xrotation", f"CHANNELS {arabic_one} Xrotation")
    else:
        text = text.replace("Frames: 1", f"Frames: {arabic_one}")
    with pytest.raises(BVHParseError) as info:
        parse_bvh(text)
    assert arabic_one in str(info.value)


@pytest.mark.parametrize("value", [None, b"HIERARCHY", 3, ["HIERARCHY"]])
def test_parse_bvh_wants_text(value):
    with pytest.raises(InvalidInputError, match="text must be a str"):
        parse_bvh(value)


def test_read_bvh_still_reads_its_own_output(tmp_path):
    motion = parse_bvh(chain_bvh(4, frames=7))
    limbik.write_bvh(motion, tmp_path / "a.bvh")
    assert limbik.read_bvh(tmp_path / "a.bvh").num_frames == 7
