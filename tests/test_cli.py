"""The command line, called in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from limbik import __version__
from limbik.app.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_demo_prints_a_table_as_json(capsys):
    assert main(["demo", "--no-pictures", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list)
    for row in rows:
        assert {"scene", "solver", "reached", "max_error", "mean_iterations", "ms"} <= set(row)


def test_footplant_with_no_arguments_writes_a_bvh(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["footplant"]) == 0
    from limbik import read_bvh

    motion = read_bvh(tmp_path / "footplant.bvh")
    assert motion.num_frames > 10
    assert "left_skate" in capsys.readouterr().out


def test_footplant_outputs(tmp_path, capsys):
    import numpy as np

    from limbik import write_bvh
    from limbik.placement.walk import walk_cycle

    clip = tmp_path / "walk.bvh"
    write_bvh(walk_cycle(cycles=1.0), clip)
    heights = tmp_path / "hills.npy"
    np.save(heights, np.random.default_rng(0).normal(size=(12, 12)) * 0.02)
    out, report, plot = tmp_path / "o.bvh", tmp_path / "r.json", tmp_path / "p.png"
    code = main(["footplant", str(clip), "--terrain", str(heights), "--cell-size", "0.5",
                 "--terrain-origin", "-3", "-1", "-o", str(out), "--report", str(report),
                 "--plot", str(plot), "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["floor"] == 0.0 and out.exists() and plot.stat().st_size > 5000
    assert json.loads(report.read_text())["after"]["left_penetration"] <= 1e-9


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "No such file"),
        (lambda d: (d / "in.bvh").write_text("HIERARCHY\nROOT Hips\n{\n"), "in.bvh:"),
        (lambda d: _armless(d), "could not find the left leg"),
    ],
)
def test_footplant_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, setup, message):
    setup(tmp_path)
    out = tmp_path / "out.bvh"
    assert main(["footplant", str(tmp_path / "in.bvh"), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("limbik: error:") and "\n" not in err and message in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _armless(folder):
    """A valid BVH with a single chain: no legs to find."""
    (folder / "in.bvh").write_text(
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
        "Zrotation Xrotation Yrotation\n JOINT Spine\n {\n  OFFSET 0 1 0\n  CHANNELS 3 "
        "Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\n"
        "MOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0\n")


def test_footplant_bad_terrain_file(tmp_path, capsys):
    import numpy as np

    np.save(tmp_path / "t.npy", np.zeros(4))
    out = tmp_path / "out.bvh"
    assert main(["footplant", "--terrain", str(tmp_path / "t.npy"), "-o", str(out)]) == 1
    assert "2-D array" in capsys.readouterr().err
    assert not out.exists()


def test_view_writes_a_gif(tmp_path, shared_data):
    out = tmp_path / "clip.gif"
    assert main(["view", str(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh"),
                 "--out", str(out), "--fps", "10", "--traces"]) == 0
    from PIL import Image

    with Image.open(out) as im:
        assert im.n_frames >= 10


@pytest.mark.parametrize(("fps", "said"), [("1e-300", "1 drawn)"), ("1e-9", "1 drawn)")])
def test_view_at_a_rate_below_one_frame_per_clip_draws_one(tmp_path, capsys, fps, said):
    """A rate slower than the whole clip draws its first frame and says so (it printed a
    stride of 30000300003 frames, or one with 300 digits)."""
    out = tmp_path / "walk.gif"
    glb = Path(__file__).parent / "data" / "mixamo_rig.glb"
    assert main(["view", str(glb), "--animation", "Walk", "--fps", fps, "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip().endswith(said)
    from PIL import Image

    with Image.open(out) as im:
        assert getattr(im, "n_frames", 1) == 1


def test_view_of_a_glb_in_profile_is_in_metres(tmp_path, monkeypatch):
    """The walk seen from its side; glTF lengths are metres, and the axes say so."""
    from limbik.viz import plots

    labels: list[str] = []
    original = plots.animate_motion

    def spy(motion, **kwargs):
        labels.append(kwargs["units"])
        return original(motion, **kwargs)

    monkeypatch.setattr(plots, "animate_motion", spy)
    out = tmp_path / "walk.gif"
    glb = Path(__file__).parent / "data" / "mixamo_rig.glb"
    assert main(["view", str(glb), "--animation", "Walk", "--view", "profile", "--fps", "5",
                 "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    assert labels == ["m"]


def test_view_without_display_says_so(tmp_path, shared_data, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["view", str(shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("limbik: error: no display") and "\n" not in err



def test_the_command_module_imports_without_the_heavy_libraries():
    """``limbik`` handles Ctrl-C from its first line; what runs before that (importing
    ``limbik.app.cli``) must not pull in numpy, scipy or numba."""
    import subprocess
    import sys

    code = ("import sys, limbik.app.cli; heavy = [m for m in ('numpy', 'scipy', 'numba') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("extra", "units"), [([], "BVH units"), (["--unit", "cm"], "m")])
def test_footplant_pictures_name_the_clips_length_unit(tmp_path, shared_data, monkeypatch,
                                                       extra, units):
    from limbik.viz import footplant_plot

    seen: list[str] = []
    original = footplant_plot.plot_footplant

    def spy(*args, **kwargs):
        seen.append(kwargs["units"])
        return original(*args, **kwargs)

    monkeypatch.setattr(footplant_plot, "plot_footplant", spy)
    clip = shared_data / "bvh" / "dme_demo_3d_1_raw_footskate.bvh"
    assert main(["footplant", str(clip), "-o", str(tmp_path / "out.bvh"), "--plot",
                 str(tmp_path / "out.png"), "--no-progress", *extra]) == 0
    assert seen == [units]
