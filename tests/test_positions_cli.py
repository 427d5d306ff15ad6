"""``limbik footplant`` on files of joint positions: one clip, batch files, a folder."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

import limbik
from limbik.app.cli import main
from limbik.placement.positions import from_y_up, to_y_up
from limbik.skeleton.positions import POSITION_SKELETONS

#: SMPL's 22 joints taken from a CMU-named clip (the same anatomical points).
CMU_FOR_SMPL22 = ("Hips", "LeftUpLeg", "RightUpLeg", "LowerBack", "LeftLeg", "RightLeg", "Spine",
                  "LeftFoot", "RightFoot", "Spine1", "LeftToeBase", "RightToeBase", "Neck",
                  "LeftShoulder", "RightShoulder", "Head", "LeftArm", "RightArm", "LeftForeArm",
                  "RightForeArm", "LeftHand", "RightHand")
PARENTS = np.array(POSITION_SKELETONS["smpl22"][1])


@pytest.fixture(scope="module")
def walks(request):
    """Two CMU-skeleton clips as SMPL-order positions in metres at 20 fps."""
    from conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    out = []
    for name in ("xia_neutral_walk_01_000.bvh", "dme_demo_3d_1_raw_footskate.bvh"):
        clip = limbik.skeleton.resample(limbik.read_bvh(SHARED_DATA / "bvh" / name), 20.0)
        out.append(clip.world_positions(joints=CMU_FOR_SMPL22) * 0.056)
    return out


def _bone_lengths(positions):
    return np.linalg.norm(positions[..., 1:, :] - positions[..., PARENTS[1:], :], axis=-1)


def test_one_clip_comes_back_in_its_layout_and_dtype_with_one_length_per_bone(walks, tmp_path,
                                                                              capsys):
    source = tmp_path / "walk.npy"
    np.save(source, walks[0].astype(np.float32))
    out = tmp_path / "clean.npy"
    assert main(["footplant", str(source), "-o", str(out), "--skeleton", "smpl22", "--fps",
                 "20", "--report", str(tmp_path / "r.json")]) == 0
    assert "1 clip(s)" in capsys.readouterr().out
    clean = np.load(out)
    assert clean.shape == walks[0].shape and clean.dtype == np.float32
    lengths = _bone_lengths(clean.astype(np.float64))
    assert np.all(np.ptp(lengths, axis=0) <= 1e-5 * lengths.max())  # float32 precision
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["clips"] == 1 and record["frames"] == len(walks[0])


@pytest.mark.parametrize("layout", ["NJ3T", "NTJ3"])
def test_a_batch_file_is_cleaned_clip_by_clip(walks, tmp_path, layout):
    frames = min(len(w) for w in walks)
    batch = np.stack([w[:frames] for w in walks])  # (N, T, J, 3)
    data = batch.transpose(0, 2, 3, 1) if layout == "NJ3T" else batch
    np.savez(tmp_path / "samples.npz", motion=data)
    out = tmp_path / "clean.npz"
    assert main(["footplant", str(tmp_path / "samples.npz"), "-o", str(out)]) == 0
    clean = np.load(out)["motion"]
    assert clean.shape == data.shape and clean.dtype == data.dtype
    clips = clean.transpose(0, 3, 1, 2) if layout == "NJ3T" else clean
    for n in range(len(walks)):
        lengths = _bone_lengths(clips[n])
        assert np.all(np.ptp(lengths, axis=0) <= 1e-9 * lengths.max())


def test_a_padded_results_file_has_each_sample_cleaned_over_its_own_frames(walks, tmp_path):
    frames = min(len(w) for w in walks)
    motion = np.stack([w[:frames] for w in walks]).transpose(0, 2, 3, 1).astype(np.float32)
    lengths = np.array([frames, frames - 10])
    motion[1, ..., lengths[1]:] = 0.0  # (a shorter sample's padding)
    np.save(tmp_path / "results.npy", {"motion": motion, "lengths": lengths,
                                       "text": ["walks", "walks on"]}, allow_pickle=True)
    out = tmp_path / "clean.npy"
    assert main(["footplant", str(tmp_path / "results.npy"), "-o", str(out), "--skeleton",
                 "smpl22", "--fps", "20"]) == 0
    back = np.load(out, allow_pickle=True).item()
    assert back["text"] == ["walks", "walks on"] and back["lengths"].tolist() == lengths.tolist()
    np.testing.assert_array_equal(back["motion"][1, ..., lengths[1]:], 0.0)
    for n, length in enumerate(lengths):
        clip = back["motion"][n, ..., :length].transpose(2, 0, 1).astype(np.float64)
        assert np.all(np.isfinite(clip))
        bones = _bone_lengths(clip)
        assert np.all(np.ptp(bones, axis=0) <= 1e-5 * bones.max())  # float32 precision
        assert np.abs(clip - walks[n][:length]).max() > 1e-3  # (cleaned, not copied)


@pytest.mark.parametrize("up", ["y", "z"])
def test_one_clip_cleaned_into_a_bvh_file_is_the_cleaned_positions(walks, tmp_path, capsys,
                                                                   up):
    source = tmp_path / "walk.npy"
    np.save(source, from_y_up(walks[0], up))
    common = ["--skeleton", "smpl22", "--fps", "20", "--up", up]
    assert main(["footplant", str(source), "-o", str(tmp_path / "clean.bvh")] + common) == 0
    assert main(["footplant", str(source), "-o", str(tmp_path / "clean.npy")] + common) == 0
    motion = limbik.read_bvh(tmp_path / "clean.bvh", up=up)
    assert motion.frame_time == pytest.approx(0.05) and motion.num_frames == len(walks[0])
    drawn = motion.world_positions(joints=POSITION_SKELETONS["smpl22"][0])
    np.testing.assert_allclose(from_y_up(drawn, up), np.load(tmp_path / "clean.npy"),
                               atol=1e-5)  # (BVH's text keeps 6 decimals)
    half = len(walks[0]) // 2
    np.save(tmp_path / "two.npy", np.stack([walks[0][:half], walks[0][half:2 * half]]))
    capsys.readouterr()
    assert main(["footplant", str(tmp_path / "two.npy"), "-o", str(tmp_path / "two.bvh")]) == 1
    assert "a .bvh file holds one clip" in capsys.readouterr().err
    assert not (tmp_path / "two.bvh").exists()


def test_a_batch_file_on_two_processes_is_the_same_as_on_one(walks, tmp_path):
    frames = min(len(w) for w in walks) // 2
    batch = np.stack([w[:frames] for w in walks] + [w[frames:2 * frames] for w in walks])
    np.save(tmp_path / "samples.npy", batch.transpose(0, 2, 3, 1))  # (N, J, 3, T)
    for jobs in ("1", "2"):
        assert main(["footplant", str(tmp_path / "samples.npy"), "-o",
                     str(tmp_path / f"clean{jobs}.npy"), "--jobs", jobs,
                     "--report", str(tmp_path / f"r{jobs}.json")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "clean1.npy"),
                                  np.load(tmp_path / "clean2.npy"))
    assert json.loads((tmp_path / "r1.json").read_text()) == \
        json.loads((tmp_path / "r2.json").read_text())


def test_a_folder_of_position_files_runs_through_the_batch_runner(walks, tmp_path, capsys):
    folder = tmp_path / "generated"
    folder.mkdir()
    for k, walk in enumerate(walks):
        np.save(folder / f"clip{k}.npy", walk)
    assert main(["footplant", str(folder), "-o", str(tmp_path / "out"), "--skeleton",
                 "smpl22", "--jobs", "1"]) == 0
    assert "0 failed" in capsys.readouterr().out
    for k in range(len(walks)):
        assert np.load(tmp_path / "out" / f"clip{k}.npy").shape == walks[k].shape
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert all(r["status"] == "ok" and r["clips"] == 1 for r in summary["clips"])


def test_a_parents_file_names_any_skeleton(walks, tmp_path):
    names, parents = POSITION_SKELETONS["smpl22"]
    (tmp_path / "skeleton.json").write_text(json.dumps({"names": names,
                                                        "parents": list(parents)}))
    np.save(tmp_path / "walk.npy", walks[0])
    assert main(["footplant", str(tmp_path / "walk.npy"), "-o", str(tmp_path / "out.npy"),
                 "--skeleton", str(tmp_path / "skeleton.json")]) == 0
    assert np.load(tmp_path / "out.npy").shape == walks[0].shape


@pytest.mark.parametrize("extra, words", [
    (["--skeleton", "smpl99"], "--skeleton must be one of"),
    (["--plot", "p.png"], "--plot does not apply"),
    (["-o", "out.glb"], "-o must end in .npy or .npz"),
    (["--html"], "--html must name the page for one clip"),
    (["--html", "page.png"], "--html must end in .html"),
    (["--html", "r.html", "--report", "r.html"], "--html r.html is also --report's file"),
])
def test_bad_position_options_are_one_line(walks, tmp_path, capsys, monkeypatch, extra, words):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "walk.npy", walks[0])
    args = ["footplant", "walk.npy", *extra]
    if "-o" not in extra:
        args += ["-o", "clean.npy"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("limbik: error: ") and words in err and err.count("\n") == 1


def test_position_options_on_a_bvh_clip_are_refused(tmp_path, capsys):
    limbik.write_bvh(limbik.placement.walk.walk_cycle(cycles=0.5), tmp_path / "walk.bvh")
    assert main(["footplant", str(tmp_path / "walk.bvh"), "-o", str(tmp_path / "o.bvh"),
                 "--fps", "20"]) == 1
    assert "--fps is for files of joint positions" in capsys.readouterr().err


def test_a_wrong_joint_count_is_refused_by_name(tmp_path, capsys):
    np.save(tmp_path / "bad.npy", np.zeros((10, 21, 3)))
    assert main(["footplant", str(tmp_path / "bad.npy"), "-o", str(tmp_path / "o.npy")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("limbik: error: positions must have 22 joints") and "(10, 21, 3)" in err


def page_data(page):
    """The data a viewer page embeds: its metadata, and each motion's positions decoded
    as ``(frames, joints, 3)`` float32."""
    meta = json.loads(re.search(r'id="limbik-data">(.*?)</script>', page.read_text(),
                                re.S).group(1))
    positions = [np.frombuffer(base64.b64decode(m["positions"]), dtype="<f4").reshape(
        m["frames"], m["joints"], 3) for m in meta["motions"]]
    return meta, positions


@pytest.mark.parametrize("up, unit, scale", [("y", None, 1.0), ("z", "cm", 100.0)])
def test_html_holds_every_clip_of_a_file_before_and_after(walks, tmp_path, up, unit, scale):
    """The page of a batch file: one source and one result per clip, Y up, in metres with
    --unit (the frame the clips were cleaned in), with the contacts on the feet."""
    frames = min(len(w) for w in walks)
    batch = np.stack([w[:frames] for w in walks])  # (N, T, J, 3), Y up, metres
    np.save(tmp_path / "samples.npy", from_y_up(batch, up).transpose(0, 2, 3, 1) * scale)
    page, out = tmp_path / "samples.html", tmp_path / "clean.npy"
    assert main(["footplant", str(tmp_path / "samples.npy"), "-o", str(out), "--html",
                 str(page), "--up", up] + (["--unit", unit] if unit else [])) == 0
    meta, drawn = page_data(page)
    clean = np.load(out).transpose(0, 3, 1, 2) / scale  # (N, T, J, 3) in the file's up
    assert [m["label"] for m in meta["motions"]] == [
        "source: samples.npy[0]", "planted [0]", "source: samples.npy[1]", "planted [1]"]
    assert [(m["frames"], m["joints"]) for m in meta["motions"]] == [(frames, 22)] * 4
    for n in range(len(walks)):
        np.testing.assert_allclose(drawn[2 * n], batch[n], atol=1e-6)
        np.testing.assert_allclose(drawn[2 * n + 1], to_y_up(clean[n], up), atol=1e-6)
        assert np.abs(drawn[2 * n + 1] - drawn[2 * n]).max() > 1e-3  # the feet moved
    assert all(m["contacts"] for m in meta["motions"])
    rows = [row[0] for row in meta["table"]["rows"]]
    assert meta["terrain"]["name"].startswith("flat") and meta["table"]["columns"] == [
        "value", "before", "after"] and "[0] floor" in rows and "[1] floor" in rows


def test_html_of_one_clip_is_a_pair_on_its_terrain(walks, tmp_path):
    np.save(tmp_path / "walk.npy", walks[0])
    page = tmp_path / "walk.html"
    assert main(["footplant", str(tmp_path / "walk.npy"), "-o", str(tmp_path / "clean.npy"),
                 "--html", str(page), "--terrain", "hills"]) == 0
    meta, drawn = page_data(page)
    assert [m["label"] for m in meta["motions"]] == ["source: walk.npy", "planted"]
    np.testing.assert_allclose(drawn[0], walks[0], atol=1e-6)
    np.testing.assert_allclose(drawn[1], np.load(tmp_path / "clean.npy"), atol=1e-6)
    assert meta["terrain"]["name"].startswith("hills") and "before" in meta["table"]["columns"]


def test_html_of_several_clips_on_per_clip_terrain_is_refused_before_any_work(walks, tmp_path,
                                                                            capsys):
    frames = min(len(w) for w in walks)
    np.save(tmp_path / "samples.npy", np.stack([w[:frames] for w in walks]))
    assert main(["footplant", str(tmp_path / "samples.npy"), "-o", str(tmp_path / "c.npy"),
                 "--html", str(tmp_path / "p.html"), "--terrain", "steps"]) == 1
    err = capsys.readouterr().err
    assert "html (--html) must draw one ground" in err and "2 clips" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["samples.npy"]


def test_a_folder_of_position_files_gets_a_page_beside_each_output(walks, tmp_path):
    folder = tmp_path / "generated"
    (folder / "sub").mkdir(parents=True)
    np.save(folder / "clip0.npy", walks[0])
    np.save(folder / "sub" / "clip1.npy", walks[1])
    out = tmp_path / "out"
    assert main(["footplant", str(folder), "-o", f"{out}/", "--skeleton", "smpl22", "--html",
                 "--jobs", "1", "--no-progress"]) == 0
    links = re.findall(r'<a href="([^"]+)">', (out / "summary.html").read_text())
    assert sorted(links) == ["clip0.npy.html", "sub/clip1.npy.html"]
    for link, walk in zip(sorted(links), walks, strict=True):
        meta, drawn = page_data(out / link)
        assert [m["frames"] for m in meta["motions"]] == [len(walk)] * 2
        np.testing.assert_allclose(drawn[0], walk, atol=1e-6)
