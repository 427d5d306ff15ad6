"""Foot placement over a folder of clips: the same bytes as one clip at a time, failures
recorded, up-to-date clips skipped, worker processes that die replaced."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from limbik.app import batch
from limbik.app.batch import find_clips, footplant_library
from limbik.app.cli import EXIT_ERROR, main
from limbik.errors import InvalidInputError
from limbik.io.bvh import write_bvh
from limbik.placement.walk import walk_cycle

NO_LEGS = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 10 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 0 0 0
0 90 1 0 0 0 0 5 0
0 90 2 0 0 0 0 10 0
"""

#: clips that fail, and what their error says
BAD = {"broken/corrupt.bvh": "expected HIERARCHY", "broken/no_legs.bvh": "leg"}


def make_library(folder: Path, walks: int = 3) -> list[str]:
    """Walks of different speeds and lengths, one in a subfolder, plus the bad clips;
    returns the good clips' relative paths."""
    good = []
    for k in range(walks):
        name = f"walk_{k}.bvh" if k % 2 == 0 else f"sub/walk_{k}.bvh"
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        write_bvh(walk_cycle(cycles=1.0 + 0.5 * k, frame_rate=60.0, speed=0.8 + 0.2 * k),
                  folder / name)
        good.append(name)
    (folder / "broken").mkdir(exist_ok=True)
    (folder / "broken/corrupt.bvh").write_text("this is not a motion capture file\n")
    (folder / "broken/no_legs.bvh").write_text(NO_LEGS)
    (folder / "notes.txt").write_text("not a clip")
    return good


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("library")
    return folder, make_library(folder)


@pytest.fixture(scope="module")
def single_outputs(library, tmp_path_factory) -> dict[str, bytes]:
    """Each good clip planted by the single-file command, with a non-default option."""
    folder, good = library
    out = tmp_path_factory.mktemp("single")
    outputs = {}
    for k, name in enumerate(good):
        target = out / f"{k}.bvh"
        assert main(["footplant", str(folder / name), "-o", str(target), "--terrain", "hills",
                     "--seed", "3", "--no-progress"]) == 0
        outputs[name] = target.read_bytes()
    return outputs


def test_several_clips_on_the_command_line_are_a_library(library, single_outputs, tmp_path,
                                                         capsys):
    """``limbik footplant mocap/*.bvh -o OUT`` after the shell expanded the glob."""
    folder, good = library
    names = good[:2]
    out = tmp_path / "listed"
    code = main(["footplant", *(str(folder / name) for name in names), "-o", str(out),
                 "--terrain", "hills", "--seed", "3", "--jobs", "1", "--no-progress"])
    assert code == 0, capsys.readouterr()
    common = Path(os.path.commonpath([str((folder / name).parent) for name in names]))
    for name in names:
        mirrored = out / (folder / name).relative_to(common)
        assert mirrored.read_bytes() == single_outputs[name], name
    assert main(["footplant", *(str(folder / name) for name in names)]) == EXIT_ERROR
    assert "output must be given for a folder, glob or list of clips" in capsys.readouterr().err


def test_a_named_clip_inside_the_output_folder_is_an_error(library, tmp_path, capsys):
    folder, good = library
    inside = tmp_path / "out" / "x.bvh"
    inside.parent.mkdir()
    shutil.copy(folder / good[0], inside)
    code = main(["footplant", str(folder / good[1]), str(inside), "-o", str(inside.parent),
                 "--no-progress"])
    assert code == EXIT_ERROR
    assert "source clips must lie outside the output folder" in capsys.readouterr().err


def test_an_output_ending_in_a_separator_is_a_folder(library, tmp_path, capsys):
    folder, good = library
    out = tmp_path / "new"
    assert main(["footplant", str(folder / good[0]), "-o", f"{out}{os.sep}", "--jobs", "1",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert (out / Path(good[0]).name).is_file() and (out / "summary.json").is_file()


def no_temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_library_outputs_are_the_single_file_outputs_and_failures_are_listed(
        library, single_outputs, tmp_path, capsys):
    folder, good = library
    out = tmp_path / "out"
    code = main(["footplant", str(folder), "-o", str(out), "--terrain", "hills", "--seed", "3",
                 "--jobs", "2", "--no-progress"])
    text = capsys.readouterr().out
    assert code == 1, "a failed clip makes the exit code non-zero"
    total = len(good) + len(BAD)
    assert (f"footplant: planted {len(good)} of {total} clips in" in text
            and f"({total} run," in text), text
    for name in good:
        assert (out / name).read_bytes() == single_outputs[name], name
    summary = json.loads((out / "summary.json").read_text())
    records = {r["clip"]: r for r in summary["clips"]}
    assert set(records) == set(good) | set(BAD)
    for name, words in BAD.items():
        assert records[name]["status"] == "failed"
        assert words in records[name]["error"]
        assert name in text
        assert not (out / name).exists()
    for name in good:
        record = records[name]
        assert record["status"] == "ok" and record["error"] is None
        assert record["frames"] > 0 and record["seconds"] > 0
        assert record["terrain"].startswith("hills")
        metrics = [k for k in record if k.startswith("before_")]
        assert {"before_left_skate", "after_right_penetration"} <= set(record)
        assert all(f"after_{k[len('before_'):]}" in record for k in metrics)
    csv_lines = (out / "summary.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(records)
    assert csv_lines[0].startswith("clip,status,")
    html = (out / "summary.html").read_text()
    assert html.index("corrupt.bvh") < html.index(good[0]), "failed clips are listed first"
    assert (out / "summary.png").read_bytes()[:4] == b"\x89PNG"
    assert no_temporaries(out) == []


def test_a_second_run_does_nothing_until_an_input_changes(library, tmp_path, capsys):
    folder, good = library
    out = tmp_path / "out"
    first = footplant_library(folder, out, jobs=1)
    assert first.ran == len(good) + len(BAD)
    stamps = {name: (out / name).stat().st_mtime_ns for name in good}
    assert main(["footplant", str(folder), "-o", str(out), "--jobs", "1", "--no-progress"]) == 1
    assert "nothing to do" in capsys.readouterr().out
    assert {name: (out / name).stat().st_mtime_ns for name in good} == stamps
    again = footplant_library(folder, out, jobs=1)
    assert again.ran == 0 and all(r["skipped"] for r in again.records)
    assert [r["clip"] for r in again.records] == [r["clip"] for r in first.records]

    # an input touched after its output is planted again; so is a missing output
    source = folder / good[0]
    later = (out / good[0]).stat().st_mtime_ns + 10**9
    os.utime(source, ns=(later, later))
    (out / good[-1]).unlink()
    third = footplant_library(folder, out, jobs=1)
    assert third.ran == 2
    assert {r["clip"] for r in third.records if not r["skipped"]} == {good[0], good[-1]}
    # other settings redo everything, and so does force
    assert footplant_library(folder, out, jobs=1, terrain="slope").ran == len(third.records)
    assert footplant_library(folder, out, jobs=1, terrain="slope", force=True).ran == len(
        third.records)


def test_process_pool_and_in_process_records_agree(library, tmp_path):
    folder, _ = library
    here = footplant_library(folder, tmp_path / "here", jobs=1, report=False)
    pool = footplant_library(folder, tmp_path / "pool", jobs=2, report=False)
    assert pool.engine == "2 processes" and here.engine == "in-process"
    drop = {"seconds"}
    assert ([{k: v for k, v in r.items() if k not in drop} for r in here.records]
            == [{k: v for k, v in r.items() if k not in drop} for r in pool.records])
    frame = pool.to_dataframe() if _has("pandas") else None
    if frame is not None:
        assert list(frame["clip"]) == [r["clip"] for r in pool.records]
        assert (frame["status"] == "failed").sum() == len(BAD)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


_ORIGINAL_RUN_CLIP = batch._run_clip


def _dies_once(job):
    """The first attempt at walk_0 kills its worker process outright."""
    marker = Path(job.output + ".attempted")
    if job.clip == "walk_0.bvh" and not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os._exit(1)
    return _ORIGINAL_RUN_CLIP(job)


@pytest.mark.skipif(sys.platform != "linux", reason="needs fork to run a patched task")
def test_clips_of_a_dead_worker_process_run_again(library, tmp_path, monkeypatch):
    folder, good = library
    expected = footplant_library(folder, tmp_path / "expected", jobs=1, report=False)
    monkeypatch.setattr(batch, "_run_clip", _dies_once)
    summary = footplant_library(folder, tmp_path / "out", jobs=2, report=False)
    assert (tmp_path / "out/walk_0.bvh.attempted").exists(), "the worker did die"
    assert [r["status"] for r in summary.records] == [r["status"] for r in expected.records]
    for name in good:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "expected" / name
                                                          ).read_bytes()


def test_finding_clips(tmp_path):
    folder = tmp_path / "clips"
    make_library(folder, walks=2)
    (folder / ".hidden").mkdir()
    shutil.copy(folder / "walk_0.bvh", folder / ".hidden/walk.bvh")
    root, clips = find_clips(folder)
    assert root == folder
    assert [c.relative_to(folder).as_posix() for c in clips] == sorted(
        ["walk_0.bvh", "sub/walk_1.bvh", *BAD])
    root, clips = find_clips(f"{folder}/**/walk_*.bvh")
    assert root == folder and len(clips) == 2
    root, clips = find_clips(folder / "walk_0.bvh")
    assert root == folder and clips == [folder / "walk_0.bvh"]
    # outputs inside the input folder are not inputs
    first = footplant_library(folder, folder / "out", jobs=1, report=False)
    again = footplant_library(folder, folder / "out", jobs=1, report=False)
    assert again.ran == 0 and len(again.records) == len(first.records) == len(clips) + 3


@pytest.mark.parametrize(("source", "output", "message"), [
    ("missing", "out", "source must be a folder, a glob or a clip file"),
    ("empty/*.bvh", "out", "source must hold .bvh/.glb/.gltf clips"),
    ("clips", "clips", "output must be a folder other than the input folder"),
])
def test_bad_sources_and_outputs(tmp_path, source, output, message):
    (tmp_path / "empty").mkdir()
    make_library(tmp_path / "clips", walks=1)
    with pytest.raises(InvalidInputError, match=message):
        footplant_library(tmp_path / source if "*" not in source else f"{tmp_path}/{source}",
                          tmp_path / output)


def test_bad_jobs_and_missing_output_are_clear(tmp_path, capsys):
    make_library(tmp_path / "clips", walks=1)
    with pytest.raises(InvalidInputError, match="jobs must be a positive integer, got 0"):
        footplant_library(tmp_path / "clips", tmp_path / "out", jobs=0)
    assert main(["footplant", str(tmp_path / "clips")]) == 1
    assert "-o OUTDIR" in capsys.readouterr().err
    assert main(["footplant", str(tmp_path / "clips"), "-o", str(tmp_path / "o"),
                 "--report", "r.json"]) == 1
    assert "--report is for one clip" in capsys.readouterr().err


def test_scheduler_without_dask_says_what_to_install(tmp_path, monkeypatch):
    make_library(tmp_path / "clips", walks=1)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(InvalidInputError, match=r'pip install "limbik\[dask\]"'):
        footplant_library(tmp_path / "clips", tmp_path / "out", scheduler="tcp://127.0.0.1:1")


def test_the_report_ranks_failed_then_worst_after_values():
    from limbik.viz.batch_report import REPORT_METRICS, rank_clips

    def record(name, after, status="ok"):
        r = {"clip": name, "status": status, "legs": "left right", "frames": 10,
             "leg_length": 2.0}
        if status == "ok":
            for family in REPORT_METRICS:
                for side in ("left", "right"):
                    r[f"before_{side}_{family}"] = 1.0
                    r[f"after_{side}_{family}"] = after if side == "left" else 0.0
        return r

    rows = rank_clips([record("good", 0.1), record("bad", 0.9), record("x", 0, "failed"),
                       record("mid", 0.5)])
    assert [r["clip"] for r in rows] == ["x", "bad", "mid", "good"]
    assert rows[1]["skate"] == (0.5, 0.45), "the worse of the legs, in leg lengths"


def test_real_clips_match_the_single_file_command(shared_data, tmp_path, capsys):
    clips = ["xia_neutral_walk_01_000.bvh", "dme_demo_3d_1_raw_footskate.bvh"]
    folder = tmp_path / "mocap"
    (folder / "session").mkdir(parents=True)
    for name in clips:
        shutil.copy(shared_data / "bvh" / name, folder / "session" / name)
    (folder / "session/no_legs.bvh").write_text(NO_LEGS)
    assert main(["footplant", f"{folder}/**/*.bvh", "-o", str(tmp_path / "out"),
                 "--no-progress"]) == 1
    for name in clips:
        assert main(["footplant", str(shared_data / "bvh" / name), "-o",
                     str(tmp_path / name), "--no-progress"]) == 0
        assert (tmp_path / "out/session" / name).read_bytes() == (tmp_path / name).read_bytes()
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert {r["clip"]: r["status"] for r in summary["clips"]} == {
        **{f"session/{name}": "ok" for name in clips}, "session/no_legs.bvh": "failed"}


def test_a_failure_outside_the_clip_is_tried_again(tmp_path):
    folder = tmp_path / "clips"
    good = make_library(folder, walks=2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").write_text("a file where the output folder should be")
    first = footplant_library(folder, out, jobs=1, report=False)
    failed = {r["clip"]: r["error"] for r in first.failed}
    assert set(failed) == {"sub/walk_1.bvh", *BAD}
    (out / "sub").unlink()
    again = footplant_library(folder, out, jobs=1, report=False)
    assert again.ran == 1, "only the clip that failed on the file system runs again"
    assert {r["clip"] for r in again.failed} == set(BAD)
    assert (out / good[1]).is_file()


def test_library_flags_on_one_clip_are_an_error(tmp_path, capsys):
    make_library(tmp_path / "clips", walks=1)
    clip = tmp_path / "clips/walk_0.bvh"
    assert main(["footplant", str(clip), "-o", str(tmp_path / "o.bvh"), "--jobs", "2"]) == 1
    assert "--jobs is for a folder or glob of clips" in capsys.readouterr().err
    assert not (tmp_path / "o.bvh").exists()


def test_a_z_up_centimetre_folder_is_planted_as_its_clips_one_by_one(tmp_path, capsys):
    """``--up z --unit cm``: the clips, a terrain file and ``--floor`` are read in the
    files' frame, outputs are written in it, and each is the single-clip command's file."""
    import numpy as np

    from limbik.io.bvh import read_bvh

    folder = tmp_path / "zup"
    folder.mkdir()
    for k in range(2):
        write_bvh(walk_cycle(cycles=1.0, frame_rate=60.0, speed=0.9 + 0.2 * k),
                  folder / f"walk_{k}.bvh", up="z", scale=100.0)
    terrain = tmp_path / "field.npy"
    np.save(terrain, np.random.default_rng(1).normal(size=(10, 12)) * 3.0)  # cm
    flags = ["--up", "z", "--unit", "cm", "--terrain", str(terrain), "--cell-size", "60",
             "--terrain-origin", "-300", "-300", "--floor", "-1e-1", "--no-progress"]
    singles = {}
    for k in range(2):
        target = tmp_path / f"single_{k}.bvh"
        assert main(["footplant", str(folder / f"walk_{k}.bvh"), "-o", str(target),
                     *flags]) == 0, capsys.readouterr()
        singles[f"walk_{k}.bvh"] = target.read_bytes()
    out = tmp_path / "out"
    assert main(["footplant", str(folder), "-o", str(out), "--jobs", "1", *flags]) == 0
    capsys.readouterr()
    for name, expected in singles.items():
        assert (out / name).read_bytes() == expected, name
    # written Z up in centimetres: the root stays near its source height, not 100x off
    source = read_bvh(folder / "walk_0.bvh", up="z", scale=0.01)
    planted = read_bvh(out / "walk_0.bvh", up="z", scale=0.01)
    lift = planted.root_positions[:, 1] - source.root_positions[:, 1]
    assert np.all(np.abs(lift) < 0.15), np.abs(lift).max()
    # another unit is another setting: every clip is planted again
    summary = footplant_library(folder, out, jobs=1, up="z", unit="mm", terrain=str(terrain),
                                terrain_options={"cell_size": 600.0,
                                                 "origin": (-3000.0, -3000.0)},
                                report=False)
    assert summary.ran == 2


@pytest.mark.parametrize(("keyword", "value", "message"),
                         [("up", "x", "up must be one of 'y', 'z', got 'x'"),
                          ("unit", "furlong", "unit")])
def test_a_bad_frame_for_a_library_is_an_error_before_any_clip(library, tmp_path, keyword,
                                                               value, message):
    folder, _ = library
    with pytest.raises(InvalidInputError, match=message):
        footplant_library(folder, tmp_path / "out", jobs=1, **{keyword: value})
    assert not (tmp_path / "out").exists()


def test_an_interrupted_run_keeps_its_finished_clips(library, tmp_path, monkeypatch):
    """Ctrl-C after two clips: the summary holds those two, marked incomplete, and the
    next run plants only the others."""
    folder, good = library
    out = tmp_path / "out"
    seen: list[str] = []

    def interrupt_after_two(done: int, total: int, clip: str) -> None:
        seen.append(clip)
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        footplant_library(folder, out, jobs=1, progress=interrupt_after_two, report=False)
    saved = json.loads((out / "summary.json").read_text())
    assert saved["complete"] is False
    assert sorted(r["clip"] for r in saved["clips"]) == sorted(seen)
    assert (out / "summary.csv").read_text().count("\n") == 3  # header + two clips

    rest = footplant_library(folder, out, jobs=1, report=False)
    assert rest.ran == len(good) + len(BAD) - 2
    assert sorted(r["clip"] for r in rest.records if r["skipped"]) == sorted(seen)
    assert json.loads((out / "summary.json").read_text())["complete"] is True


def test_checkpoints_are_written_while_the_run_goes_on(library, tmp_path, monkeypatch):
    folder, good = library
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "CHECKPOINT_SECONDS", 0.0)
    counts: list[int] = []

    def look(done: int, total: int, clip: str) -> None:
        summary = out / "summary.json"
        counts.append(len(json.loads(summary.read_text())["clips"]) if summary.exists() else 0)

    footplant_library(folder, out, jobs=1, progress=look, report=False)
    total = len(good) + len(BAD)
    # after each clip but the last, the checkpoint already holds every finished clip
    assert counts[:-1] == list(range(1, total))


def _library_run(tmp_path: Path, clips: int) -> tuple[Any, Path]:
    """``limbik footplant LIB -o OUT --jobs 2`` started on ``clips`` short walks, once
    its first clip is written: (the process, OUT)."""
    import subprocess
    import time

    lib = tmp_path / "lib"
    lib.mkdir()
    walk = walk_cycle(cycles=1.0, frame_rate=30.0)
    for k in range(clips):
        write_bvh(walk, lib / f"walk{k:03d}.bvh")
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-c", "from limbik.app.cli import main; raise SystemExit(main())",
         "footplant", str(lib), "-o", str(out), "--jobs", "2", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not any(out.glob("walk*.bvh")):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"no clip written: {process.communicate()}")
        time.sleep(0.02)
    return process, out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers here")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_killed_library_run_leaves_no_worker_behind(tmp_path, how):
    """SIGTERM stops the workers and exits 143; after SIGKILL the workers end by
    themselves. Either way the output pipes close (nothing hangs), no temporary file is
    left and no clip is written after the end."""
    import signal
    import subprocess
    import time

    process, out = _library_run(tmp_path, clips=200)
    process.send_signal(getattr(signal, how))
    try:  # the workers hold the pipes too: this returns once they are gone
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("worker processes outlived the command")
    if how == "SIGTERM":
        assert process.returncode == 143
        assert err.decode().strip().endswith("limbik: terminated")
    written = sorted(out.glob("*"))
    assert len([p for p in written if p.suffix == ".bvh"]) < 200
    time.sleep(0.5)
    assert sorted(out.glob("*")) == written
    assert not [p for p in written if p.name.endswith(".tmp")]
