"""Position motions: built-in joint orders, fitting rotations to positions, position files."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.errors import InvalidInputError, LimbikError, NonFiniteInputError
from limbik.geometry.quaternion import quaternion_normalize
from limbik.io.positions import read_positions, write_positions
from limbik.skeleton import Motion, Skeleton, find_legs
from limbik.skeleton.positions import POSITION_SKELETONS, fit_positions, position_layout


def _smpl_motion(rng: np.random.Generator, frames: int = 40) -> Motion:
    """A random motion of a skeleton in SMPL's 22-joint order."""
    names, parents = POSITION_SKELETONS["smpl22"]
    offsets = rng.normal(size=(22, 3))
    rotations = quaternion_normalize(rng.normal(size=(frames, 22, 4)))
    return Motion(Skeleton(names, parents, offsets), rng.normal(size=(frames, 3)), rotations,
                  1 / 20)


@pytest.mark.parametrize("seed", range(8))
def test_positions_of_one_skeleton_come_back_exactly(seed):
    rng = np.random.default_rng(seed)
    source = _smpl_motion(rng)
    positions = source.world_positions()
    fitted = Motion.from_positions(positions, "smpl22")
    scale = np.abs(positions).max()
    assert np.abs(fitted.world_positions() - positions).max() <= 1e-12 * scale
    fit = fit_positions(positions, "smpl22")
    assert fit.residual <= 1e-12 * scale
    assert fit.length_variation.max() <= 1e-12
    bones = np.linalg.norm(source.skeleton.offsets[1:], axis=-1)
    np.testing.assert_allclose(fit.lengths[1:], bones, rtol=1e-12)
    # the rest frame is the first: its rotations are the identity
    np.testing.assert_allclose(np.abs(fitted.rotations[0, :, 3]), 1.0, atol=1e-12)


def test_real_clip_positions_come_back_with_any_parents(shared_data):
    clip = limbik.read_bvh(shared_data / "bvh" / "cmu_131_01_start_walk_stop_meters.bvh")
    positions = clip.world_positions()
    fitted = Motion.from_positions(positions, clip.skeleton.parents, names=clip.names,
                                   frame_time=clip.frame_time)
    assert np.abs(fitted.world_positions() - positions).max() < 1e-9
    assert fitted.names == clip.names and fitted.frame_time == clip.frame_time


def test_wobbling_bones_get_one_length_each_and_keep_their_directions():
    rng = np.random.default_rng(3)
    positions = _smpl_motion(rng, 60).world_positions()
    noisy = positions + rng.normal(scale=0.01, size=positions.shape)
    fit = fit_positions(noisy, "smpl22")
    fitted = Motion.from_positions(noisy, "smpl22").world_positions()
    parents = np.array(POSITION_SKELETONS["smpl22"][1])
    lengths = np.linalg.norm(fitted[:, 1:] - fitted[:, parents[1:]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(fit.lengths[1:], lengths.shape),
                               rtol=1e-9)
    assert 0.001 < fit.length_variation.max() < 0.1 and fit.residual > 0
    # single-child bones point where the input's do
    for j in (4, 7, 10, 18, 20):  # knee, ankle, foot, elbow, wrist
        a = fitted[:, j] - fitted[:, parents[j]]
        b = noisy[:, j] - noisy[:, parents[j]]
        cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
        assert cos.min() > 1 - 1e-9


def test_smooth_positions_give_smooth_rotations():
    """A joint swinging smoothly gets rotations that change smoothly (no flips)."""
    t = np.linspace(0, 1, 100)
    positions = np.zeros((100, 3, 3))
    positions[:, 1] = [0.0, 1.0, 0.0]
    positions[:, 2, 0] = np.sin(2.5 * t)
    positions[:, 2, 1] = 1.0 + np.cos(2.5 * t)
    fitted = Motion.from_positions(positions, [-1, 0, 1])
    q = fitted.rotations[:, 1]
    steps = np.abs(np.sum(q[1:] * q[:-1], axis=-1))
    assert steps.min() > 0.999
    np.testing.assert_allclose(fitted.world_positions(), positions, atol=1e-12)


def test_smpl_legs_and_toes_are_found():
    legs = find_legs(_smpl_motion(np.random.default_rng(0)).skeleton)
    assert [(leg.hip, leg.knee, leg.ankle, leg.toe) for leg in legs] == [(1, 4, 7, 10),
                                                                         (2, 5, 8, 11)]


def test_positions_in_a_chosen_order():
    motion = _smpl_motion(np.random.default_rng(1))
    order = ["head", "pelvis", "left_foot"]
    picked = motion.world_positions(joints=order)
    full = motion.world_positions()
    np.testing.assert_array_equal(picked, full[:, [15, 0, 10]])
    with pytest.raises(InvalidInputError, match="joints"):
        motion.world_positions(joints="head")


@pytest.mark.parametrize("skeleton, names, match", [
    ("smpl99", None, "skeleton must be one of"),
    ([-1, 0, 2], None, r"skeleton\[2\]"),
    ([0, 0], None, r"skeleton\[0\] must be -1"),
    ([-1, 0, 1], ["a", "b"], "names must be 3"),
    ("smpl22", ["a"] * 22, "names must not be given"),
])
def test_bad_layouts_are_refused_by_name(skeleton, names, match):
    with pytest.raises(LimbikError, match=match):
        position_layout(skeleton, names)


def test_bad_positions_are_refused_by_name():
    good = np.zeros((5, 22, 3))
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(T, 22, 3\)"):
        Motion.from_positions(np.zeros((5, 21, 3)), "smpl22")
    bad = good.copy()
    bad[3, 4, 1] = np.nan
    with pytest.raises(NonFiniteInputError, match="frame 3"):
        Motion.from_positions(bad, "smpl22")
    with pytest.raises(InvalidInputError, match="rest_frame"):
        fit_positions(good, "smpl22", rest_frame=9)


@pytest.mark.parametrize("layout, shape", [("TJ3", (30, 22, 3)), ("NJ3T", (3, 22, 3, 30)),
                                           ("NTJ3", (3, 30, 22, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_position_files_round_trip_in_their_layout_and_dtype(tmp_path, layout, shape, dtype,
                                                              suffix):
    data = np.random.default_rng(2).normal(size=shape).astype(dtype)
    path = tmp_path / f"in{suffix}"
    if suffix == ".npy":
        np.save(path, data)
    else:
        np.savez(path, motion=data, text=np.array(["a person walks"]))
    read = read_positions(path, joints=22)
    assert read.layout == layout and read.dtype == dtype
    assert read.positions.shape[1:] == (30, 22, 3) and read.positions.dtype == np.float64
    out = tmp_path / f"out{suffix}"
    write_positions(out, read.positions, read)
    back = np.load(out)
    back = back if suffix == ".npy" else back["motion"]
    assert back.dtype == dtype and back.shape == shape
    np.testing.assert_array_equal(back, data)


def test_position_files_that_cannot_be_read_as_positions_are_refused(tmp_path):
    np.save(tmp_path / "two.npy", np.zeros((22, 3)))
    with pytest.raises(InvalidInputError, match="layout"):
        read_positions(tmp_path / "two.npy", joints=22)
    np.save(tmp_path / "ambiguous.npy", np.zeros((2, 3, 3, 3)))
    with pytest.raises(InvalidInputError, match="ambiguous"):
        read_positions(tmp_path / "ambiguous.npy", joints=3)
    assert read_positions(tmp_path / "ambiguous.npy", joints=3, layout="NTJ3").layout == "NTJ3"
    np.save(tmp_path / "one.npy", np.zeros((1, 22, 3)))
    with pytest.raises(InvalidInputError, match="at least 2 frames"):
        read_positions(tmp_path / "one.npy", joints=22)
    np.save(tmp_path / "objects.npy", np.array([{"motion": 1}], dtype=object),
            allow_pickle=True)
    with pytest.raises(InvalidInputError, match="path"):
        read_positions(tmp_path / "objects.npy", joints=22)
    np.savez(tmp_path / "many.npz", a=np.zeros((5, 22, 3)), b=np.zeros((5, 22, 3)))
    with pytest.raises(InvalidInputError, match="key must name an array"):
        read_positions(tmp_path / "many.npz", joints=22)
    assert read_positions(tmp_path / "many.npz", joints=22, key="b").key == "b"
    (tmp_path / "text.npy").write_text("not numpy")
    with pytest.raises(InvalidInputError, match="path must be a NumPy array file"):
        read_positions(tmp_path / "text.npy", joints=22)


def _results_file(path, frames=30, lengths=(30, 12)):
    """A dictionary as MDM's ``results.npy``: ``motion`` ``(N, 22, 3, T)`` float32 padded
    to ``frames``, with the samples' ``lengths``, ``text`` and counts."""
    motion = np.random.default_rng(3).normal(size=(len(lengths), 22, 3, frames))
    for n, length in enumerate(lengths):
        motion[n, ..., length:] = 0.0
    entries = {"motion": motion.astype(np.float32), "text": ["a person walks", "jumps"][
        :len(lengths)], "lengths": np.array(lengths), "num_samples": len(lengths),
        "num_repetitions": 1}
    np.save(path, entries, allow_pickle=True)
    return entries


def test_a_dictionary_file_is_read_clip_by_clip_and_written_back_whole(tmp_path):
    entries = _results_file(tmp_path / "results.npy")
    read = read_positions(tmp_path / "results.npy", joints=22)
    assert read.layout == "NJ3T" and read.key == "motion" and read.dictionary
    assert read.lengths.tolist() == [30, 12] and read.clip(1).shape == (12, 22, 3)
    np.testing.assert_array_equal(read.clip(1), entries["motion"][1, ..., :12].transpose(2, 0, 1))
    changed = read.positions.copy()
    changed[1, :12] += 1.0
    write_positions(tmp_path / "out.npy", changed, read)
    back = np.load(tmp_path / "out.npy", allow_pickle=True).item()
    assert sorted(back) == sorted(entries) and back["text"] == entries["text"]
    assert back["motion"].dtype == np.float32 and back["motion"].shape == (2, 22, 3, 30)
    np.testing.assert_array_equal(back["motion"][1, ..., 12:], entries["motion"][1, ..., 12:])
    np.testing.assert_allclose(back["motion"][1, ..., :12], entries["motion"][1, ..., :12] + 1,
                               rtol=1e-6)
    # (an .npz keeps its other arrays too)
    np.savez(tmp_path / "in.npz", motion=entries["motion"], text=np.array(entries["text"]))
    read = read_positions(tmp_path / "in.npz", joints=22)
    write_positions(tmp_path / "out.npz", read.positions, read)
    with np.load(tmp_path / "out.npz") as archive:
        assert sorted(archive.files) == ["motion", "text"]
        assert archive["text"].tolist() == entries["text"]


class _Shell:
    """An object whose pickle calls a shell command when it is loaded."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def test_a_dictionary_file_builds_arrays_only(tmp_path):
    marker = tmp_path / "ran"
    np.save(tmp_path / "evil.npy", {"motion": np.zeros((2, 22, 3, 5)), "x": _Shell(marker)},
            allow_pickle=True)
    with pytest.raises(InvalidInputError, match="not an array"):
        read_positions(tmp_path / "evil.npy", joints=22)
    assert not marker.exists()
    _results_file(tmp_path / "bad.npy", lengths=(30, 1))
    with pytest.raises(InvalidInputError, match=r"lengths in .* must be 2 frame counts from 2 to "
                                                r"30"):
        read_positions(tmp_path / "bad.npy", joints=22)
    np.save(tmp_path / "nokey.npy", {"poses": np.zeros((5, 22, 3)), "text": "a"},
            allow_pickle=True)
    with pytest.raises(InvalidInputError, match="key must name an array"):
        read_positions(tmp_path / "nokey.npy", joints=22)
    assert read_positions(tmp_path / "nokey.npy", joints=22, key="poses").lengths is None


#: SMPL's 22 joints taken from a CMU-named clip (the same anatomical points).
CMU_FOR_SMPL22 = ("Hips", "LeftUpLeg", "RightUpLeg", "LowerBack", "LeftLeg", "RightLeg", "Spine",
                  "LeftFoot", "RightFoot", "Spine1", "LeftToeBase", "RightToeBase", "Neck",
                  "LeftShoulder", "RightShoulder", "Head", "LeftArm", "RightArm", "LeftForeArm",
                  "RightForeArm", "LeftHand", "RightHand")


def test_footplant_on_jittering_positions_puts_the_upper_body_nearest_to_as_given(
        shared_data):
    from limbik.placement.positions import footplant_positions

    clip = limbik.read_bvh(shared_data / "bvh" / "xia_neutral_walk_01_000.bvh")
    positions = clip.world_positions(joints=CMU_FOR_SMPL22) * 0.056  # (metres)
    noisy = positions + np.random.default_rng(4).normal(scale=0.01, size=positions.shape)
    out, info = footplant_positions(noisy, "smpl22", fps=clip.frame_rate)
    parents = np.array(POSITION_SKELETONS["smpl22"][1])
    lengths = np.linalg.norm(out[:, 1:] - out[:, parents[1:]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(info.lengths[1:], lengths.shape),
                               rtol=1e-9)
    # each joint above the pelvis: on the line from its parent toward where the input has
    # it relative to the root, at its bone's length (the nearest such point)
    upper = [3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
    given = out[:, :1] + (noisy - noisy[:, :1])
    for j in upper:
        way = given[:, j] - out[:, parents[j]]
        np.testing.assert_allclose(out[:, j] - out[:, parents[j]],
                                   way / np.linalg.norm(way, axis=-1, keepdims=True)
                                   * info.lengths[j], atol=1e-12)
    # nearer than the fit alone, which keeps every bone's direction and so carries each
    # bone's length error to the joints beyond it
    fitted = Motion.from_positions(noisy, "smpl22").world_positions()
    moved = np.linalg.norm((out[:, upper] - out[:, :1]) - (noisy[:, upper] - noisy[:, :1]),
                           axis=-1)
    kept = np.linalg.norm((fitted[:, upper] - fitted[:, :1])
                          - (noisy[:, upper] - noisy[:, :1]), axis=-1)
    assert moved.mean() < 0.8 * kept.mean() and moved.max() < kept.max()


def test_footplant_on_smpl_positions_keeps_bones_and_the_upper_body(shared_data):
    from limbik.placement.positions import footplant_positions

    clip = limbik.read_bvh(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh")
    positions = clip.world_positions(joints=CMU_FOR_SMPL22)
    out, info = footplant_positions(positions, "smpl22", fps=clip.frame_rate)
    assert out.shape == positions.shape and np.all(np.isfinite(out))
    parents = np.array(POSITION_SKELETONS["smpl22"][1])
    lengths = np.linalg.norm(out[:, 1:] - out[:, parents[1:]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(info.lengths[1:], lengths.shape),
                               rtol=1e-9)
    # joints above the pelvis keep their positions relative to the root, as fitted with
    # one length per bone (this clip's CMU neck and hip joints move on their own, so
    # its SMPL-order bones change length a little)
    fitted = Motion.from_positions(positions, "smpl22").world_positions()
    upper = [3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
    after = out[:, upper] - out[:, :1]
    np.testing.assert_allclose(after, fitted[:, upper] - fitted[:, :1], atol=1e-9)
    assert np.abs(after - (positions[:, upper] - positions[:, :1])).max() <= info.fit_residual
    assert 0 < info.fit_residual < 0.01 * info.lengths.sum()
