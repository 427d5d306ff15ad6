"""The scores of motion-generation papers: hand-made motions with known answers, and
``limbik metrics``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from limbik import metrics
from limbik.app.cli import main
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import quaternion_normalize
from limbik.skeleton import Motion, Skeleton
from limbik.skeleton.positions import POSITION_SKELETONS


def _feet(frames: int, speed: float, height: float, fps: float = 20.0) -> np.ndarray:
    """Two toes ``(T, 2, 3)``: the first moving along x at ``speed`` (units/s) at
    ``height``, the second standing still on the floor."""
    p = np.zeros((frames, 2, 3))
    p[:, 0, 0] = speed * np.arange(frames) / fps
    p[:, 0, 1] = height
    p[:, 1, 2] = 0.3
    return p


@pytest.mark.parametrize("speed, height, expected", [(1.0, 0.0, (0.9, 1.0)),
                                                     (0.3, 0.0, (0.0, 0.0)),
                                                     (1.0, 0.08, (0.0, 0.0)),
                                                     (1.0, 0.04, (0.9, 1.0))])
def test_skating_ratio_counts_low_fast_feet(speed, height, expected):
    ratio = metrics.foot_skating_ratio(_feet(40, speed, height), [0, 1], 20.0)
    assert expected[0] <= ratio <= expected[1]


def test_skating_ratio_converts_units_and_frame_rate():
    metres = _feet(40, 1.0, 0.0)
    centimetres = metres * 100
    assert metrics.foot_skating_ratio(centimetres, [0, 1], 20.0, metres_per_unit=0.01) == \
        metrics.foot_skating_ratio(metres, [0, 1], 20.0)
    # the same path drawn at 60 fps moves a third as far per frame: still 1 m/s
    assert metrics.foot_skating_ratio(_feet(120, 1.0, 0.0, 60.0), [0, 1], 60.0) > 0.9
    # a single moving frame is not a slide: the 5-frame average stays low
    jump = np.zeros((40, 1, 3))
    jump[20:, 0, 0] = 0.1
    assert metrics.foot_skating_ratio(jump, [0], 20.0) == 0.0
    assert metrics.foot_skating_ratio(jump[:1], [0], 20.0) == 0.0
    # clips shorter than the averaging window: the window is padded with zero speed
    for frames in (2, 3, 5):
        ratio = metrics.foot_skating_ratio(_feet(frames, 10.0, 0.0), [0, 1], 20.0)
        assert 0.0 <= ratio <= 1.0
    assert metrics.foot_skating_ratio(_feet(3, 10.0, 0.0), [0, 1], 20.0) == 1.0


def test_bone_length_variation_and_jitter_have_known_answers():
    t = np.arange(50) / 20.0
    p = np.zeros((50, 2, 3))
    p[:, 1, 1] = 1.0
    assert np.all(metrics.bone_length_variation(p, [-1, 0]) == 0)
    wobble = p.copy()
    wobble[::2, 1, 1] = 1.1
    wobble[1::2, 1, 1] = 0.9
    assert metrics.bone_length_variation(wobble, [-1, 0])[1] == pytest.approx(0.1, rel=1e-6)
    line = p.copy()
    line[:, :, 0] = 2.0 * t[:, None]
    assert metrics.jitter(line, 20.0) == pytest.approx(0.0, abs=1e-9)
    cubic = p.copy()
    cubic[:, :, 0] = 0.5 * t[:, None] ** 3  # jerk 3 everywhere
    assert metrics.jitter(cubic, 20.0) == pytest.approx(3.0, rel=1e-6)
    assert metrics.jitter(cubic * 100, 20.0, metres_per_unit=0.01) == pytest.approx(3.0,
                                                                                    rel=1e-6)


def _smpl_positions(seed: int = 0, frames: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    names, parents = POSITION_SKELETONS["smpl22"]
    offsets = np.zeros((22, 3))
    offsets[1:] = rng.normal(scale=0.1, size=(21, 3))
    offsets[[4, 5, 7, 8], 1] = -0.4  # legs hang down
    rotations = quaternion_normalize(np.array([0, 0, 0, 1.0]) + rng.normal(
        scale=0.05, size=(frames, 22, 4)))
    root = np.zeros((frames, 3))
    root[:, 1] = 1.0
    return Motion(Skeleton(names, parents, offsets), root, rotations, 0.05).world_positions()


def test_score_positions_on_a_clip_and_against_itself():
    p = _smpl_positions()
    scores = metrics.score_positions(p, "smpl22", fps=20.0, reference=p + [0, 0.3, 0])
    assert scores["bone_variation"] < 1e-12 and scores["penetration"] >= 0
    assert scores["joint_change"] == pytest.approx(0.0, abs=1e-12)  # a vertical offset only
    assert scores["leg_length"] > 0.7 and 0 <= scores["skate_ratio"] <= 1
    moved = p.copy()
    moved[:, 0, 0] += 0.22  # the root alone moves 22 cm: the mean over 22 joints is 1 cm
    assert metrics.score_positions(moved, "smpl22", reference=p)["joint_change"] == \
        pytest.approx(0.01)
    with pytest.raises(InvalidInputError, match="reference must have the shape"):
        metrics.score_positions(p, "smpl22", reference=p[:5])
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(T, 22, 3\)"):
        metrics.score_positions(p[:, :20], "smpl22")


def test_limbik_metrics_prints_a_row_per_clip(tmp_path, capsys):
    clips = np.stack([_smpl_positions(0), _smpl_positions(1)])
    np.save(tmp_path / "two.npy", clips.astype(np.float32))  # (N, T, J, 3)
    np.save(tmp_path / "one.npy", clips[0])
    assert main(["metrics", str(tmp_path / "two.npy"), str(tmp_path / "one.npy")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["clip", "skate"] and len(out) == 5
    assert out[1].startswith(f"{tmp_path / 'two.npy'}[0]")
    assert out[4].startswith("mean of 3")
    assert main(["metrics", str(tmp_path / "one.npy"), "--reference",
                 str(tmp_path / "one.npy"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["joint_change"] == 0.0 and rows[0]["frames"] == 30
    assert main(["metrics", str(tmp_path / "one.npy"), str(tmp_path / "two.npy"),
                 "--reference", str(tmp_path / "one.npy")]) == 1
    assert "--reference compares one file" in capsys.readouterr().err


def test_limbik_metrics_scores_a_folder_against_a_folder_of_references(tmp_path, capsys):
    (tmp_path / "clean" / "walks").mkdir(parents=True)
    (tmp_path / "raw" / "walks").mkdir(parents=True)
    for k in range(2):
        p = _smpl_positions(k)
        np.save(tmp_path / "raw" / "walks" / f"c{k}.npy", p)
        moved = p.copy()
        moved[:, 0, 0] += 0.22 * (k + 1)  # the root alone: 1 or 2 cm over 22 joints
        np.save(tmp_path / "clean" / "walks" / f"c{k}.npy", moved)
    assert main(["metrics", str(tmp_path / "clean"), "--reference", str(tmp_path / "raw"),
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["clip"] for r in rows] == [str(tmp_path / "clean" / "walks" / f"c{k}.npy")
                                         for k in range(2)]
    # each file against the reference at its own relative path
    assert [r["joint_change"] for r in rows] == pytest.approx([0.01, 0.02])
    assert main(["metrics", str(tmp_path / "clean"), "--reference", str(tmp_path / "raw")]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[-1].startswith("mean of 2") and float(table[-1].split()[-1]) == \
        pytest.approx(0.015, rel=1e-3)
    (tmp_path / "raw" / "walks" / "c1.npy").unlink()
    assert main(["metrics", str(tmp_path / "clean"), "--reference", str(tmp_path / "raw")]) == 1
    assert "--reference must hold walks/c1.npy" in capsys.readouterr().err
    assert main(["metrics", str(tmp_path / "clean"), "--reference",
                 str(tmp_path / "raw" / "walks" / "c0.npy")]) == 1
    assert "--reference must be a folder" in capsys.readouterr().err
