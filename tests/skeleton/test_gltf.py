"""glTF/GLB reading and writing: Blender's own joint positions, sampling, byte-identical
meshes and skins after a write, selection of skins and animations, malformed files."""

from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pygltflib
import pytest
from gltf_helpers import DATA, accessor_bytes, glb, leg_length, mesh_and_skin_accessors, raw_json
from hypothesis import given, settings
from hypothesis import strategies as st

import limbik
from limbik.errors import GltfError, InvalidInputError
from limbik.io.gltf import gltf_contents, read_gltf, write_gltf

CHARACTERS = ["cmu_walk", "xia_walk", "mixamo_rig"]


@pytest.mark.parametrize("name", CHARACTERS)
def test_joint_world_positions_equal_blenders_evaluation(name):
    """Every joint of every frame of every animation sits where Blender put it, within
    1e-4 of a leg (Blender's Z-up world (x, y, z) is glTF's (x, z, -y))."""
    reference = json.loads((DATA / f"{name}.json").read_text())
    for animation, data in reference["animations"].items():
        motion = read_gltf(DATA / f"{name}.glb", animation=animation
                           if len(reference["animations"]) > 1 else None)
        # Blender keys glTF time at frame / scene.render.fps (120), ignoring fps_base
        assert motion.frame_rate == pytest.approx(reference["fps"], rel=1e-3)
        assert motion.num_frames == len(data["frames"])
        ours = motion.world_positions()[:, [motion.names.index(n) for n in reference["names"]]]
        b = np.array(data["positions"])
        expected = np.stack([b[..., 0], b[..., 2], -b[..., 1]], axis=-1)
        err = np.abs(ours - expected).max()
        assert err < 1e-4 * leg_length(motion), (animation, err)


def test_mixamo_rig_legs_are_found_by_name():
    motion = read_gltf(DATA / "mixamo_rig.glb", animation="Walk")
    legs = limbik.find_legs(motion.skeleton)
    assert [motion.names[i] for i in legs[0].chain + (legs[0].toe,)] == [
        "mixamorig:LeftUpLeg", "mixamorig:LeftLeg", "mixamorig:LeftFoot",
        "mixamorig:LeftToeBase"]
    assert motion.names[legs[1].hip] == "mixamorig:RightUpLeg"


def test_several_animations_need_a_choice_and_the_error_lists_them():
    with pytest.raises(GltfError, match=r"2 animations: 0 'Idle', 1 'Walk'"):
        read_gltf(DATA / "mixamo_rig.glb")
    by_name = read_gltf(DATA / "mixamo_rig.glb", animation="Walk")
    by_index = read_gltf(DATA / "mixamo_rig.glb", animation=1)
    assert np.array_equal(by_name.rotations, by_index.rotations)
    with pytest.raises(GltfError, match=r"animation 'Run' to name exactly one of"):
        read_gltf(DATA / "mixamo_rig.glb", animation="Run")
    with pytest.raises(GltfError, match=r"animation index in \[0, 2\)"):
        read_gltf(DATA / "mixamo_rig.glb", animation=5)
    assert gltf_contents(DATA / "mixamo_rig.glb") == {"skins": ["Armature"],
                                                       "animations": ["Idle", "Walk"]}


@pytest.mark.parametrize(("name", "animation"), [("cmu_walk", None), ("mixamo_rig", "Walk")])
def test_written_file_keeps_meshes_skins_and_other_animations_byte_identical(
        tmp_path, name, animation):
    src = DATA / f"{name}.glb"
    motion = read_gltf(src, animation=animation)
    changed = motion.with_rotations(np.roll(motion.rotations, 3, axis=0))
    out = tmp_path / "out.glb"
    write_gltf(changed, out, source=src, animation=animation)
    before, _ = glb(src)
    after, _ = glb(out)
    raw_before, raw_after = raw_json(src), raw_json(out)
    for key in ("meshes", "skins", "materials", "nodes", "scenes", "asset"):
        assert raw_before.get(key) == raw_after.get(key), key
    accessors = mesh_and_skin_accessors(before)
    assert accessors
    for a in accessors:
        assert before.accessors[a] == after.accessors[a]
        assert accessor_bytes(src, a) == accessor_bytes(out, a)
    # the original binary chunk is a prefix of the new one
    assert after.binary_blob()[:len(before.binary_blob())] == before.binary_blob()
    for k, anim in enumerate(raw_before["animations"]):
        if anim["name"] != (animation or anim["name"]):
            assert raw_after["animations"][k] == anim
            for sampler in anim["samplers"]:
                for a in (sampler["input"], sampler["output"]):
                    assert accessor_bytes(src, a) == accessor_bytes(out, a)
    reloaded = read_gltf(out, animation=animation)
    assert reloaded.names == changed.names
    assert reloaded.skeleton == changed.skeleton
    assert reloaded.frame_time == changed.frame_time
    assert reloaded.num_frames == changed.num_frames
    # stored as float32: equal to that precision, and the same world positions
    dots = np.abs(np.sum(reloaded.rotations * changed.rotations, axis=-1))
    assert np.all(dots > 1 - 1e-12)
    assert np.abs(reloaded.world_positions() - changed.world_positions()).max() < (
        1e-6 * leg_length(motion))


def test_write_into_a_file_without_animations_adds_one(tmp_path):
    src = tmp_path / "still.glb"
    g = pygltflib.GLTF2.load_from_bytes((DATA / "cmu_walk.glb").read_bytes())
    blob = g.binary_blob()
    g.animations = []
    g.set_binary_blob(blob)
    src.write_bytes(b"".join(g.save_to_bytes()))
    rest = read_gltf(src)
    assert rest.num_frames == 1
    motion = read_gltf(DATA / "cmu_walk.glb")
    write_gltf(motion, tmp_path / "out.glb", source=src, name="planted")
    assert gltf_contents(tmp_path / "out.glb")["animations"] == ["planted"]
    back = read_gltf(tmp_path / "out.glb")
    assert back.num_frames == motion.num_frames
    assert np.abs(back.world_positions() - motion.world_positions()).max() < 1e-6


def test_write_rejects_a_motion_of_another_skeleton(tmp_path):
    motion = read_gltf(DATA / "cmu_walk.glb")
    with pytest.raises(InvalidInputError, match="motion must be of skin 0's skeleton"):
        write_gltf(motion, tmp_path / "x.glb", source=DATA / "mixamo_rig.glb",
                   animation="Walk")
    with pytest.raises(InvalidInputError, match=r"path must have the source's format"):
        write_gltf(motion, tmp_path / "x.gltf", source=DATA / "cmu_walk.glb")


# ---------------------------------------------------------------------- synthetic files
def _synthetic(tmp_path, *, interpolation, times, rotations=None, translations=None,
               stride=None, sparse=None, json_file=False, uri=None):
    """A two-joint skin: root (animated translation) and child (animated rotation)."""
    blob = bytearray()
    views, accessors = [], []

    def add(array, kind, view_stride=None, **extra):
        array = np.asarray(array, dtype="<f4")
        width = array.shape[1] if array.ndim == 2 else 1
        if view_stride:
            padded = np.zeros((array.shape[0], view_stride // 4), dtype="<f4")
            padded[:, :width] = array.reshape(len(array), width)
            data = padded.tobytes()
        else:
            data = array.tobytes()
        blob.extend(b"\0" * (-len(blob) % 4))
        views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(data),
                                          byteStride=view_stride))
        blob.extend(data)
        accessors.append(pygltflib.Accessor(bufferView=len(views) - 1, componentType=5126,
                                            count=len(array), type=kind, **extra))
        return len(accessors) - 1

    t = add(np.asarray(times)[:, None], "SCALAR")
    samplers, channels = [], []
    if rotations is not None:
        samplers.append(pygltflib.AnimationSampler(input=t, output=add(rotations, "VEC4"),
                                                   interpolation=interpolation))
        channels.append(pygltflib.AnimationChannel(
            sampler=len(samplers) - 1, target=pygltflib.AnimationChannelTarget(
                node=1, path="rotation")))
    if translations is not None:
        out = add(translations, "VEC3", stride)
        if sparse is not None:
            rows, values = sparse
            idx_view = len(views)
            blob.extend(b"\0" * (-len(blob) % 4))
            data = np.asarray(rows, dtype="<u2").tobytes()
            views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob),
                                              byteLength=len(data)))
            blob.extend(data)
            blob.extend(b"\0" * (-len(blob) % 4))
            data = np.asarray(values, dtype="<f4").tobytes()
            views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob),
                                              byteLength=len(data)))
            blob.extend(data)
            accessors[out].sparse = pygltflib.Sparse(
                count=len(rows), indices=pygltflib.AccessorSparseIndices(
                    bufferView=idx_view, componentType=5123),
                values=pygltflib.AccessorSparseValues(bufferView=idx_view + 1))
        samplers.append(pygltflib.AnimationSampler(input=t, output=out,
                                                   interpolation=interpolation))
        channels.append(pygltflib.AnimationChannel(
            sampler=len(samplers) - 1, target=pygltflib.AnimationChannelTarget(
                node=0, path="translation")))
    g = pygltflib.GLTF2(
        scene=0, scenes=[pygltflib.Scene(nodes=[0])],
        nodes=[pygltflib.Node(name="Hips", children=[1], translation=[0, 1, 0]),
               pygltflib.Node(name="LeftUpLeg", translation=[0.1, -0.1, 0])],
        skins=[pygltflib.Skin(joints=[0, 1])],
        animations=[pygltflib.Animation(name="a", channels=channels, samplers=samplers)],
        accessors=accessors, bufferViews=views,
        buffers=[pygltflib.Buffer(byteLength=len(blob))])
    if json_file:
        g.buffers[0].uri = uri or ("data:application/octet-stream;base64,"
                                   + base64.b64encode(bytes(blob)).decode())
        path = tmp_path / "synthetic.gltf"
        path.write_text(g.to_json())
        return path, bytes(blob)
    g.set_binary_blob(bytes(blob))
    path = tmp_path / "synthetic.glb"
    path.write_bytes(b"".join(g.save_to_bytes()))
    return path, bytes(blob)


def _axis_quat(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([np.sin(angle / 2) * axis, [np.cos(angle / 2)]])


def test_linear_rotations_are_slerped_and_resampled_to_the_key_rate(tmp_path):
    """Keys 1/10 s apart, with one gap of 3/10 s: frames at 10 fps follow the slerp."""
    times = np.array([0.0, 0.1, 0.4, 0.5])
    angles = np.array([0.0, 0.3, 1.5, 1.6])
    rots = np.array([_axis_quat((1, 0, 0), a) for a in angles])
    path, _ = _synthetic(tmp_path, interpolation="LINEAR", times=times, rotations=rots)
    motion = read_gltf(path)
    assert motion.frame_rate == pytest.approx(10.0) and motion.num_frames == 6
    angle = 2 * np.arctan2(motion.rotations[:, 1, 0], motion.rotations[:, 1, 3])
    expected = np.interp(np.arange(6) / 10, times, angles)
    assert np.abs(angle - expected).max() < 1e-6
    fast = read_gltf(path, fps=40)
    assert fast.num_frames == 21


def test_step_holds_each_key_until_the_next(tmp_path):
    times = np.array([0.0, 0.25, 0.5])
    trans = np.array([[0, 1, 0], [1, 1, 0], [2, 1, 0.5]])
    path, _ = _synthetic(tmp_path, interpolation="STEP", times=times, translations=trans)
    motion = read_gltf(path, fps=8)  # samples at 0, 1/8, 2/8, ...
    assert motion.num_frames == 5
    assert np.array_equal(motion.root_positions[:, 0], [0, 0, 1, 1, 2])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=9, max_size=9), st.floats(0.1, 0.9))
def test_cubicspline_follows_the_hermite_formula(tmp_path_factory, coefficients, u):
    """Translation keys with in-tangent, value, out-tangent triples; a sample between
    two keys equals the cubic Hermite polynomial of the specification."""
    tmp = tmp_path_factory.mktemp("cubic")
    c = np.array(coefficients).reshape(3, 3)
    times = np.array([0.0, 0.5])
    a0, v0, b0 = c[0], np.array([0.0, 1.0, 0.0]), c[1]
    a1, v1, b1 = c[2], np.array([1.0, 2.0, -1.0]), c[0]
    out = np.array([a0, v0, b0, a1, v1, b1])
    path, _ = _synthetic(tmp, interpolation="CUBICSPLINE", times=times, translations=out)
    fps = 1.0 / (0.5 * u)  # one sample at u, then past the end
    motion = read_gltf(path, fps=fps)
    v0, b0, a1, v1 = (np.asarray(x, np.float32).astype(float) for x in (v0, b0, a1, v1))
    d = 0.5
    expected = ((2 * u**3 - 3 * u**2 + 1) * v0 + (u**3 - 2 * u**2 + u) * d * b0
                + (-2 * u**3 + 3 * u**2) * v1 + (u**3 - u**2) * d * a1)
    assert np.abs(motion.root_positions[1] - expected).max() < 1e-5
    assert np.abs(motion.root_positions[0] - v0).max() < 1e-7


def test_cubicspline_rotations_with_zero_tangents_stay_unit_and_hit_keys(tmp_path):
    times = np.array([0.0, 0.1, 0.2])
    keys = [_axis_quat((0, 1, 0), a) for a in (0.0, 0.8, 0.2)]
    out = np.concatenate([[np.zeros(4), q, np.zeros(4)] for q in keys])
    path, _ = _synthetic(tmp_path, interpolation="CUBICSPLINE", times=times, rotations=out)
    motion = read_gltf(path, fps=50)
    assert np.allclose(np.linalg.norm(motion.rotations, axis=-1), 1.0)
    assert np.abs(motion.rotations[5, 1] - keys[1]).max() < 1e-7
    assert np.abs(motion.rotations[10, 1] - keys[2]).max() < 1e-7


def test_strided_and_sparse_accessors(tmp_path):
    """A translation accessor interleaved with 16-byte stride, two rows replaced sparsely."""
    trans = np.array([[0, 1, 0], [1, 1, 0], [2, 1, 0], [3, 1, 0]], float)
    path, _ = _synthetic(tmp_path, interpolation="LINEAR", times=np.arange(4) / 4,
                         translations=trans, stride=16,
                         sparse=([1, 3], [[9, 9, 9], [7, 7, 7]]))
    motion = read_gltf(path)
    expected = trans.copy()
    expected[1], expected[3] = 9, 7
    assert np.array_equal(motion.root_positions, expected)


def test_json_gltf_with_a_data_uri_reads_and_writes(tmp_path):
    trans = np.array([[0, 1, 0], [1, 1, 0], [2, 1, 0]], float)
    path, _ = _synthetic(tmp_path, interpolation="LINEAR", times=np.arange(3) / 30,
                         translations=trans, json_file=True)
    motion = read_gltf(path)
    assert np.array_equal(motion.root_positions, trans)
    moved = motion.__class__(motion.skeleton, motion.root_positions + 1, motion.rotations,
                             motion.frame_time)
    write_gltf(moved, tmp_path / "out.gltf", source=path)
    assert np.allclose(read_gltf(tmp_path / "out.gltf").root_positions, trans + 1)


def test_external_buffers_only_from_the_files_own_folder(tmp_path):
    trans = np.zeros((2, 3))
    path, blob = _synthetic(tmp_path, interpolation="LINEAR", times=np.arange(2) / 30,
                            translations=trans, json_file=True, uri="data.bin")
    (tmp_path / "data.bin").write_bytes(blob)
    assert read_gltf(path).num_frames == 2
    sub = tmp_path / "sub"
    sub.mkdir()
    path2, _ = _synthetic(sub, interpolation="LINEAR", times=np.arange(2) / 30,
                          translations=trans, json_file=True, uri="../data.bin")
    with pytest.raises(GltfError, match="in the glTF file's own folder"):
        read_gltf(path2)


def test_malformed_files_raise_gltf_errors(tmp_path):
    bad = tmp_path / "bad.glb"
    bad.write_bytes(b"glTF" + struct.pack("<II", 2, 40) + b"\0" * 8)
    with pytest.raises(GltfError, match=r"bad\.glb"):
        read_gltf(bad)
    text = tmp_path / "bad.gltf"
    text.write_text("{not json")
    with pytest.raises(GltfError, match=r"a glTF 2\.0 file"):
        read_gltf(text)
    no_skin = tmp_path / "empty.gltf"
    no_skin.write_text(json.dumps({"asset": {"version": "2.0"}, "nodes": [{}]}))
    with pytest.raises(GltfError, match="a file with a skin"):
        read_gltf(no_skin)
    # an accessor that runs past its buffer view
    path, _ = _synthetic(tmp_path, interpolation="LINEAR", times=np.arange(3) / 30,
                         translations=np.zeros((3, 3)), json_file=True)
    doc = json.loads(path.read_text())
    doc["accessors"][1]["count"] = 50
    path.write_text(json.dumps(doc))
    with pytest.raises(GltfError, match="to fit in bufferView"):
        read_gltf(path)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + kind + data


def _glb_file(*chunks: bytes, version: int = 2, length: int | None = None) -> bytes:
    body = b"".join(chunks)
    return b"glTF" + struct.pack("<II", version, 12 + len(body) if length is None
                                 else length) + body


def test_glb_containers_are_split_as_the_specification_says(tmp_path):
    """limbik reads the GLB container itself: chunks of unknown types are skipped, JSON
    padded with spaces or NULs and a UTF-8 byte order mark in a .gltf file are read, and
    the result equals the file's own reading."""
    raw = (DATA / "cmu_walk.glb").read_bytes()
    (n,) = struct.unpack("<I", raw[12:16])
    text = raw[20:20 + n]
    rest = raw[20 + n:]
    (m,) = struct.unpack("<I", rest[:4])
    blob = rest[8:8 + m]
    expected = read_gltf(DATA / "cmu_walk.glb")
    variants = {
        "unknown chunk first after JSON": _glb_file(
            _chunk(b"JSON", text), _chunk(b"XTRA", b"\1\2\3\4"), _chunk(b"BIN\0", blob)),
        "NUL padding": _glb_file(_chunk(b"JSON", text.rstrip() + b"\0\0\0\0"),
                                 _chunk(b"BIN\0", blob)),
        "trailing bytes after the stated length": _glb_file(
            _chunk(b"JSON", text), _chunk(b"BIN\0", blob),
            length=20 + len(text) + 8 + len(blob)) + b"junk",
    }
    for name, data in variants.items():
        path = tmp_path / "variant.glb"
        path.write_bytes(data)
        motion = read_gltf(path)
        assert np.array_equal(motion.rotations, expected.rotations), name
        assert np.array_equal(motion.root_positions, expected.root_positions), name
    document = json.loads(text)
    document["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(
        blob).decode()
    text_file = tmp_path / "bom.gltf"
    text_file.write_bytes(b"\xef\xbb\xbf" + json.dumps(document).encode())
    motion = read_gltf(text_file)
    assert np.array_equal(motion.rotations, expected.rotations)


@pytest.mark.parametrize(("data", "message"), [
    (_glb_file(_chunk(b"JSON", b"{}"), version=1), "a GLB file of version 2"),
    (b"glTF" + struct.pack("<II", 2, 12), "a header and a JSON chunk"),
    (_glb_file(_chunk(b"JSON", b'{"nodes": []}'), length=10_000), "a GLB length from 20"),
    (_glb_file(_chunk(b"BIN\0", b"\0" * 8), _chunk(b"JSON", b'{"nodes": []}')),
     "whose first chunk is JSON"),
    (_glb_file(struct.pack("<I", 400) + b"JSON" + b"{}  "), "chunk 0 to end within"),
    (_glb_file(_chunk(b"JSON", b'{"nodes": [], "buffers": [{"byteLength": 8}]}')),
     "buffer 0 to be the GLB binary chunk"),
    (_glb_file(_chunk(b"JSON", b'{"nodes": [], "buffers": [{"byteLength": -1}]}'),
               _chunk(b"BIN\0", b"\0" * 8)), "byteLength as an integer >= 0"),
    (_glb_file(_chunk(b"JSON", b'{"nodes": [], "buffers": 3}')), "buffers as a list"),
    (_glb_file(_chunk(b"JSON", b"[1, 2]")), "no nodes list"),
    (_glb_file(_chunk(b"JSON", b"[" * 100_000)), "a glTF 2.0 file"),
])
def test_malformed_glb_containers_name_what_is_wrong(tmp_path, data, message):
    path = tmp_path / "bad.glb"
    path.write_bytes(data)
    with pytest.raises(GltfError, match=message):
        read_gltf(path)
    with pytest.raises(GltfError, match=message):
        gltf_contents(path)


@pytest.mark.parametrize("frame_time", [0.008333, 0.033333, 1 / 60])
@pytest.mark.parametrize("frames", [2, 3, 10, 327])
def test_a_clip_at_a_bvh_frame_time_reloads_with_every_frame(tmp_path, frame_time, frames):
    """A BVH's 0.008333 s is 1/120 s to 4e-5: the reloaded clip has the written frames
    on their keys (its frame time the whole rate), not one frame fewer."""
    motion = read_gltf(DATA / "cmu_walk.glb")
    rows = np.arange(frames) % motion.num_frames
    clip = limbik.Motion(motion.skeleton, motion.root_positions[rows],
                         motion.rotations[rows], frame_time)
    out = tmp_path / "out.glb"
    write_gltf(clip, out, source=DATA / "cmu_walk.glb")
    reloaded = read_gltf(out)
    assert reloaded.num_frames == frames
    assert reloaded.frame_time == pytest.approx(frame_time, rel=1e-3)
    assert np.abs(reloaded.world_positions() - clip.world_positions()).max() < (
        1e-6 * leg_length(motion))


def test_a_gltf_with_a_buffer_file_written_to_another_folder_reloads(tmp_path):
    """A .gltf whose buffer is a file beside it (rig.bin) is written elsewhere with that
    buffer embedded (a glTF's buffers are read from its own folder) and its image named
    from there; written beside its source it keeps naming rig.bin."""
    raw = (DATA / "cmu_walk.glb").read_bytes()
    json_length = struct.unpack("<I", raw[12:16])[0]
    document = json.loads(raw[20:20 + json_length])
    bin_length = struct.unpack("<I", raw[20 + json_length:24 + json_length])[0]
    blob = raw[28 + json_length:28 + json_length + bin_length]
    document["buffers"] = [{"byteLength": len(blob), "uri": "rig.bin"}]
    document["images"] = [{"uri": "skin%20colour.png"}]
    (tmp_path / "ext").mkdir()
    (tmp_path / "other").mkdir()
    source = tmp_path / "ext" / "rig.gltf"
    source.write_text(json.dumps(document))
    (tmp_path / "ext" / "rig.bin").write_bytes(blob + bytes(64))  # more than declared
    motion = read_gltf(source)
    changed = motion.with_rotations(np.roll(motion.rotations, 2, axis=0))
    for out in (tmp_path / "other" / "planted.gltf", tmp_path / "ext" / "planted.gltf"):
        write_gltf(changed, out, source=source)
        reloaded = read_gltf(out)
        assert np.abs(reloaded.world_positions() - changed.world_positions()).max() < (
            1e-6 * leg_length(motion))
        written = json.loads(out.read_text())
        beside = out.parent == source.parent
        assert (written["buffers"][0]["uri"] == "rig.bin") == beside
        assert base64.b64decode(written["buffers"][0]["uri"].partition(",")[2]) == blob or beside
        assert written["images"][0]["uri"] == ("skin%20colour.png" if beside
                                               else "../ext/skin%20colour.png")


def test_a_motion_without_frames_is_not_written_as_an_animation(tmp_path):
    motion = read_gltf(DATA / "cmu_walk.glb")
    empty = limbik.Motion(motion.skeleton, motion.root_positions[:0], motion.rotations[:0],
                          motion.frame_time)
    with pytest.raises(InvalidInputError, match="motion must have at least one frame"):
        write_gltf(empty, tmp_path / "out.glb", source=DATA / "cmu_walk.glb")
    assert not (tmp_path / "out.glb").exists()


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_planting_a_file_again_in_place_does_not_grow_it(tmp_path, suffix):
    """The keys a write left are dropped by the next write over the same animation; the
    file's own bytes (meshes, skins, the other animation, its first Walk) stay."""
    src = DATA / "mixamo_rig.glb"
    path = tmp_path / f"rig{suffix}"
    motion = read_gltf(src, animation="Walk")
    if suffix == ".gltf":  # the same document with its binary chunk as a base64 buffer
        document, _ = glb(src)
        blob = document.binary_blob()
        text = raw_json(src)
        text["buffers"] = [{"byteLength": len(blob), "uri": "data:application/octet-stream;"
                            "base64," + base64.b64encode(blob).decode()}]
        path.write_text(json.dumps(text))
    else:
        path.write_bytes(src.read_bytes())
    sizes = []
    for k in range(3):
        changed = motion.with_rotations(np.roll(motion.rotations, k + 1, axis=0))
        write_gltf(changed, path, source=path, animation="Walk")
        sizes.append(path.stat().st_size)
        reloaded = read_gltf(path, animation="Walk")
        assert np.abs(reloaded.world_positions() - changed.world_positions()).max() < (
            1e-6 * leg_length(motion))
        assert np.array_equal(read_gltf(path, animation="Idle").rotations,
                              read_gltf(src, animation="Idle").rotations)
    assert sizes[0] == sizes[1] == sizes[2]
    written = raw_json(path) if suffix == ".glb" else json.loads(path.read_text())
    assert len(written["buffers"]) == (1 if suffix == ".glb" else 2)
    if suffix == ".glb":  # meshes and skins: the same accessors over the same bytes
        before, _ = glb(src)
        for a in mesh_and_skin_accessors(before):
            assert accessor_bytes(src, a) == accessor_bytes(path, a)


def test_long_clips_keep_every_key_and_an_fps_asked_for_samples_at_it(tmp_path):
    """30000 keys at 0.008333 s (their float32 times drifting from 1/120 s by 1.2 frames
    by the end) come back as 30000 frames on their keys; ``fps=`` resamples at exactly
    that rate."""
    motion = read_gltf(DATA / "cmu_walk.glb")
    out = tmp_path / "long.glb"
    for frames, frame_time in ((30000, 0.008333), (1000, 1 / 24)):
        rows = np.arange(frames) % motion.num_frames
        clip = limbik.Motion(motion.skeleton, motion.root_positions[rows],
                             motion.rotations[rows], frame_time)
        write_gltf(clip, out, source=DATA / "cmu_walk.glb")
        reloaded = read_gltf(out)
        assert reloaded.num_frames == frames
        assert np.abs(reloaded.root_positions - clip.root_positions).max() < 1e-6 * leg_length(
            motion)
    resampled = read_gltf(out, fps=30)
    assert resampled.frame_time == 1 / 30
    assert resampled.num_frames == int(999 / 24 * 30) + 1  # frames within the clip's 41.625 s
