"""``limbik demo``: every scene solves, draws its pictures and fills the table."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from limbik.app.cli import main
from limbik.app.demo import (
    SCENES,
    format_table,
    run_scenes,
    scene_names,
)
from limbik.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "img" / "gallery"
REGENERATE = "regenerate it with: limbik demo --out docs/img/gallery"


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    """The whole demo, in-process, into a fresh folder (JSON table)."""
    out = tmp_path_factory.mktemp("demo")
    capture = pytest.MonkeyPatch()
    buffer = io.StringIO()
    capture.setattr(sys, "stdout", buffer)
    try:
        code = main(["demo", "--out", str(out), "--json", "--jobs", "1"])
    finally:
        capture.undo()
    return code, out, json.loads(buffer.getvalue())


def test_demo_writes_at_least_seven_pictures_with_a_gif(gallery):
    code, out, rows = gallery
    assert code == 0
    files = sorted(p for p in out.iterdir() if p.suffix in (".png", ".gif"))
    assert len(files) >= 7
    assert any(p.suffix == ".gif" for p in files)
    for p in files:
        assert p.stat().st_size > 5000, p  # something was drawn
    listed = [name for row in rows for name in row["pictures"]]
    assert sorted(listed) == [p.name for p in files]  # each picture on exactly one row


def test_the_gif_is_an_animation(gallery):
    from PIL import Image

    _, out, _ = gallery
    with Image.open(out / "footplant_walk.gif") as im:
        assert im.n_frames >= 10


def test_table_rows_cover_every_scene_and_solver(gallery):
    _, _, rows = gallery
    solvers = " ".join(r["solver"] for r in rows)
    for word in ("two_bone root_frame", "roblox.solve_ik", "push_root", "stretch",
                 "solve_ik_planar", "fabrik", "FabrikTree", "Cone", "reference=knee",
                 "footplant", "ccd", "transpose", "pinv", "dls", "svd-dls", "full_body_ik",
                 "two_bone target_rotation", "aim_chain"):
        assert word in solvers, word
    for r in rows:
        reached, total = map(int, str(r["reached"]).split("/"))
        assert 0 <= reached <= total and total > 0
        assert r["max_error"] >= 0 and r["ms"] >= 0
    by_solver = {(r["scene"], r["solver"]): r for r in rows}
    # reachable problems are reached; the policies report the out-of-reach targets
    assert by_solver[("arm ring (rolled plane)", "two_bone root_frame")]["reached"] == "12/12"
    assert by_solver[("arm out of reach", "two_bone extend")]["reached"] == "0/2"
    assert by_solver[("arm out of reach", "two_bone stretch")]["reached"] == "1/2"
    assert by_solver[("arm out of reach", "two_bone push_root")]["reached"] == "2/2"
    assert by_solver[("fabrik tree", "FabrikTree, 2 effectors")]["reached"] == "1/1"
    for method in ("ccd", "transpose", "pinv", "dls", "svd-dls"):
        assert by_solver[("10-joint chain", method)]["reached"] == "16/16"
    for solver in ("full_body_ik hands", "full_body_ik planted feet", "aim_chain head"):
        row = by_solver[("walk, hands on a target", solver)]
        done, total = map(int, str(row["reached"]).split("/"))
        assert done == total and row["max_error"] < 1e-6, solver
    plant = [r for r in rows if r["solver"] == "footplant"]
    assert plant and all(r["max_error"] < 1e-9 for r in plant)


def test_table_text(capsys):
    assert main(["demo", "--no-pictures", "--scene", "planar", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:3] == ["scene", "solver", "reached"]
    assert "roblox.solve_ik_planar" in text
    assert format_table([]).startswith("scene")


def test_table_rows_show_warm_milliseconds():
    row = {"scene": "s", "solver": "x", "reached": "1/1", "max_error": 0.0,
           "mean_iterations": 1.0, "ms": 2.5, "pictures": []}
    lines = format_table([row, {**row, "solver": "y", "ms": 12.25}]).splitlines()
    assert lines[2].rstrip().endswith("2.50") and lines[3].rstrip().endswith("12.25")


def test_scene_filter_and_unknown_scene():
    assert set(scene_names()) == set(SCENES) >= {"arm", "planar", "fabrik", "leg",
                                                   "footplant", "jacobian"}
    rows = run_scenes(["planar"])
    assert [r.scene for r in rows] == ["planar (one joint)"]
    with pytest.raises(InvalidInputError, match=r"scene must be one of .*got 'nope'"):
        run_scenes(["nope"])


def test_unknown_scene_on_the_command_line(capsys):
    assert main(["demo", "--no-pictures", "--scene", "nope"]) == 1
    assert "limbik: error: scene must be one of" in capsys.readouterr().err


def test_worker_processes_give_the_same_rows():
    serial = [r.row() for r in run_scenes(["planar", "arm"], jobs=1)]
    parallel = [r.row() for r in run_scenes(["planar", "arm"], jobs=2)]
    strip = [{k: v for k, v in r.items() if k != "ms"} for r in serial]
    assert strip == [{k: v for k, v in r.items() if k != "ms"} for r in parallel]


def test_no_pictures_never_imports_matplotlib():
    src = Path(__file__).resolve().parents[1] / "src"
    code = ("import sys; from limbik.app.cli import main; "
            "main(['demo', '--no-pictures', '--json', '--jobs', '1', '--scene', 'planar', "
            "'--scene', 'arm']); assert 'matplotlib' not in sys.modules, 'imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src)},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["scene"] == "arm ring (rolled plane)"


def _frames(path: Path) -> list:
    """Every frame of a PNG or GIF as an RGB array (a GIF's frames in order)."""
    import numpy as np
    from PIL import Image, ImageSequence

    with Image.open(path) as im:
        return [np.asarray(f.convert("RGB"), dtype=np.int16) for f in ImageSequence.Iterator(im)]


def test_the_readme_gallery_is_what_the_demo_draws(gallery):
    """docs/img/gallery holds exactly the demo's pictures, pixel for pixel (nearly), and the
    README shows each of them."""
    import numpy as np

    _, out, _ = gallery
    drawn = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".gif"))
    kept = sorted(p.name for p in GALLERY.iterdir())
    assert kept == drawn, f"the gallery differs from the demo's pictures; {REGENERATE}"
    readme = (ROOT / "README.md").read_text()
    for name in drawn:
        assert f"(docs/img/gallery/{name})" in readme, f"README does not show {name}"
        new, old = _frames(out / name), _frames(GALLERY / name)
        assert len(new) == len(old) and new[0].shape == old[0].shape, f"{name}: {REGENERATE}"
        for a, b in zip(new, old, strict=True):
            differ = float(np.mean(np.abs(a - b).max(axis=-1) > 48))
            # fonts may render a little differently elsewhere; a changed picture moves far more
            assert differ < 0.003, f"{name}: {differ:.2%} of the pixels differ; {REGENERATE}"


def test_every_picture_reads_at_100_percent(gallery):
    """At least 800 pixels wide, so ticks and legends are legible without zooming."""
    _, out, _ = gallery
    for path in sorted(out.iterdir()):
        frame = _frames(path)[0]
        assert frame.shape[1] >= 800, f"{path.name} is {frame.shape[1]} px wide"


def test_help_lists_every_scene():
    """``demo --help`` and the worker processes' parent name the scenes without importing
    them: the same list, in table order."""
    from limbik.app.demo import SCENE_NAMES

    assert list(SCENE_NAMES) == scene_names()


def test_handing_scenes_to_workers_imports_no_solver():
    code = ("import sys, limbik.app.demo as d; d._select(None); d._select(['fabrik']); "
            "print(sorted(m for m in sys.modules if m.startswith(('numba', 'numpy', "
            "'limbik.solvers', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "[]"
