"""Leg and arm detection: naming schemes, topology fallback, overrides, failures."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik.errors import DetectionError, InvalidInputError


def make_skeleton(names: dict[str, str], *, spine: bool = True) -> limbik.Skeleton:
    """A biped in rest pose (Y up, facing +Z, left = +X), with names by role.

    ``names`` maps roles like 'L.hip' to joint names; unnamed roles get neutral names.
    """
    layout = [  # role, parent role, offset
        ("root", None, (0, 1.0, 0)),
    ]
    for side, sx in (("L", 1.0), ("R", -1.0)):
        layout += [
            (f"{side}.hip", "root", (0.1 * sx, -0.05, 0)),
            (f"{side}.knee", f"{side}.hip", (0, -0.45, 0)),
            (f"{side}.ankle", f"{side}.knee", (0, -0.42, 0)),
            (f"{side}.toe", f"{side}.ankle", (0, -0.05, 0.12)),
            (f"{side}.toe_end", f"{side}.toe", (0, 0, 0.05)),
        ]
    if spine:
        layout += [("spine", "root", (0, 0.2, 0)), ("chest", "spine", (0, 0.25, 0)),
                   ("head", "chest", (0, 0.3, 0))]
        for side, sx in (("L", 1.0), ("R", -1.0)):
            layout += [
                (f"{side}.clavicle", "chest", (0.05 * sx, 0.2, 0)),
                (f"{side}.shoulder", f"{side}.clavicle", (0.12 * sx, 0, 0)),
                (f"{side}.elbow", f"{side}.shoulder", (0.28 * sx, 0, 0)),
                (f"{side}.wrist", f"{side}.elbow", (0.25 * sx, 0, 0)),
                (f"{side}.finger", f"{side}.wrist", (0.08 * sx, 0, 0)),
            ]
    roles = [r for r, _, _ in layout]
    # depth-first order so parents come first
    order: list[str] = []

    def visit(role):
        order.append(role)
        for r, p, _ in layout:
            if p == role:
                visit(r)

    visit("root")
    index = {r: i for i, r in enumerate(order)}
    by_role = {r: (p, o) for r, p, o in layout}
    assert set(order) == set(roles)
    joint_names = [names.get(r, f"j{index[r]}") for r in order]
    parents = [-1 if by_role[r][0] is None else index[by_role[r][0]] for r in order]
    offsets = [by_role[r][1] for r in order]
    return limbik.Skeleton(joint_names, parents, offsets)


def role_names(pattern: dict[str, str], sides=("Left", "Right")) -> dict[str, str]:
    out = {}
    for side, word in zip(("L", "R"), sides, strict=True):
        for role, template in pattern.items():
            out[f"{side}.{role}"] = template.format(side=word)
    return out


SCHEMES = {
    "cmu": role_names({"hip": "{side}Hip", "knee": "{side}Knee", "ankle": "{side}Ankle",
                       "toe": "{side}Toe", "clavicle": "{side}Collar",
                       "shoulder": "{side}Shoulder", "elbow": "{side}Elbow",
                       "wrist": "{side}Wrist", "finger": "{side}Fingers"}),
    "cmu_uplegs": role_names({"hip": "{side}UpLeg", "knee": "{side}Leg", "ankle": "{side}Foot",
                              "toe": "{side}ToeBase", "clavicle": "{side}Shoulder",
                              "shoulder": "{side}Arm", "elbow": "{side}ForeArm",
                              "wrist": "{side}Hand"}),
    "mixamo": role_names({"hip": "mixamorig:{side}UpLeg", "knee": "mixamorig:{side}Leg",
                          "ankle": "mixamorig:{side}Foot", "toe": "mixamorig:{side}ToeBase",
                          "toe_end": "mixamorig:{side}Toe_End",
                          "clavicle": "mixamorig:{side}Shoulder", "shoulder": "mixamorig:{side}Arm",
                          "elbow": "mixamorig:{side}ForeArm", "wrist": "mixamorig:{side}Hand",
                          "finger": "mixamorig:{side}HandIndex1"}),
    "unreal": role_names({"hip": "thigh_{side}", "knee": "calf_{side}", "ankle": "foot_{side}",
                          "toe": "ball_{side}", "clavicle": "clavicle_{side}",
                          "shoulder": "upperarm_{side}", "elbow": "lowerarm_{side}",
                          "wrist": "hand_{side}"}, sides=("l", "r")),
    "prefix": role_names({"hip": "{side}_Thigh", "knee": "{side}_Calf", "ankle": "{side}_Foot",
                          "toe": "{side}_Toe0", "shoulder": "{side}_UpperArm",
                          "elbow": "{side}_Forearm", "wrist": "{side}_Hand"}, sides=("L", "R")),
    "lower_prefix": role_names({"hip": "{side}_thigh", "knee": "{side}_shin",
                                "ankle": "{side}_foot", "toe": "{side}_toe",
                                "shoulder": "{side}_upperarm", "elbow": "{side}_lowerarm",
                                "wrist": "{side}_hand"}, sides=("l", "r")),
    "rigify": role_names({"hip": "DEF-thigh.{side}", "knee": "DEF-shin.{side}",
                          "ankle": "DEF-foot.{side}", "toe": "DEF-toe.{side}",
                          "shoulder": "DEF-upper_arm.{side}", "elbow": "DEF-forearm.{side}",
                          "wrist": "DEF-hand.{side}"}, sides=("L", "R")),
    "unity": role_names({"hip": "{side}UpperLeg", "knee": "{side}LowerLeg",
                         "ankle": "{side}Foot", "toe": "{side}Toes",
                         "shoulder": "{side}UpperArm", "elbow": "{side}LowerArm",
                         "wrist": "{side}Hand"}),
    "biped": role_names({"hip": "Bip01 {side} Thigh", "knee": "Bip01 {side} Calf",
                         "ankle": "Bip01 {side} Foot", "toe": "Bip01 {side} Toe0",
                         "clavicle": "Bip01 {side} Clavicle",
                         "shoulder": "Bip01 {side} UpperArm", "elbow": "Bip01 {side} Forearm",
                         "wrist": "Bip01 {side} Hand"}, sides=("L", "R")),
    "glued": role_names({"hip": "{side}thigh", "knee": "{side}knee", "ankle": "{side}foot",
                         "toe": "{side}toe", "shoulder": "{side}humerus",
                         "elbow": "{side}elbow", "wrist": "{side}hand"}, sides=("l", "r")),
    "none": {},
}


def expected(sk: limbik.Skeleton, names: dict[str, str]):
    """Indices of the roles, found through the names (or the structure for 'none')."""
    ref = make_skeleton({r: f"ROLE:{r}" for r in
                         [f"{s}.{k}" for s in "LR" for k in
                          ("hip", "knee", "ankle", "toe", "shoulder", "elbow", "wrist")]})
    return {r.split(":")[1]: i for i, r in enumerate(ref.names) if r.startswith("ROLE:")}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_naming_schemes_and_topology(scheme):
    """Each naming scheme, and unnamed joints through topology, give the same limbs."""
    sk = make_skeleton(SCHEMES[scheme])
    idx = expected(sk, SCHEMES[scheme])
    left, right = limbik.find_legs(sk)
    assert (left.side, right.side) == ("left", "right")
    for leg, s in ((left, "L"), (right, "R")):
        assert (leg.hip, leg.knee, leg.ankle, leg.toe) == (
            idx[f"{s}.hip"], idx[f"{s}.knee"], idx[f"{s}.ankle"], idx[f"{s}.toe"]), scheme
        assert leg.chain == (leg.hip, leg.knee, leg.ankle)
    arm_l, arm_r = limbik.find_arms(sk)
    for arm, s in ((arm_l, "L"), (arm_r, "R")):
        assert arm.chain == (idx[f"{s}.shoulder"], idx[f"{s}.elbow"], idx[f"{s}.wrist"]), scheme


def test_shared_clips_have_both_legs_and_arms(shared_data):
    for path in sorted((shared_data / "bvh").glob("*.bvh")):
        sk = limbik.read_bvh(path).skeleton
        left, right = limbik.find_legs(sk)
        names = [sk.names[i] for i in (*left.chain, left.toe, *right.chain, right.toe)]
        assert names[0].startswith("Left") and names[4].startswith("Right")
        assert all(("Toe" in n) for n in (names[3], names[7]))
        rest = sk.rest_positions()
        assert rest[left.hip, 0] > rest[right.hip, 0]  # left is +X
        arm_l, arm_r = limbik.find_arms(sk)
        assert sk.names[arm_l.elbow] in ("LeftElbow", "LeftForeArm")
        assert sk.names[arm_r.wrist] in ("RightWrist", "RightHand")
        # the same skeleton without names: topology finds the same joints
        blind = limbik.Skeleton([f"j{i}" for i in range(len(sk))], sk.parents, sk.offsets)
        assert limbik.find_legs(blind) == (left, right)
        assert limbik.find_arms(blind) == (arm_l, arm_r)


def test_overrides_by_name_and_index():
    sk = make_skeleton(SCHEMES["mixamo"])
    left, right = limbik.find_legs(sk, left_toe=None, right_toe="mixamorig:RightToe_End")
    assert left.toe is None
    assert right.toe == sk.index("mixamorig:RightToe_End")
    left2, _ = limbik.find_legs(sk, left_hip=sk.index("mixamorig:LeftUpLeg"))
    assert left2.hip == sk.index("mixamorig:LeftUpLeg")


def test_override_completes_a_failed_detection():
    names = {"L.hip": "a", "L.knee": "b", "L.ankle": "c", "R.hip": "d", "R.knee": "e",
             "R.ankle": "f"}
    sk = make_skeleton(names, spine=False)
    # a skeleton whose legs are not mirror images cannot be found by topology
    offsets = np.array(sk.offsets)
    offsets[sk.index("e")] = (0.2, -0.3, 0.1)
    bent = limbik.Skeleton(sk.names, sk.parents, offsets)
    with pytest.raises(DetectionError, match="left leg") as info:
        limbik.find_legs(bent)
    assert "a" in info.value.names and "joints are: " in str(info.value)
    left, right = limbik.find_legs(bent, left_hip="a", left_knee="b", left_ankle="c",
                                   right_hip="d", right_knee="e", right_ankle="f")
    assert (left.hip, right.ankle) == (sk.index("a"), sk.index("f"))


def test_detection_error_lists_joint_names():
    sk = limbik.Skeleton(["root", "a", "b"], [-1, 0, 1], [(0, 0, 0), (0, -1, 0), (0, -1, 0)])
    with pytest.raises(DetectionError, match="joints are: root, a, b"):
        limbik.find_legs(sk)
    with pytest.raises(DetectionError, match="arm"):
        limbik.find_arms(sk)


def test_bad_override_names():
    sk = make_skeleton(SCHEMES["cmu"])
    with pytest.raises(InvalidInputError, match="override must be one of"):
        limbik.find_legs(sk, left_foot="LeftAnkle")
    with pytest.raises(InvalidInputError, match="joint must be one of"):
        limbik.find_legs(sk, left_hip="NoSuchJoint")


def test_left_side_convention_can_be_flipped():
    sk = make_skeleton({})
    left, right = limbik.find_legs(sk, left_side=(-1, 0, 0))
    default_left, default_right = limbik.find_legs(sk)
    assert left.hip == default_right.hip and right.hip == default_left.hip


def test_many_sibling_leaves_and_many_named_candidates_stay_cheap():
    """4,000 sibling leaves (56 s when every pair of leaves was compared) and 300
    joints per role name (a 27-million-combination product) are searched without
    enumerating pairs: the mirror test runs a bounded number of times per leaf."""
    from limbik.skeleton import limbs

    rng = np.random.default_rng(0)
    n = 4000
    names = ["root"] + [f"n{i}" for i in range(n)]
    crowd = limbik.Skeleton(names, [-1] + [0] * n,
                            np.vstack([[0, 0, 0], rng.normal(size=(n, 3))]),
                            [["Xrotation"]] + [[]] * n, [])
    calls = 0
    original = limbs._mirror_pair

    def counting(*args):
        nonlocal calls
        calls += 1
        return original(*args)

    limbs._mirror_pair = counting
    try:
        with pytest.raises(DetectionError):
            limbik.find_legs(crowd)
    finally:
        limbs._mirror_pair = original
    assert calls == 0  # sibling leaves have one-bone chains: nothing to compare

    # a real pair of legs below a crowd of same-named decoys
    names, parents, offsets = ["Hips"], [-1], [[0.0, 1.0, 0.0]]
    for side, x in (("Left", 0.1), ("Right", -0.1)):
        top = len(names)
        names += [f"{side}UpLeg", f"{side}Leg", f"{side}Foot"]
        parents += [0, top, top + 1]
        offsets += [[x, 0, 0], [0, -0.45, 0], [0, -0.45, 0]]
    for k in range(300):
        for role in ("UpLeg", "Leg", "Foot"):
            names.append(f"Left{role}{k}")
            parents.append(0)
            offsets.append([0.3, 0.1, 0.0])
    skeleton = limbik.Skeleton(names, parents, np.array(offsets),
                               [["Xrotation"]] * len(names), [])
    left, right = limbik.find_legs(skeleton)
    assert (left.hip, left.knee, left.ankle) == (1, 2, 3)
    assert (right.hip, right.knee, right.ankle) == (4, 5, 6)
