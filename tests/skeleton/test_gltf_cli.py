"""The commands on glTF characters and Z-up centimetre files: ``limbik footplant
in.glb -o out.glb`` writes a planted copy whose meshes and skins are byte-identical,
and a Z-up centimetre clip plants exactly as its Y-up original."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gltf_helpers import DATA, accessor_bytes, glb, leg_length, mesh_and_skin_accessors, raw_json

import limbik
from limbik.app.cli import main
from limbik.io import export_axes, import_axes, read_bvh, read_gltf, write_bvh
from limbik.placement.footplant import footplant, terrain_for_clip
from limbik.skeleton import trim


@pytest.mark.parametrize(("name", "animation"), [("cmu_walk", None), ("mixamo_rig", "Walk")])
def test_footplant_glb_writes_a_planted_copy(tmp_path, capsys, name, animation):
    src = DATA / f"{name}.glb"
    out, report = tmp_path / "planted.glb", tmp_path / "report.json"
    argv = ["footplant", str(src), "-o", str(out), "--report", str(report), "--no-progress"]
    if animation:
        argv += ["--animation", animation]
    assert main(argv) == 0
    assert "wrote" in capsys.readouterr().out
    before, _ = glb(src)
    for a in mesh_and_skin_accessors(before):
        assert accessor_bytes(src, a) == accessor_bytes(out, a)
    for key in ("meshes", "skins", "nodes", "materials"):
        assert raw_json(src).get(key) == raw_json(out).get(key)
    # the file holds what footplant computes, to float32
    motion = read_gltf(src, animation=animation)
    legs = limbik.find_legs(motion.skeleton)
    expected, _ = footplant(motion, terrain_for_clip("flat", motion, legs=legs), legs=legs)
    planted = read_gltf(out, animation=animation)
    err = np.abs(planted.world_positions() - expected.world_positions()).max()
    assert err < 1e-6 * leg_length(motion)
    metrics = json.loads(report.read_text())
    for side in ("left", "right"):
        # the point the foot stands on (heel or toe) is held; the other end may roll
        # about it, which the toe's travel (``skate``) counts
        assert (metrics["after"][f"{side}_pivot_slide"]
                <= 0.05 * metrics["before"][f"{side}_pivot_slide"])
        assert metrics["after"][f"{side}_penetration"] <= metrics["before"][
            f"{side}_penetration"]


def test_footplant_glb_needs_a_glb_output_or_a_bvh(tmp_path, capsys):
    src = DATA / "cmu_walk.glb"
    assert main(["footplant", str(src), "-o", str(tmp_path / "x.gltf")]) == 1
    assert "a .gltf clip is written into a copy of the .gltf file the clip came from, got" in (
        capsys.readouterr().err)
    assert not (tmp_path / "x.gltf").exists()
    assert main(["footplant", str(src), "-o", str(tmp_path / "x.bvh")]) == 0
    assert read_bvh(tmp_path / "x.bvh").names == read_gltf(src).names


def test_view_reads_a_glb(tmp_path, capsys):
    out = tmp_path / "walk.gif"
    assert main(["view", str(DATA / "mixamo_rig.glb"), "--animation", "1", "--out", str(out),
                 "--view", "side", "--fps", "6"]) == 0
    assert out.stat().st_size > 0
    assert main(["view", str(DATA / "mixamo_rig.glb"), "--out", str(out)]) == 1
    assert "0 'Idle', 1 'Walk'" in capsys.readouterr().err


def _plant_y_and_z(tmp_path, motion, stem, y_args=(), z_args=()):
    """Plant a clip from a Y-up file and from its Z-up centimetre copy; returns both
    planted clips' world positions in the Y-up file's frame."""
    y_file, z_file = tmp_path / f"{stem}_y.bvh", tmp_path / f"{stem}_z.bvh"
    write_bvh(motion, y_file)
    write_bvh(export_axes(motion, up="z", scale=0.01), z_file)
    assert main(["footplant", str(y_file), "-o", str(tmp_path / "py.bvh"), *y_args]) == 0
    assert main(["footplant", str(z_file), "-o", str(tmp_path / "pz.bvh"), "--up", "z",
                 "--unit", "cm", *z_args]) == 0
    a = read_bvh(tmp_path / "py.bvh").world_positions()
    b = import_axes(read_bvh(tmp_path / "pz.bvh"), up="z", scale=0.01).world_positions()
    return a, b


def test_z_up_centimetre_walk_plants_like_the_y_up_original(tmp_path, capsys):
    """The built-in walk, with --floor given in each file's own units."""
    from limbik.placement.walk import walk_cycle

    a, b = _plant_y_and_z(tmp_path, walk_cycle(), "walk", ["--floor", "0.01"],
                          ["--floor", "1.0"])
    assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()


def test_z_up_centimetre_shared_clips_plant_like_the_y_up_originals(tmp_path, capsys,
                                                                    shared_data):
    for path in sorted((shared_data / "bvh").glob("*.bvh")):
        motion = trim(read_bvh(path), 0, 120)
        a, b = _plant_y_and_z(tmp_path, motion, path.stem)
        err = np.abs(a - b).max() / np.abs(a).max()
        assert err <= 1e-9, (path.name, err)


def test_terrain_file_in_a_z_up_centimetre_frame(tmp_path, capsys):
    """A height field saved in the Z-up centimetre file's frame (rows along the file's
    +Y, which is limbik's -Z) plants as the same ground saved Y up in metres."""
    from limbik.placement.walk import walk_cycle

    heights = 0.02 * np.random.default_rng(3).standard_normal((12, 9))
    cell, x0, z0 = 0.5, -2.0, -3.0
    np.save(tmp_path / "y.npy", heights)
    np.save(tmp_path / "z.npy", 100 * heights[::-1])
    y0_file = -(z0 + (heights.shape[0] - 1) * cell)
    a, b = _plant_y_and_z(
        tmp_path, walk_cycle(), "terrain",
        ["--terrain", str(tmp_path / "y.npy"), "--cell-size", str(cell),
         "--terrain-origin", str(x0), str(z0)],
        ["--terrain", str(tmp_path / "z.npy"), "--cell-size", str(100 * cell),
         "--terrain-origin", str(100 * x0), str(100 * y0_file)])
    assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()


@pytest.mark.parametrize(("name", "clip", "first"), [
    ("cmu_walk", "cmu_131_01_start_walk_stop_meters.bvh", 0),
    ("xia_walk", "xia_neutral_walk_01_000.bvh", 9)])
def test_glb_export_of_a_shared_clip_plants_like_the_bvh(shared_data, name, clip, first):
    """Blender's GLB of a BVH clip reads as the BVH does, and plants the same on the same
    ground and floor (glTF has no End Sites, so the floor is not estimated from toe
    tips there: it is given)."""
    glb_motion = read_gltf(DATA / f"{name}.glb")
    bvh_motion = trim(read_bvh(shared_data / "bvh" / clip), first, first + 12)
    leg = leg_length(bvh_motion)
    index = [glb_motion.names.index(n) for n in bvh_motion.names]
    assert np.abs(glb_motion.world_positions()[:, index]
                  - bvh_motion.world_positions()).max() < 1e-4 * leg
    ground = terrain_for_clip("flat", bvh_motion)
    floor = float(ground.height(0.0, 0.0))
    planted = {key: footplant(motion, ground, floor=floor)[0]
               for key, motion in (("glb", glb_motion), ("bvh", bvh_motion))}
    assert np.abs(planted["glb"].world_positions()[:, index]
                  - planted["bvh"].world_positions()).max() < 1e-4 * leg


def test_a_folder_of_glb_and_bvh_clips_plants_each_as_the_single_clip_command(tmp_path,
                                                                             capsys):
    """A library may mix glTF characters and BVH clips: each output is the file that
    ``limbik footplant CLIP -o OUT`` writes, and ``--animation`` selects in glTF clips
    only (a BVH clip has one motion)."""
    import shutil

    from limbik.placement.walk import walk_cycle

    folder = tmp_path / "mixed"
    (folder / "rigs").mkdir(parents=True)
    shutil.copy(DATA / "mixamo_rig.glb", folder / "rigs" / "mixamo.glb")
    shutil.copy(DATA / "cmu_walk.glb", folder / "cmu.glb")
    write_bvh(walk_cycle(cycles=1.0, frame_rate=60.0), folder / "walk.bvh")
    out = tmp_path / "out"
    assert main(["footplant", str(folder), "-o", str(out), "--jobs", "1", "--animation", "0",
                 "--no-progress"]) == 0
    capsys.readouterr()
    for name in ("rigs/mixamo.glb", "cmu.glb", "walk.bvh"):
        single = tmp_path / f"single{(folder / name).suffix}"
        argv = ["footplant", str(folder / name), "-o", str(single), "--no-progress", "--force"]
        if name.endswith(".glb"):
            argv += ["--animation", "0"]
        assert main(argv) == 0, capsys.readouterr()
        assert (out / name).read_bytes() == single.read_bytes(), name
    before, _ = glb(folder / "rigs" / "mixamo.glb")
    for a in mesh_and_skin_accessors(before):
        assert accessor_bytes(folder / "rigs" / "mixamo.glb", a) == accessor_bytes(
            out / "rigs" / "mixamo.glb", a)
    summary = json.loads((out / "summary.json").read_text())
    assert [r["status"] for r in summary["clips"]] == ["ok"] * 3
    assert summary["settings"]["animation"] == 0
