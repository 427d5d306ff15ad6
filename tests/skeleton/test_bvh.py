"""BVH reading and writing: real clips, format corners, round trips, malformed input."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from bvh_reference import world_positions as reference_world_positions
from bvh_samples import SMALL_BVH, corner_case_bvh
from hypothesis import given, settings
from hypothesis import strategies as st

import limbik
from limbik.errors import BVHParseError, InvalidInputError


def bvh_files(shared_data: Path) -> list[Path]:
    files = sorted((shared_data / "bvh").glob("*.bvh"))
    if not files:
        pytest.skip(f"no BVH files in {shared_data / 'bvh'}")
    return files


def test_real_clips_names_fk_and_round_trip(shared_data, tmp_path):
    """Every shared clip: names as in the file, FK equal to an independent
    scipy/4x4 implementation within 1e-6, and read → write → read within 1e-6."""
    for path in bvh_files(shared_data):
        text = path.read_text()
        motion = limbik.read_bvh(path)
        file_names = re.findall(r"^\s*(?:ROOT|JOINT)\s+(\S.*?)\s*$", text, re.M)
        assert list(motion.names) == file_names, path.name
        ref_names, ref = reference_world_positions(text)
        assert ref_names == file_names
        ours = motion.world_positions(include_end_sites=True)
        assert ours.shape == ref.shape
        assert np.abs(ours - ref).max() < 1e-6, path.name
        out = tmp_path / path.name
        limbik.write_bvh(motion, out)
        again = limbik.read_bvh(out)
        assert again.names == motion.names
        assert again.num_frames == motion.num_frames
        assert again.frame_time == motion.frame_time
        assert np.abs(again.world_positions(include_end_sites=True) - ours).max() < 1e-6
        # the written file also agrees with the independent reader
        assert np.abs(reference_world_positions(out.read_text())[1] - ours).max() < 1e-6


@pytest.mark.parametrize("crlf", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_corner_cases_match_independent_fk(crlf, seed):
    """Every rotation order, partial channels, position channels on a non-root
    joint, CHANNELS 0, spaced names, End Sites, CRLF, tabs, scientific notation."""
    text = corner_case_bvh(frames=6, seed=seed, crlf=crlf)
    motion = limbik.parse_bvh(text)
    names, ref = reference_world_positions(text)
    assert list(motion.names) == names
    assert "Left Arm Joint" in motion.names
    assert motion.skeleton.rotation_order("Chain3") == "YZX"
    assert motion.skeleton.position_axes("Slider") == "YXZ"
    assert motion.skeleton.channels[motion.skeleton.index("Fixed")] == ()
    assert np.abs(motion.world_positions(include_end_sites=True) - ref).max() < 1e-9
    again = limbik.parse_bvh(limbik.format_bvh(motion))
    assert again.names == motion.names
    assert np.abs(again.world_positions(include_end_sites=True) - ref).max() < 1e-9


def test_end_sites_and_channel_layout():
    motion = limbik.parse_bvh(SMALL_BVH)
    sk = motion.skeleton
    assert sk.names == ("Hips", "LeftUpLeg", "LeftLeg")
    assert sk.parents.tolist() == [-1, 0, 1]
    assert sk.rotation_order(0) == "ZXY"
    assert sk.position_axes(0) == "XYZ"
    np.testing.assert_allclose(sk.end_sites[2], [0, -0.45, 0])
    assert motion.world_positions(include_end_sites=True).shape == (2, 4, 3)
    np.testing.assert_allclose(motion.rest_positions(),
                               [[0, 1, 0], [0.1, 1, 0], [0.1, 0.55, 0]])


def test_rotation_channel_order_is_product_in_file_order():
    """'Zrotation Xrotation Yrotation' means R = Rz · Rx · Ry (degrees)."""
    from scipy.spatial.transform import Rotation

    motion = limbik.parse_bvh(SMALL_BVH)
    expected = Rotation.from_euler("ZXY", [10, 20, 30], degrees=True)
    got = Rotation.from_quat(motion.rotations[0, 1])
    assert (got.inv() * expected).magnitude() < 1e-12


def test_write_is_atomic_on_failure(tmp_path, monkeypatch):
    """A failing write leaves an existing file untouched and no temporary behind."""
    motion = limbik.parse_bvh(SMALL_BVH)
    out = tmp_path / "clip.bvh"
    out.write_text("old")

    def boom(motion):
        raise RuntimeError("disk full")

    import limbik.io.bvh as bvh_module

    monkeypatch.setattr(bvh_module, "format_bvh", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        bvh_module.write_bvh(motion, out)
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.bvh"]


def test_written_numbers_are_exact(tmp_path):
    motion = limbik.parse_bvh(corner_case_bvh(frames=3, seed=5))
    path = tmp_path / "x.bvh"
    limbik.write_bvh(motion, path)
    again = limbik.read_bvh(path)
    np.testing.assert_array_equal(again.root_positions, motion.root_positions)
    assert again.frame_time == motion.frame_time
    np.testing.assert_array_equal(again.skeleton.offsets, motion.skeleton.offsets)


# ---------------------------------------------------------------------- malformed input
@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "HIERARCHY"),
        ("HIERARCHY\nROOT\n", 2, "joint name"),
        (SMALL_BVH.replace("OFFSET 0.1 0 0", "OFFSET 0.1 nan 0"), 8, "OFFSET coordinate"),
        (SMALL_BVH.replace("OFFSET 0.1 0 0", "OFFSET 0.1 inf 0"), 8, "OFFSET coordinate"),
        (SMALL_BVH.replace("OFFSET 0.1 0 0", "OFFSET 0.1 1e999 0"), 8, "finite"),
        (SMALL_BVH.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Zrotation Xrotation Wrotation", 1), 9, "channel name"),
        (SMALL_BVH.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Zrotation Xrotation Xrotation", 1), 9, "at most once"),
        (SMALL_BVH.replace("Frames: 2", "Frames: 3"), 26, "3 frames"),
        (SMALL_BVH.replace("Frames: 2", "Frames: 1"), 25, "end of file after 1 frames"),
        (SMALL_BVH.replace("Frames: 2", "Frames: two"), 22, "frame count"),
        (SMALL_BVH.replace("Frame Time: 0.0333333", "Frame Time: 0"), 23, "positive"),
        (SMALL_BVH.replace("-5 0 5\n0.1", "-5 0\n0.1"), 24, "12 values"),
        (SMALL_BVH.replace("2.5E+1", "2.5E+1x"), 25, "decimal number"),
        (SMALL_BVH.replace("2.5E+1", "nan"), 25, "decimal number"),
        (SMALL_BVH.replace("2.5E+1", "1e400"), 25, "finite number"),
        # finite, but its square would not be: as the glTF and URDF readers
        (SMALL_BVH.replace("2.5E+1", "-1e160"), 25, "within ±1e+100"),
        (SMALL_BVH.replace("OFFSET 0.1 0 0", "OFFSET 0.1 1e101 0"), 8, "within ±1e+100"),
        (SMALL_BVH.replace("2.5E+1", "1_0"), 25, "decimal number"),
        (SMALL_BVH.replace("JOINT LeftLeg", "JOINT LeftUpLeg"), 10, "unique joint name"),
        (SMALL_BVH.replace("\tOFFSET 0 1 0\n", ""), 19, "OFFSET in joint 'Hips'"),
        (SMALL_BVH.replace("MOTION", "MOTON"), 21, "MOTION"),
    ],
)
def test_malformed_input_reports_line_and_expectation(text, line, expected):
    with pytest.raises(BVHParseError, match=re.escape(expected)) as info:
        limbik.parse_bvh(text, source="clip.bvh")
    assert info.value.line == line
    assert info.value.path == "clip.bvh"
    assert isinstance(info.value, ValueError)


def test_byte_order_mark_and_latin1_names(tmp_path):
    path = tmp_path / "bom.bvh"
    path.write_bytes(b"\xef\xbb\xbf" + SMALL_BVH.replace("\n", "\r\n").encode())
    assert limbik.read_bvh(path).names == ("Hips", "LeftUpLeg", "LeftLeg")
    path.write_bytes(SMALL_BVH.replace("LeftLeg", "Genou\xe9").encode("latin-1"))
    assert limbik.read_bvh(path).names[2] == "Genou\xe9"


def test_read_bvh_error_carries_the_file(tmp_path):
    path = tmp_path / "bad.bvh"
    path.write_bytes(b"HIERARCHY\r\nROOT Hips\r\n{\r\n\tOFFSET 0 0\r\n}\r\n")
    with pytest.raises(BVHParseError, match=r"bad\.bvh:5: expected an OFFSET coordinate") as info:
        limbik.read_bvh(path)
    assert info.value.path == str(path)


def _check_parse(text: str) -> None:
    """Parsing either succeeds with finite arrays or raises BVHParseError with a line."""
    try:
        motion = limbik.parse_bvh(text, source="fuzz.bvh")
    except BVHParseError as exc:
        assert isinstance(exc.line, int)
        assert exc.line >= 1
        assert exc.expected
        return
    assert np.all(np.isfinite(motion.rotations))
    assert np.all(np.isfinite(motion.root_positions))
    assert np.all(np.isfinite(motion.skeleton.offsets))
    assert np.all(np.isfinite(motion.world_positions(include_end_sites=True)))


GARBAGE = st.sampled_from(["nan", "inf", "-inf", "1e999", "abc", "{", "}", "", "-", "1.2.3",
                           "JOINT", "End", "Site", "ROOT", "CHANNELS", "OFFSET", "7", "-1",
                           "0x10", "1_0", "\t", "MOTION", "Frames:", "Frame Time:", "1e5",
                           "Xrotation", "CHANNELS 9", "End Site", "\r", "\u00e9"])


@st.composite
def mutations(draw, text: str):
    """A text mutated by truncation, line deletion/duplication or token garbling."""
    lines = text.split("\n")
    kind = draw(st.sampled_from(["truncate", "delete", "garble", "duplicate", "mixed"]))
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text)))]
    if kind in ("delete", "mixed"):
        for _ in range(draw(st.integers(1, 3))):
            if lines:
                del lines[draw(st.integers(0, len(lines) - 1))]
    if kind == "duplicate" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(i, lines[i])
    if kind in ("garble", "mixed"):
        for _ in range(draw(st.integers(1, 3))):
            if not lines:
                break
            i = draw(st.integers(0, len(lines) - 1))
            words = lines[i].split(" ")
            k = draw(st.integers(0, max(len(words) - 1, 0)))
            words[k] = draw(GARBAGE)
            lines[i] = " ".join(words)
    return "\n".join(lines)


def _short_real_clip() -> str | None:
    from conftest import SHARED_DATA

    path = SHARED_DATA / "bvh" / "dme_demo_3d_1_raw_footskate.bvh"
    if not path.is_file():
        return None
    head, _, rest = path.read_text().partition("MOTION")
    lines = rest.strip().splitlines()
    return head + "MOTION\nFrames: 3\n" + lines[1] + "\n" + "\n".join(lines[2:5]) + "\n"


REAL = _short_real_clip()


@settings(max_examples=150)
@given(data=st.data())
def test_fuzzed_real_clip_raises_only_bvh_parse_error(data):
    """Mutations of a real clip (3 frames kept): only BVHParseError, never NaN."""
    if REAL is None:
        pytest.skip("shared data folder not found")
    _check_parse(data.draw(mutations(REAL)))


@settings(max_examples=150)
@given(data=st.data())
def test_fuzzed_synthetic_clip_raises_only_bvh_parse_error(data):
    _check_parse(data.draw(mutations(corner_case_bvh(frames=3, seed=7, crlf=False))))
    _check_parse(data.draw(mutations(corner_case_bvh(frames=2, seed=8, crlf=True))))
    _check_parse(data.draw(mutations(SMALL_BVH)))


@settings(max_examples=60)
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_bvh_parse_error(text):
    _check_parse(text)
    _check_parse("HIERARCHY\nROOT A\n{\n" + text)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_round_trip_is_exact_at_and_near_gimbal_lock(order, rng):
    """Written Euler angles reproduce each rotation to rounding, also where the
    middle angle is ±90° (or within 1e-13° of it), for every rotation order."""
    from scipy.spatial.transform import Rotation

    channels = ("Xposition", "Yposition", "Zposition", *(f"{a}rotation" for a in order))
    sk = limbik.Skeleton(["a", "b", "c"], [-1, 0, 1], [(0, 0, 0), (1, 2, 3), (100, -50, 20)],
                         channels=[channels] * 3)
    frames = 300
    angles = rng.uniform(-180, 180, size=(frames, 3, 3))
    angles[:, :, 1] = rng.choice([90, -90, 90 - 1e-7, -90 + 1e-9, 89.9999, 90 - 1e-13],
                                 size=(frames, 3))
    q = Rotation.from_euler(order, angles.reshape(-1, 3), degrees=True).as_quat()
    q = q.reshape(frames, 3, 4)
    q[:100] = Rotation.random(300, rng=1).as_quat().reshape(100, 3, 4)
    motion = limbik.Motion(sk, rng.normal(size=(frames, 3)), q, 0.1)
    again = limbik.parse_bvh(limbik.format_bvh(motion))
    error = (Rotation.from_quat(again.rotations.reshape(-1, 4))
             * Rotation.from_quat(motion.rotations.reshape(-1, 4)).inv()).magnitude()
    assert error.max() < 1e-13
    assert np.abs(again.world_positions() - motion.world_positions()).max() < 1e-11


@pytest.mark.parametrize(("name", "problem"), [("Left\\nLeg", "holds a line break"),
                                               ("Left\\rLeg", "holds a line break"),
                                               ("  ", "is empty"),
                                               ("Hip { x", "holds a brace as a word")])
def test_names_that_would_not_read_back_are_refused(tmp_path, name, problem):
    """A glTF joint name may hold anything; a BVH name is the rest of its line."""
    from limbik import Motion, Skeleton

    name = name.replace("\\n", "\n").replace("\\r", "\r")
    skeleton = Skeleton([name, "Knee"], [-1, 0], [[0.0, 1.0, 0.0], [0.0, -0.5, 0.0]])
    with pytest.raises(InvalidInputError, match=problem):
        limbik.write_bvh(Motion.rest(skeleton), tmp_path / "x.bvh")
    assert not (tmp_path / "x.bvh").exists()
    # inner spaces and tabs read back as written; outer ones are left out, as before
    fine = Skeleton(["Left  Up\\tLeg".replace("\\t", "\t"), "Knee "], [-1, 0],
                    [[0.0, 1.0, 0.0], [0.0, -0.5, 0.0]])
    limbik.write_bvh(Motion.rest(fine), tmp_path / "ok.bvh")
    assert limbik.read_bvh(tmp_path / "ok.bvh").names == (fine.names[0], "Knee")


def test_numbers_the_reader_would_refuse_are_not_written(tmp_path):
    from limbik.placement.walk import walk_cycle

    walk = walk_cycle(cycles=0.5)
    far = walk.__class__(walk.skeleton, walk.root_positions + 1e120, walk.rotations,
                         walk.frame_time)
    with pytest.raises(InvalidInputError, match=r"channel values must be within ±1e\+100"):
        limbik.write_bvh(far, tmp_path / "far.bvh")
    with pytest.raises(InvalidInputError, match=r"within ±1e\+100"):  # 1e95 in nanometres
        limbik.write_bvh(walk.__class__(walk.skeleton, walk.root_positions + 1e95,
                                        walk.rotations, walk.frame_time),
                         tmp_path / "nm.bvh", scale=1e-9)
    assert not list(tmp_path.iterdir())
