"""The command line meets a user: every error is one line with the documented exit code,
a closed pipe ends quietly, outputs never land somewhere unexpected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from limbik.app.cli import EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_USAGE, main
from limbik.app.compile_notice import MESSAGE as COMPILE_NOTICE

SRC = Path(__file__).resolve().parents[1] / "src"
URDF = """<robot name="arm">
  <link name="base"/><link name="upper"/><link name="fore"/><link name="palm"/>
  <link name="hand"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
  <joint name="wrist" type="revolute"><parent link="fore"/><child link="palm"/>
    <origin xyz="0.25 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
  <joint name="palm_hand" type="fixed"><parent link="palm"/><child link="hand"/>
    <origin xyz="0.1 0 0"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """A short BVH walk (one cycle)."""
    from limbik import write_bvh
    from limbik.placement.walk import walk_cycle

    path = tmp_path_factory.mktemp("clip") / "walk.bvh"
    write_bvh(walk_cycle(cycles=1.0), path)
    return path


@pytest.fixture()
def urdf(tmp_path) -> Path:
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    return path


def _one_line(err: str) -> str:
    err = err.strip()
    assert err.startswith("limbik: error: ") and "\n" not in err, err
    return err


USAGE_ERRORS = [
    (["bogus"], "invalid choice"),
    (["solve", "--nope"], "unrecognized arguments"),
    (["solve", "--target", "1", "2"], "expected 3 arguments"),
    (["solve", "--lengths", "1", "1", "--target", "1", "0", "0", "--max-iterations", "-1"],
     "--max-iterations"),
    (["solve", "--lengths", "1", "1", "--target", "1", "0", "0", "--restarts", "x"],
     "--restarts"),
    (["footplant", "X.bvh", "--terrain", "hills", "--seed", "-3"], "--seed"),
    (["footplant", "--seed", "1.5"], "--seed"),
    (["footplant", "--cell-size", "0"], "--cell-size"),
    (["footplant", "--floor", "nan"], "--floor"),
    (["view", "X.bvh", "--fps", "0", "--out", "t.gif"], "--fps"),
    (["view", "X.bvh", "--fps", "-5", "--out", "t.gif"], "--fps"),
    (["view", "X.bvh", "--fps", "inf"], "--fps"),
    (["view", "X.bvh", "--view", "iso"], "--view"),
    (["demo", "--jobs", "0"], "--jobs"),
    (["urdf"], "required"),
]


@pytest.mark.parametrize(("argv", "words"), USAGE_ERRORS)
def test_usage_errors_are_one_line_with_a_help_hint(capsys, argv, words):
    assert main(argv) == EXIT_USAGE
    captured = capsys.readouterr()
    err = _one_line(captured.err)
    assert words in err
    command = "limbik " + argv[0] if argv[0] in ("solve", "footplant", "view", "demo",
                                                "urdf") else "limbik"
    assert err.endswith(f"(see '{command} --help')")
    assert captured.out == ""


def test_the_documented_exit_codes_match(capsys):
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    assert f"exit code {EXIT_USAGE}" in text and f"exit code {EXIT_ERROR}" in text
    assert f"{EXIT_BROKEN_PIPE}" in text


def test_view_rejects_a_picture_suffix_before_drawing(clip, tmp_path, capsys):
    out = tmp_path / "t.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "Animation was deleted without rendering"
        assert main(["view", str(clip), "--out", str(out)]) == EXIT_ERROR
    assert "--out must end in .gif, .mp4 or .html" in _one_line(capsys.readouterr().err)
    assert not out.exists()


def test_view_mp4_without_ffmpeg_is_one_line(clip, tmp_path, capsys, monkeypatch):
    from matplotlib.animation import FFMpegWriter

    monkeypatch.setattr(FFMpegWriter, "isAvailable", classmethod(lambda cls: False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["view", str(clip), "--out", str(tmp_path / "t.mp4")]) == EXIT_ERROR
    assert "ffmpeg" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("option", ["-o", "--report", "--plot"])
def test_an_output_in_a_missing_folder_names_the_users_path(clip, tmp_path, capsys, option):
    path = tmp_path / "nonexistent" / "dir" / {"-o": "t.bvh", "--report": "t.json",
                                               "--plot": "t.png"}[option]
    argv = ["footplant", str(clip), "--terrain", "flat", option, str(path)]
    if option != "-o":
        argv += ["-o", str(tmp_path / "ok.bvh")]
    assert main(argv) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert str(path) in err and "does not exist" in err and ".tmp" not in err
    assert not (tmp_path / "ok.bvh").exists()  # nothing was solved or written


def test_footplant_without_o_names_its_output_and_never_overwrites(clip, tmp_path,
                                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["footplant", str(clip), "--terrain", "flat"]) == 0
    out = tmp_path / "walk_footplant.bvh"
    captured = capsys.readouterr()
    assert "writing walk_footplant.bvh" in captured.err
    assert "wrote walk_footplant.bvh" in captured.out
    out.write_text("mine")
    assert main(["footplant", str(clip), "--terrain", "flat"]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert "walk_footplant.bvh exists" in err and "--force" in err and "-o" in err
    assert out.read_text() == "mine"
    assert main(["footplant", str(clip), "--terrain", "flat", "--force"]) == 0
    assert out.read_text().startswith("HIERARCHY")


def test_a_closed_stdout_ends_quietly_in_process(capsys, monkeypatch):
    class Closed:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    code = main(["solve", "--lengths", "0.3", "0.25", "--target", "0.2", "0.3", "0.1"])
    assert code == EXIT_BROKEN_PIPE
    # nothing but the notice of a first compilation (on an empty cache)
    assert capsys.readouterr().err.replace(COMPILE_NOTICE + "\n", "") == ""


def test_a_closed_pipe_ends_quietly_as_a_process():
    """``limbik solve ... | head -0``: the reader is gone before the first write."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "limbik", "solve", "--lengths", "0.2", "0.2", "0.2",
         "--target", "0.3", "0.2", "0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    # nothing but, on a cache that does not hold the kernel yet, the one-time notice
    from limbik.app.compile_notice import MESSAGE

    assert err.replace(MESSAGE, "").strip() == ""


def test_urdf_lists_links_and_joints(urdf, capsys):
    assert main(["urdf", str(urdf)]) == 0
    out = capsys.readouterr().out
    assert "5 links, 4 joints" in out
    assert "bases (--base): base" in out and "tips (--tip):   hand" in out
    assert "elbow" in out and "revolute" in out and "upper -> fore" in out


def test_urdf_without_base_lists_the_links(urdf, capsys):
    assert main(["solve", "--urdf", str(urdf), "--tip", "hand", "--target", "0.3", "0.2",
                 "0"]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert "--urdf needs --base LINK" in err
    assert "base, upper, fore, palm, hand" in err and "limbik urdf FILE" in err


def test_solve_prints_q_with_joint_names_and_takes_an_orientation(urdf, capsys):
    import numpy as np

    from limbik import load_urdf

    argv = ["solve", "--urdf", str(urdf), "--base", "base", "--tip", "hand",
            "--target", "0.3", "0.25", "0", "--orientation", "0", "0", "0.3826834",
            "0.9238795"]  # the hand turned 45° about z
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "lm: reached, pose error" in out
    assert "orientation (0, 0, 0.382683, 0.923879) (x, y, z, w)" in out
    assert "  shoulder  " in out and "  elbow     " in out and "  wrist     " in out
    assert "iterations in all attempts" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["joint_names"] == ["shoulder", "elbow", "wrist"] and data["reached"]
    tip = load_urdf(urdf, "base", "hand").forward(np.array(data["q"]))
    assert np.allclose(tip.position, [0.3, 0.25, 0.0], atol=1e-5)
    assert np.isclose(abs(tip.quaternion @ [0, 0, 0.3826834, 0.9238795]), 1.0, atol=1e-6)


def test_bad_orientation_is_one_line(urdf, capsys):
    assert main(["solve", "--urdf", str(urdf), "--base", "base", "--tip", "hand",
                 "--target", "0.3", "0.25", "0", "--orientation", "0", "0", "0", "0"]) == 1
    assert "orientation must be a quaternion" in _one_line(capsys.readouterr().err)


def test_restarts_zero_makes_max_iterations_a_total(capsys):
    argv = ["solve", "--lengths", "0.2", "0.2", "0.2", "--target", "5", "0", "0",
            "--method", "dls", "--max-iterations", "20", "--json"]
    assert main([*argv, "--restarts", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["iterations"] <= 20


def test_a_failed_write_names_the_users_path_not_the_temporary_file(clip, tmp_path, capsys,
                                                                   monkeypatch):
    """Whatever the atomic writer's temporary file is called, the error names -o's path."""
    import limbik.io.files as files

    def fail(motion, path, *args, **kwargs):
        temporary = Path(path).parent / f".{Path(path).name}.x1y2z3.tmp"
        raise FileNotFoundError(2, "No such file or directory", str(temporary))

    monkeypatch.setattr(files, "write_bvh", fail)
    out = tmp_path / "planted.bvh"
    assert main(["footplant", str(clip), "--terrain", "flat", "-o", str(out)]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert err == f"limbik: error: cannot write {out}: No such file or directory"


def _typed_options():
    """(command, option, nargs) for every option of every subcommand that parses a value
    with a type, so options added later are covered too."""
    import argparse

    from limbik.app.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, subparser in sub.choices.items():
        for action in subparser._actions:
            if action.option_strings and action.type not in (None, str) and action.nargs != 0:
                yield command, action.option_strings[-1], action.nargs


@pytest.mark.parametrize(("command", "option", "nargs"), list(_typed_options()))
def test_every_typed_option_rejects_a_word_in_one_line(capsys, command, option, nargs):
    count = nargs if isinstance(nargs, int) else 1
    argv = [command, *(["X.bvh"] if command == "view" else []), option, *["word"] * count]
    assert main(argv) == EXIT_USAGE
    err = _one_line(capsys.readouterr().err)
    assert option in err and err.endswith(f"(see 'limbik {command} --help')")


@pytest.mark.parametrize("name", ["t.txt", "noext"])
def test_a_plot_of_an_unknown_kind_is_refused_before_the_solve(clip, tmp_path, capsys, name):
    out = tmp_path / "ok.bvh"
    argv = ["footplant", str(clip), "--plot", str(tmp_path / name), "-o", str(out)]
    assert main(argv) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert "--plot must end in .png" in err and name in err
    assert not out.exists()


def test_a_missing_clip_is_one_line_naming_it(tmp_path, capsys):
    missing = tmp_path / "nope.bvh"
    assert main(["footplant", str(missing), "-o", str(tmp_path / "o.bvh")]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert str(missing) in err and "No such file" in err


@pytest.mark.parametrize("extra, flag", [(["--cell-size", "0.5"], "--cell-size"),
                                         (["--terrain", "steps", "--seed", "2"], "--seed"),
                                         (["--height-scale", "2"], "--height-scale")])
def test_terrain_options_that_do_not_apply_are_errors(clip, tmp_path, capsys, extra, flag):
    out = tmp_path / "o.bvh"
    assert main(["footplant", str(clip), *extra, "-o", str(out)]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert f"{flag} applies to" in err
    assert not out.exists()


@pytest.mark.parametrize(("extra", "words"), [
    (["-o", "{tmp}/x.txt"], "-o must end in .bvh, .glb or .gltf"),
    (["-o", "{tmp}/x.glb"], "a .glb clip is written into a copy of the .glb file"),
    (["-o", "{tmp}/o.bvh", "--report", "{clip}"], "--report {clip} is also the input clip"),
    (["-o", "{tmp}/o.bvh", "--report", "{tmp}/o.bvh"], "is also -o's file"),
    (["-o", "{tmp}/o.bvh", "--report", "{tmp}/r.png", "--plot", "{tmp}/r.png"],
     "--plot {tmp}/r.png is also --report's file"),
    (["-o", ""], "-o must name a file or folder, got an empty path"),
    (["-o", "{tmp}/o.bvh", "--report", ""], "--report must name a file or folder"),
])
def test_footplant_outputs_are_checked_before_any_work(clip, tmp_path, capsys, extra, words):
    """A format the clip cannot be written in, or two outputs (or an output and the
    input) that are one file, fail at once: nothing is planted, nothing written."""
    before = clip.read_bytes()
    argv = ["footplant", str(clip)] + [a.format(tmp=tmp_path, clip=clip) for a in extra]
    assert main(argv) == EXIT_ERROR
    assert words.format(tmp=tmp_path, clip=clip) in _one_line(capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == [] and clip.read_bytes() == before


def test_a_bad_scheduler_address_is_one_line(clip, tmp_path, capsys):
    pytest.importorskip("distributed")
    assert main(["footplant", str(clip.parent), "-o", str(tmp_path / "out"), "--scheduler",
                 "garbage"]) == EXIT_ERROR
    assert "scheduler must be the address of a running Dask scheduler" in _one_line(
        capsys.readouterr().err)


def test_view_draws_a_clip_without_legs_on_its_floor(tmp_path, capsys):
    """An arm (no legs to find) is drawn with its floor; only --traces needs legs."""
    from limbik import Motion, Skeleton, write_bvh

    skeleton = Skeleton(["Shoulder", "Elbow", "Hand"], [-1, 0, 1],
                        [[0.0, 1.5, 0.0], [0.3, 0.0, 0.0], [0.25, 0.0, 0.0]])
    clip = tmp_path / "arm.bvh"
    write_bvh(Motion.rest(skeleton, num_frames=4), clip)
    out = tmp_path / "arm.gif"
    assert main(["view", str(clip), "--out", str(out), "--fps", "4"]) == 0
    assert out.stat().st_size > 0
    assert main(["view", str(clip), "--out", str(out), "--traces"]) == EXIT_ERROR
    assert "could not find the left leg" in capsys.readouterr().err


def test_a_clip_without_frames_is_refused_by_name(clip, tmp_path, capsys):
    text = clip.read_text()
    empty = tmp_path / "empty.bvh"
    empty.write_text(text[:text.index("MOTION")] + "MOTION\nFrames: 0\nFrame Time: 0.0333\n")
    assert main(["view", str(empty), "--out", str(tmp_path / "e.gif")]) == EXIT_ERROR
    err = _one_line(capsys.readouterr().err)
    assert "at least one frame" in err and str(empty) in err
    assert not (tmp_path / "e.gif").exists()


def test_main_leaves_an_ignored_sigterm_ignored_and_puts_a_handler_back(tmp_path,
                                                                        monkeypatch):
    import signal

    def mine(signum, frame):  # pragma: no cover - never delivered
        pass

    real_signal = signal.signal
    seen: list[object] = []

    def spy(signum, new):
        seen.append(new)
        return real_signal(signum, new)

    for handler in (signal.SIG_IGN, mine):
        previous = real_signal(signal.SIGTERM, handler)
        seen.clear()
        try:
            monkeypatch.setattr(signal, "signal", spy)
            assert main(["urdf", str(tmp_path / "missing.urdf")]) == EXIT_ERROR
            monkeypatch.setattr(signal, "signal", real_signal)
            assert signal.getsignal(signal.SIGTERM) is handler
            assert (seen == []) == (handler is signal.SIG_IGN)
        finally:
            real_signal(signal.SIGTERM, previous)


def test_an_empty_input_path_is_refused_not_taken_for_the_current_folder(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "some.bvh").write_text("not read")
    for argv in (["footplant", "", "-o", "out.bvh"], ["footplant", "", "x.bvh", "-o", "o/"]):
        assert main(argv) == EXIT_ERROR
        assert "input must name a clip" in _one_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["some.bvh"]  # nothing written


def test_numbers_beyond_1e100_are_refused_by_the_option(clip, tmp_path, capsys):
    code = main(["footplant", str(clip), "-o", str(tmp_path / "o.bvh"), "--floor", "-1e300"])
    assert code == EXIT_USAGE
    assert "--floor: expected a number within ±1e100" in capsys.readouterr().err
    assert not (tmp_path / "o.bvh").exists()


def test_solve_takes_one_q0(urdf, tmp_path, capsys):
    problem = tmp_path / "q.json"
    problem.write_text(json.dumps({"urdf": urdf.as_posix(), "base": "base", "tip": "hand",
                                   "target": [0.3, 0.2, 0.1], "q0": [[0, 0, 0]]}))
    assert main(["solve", str(problem)]) == EXIT_ERROR
    assert "q0 must be one set of" in _one_line(capsys.readouterr().err)
    assert main(["solve", str(problem), "--json"]) == EXIT_ERROR
    _one_line(capsys.readouterr().err)


def test_view_draws_a_clip_of_one_joint(tmp_path, capsys):
    clip = tmp_path / "root.bvh"
    clip.write_text("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition "
                    "Zposition Zrotation Yrotation Xrotation\n End Site\n {\n  OFFSET 0 1 0\n"
                    " }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 0 0 0\n1 0 0 0 0 0\n")
    out = tmp_path / "root.gif"
    assert main(["view", str(clip), "--out", str(out)]) == 0
    assert out.stat().st_size > 0
