"""``limbik solve``: one problem from options or a JSON file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from limbik import two_bone
from limbik.app.cli import main


def solve_json(capsys, *argv):
    assert main(["solve", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_two_bone_from_options_matches_the_library(capsys):
    out = solve_json(capsys, "--lengths", "0.3", "0.25", "--target", "0.2", "0.3", "0.1",
                     "--pole", "0", "0", "1")
    expected = two_bone(np.zeros(3), np.array([0.2, 0.3, 0.1]), 0.3, 0.25,
                        pole=np.array([0.0, 0.0, 1.0]))
    assert out["method"] == "two_bone" and out["reached"] is True
    np.testing.assert_allclose(out["positions"], expected.positions, atol=1e-12)
    assert {"positions", "reached", "error", "iterations", "target"} <= set(out)


def test_human_output(capsys):
    assert main(["solve", "--lengths", "0.3", "0.25", "--target", "0.2", "0.3", "0.1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("two_bone: reached, error")
    assert "positions (3 joints, root first):" in text
    assert "(0.2, 0.3, 0.1)" in text


@pytest.mark.parametrize("policy, reached", [("extend", False), ("push_root", True),
                                             ("stretch", True)])
def test_unreachable_policies(capsys, policy, reached):
    out = solve_json(capsys, "--lengths", "0.3", "0.2", "--target", "0.6", "0", "0",
                     "--unreachable", policy, "--max-stretch", "1.5")
    assert out["reached"] is reached
    pos = np.array(out["positions"])
    assert np.all(np.isfinite(pos))
    if policy == "push_root":
        np.testing.assert_allclose(pos[-1], [0.6, 0, 0], atol=1e-12)  # the root moved
        assert pos[0, 0] > 0
        np.testing.assert_allclose(out["root_offset"], [0.1, 0, 0], atol=1e-12)
    else:
        assert "root_offset" not in out


@pytest.mark.parametrize("method", ["fabrik", "ccd", "lm", "transpose", "pinv", "dls", "svd-dls"])
def test_point_chain_methods_reach(capsys, method):
    target = [0.3, 0.4, 0.1]
    out = solve_json(capsys, "--lengths", "0.2", "0.2", "0.2", "0.2", "--target",
                     *map(str, target), "--method", method, "--max-iterations", "500")
    assert out["method"] == method and out["reached"] is True
    pos = np.array(out["positions"])
    assert np.linalg.norm(pos[-1] - target) <= 1e-5
    if method in ("fabrik", "ccd"):  # point chains keep their bone lengths
        np.testing.assert_allclose(np.linalg.norm(np.diff(pos, axis=0), axis=1), 0.2,
                                   atol=1e-9)
    else:
        assert len(out["q"]) == 12  # four ball joints


def test_more_than_two_lengths_default_to_fabrik_from_root_and_direction(capsys):
    out = solve_json(capsys, "--lengths", "0.5", "0.5", "0.5", "--target", "0.5", "1.5", "0.2",
                     "--root", "0", "1", "0", "--direction", "0", "0", "-1")
    assert out["method"] == "fabrik" and out["reached"] is True
    assert out["positions"][0] == [0.0, 1.0, 0.0]


def test_close_gap_reaches_the_folded_edge(tmp_path, capsys):
    argv = ["--lengths", "3", "1", "1", "--target", "0", "1.05", "0"]
    assert solve_json(capsys, *argv)["reached"] is False  # FABRIK alone stops short
    out = solve_json(capsys, *argv, "--close-gap")
    assert out["reached"] is True and out["error"] < 1e-9
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"lengths": [3, 1, 1], "target": [0, 1.05, 0],
                                   "close_gap": True}))
    assert solve_json(capsys, str(problem))["positions"] == out["positions"]
    assert main(["solve", *argv, "--method", "ccd", "--close-gap"]) == 1
    assert "close_gap does not apply to method ccd" in capsys.readouterr().err


def test_problem_file_and_override(tmp_path, capsys):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"lengths": [0.3, 0.25], "target": [0.2, 0.3, 0.1],
                                   "unreachable": "stretch", "max_stretch": 1.2}))
    out = solve_json(capsys, str(problem))
    assert out["reached"] is True
    out = solve_json(capsys, str(problem), "--target", "1", "0", "0")
    assert out["target"] == [1.0, 0.0, 0.0] and out["reached"] is False
    np.testing.assert_allclose(np.linalg.norm(np.diff(out["positions"], axis=0), axis=1),
                               [0.36, 0.3], atol=1e-12)


def test_urdf_problem(tmp_path, capsys):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text("""<robot name="arm">
      <link name="base"/><link name="a"/><link name="b"/><link name="tip"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
      <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
        <origin xyz="0.5 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
      <joint name="j3" type="fixed"><parent link="b"/><child link="tip"/>
        <origin xyz="0.4 0 0"/></joint>
    </robot>""")
    (tmp_path / "p.json").write_text(json.dumps(
        {"urdf": "arm.urdf", "base": "base", "tip": "tip", "target": [0.3, 0.6, 0.0],
         "method": "svd-dls"}))
    out = solve_json(capsys, str(tmp_path / "p.json"))
    assert out["method"] == "svd-dls" and out["reached"] is True and len(out["q"]) == 2
    assert main(["solve", "--urdf", str(urdf), "--base", "base", "--tip", "tip",
                 "--target", "0.3", "0.6", "0", "--method", "ccd"]) == 0
    assert capsys.readouterr().out.startswith("ccd: reached")


@pytest.mark.parametrize("argv, message", [
    (["--target", "1", "1", "1"], "give either --lengths .* or --urdf FILE .*got neither"),
    (["--lengths", "0.3", "0.2"], "target is required"),
    (["--lengths", "0.3", "--target", "1", "1", "1"], "lengths must be two or more"),
    (["--lengths", "0.3", "-1", "--target", "1", "1", "1"], "lengths must be > 0"),
    (["--lengths", "0.3", "0.2", "--target", "nan", "1", "1"], "target must be finite"),
    (["--lengths", "0.3", "0.2", "0.1", "--target", "1", "1", "1", "--method", "two_bone"],
     "method two_bone needs exactly two --lengths, got 3"),
    (["--lengths", "0.3", "0.2", "--target", "1", "1", "1", "--method", "newton"],
     "method must be one of two_bone, fabrik"),
    (["--lengths", "0.3", "0.2", "--target", "1", "1", "1", "--tolerance", "0.1"],
     "option tolerance does not apply to method two_bone"),
    (["--lengths", "0.3", "0.2", "--target", "1", "1", "1", "--pole", "0", "1", "0",
      "--reference", "0", "0", "1"], "pass at most one of pole, reference"),
    (["--lengths", "0.3", "0.2", "0.1", "--target", "1", "1", "1", "--pole", "0", "1", "0"],
     "option pole does not apply to method fabrik"),
    (["--lengths", "0.3", "0.2", "--target", "1", "1", "1", "--max-stretch", "0.5",
      "--unreachable", "stretch"], "max_stretch must be >= 1"),
    (["--lengths", "0.3", "0.2", "0.2", "--target", "1", "1", "1", "--direction", "0", "0",
      "0"], "direction must be a non-zero vector"),
    (["--urdf", "x.urdf", "--lengths", "1", "1", "--target", "1", "1", "1"], "got both"),
    (["--urdf", "x.urdf", "--target", "1", "1", "1", "--method", "fabrik"],
     "method fabrik needs --lengths"),
    (["--urdf", "x.urdf", "--base", "b", "--target", "1", "1", "1"], "--urdf needs --tip"),
])
def test_bad_input_is_one_line(capsys, argv, message):
    import re

    assert main(["solve", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("limbik: error: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_bad_problem_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["solve", str(bad)]) == 1
    assert "must be JSON, got an error at line 1" in capsys.readouterr().err
    bad.write_text("[1, 2]")
    assert main(["solve", str(bad)]) == 1
    assert "must hold a JSON object, got list" in capsys.readouterr().err
    bad.write_text(json.dumps({"lengths": [1, 1], "target": [1, 1, 1], "pol": [0, 1, 0]}))
    assert main(["solve", str(bad)]) == 1
    assert "got pol" in capsys.readouterr().err
    bad.write_text(json.dumps({"lengths": [1, 1], "target": [1, 1]}))
    assert main(["solve", str(bad)]) == 1
    assert "target must have shape (..., 3)" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "missing.json")]) == 1
    assert "limbik: error:" in capsys.readouterr().err


def test_help_documents_the_format(capsys):
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = capsys.readouterr().out
    assert "problem file" in text and "--lengths" in text and "svd-dls" in text


@pytest.mark.parametrize(("content", "message"), [
    (b'{"lengths": [1, 1], "target": [1, 1, 0], "pole": "\xff"}', "must be UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"lengths": [1, 1], "target": [1, 1, 0], "max_iterations": 1' + b"0" * 5000 + b"}",
     "must be plain JSON"),
    # a key given twice: JSON would keep the last one without a word
    (b'{"lengths": [1, 1], "target": [1, 1, 0], "target": [0, 1, 1]}',
     "must be plain JSON, got the key 'target' twice in one object"),
])
def test_problem_files_that_are_not_plain_json(tmp_path, capsys, content, message):
    problem = tmp_path / "p.json"
    problem.write_bytes(content)
    assert main(["solve", str(problem)]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("q0", "message"), [
    ([[1], [1, 2]], "q0 must be a numeric array"),
    ("abc", "q0 must be a numeric array"),
    ([True, False], "q0 must be a numeric array"),
    ([1.0, 2.0, 3.0], "q0 must be one set of 2 joint values, shape (2,)"),
])
def test_bad_q0_in_a_problem_file(tmp_path, capsys, q0, message):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>'
        '<origin xyz="0 0 1"/><axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint>'
        '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/>'
        '<origin xyz="1 0 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1"/></joint>'
        "</robot>")
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"urdf": "arm.urdf", "base": "a", "tip": "c",
                                   "target": [1, 0, 1], "method": "ccd", "q0": q0}))
    assert main(["solve", str(problem)]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_ctrl_c_anywhere_in_main_exits_130_quietly(monkeypatch, capsys):
    import limbik.app.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["solve"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_lengths_too_large_for_a_joint_chain_name_lengths(capsys):
    from limbik.app.cli import EXIT_ERROR, main

    code = main(["solve", "--lengths", "1e200", "1e200", "1e200", "--target", "1", "0", "0",
                 "--method", "dls"])
    assert code == EXIT_ERROR
    assert "lengths and root must keep the chain within" in capsys.readouterr().err


def test_a_problem_file_that_cannot_be_read_is_named_as_one(tmp_path, capsys):
    from limbik.app.cli import main

    assert main(["solve", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"limbik: error: problem file: cannot read {str(tmp_path / 'missing.json')!r}:"
                   " No such file or directory")
    assert main(["solve", str(tmp_path)]) == 1
    assert "problem file: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["-1e-1", "-1E-1", "-.1", "-0.1", "-1.e-1", "-10e-2"])
def test_negative_numbers_in_any_form_are_numbers(capsys, text):
    out = solve_json(capsys, "--lengths", "0.3", "0.25", "--target", "0.2", text, "0.1")
    np.testing.assert_allclose(out["target"], [0.2, -0.1, 0.1], rtol=1e-15)


def test_a_negative_floor_in_exponent_form_is_the_floor():
    from limbik.app.cli import build_parser

    args = build_parser().parse_args(["footplant", "clip.bvh", "--floor", "-2.5e-2"])
    assert args.floor == -0.025 and args.input == ["clip.bvh"]


def test_an_option_after_an_option_is_still_an_option():
    from limbik.app.cli import UsageError, build_parser

    with pytest.raises(UsageError, match="--floor: expected one argument"):
        build_parser().parse_args(["footplant", "clip.bvh", "--floor", "-o", "x.bvh"])

