"""The 3-D viewer page (limbik.viz.web.to_html) opened in headless Chromium.

Each page is loaded twice per frame checked: once with ``--dump-dom`` to read the
page's own check of what it loaded (``#limbik-check``), once with ``--screenshot`` to
read its pixels. Every run also writes Chromium's network log and console log: a
request made by the page (any URL it asked for besides its own file) or any console
message fails the test. Those tests skip where no Chromium is installed; the checks of bad input run anywhere.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from limbik.app.cli import main
from limbik.io.files import read_motion
from limbik.placement.terrain import Terrain
from limbik.placement.walk import walk_cycle
from limbik.viz.web import ViewerMotion, to_html

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian: "
                                    "apt-get install chromium) to open the page")
WINDOW = (900, 600)
#: The scene's size on the page: it fits the window's smallest viewport in headless mode.
SCENE = (560, 400)
BACKGROUND = np.array([244, 244, 242])


def _chromium(tmp_path: Path, page: Path, frame: int, query: str = ""
              ) -> tuple[dict, np.ndarray]:
    """Open ``page?frame=N`` once: the page's check (``#limbik-check``) and a screenshot
    (rows, cols, RGB 0-255); fails on a console message or a request to anything but the
    page."""
    import matplotlib.image

    run = tmp_path / f"run-{frame}-{len(list(tmp_path.iterdir()))}"
    run.mkdir()
    shot = run / "shot.png"
    net = run / "net.json"
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={run / 'profile'}", "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader", f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--hide-scrollbars", "--enable-logging=stderr", "--v=0", f"--log-net-log={net}",
            "--dump-dom", f"--screenshot={shot}",
            f"{page.resolve().as_uri()}?frame={frame}&size={SCENE[0]}x{SCENE[1]}{query}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    # the software GL driver's own note when the browser reads the frame back is no
    # message of the page's
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line
               and "GL Driver Message (OpenGL, Performance" not in line]
    assert console == [], console
    events = json.loads(net.read_text() or "{}") if net.exists() else {}
    if events:  # the page's requests carry its file:// origin; the browser's own do not
        start = events["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        asked = [e["params"]["url"] for e in events.get("events", [])
                 if e["type"] == start and "file://" in str(e["params"].get(
                     "network_isolation_key", "")) and not e["params"]["url"].startswith(
                     page.resolve().as_uri())]
        assert asked == [], asked
    found = re.search(r'<pre id="limbik-check">(.*?)</pre>', done.stdout, re.S)
    assert found and found.group(1), done.stdout[-2000:]
    check = json.loads(html.unescape(found.group(1)))
    assert check["errors"] == [] and check["resources"] == []
    assert shot.exists()
    return check, np.round(matplotlib.image.imread(shot)[..., :3] * 255).astype(int)


def _check(tmp_path: Path, page: Path, frame: int) -> dict:
    return _chromium(tmp_path, page, frame)[0]


def _drawn_near(image: np.ndarray, points: list[list[float]], radius: int = 3) -> np.ndarray:
    """Per point: whether a pixel within ``radius`` differs from the background."""
    out = []
    for x, y in points:
        i, j = round(y), round(x)
        patch = image[max(i - radius, 0):i + radius + 1, max(j - radius, 0):j + radius + 1]
        out.append(patch.size > 0 and bool(np.any(np.abs(patch - BACKGROUND).sum(-1) > 30)))
    return np.array(out)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The built-in walk and a copy lifted and turned, on a small random height field."""
    motion = walk_cycle()
    source = motion.world_positions()
    rng = np.random.default_rng(7)
    result = source + np.array([0.3, 0.05, 0.0]) + rng.normal(0, 0.002, source.shape)
    terrain = Terrain(rng.uniform(-0.05, 0.05, (9, 13)), 0.5, (-3.0, -2.0), name="random")
    page = tmp_path_factory.mktemp("viewer") / "pair.html"
    contacts = (np.arange(len(source)) % 40 < 20)[:, None]
    to_html(page, [ViewerMotion(source, motion.skeleton.parents, motion.names, "source"),
                   ViewerMotion(result, motion.skeleton.parents, motion.names, "result",
                                feet=[3], contacts=contacts)],
            frame_time=motion.frame_time, terrain=terrain, traces=True,
            metrics={"before": {"skate": 1.5}, "after": {"skate": 0.25}})
    return page, source, result, terrain, motion


@needs_chromium
def test_page_checks_its_data_and_draws_the_skeleton(tmp_path, pair):
    page, source, result, terrain, _ = pair
    frame = 37
    check, image = _chromium(tmp_path, page, frame)
    assert check["frame"] == frame and check["frames"] == len(source)
    for got, positions in zip(check["motions"], (source, result), strict=True):
        assert got["joints"] == positions.shape[1] and got["frames"] == len(positions)
        assert got["root0"] == positions[0, 0].astype(np.float32).tolist()
    assert image.shape[:2] == (WINDOW[1], WINDOW[0])
    for got in check["motions"]:
        drawn = _drawn_near(image, got["screen"])
        assert drawn.mean() > 0.9, got["screen"]
    # the page's colours: the source blue and the result orange both appear
    flat = image.reshape(-1, 3)
    assert np.any(np.abs(flat - [61, 139, 217]).sum(-1) < 60)
    assert np.any(np.abs(flat - [240, 124, 39]).sum(-1) < 60)
    # the terrain mesh goes through the height field's samples
    vertices = np.array(check["terrain"]["vertices"])
    assert len(vertices) >= 50
    expected = terrain.height(vertices[:, 0], vertices[:, 2])
    np.testing.assert_allclose(vertices[:, 1], expected, atol=1e-6)


@needs_chromium
def test_moving_the_slider_changes_the_drawing(tmp_path, pair):
    page, *_ = pair
    (first, a), (later, b) = _chromium(tmp_path, page, 0), _chromium(tmp_path, page, 90)
    assert np.abs(a - b).sum(-1).astype(bool).sum() > 200
    # where the skeleton was on frame 0 and is not on frame 90, the page drew it then
    moved = np.linalg.norm(np.array(first["motions"][0]["screen"])
                           - np.array(later["motions"][0]["screen"]), axis=-1) > 10
    assert moved.any()
    assert _drawn_near(b, later["motions"][0]["screen"]).mean() > 0.9


@needs_chromium
def test_a_frame_beyond_the_clip_shows_its_last(tmp_path, pair):
    page, source, *_ = pair
    check = _check(tmp_path, page, 10**6)
    assert check["frame"] == len(source) - 1


@needs_chromium
def test_degenerate_motion_one_joint_one_frame(tmp_path):
    page = tmp_path / "one.html"
    to_html(page, ViewerMotion(np.zeros((1, 1, 3)), [-1]), frame_time=0.1,
            terrain=Terrain.flat(0.5))
    check = _check(tmp_path, page, 0)
    assert check["frames"] == 1 and check["motions"][0]["joints"] == 1
    assert check["motions"][0]["root0"] == [0.0, 0.0, 0.0]
    assert check["terrain"]["vertices"] == []  # one sample: a grid at its height, no mesh


def test_a_large_height_field_is_drawn_through_its_own_samples(tmp_path):
    """Over 400 samples a side, every n-th sample and the last row and column are kept,
    at their exact heights."""
    import base64

    rng = np.random.default_rng(11)
    for shape in ((1000, 7), (401, 401), (3, 2)):
        heights = rng.normal(size=shape)
        page = tmp_path / "big.html"
        to_html(page, ViewerMotion(np.zeros((2, 2, 3)), [-1, 0]), frame_time=0.1,
                terrain=Terrain(heights, 0.25, (1.0, -2.0)))
        data = re.search(r'id="limbik-data">(.*?)</script>', page.read_text(), re.S).group(1)
        meta = json.loads(data)["terrain"]

        def floats(text):
            return np.frombuffer(base64.b64decode(text), dtype="<f4")

        xs, zs = floats(meta["x"]), floats(meta["z"])
        drawn = floats(meta["heights"]).reshape(meta["rows"], meta["cols"])
        assert max(drawn.shape) <= 401 and drawn.shape[0] >= min(shape[0], 200)
        rows = np.round((zs + 2.0) / 0.25).astype(int)
        cols = np.round((xs - 1.0) / 0.25).astype(int)
        assert rows[-1] == shape[0] - 1 and cols[-1] == shape[1] - 1
        np.testing.assert_array_equal(drawn, heights[np.ix_(rows, cols)].astype(np.float32))


@needs_chromium
def test_motions_at_other_rates_share_the_clock(tmp_path):
    rng = np.random.default_rng(3)
    fast, slow = rng.normal(size=(61, 2, 3)), rng.normal(size=(16, 2, 3))
    page = tmp_path / "rates.html"
    to_html(page, [ViewerMotion(fast, [-1, 0], frame_time=1 / 60),
                   ViewerMotion(slow, [-1, 0], frame_time=1 / 15)], frame_time=1 / 60)
    check = _check(tmp_path, page, 20)
    assert check["frames"] == 61
    assert [m["shown"] for m in check["motions"]] == [20, 5]


@needs_chromium
def test_view_and_footplant_write_pages(tmp_path, shared_data, capsys):
    clip = shared_data / "bvh" / "xia_neutral_16_000.bvh"
    rng = np.random.default_rng(5)
    positions = rng.normal(0, 0.2, (30, 22, 3)) + [0.0, 1.0, 0.0]
    npy = tmp_path / "smpl22.npy"
    np.save(npy, positions.astype(np.float32))
    glb = Path(__file__).parent / "data" / "mixamo_rig.glb"
    page = tmp_path / "view.html"
    assert main(["view", str(clip), str(npy), str(glb), "--animation", "Walk", "--html",
                 str(page), "--terrain", "slope", "--traces"]) == 0
    assert "wrote" in capsys.readouterr().out
    check = _check(tmp_path, page, 5)
    rig = read_motion(glb, animation="Walk").world_positions()
    assert [m["joints"] for m in check["motions"]] == [31, 22, rig.shape[1]]
    assert check["motions"][1]["root0"] == positions[0, 0].astype(np.float32).tolist()
    assert check["motions"][2]["root0"] == rig[0, 0].astype(np.float32).tolist()
    bvh = read_motion(clip).world_positions()
    assert check["motions"][0]["root0"] == bvh[0, 0].astype(np.float32).tolist()
    report = tmp_path / "report.html"
    assert main(["footplant", "-o", str(tmp_path / "planted.bvh"), "--html", str(report),
                 "--no-progress"]) == 0
    check = _check(tmp_path, report, 30)
    assert [m["label"] for m in check["motions"]] == ["source: built-in walk", "planted"]
    assert "left_skate" in report.read_text()


@needs_chromium
def test_a_library_run_links_each_clips_page(tmp_path, shared_data, capsys):
    source = tmp_path / "clips"
    (source / "sub").mkdir(parents=True)
    for name, where in (("xia_neutral_16_000.bvh", source),
                        ("dme_demo_3d_1_raw_footskate.bvh", source / "sub")):
        shutil.copy(shared_data / "bvh" / name, where / name)
    out = tmp_path / "planted"
    assert main(["footplant", str(source), "-o", f"{out}/", "--html", "--jobs", "1",
                 "--no-progress"]) == 0
    links = re.findall(r'<a href="([^"]+)">', (out / "summary.html").read_text())
    assert sorted(links) == ["sub/dme_demo_3d_1_raw_footskate.bvh.html",
                             "xia_neutral_16_000.bvh.html"]
    check = _check(tmp_path, out / links[0], 10)
    assert [m["label"] for m in check["motions"]][1] == "planted"
    assert main(["footplant", str(source), "-o", f"{out}/", "--html", "page.html"]) == 1
    assert "--html takes no file" in capsys.readouterr().err


@needs_chromium
def test_footplant_page_of_a_position_file_draws_both_clips(tmp_path, shared_data):
    import limbik
    from test_positions_cli import CMU_FOR_SMPL22

    clip = limbik.skeleton.resample(limbik.read_bvh(shared_data / "bvh" /
                                                    "dme_demo_3d_1_raw_footskate.bvh"), 20.0)
    positions = clip.world_positions(joints=CMU_FOR_SMPL22) * 0.056  # metres
    np.save(tmp_path / "gen.npy", positions.astype(np.float32))
    page, out = tmp_path / "gen.html", tmp_path / "clean.npy"
    assert main(["footplant", str(tmp_path / "gen.npy"), "-o", str(out), "--html",
                 str(page), "--terrain", "hills"]) == 0
    clean = np.load(out)
    check = _check(tmp_path, page, 10)
    assert [(m["label"], m["frames"], m["joints"]) for m in check["motions"]] == [
        ("source: gen.npy", len(positions), 22), ("planted", len(positions), 22)]
    assert check["motions"][0]["root0"] == positions[0, 0].astype(np.float32).tolist()
    assert check["motions"][1]["root0"] == clean[0, 0].tolist()
    assert check["terrain"]["vertices"] != []


@pytest.mark.parametrize(("motions", "kwargs", "argument"), [
    (ViewerMotion(np.zeros((4, 3)), [-1, 0, 1]), {}, "positions"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0]), {}, "parents"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0, 1], names=["a"]), {}, "names"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0, 1], feet=[3]), {}, "feet"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0, 1], feet=[2], contacts=np.ones((4, 2))), {},
     "contacts"),
    (ViewerMotion(np.full((4, 3, 3), np.nan), [-1, 0, 1]), {}, "positions"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0, 1]), {"frame_time": 0.0}, "frame_time"),
    (ViewerMotion(np.zeros((4, 3, 3)), [-1, 0, 1]), {"terrain": "hills"}, "terrain"),
    ([], {}, "motions"),
    ([np.zeros((4, 3, 3))], {}, "motions"),
])
def test_bad_input_names_the_argument(tmp_path, motions, kwargs, argument):
    from limbik.errors import LimbikError

    with pytest.raises(LimbikError) as caught:
        to_html(tmp_path / "bad.html", motions, **{"frame_time": 0.1, **kwargs})
    assert caught.value.argument.split(".")[-1] == argument
    assert not (tmp_path / "bad.html").exists()


@pytest.mark.parametrize(("argv", "said"), [
    (["--html", "a.png"], "--html must end in .html"),
    (["--skeleton", "smpl22", "--html", "a.html"], "--skeleton applies to position files"),
    (["--terrain", "hills", "--out", "a.gif"], "--terrain is for the 3-D page"),
    (["--seed", "3", "--html", "a.html"], "--seed applies to --terrain hills"),
    (["--out", "a.gif", "--html", "a.html"], "--out and --html"),
    (["--fps", "10", "--html", "a.html"], "--fps is for --out and the window"),
    (["--view", "side", "--html", "a.html"], "--view is for --out and the window"),
    (["--no-ground", "--html", "a.html"], "--no-ground is for --out and the window"),
])
def test_view_options_that_cannot_apply_are_errors(tmp_path, shared_data, capsys, argv, said):
    clip = str(shared_data / "bvh" / "xia_neutral_16_000.bvh")
    argv = [str(tmp_path / a) if a.startswith("a.") else a for a in argv]
    assert main(["view", clip, *argv]) == 1
    assert said in capsys.readouterr().err
    assert main(["view", clip, clip, "--out", str(tmp_path / "b.gif")]) == 1
    assert "several are overlaid with --html" in capsys.readouterr().err


@needs_chromium
def test_the_skeleton_is_drawn_from_every_side(tmp_path, pair):
    page, *_ = pair
    shots = []
    for azimuth, elevation in ((0, 10), (90, 10), (180, 10), (270, 10), (45, 80), (30, -20)):
        check, image = _chromium(tmp_path, page, 20, f"&azimuth={azimuth}&elevation={elevation}")
        for got in check["motions"]:
            assert _drawn_near(image, got["screen"]).mean() > 0.9, (azimuth, elevation)
        shots.append(image)
    assert all(np.abs(a - b).sum() > 0 for a, b in itertools.pairwise(shots))
