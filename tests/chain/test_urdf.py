"""URDF import: defaults, every error is a URDFError with a location, and fuzzed files raise nothing else."""

from __future__ import annotations

import os

import numpy as np
import pytest

from limbik import load_urdf
from limbik.chain import parse_urdf
from limbik.chain.urdf import read_urdf_tree
from limbik.errors import URDFError

GOOD = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper"/>
  <link name="lower"/>
  <link name="hand"/>
  <link name="elsewhere"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="upper"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/>
    <child link="lower"/>
    <origin xyz="1 0 0"/>
  </joint>
  <joint name="wrist" type="fixed">
    <parent link="lower"/>
    <child link="hand"/>
    <origin xyz="0.5 0 0" rpy="0.1 0.2 0.3"/>
  </joint>
</robot>
"""


def test_defaults_axis_x_and_identity_origin():
    chain = parse_urdf(GOOD, "base", "hand")
    assert chain.dof == 2 and chain.n_joints == 3
    np.testing.assert_array_equal(chain.joints[1].axis, [1, 0, 0])  # omitted <axis>
    assert chain.joints[1].type == "continuous"
    np.testing.assert_allclose(chain.forward([0, 0]).position, [1.5, 0, 0.5], atol=1e-12)
    # a sub-chain
    assert parse_urdf(GOOD, "upper", "lower").dof == 1


def test_load_urdf_reads_a_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(GOOD)
    assert load_urdf(path, "base", "hand").name == "base->hand"


def replace(old, new):
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize(("text", "pattern"), [
    (GOOD.replace("</robot>", ""), r"<string>:\d+: expected well-formed XML"),
    (replace('<child link="upper"/>', "<child link='upper'>"), r"<string>:14: expected well-formed XML, got mismatched tag"),
    (replace('<parent link="upper"/>', ""), r"<string>:15: expected a <parent> element in joint 'elbow'"),
    (replace('xyz="0 0 0.5"', 'xyz="0 zero 0.5"'),
     r":11: expected 3 finite numbers in 'xyz' of joint 'shoulder', got '0 zero 0.5'"),
    (replace('xyz="0 0 0.5"', 'xyz="0 0"'), r"3 finite numbers in 'xyz'"),
    (replace('xyz="0 0 0.5"', 'xyz="0 nan 0"'), r"3 finite numbers in 'xyz'"),
    (replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'), r"a non-zero axis for joint 'shoulder'"),
    (replace('<axis xyz="0 0 1"/>', "<axis/>"), r"attribute 'xyz' on <axis> of joint 'shoulder'"),
    (replace('lower="-1"', 'lower="2"'), r"lower <= upper in the limits of joint 'shoulder'"),
    (replace('type="continuous"', 'type="floating"'), r"a joint type in \(revolute, continuous"),
    (replace('<joint name="elbow" type="continuous">', '<joint name="elbow">'),
     r"attribute 'type' on joint 'elbow'"),
    (replace('<link name="upper"/>', "<link/>"), r"attribute 'name' on <link>"),
    (GOOD.replace("<robot", "<robt").replace("</robot>", "</robt>"), r"expected a <robot> root element"),
    ("", r"expected well-formed XML"),
])
def test_malformed_files_raise_urdf_error(text, pattern):
    with pytest.raises(URDFError, match=pattern):
        parse_urdf(text, "base", "hand")


def test_unknown_link_lists_the_links():
    with pytest.raises(URDFError, match="tip_link to be one of the links: base, upper, lower, "
                                        "hand, elsewhere, got 'hnd'"):
        parse_urdf(GOOD, "base", "hnd")


def test_unconnected_links():
    with pytest.raises(URDFError, match="a chain of joints from 'base' to 'elsewhere'"):
        parse_urdf(GOOD, "base", "elsewhere")
    with pytest.raises(URDFError, match="a chain of joints from 'hand' to 'base'"):
        parse_urdf(GOOD, "hand", "base")  # reversed
    with pytest.raises(URDFError, match="different base_link and tip_link"):
        parse_urdf(GOOD, "hand", "hand")


def test_error_carries_path_and_line(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text(replace('<parent link="upper"/>', ""))
    with pytest.raises(URDFError) as info:
        load_urdf(path, "base", "hand")
    assert info.value.path == str(path) and info.value.line == 15
    with pytest.raises(URDFError, match="a readable URDF file"):
        load_urdf(tmp_path / "missing.urdf", "base", "hand")


def test_a_cycle_is_not_a_chain():
    text = GOOD.replace(
        "</robot>", '<joint name="loop" type="fixed"><parent link="hand"/>'
                    '<child link="base"/></joint></robot>')
    # a URDF's joints form a tree: a loop is refused, whatever chain is asked for
    for base, tip in (("upper", "base"), ("base", "hand")):
        with pytest.raises(URDFError, match=r"joints that form a tree \(no cycle\), got a "
                           "cycle through link"):
            parse_urdf(text, base, tip)


def fuzz_cases(data: bytes, rng: np.random.Generator, n: int):
    for _ in range(n):
        kind = rng.integers(4)
        if kind == 0:  # truncated
            yield data[: rng.integers(len(data))]
        elif kind == 1:  # random bytes overwritten
            b = bytearray(data)
            for i in rng.integers(len(b), size=rng.integers(1, 8)):
                b[i] = int(rng.integers(256))
            yield bytes(b)
        elif kind == 2:  # a slice deleted
            i, j = sorted(rng.integers(len(data), size=2))
            yield data[:i] + data[j:]
        else:  # characters that matter to XML and numbers sprinkled in
            b = bytearray(data)
            for i in rng.integers(len(b), size=rng.integers(1, 6)):
                b[i] = ord(rng.choice(list('<>"/= -e.0x')))
            yield bytes(b)


def test_fuzzed_files_raise_only_urdf_error(shared_data):
    """Truncated and garbled copies of the real robots either load or raise URDFError."""
    rng = np.random.default_rng(2024)
    cases = [("urdf/panda_example-robot-data.urdf", "panda_link0", "panda_hand_tcp"),
             ("urdf/kuka_iiwa_pybullet_data.urdf", "lbr_iiwa_link_0", "lbr_iiwa_link_7")]
    outcomes = {"loaded": 0, "error": 0}
    for name, base, tip in cases:
        data = (shared_data / name).read_bytes()
        for text in fuzz_cases(data, rng, 300):
            try:
                chain = parse_urdf(text, base, tip)
            except URDFError:
                outcomes["error"] += 1
            else:
                outcomes["loaded"] += 1
                assert np.all(np.isfinite(chain.forward(np.zeros(chain.dof)).position))
    assert outcomes["error"] > 100 and outcomes["loaded"] > 10


def test_fuzzed_small_file_as_text():
    rng = np.random.default_rng(5)
    for text in fuzz_cases(GOOD.encode(), rng, 400):
        try:
            parse_urdf(text.decode("latin-1"), "base", "hand")
        except URDFError:
            pass


def test_missing_limit_loads_as_unlimited():
    text = replace('<limit lower="-1" upper="1" effort="1" velocity="1"/>', "")
    chain = parse_urdf(text, "base", "hand")
    assert chain.lower[0] == -np.inf and chain.upper[0] == np.inf


@pytest.mark.parametrize("read", [lambda p: load_urdf(p, "base", "hand"), read_urdf_tree])
def test_a_file_that_cannot_be_read_is_a_urdf_error_naming_it(tmp_path, read):
    folder = tmp_path / "folder.urdf"
    folder.mkdir()
    locked = tmp_path / "locked.urdf"
    locked.write_text(GOOD)
    locked.chmod(0)
    cases = [(tmp_path / "missing.urdf", "No such file"), (folder, "Is a directory"),
             (None, "None"), (5, "int"), ("nul\0.urdf", "NUL")]
    if os.geteuid() != 0:  # root reads any file
        cases.append((locked, "Permission denied"))
    for path, reason in cases:
        with pytest.raises(URDFError, match=f"expected path to name a readable URDF file, "
                           f"got .*{reason}"
                           ) as info:
            read(path)
        assert info.value.path == str(path) and info.value.line == 0


@pytest.mark.parametrize(("edit", "message"), [
    ('<link name="base"/></robot>', "link names that are unique, got a second link 'base'"),
    ('<joint name="loop" type="fixed"><parent link="hand"/><child link="ghost"/></joint>'
     "</robot>", "a child link of joint 'loop' declared as a <link>, got 'ghost'"),
])
def test_inconsistent_links_and_joints_are_refused(edit, message):
    with pytest.raises(URDFError, match=message):
        parse_urdf(GOOD.replace("</robot>", edit), "base", "hand")


def test_a_long_chain_of_links_parses():
    n = 5000
    links = "".join(f'<link name="l{i}"/>' for i in range(n))
    joints = "".join(f'<joint name="j{i}" type="fixed"><parent link="l{i}"/>'
                     f'<child link="l{i + 1}"/></joint>' for i in range(n - 1))
    assert parse_urdf(f'<robot name="r">{links}{joints}</robot>', "l0", "l10").n_joints == 10


class _CountedName(str):
    """A link name that counts how often it is compared or hashed."""

    calls = 0

    def __eq__(self, other):
        _CountedName.calls += 1
        return str.__eq__(self, other)

    def __hash__(self):
        _CountedName.calls += 1
        return str.__hash__(self)


def _robot_of(links: int, shuffled: np.random.Generator):
    """An element tree of ``links`` links joined by revolute joints into chains of 1 to 4
    joints, with names that count their comparisons; links and joints in random order."""
    from limbik.chain.urdf import _Element

    names = [_CountedName(f"link{k}") for k in range(links)]
    children = [_Element("link", {"name": name}, 1 + k) for k, name in enumerate(names)]
    joints = [_Element("joint", {"name": f"j{k}", "type": "revolute"}, links + k, [
        _Element("parent", {"link": names[k - 1]}, 0),
        _Element("child", {"link": names[k]}, 0)]) for k in range(links) if k % 5]
    order = shuffled.permutation(len(children) + len(joints))
    everything = children + joints
    return _Element("robot", {"name": "r"}, 0, [everything[i] for i in order])


def test_reading_the_links_and_joints_is_linear_in_their_number():
    """Name comparisons and hashes per link stay the same from 2,000 to 32,000 links
    (a search of a list for duplicate names would make them grow with the file)."""
    from limbik.chain.urdf import _links_and_joints

    rng = np.random.default_rng(7)
    per_link = []
    for links in (2_000, 8_000, 32_000):
        root = _robot_of(links, rng)
        _CountedName.calls = 0
        names, by_child = _links_and_joints(root, "generated.urdf")
        assert len(names) == links and len(by_child) == links - links // 5
        per_link.append(_CountedName.calls / links)
    assert max(per_link) < 20, per_link
    assert max(per_link) < 1.2 * min(per_link), per_link


def test_a_duplicate_link_among_many_is_found():
    text = "<robot name='r'>" + "".join(f"<link name='l{k}'/>" for k in range(20_000))
    text += "<link name='l12345'/></robot>"
    with pytest.raises(URDFError, match=r":1: expected link names that are unique, got a second link 'l12345'"):
        parse_urdf(text, "l0", "l1")
