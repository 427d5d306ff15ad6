"""Joint chains shared by the joint-space solver tests."""

from __future__ import annotations

from limbik import JointChain


def planar_arm(limits=None):
    """Three revolute joints about Z, unit links along X (reach 3)."""
    joints = []
    for i in range(3):
        j = {"name": f"j{i}", "type": "revolute", "axis": (0, 0, 1),
             "origin": {"xyz": (1.0 if i else 0.0, 0, 0)}}
        if limits is not None:
            j["lower"], j["upper"] = limits[i]
        joints.append(j)
    joints.append({"name": "tip", "type": "fixed", "origin": {"xyz": (1, 0, 0)}})
    return JointChain.from_joints(joints)


def spatial_arm():
    """Six joints: revolute about mixed axes, one prismatic, one continuous."""
    return JointChain.from_joints([
        {"type": "revolute", "axis": (0, 0, 1), "lower": -3, "upper": 3},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0, 0, 0.3)}, "lower": -2,
         "upper": 2},
        {"type": "prismatic", "axis": (1, 0, 0), "origin": {"xyz": (0.4, 0, 0)}, "lower": 0,
         "upper": 0.3},
        {"type": "revolute", "axis": (0, 1, 0), "origin": {"xyz": (0.1, 0, 0)}, "lower": -2.5,
         "upper": 2.5},
        {"type": "continuous", "axis": (1, 0, 0), "origin": {"xyz": (0.3, 0, 0)}},
        {"type": "revolute", "axis": (0, 1, 0), "lower": -2, "upper": 2},
        {"type": "fixed", "origin": {"xyz": (0.1, 0, 0.05)}},
    ])


def seven_dof_arm():
    """A 7-joint arm shaped like a KUKA iiwa: rolls about Z and pitches about Y in turn,
    a shoulder 0.36 above the base, reach 0.9 from it; limits as a real arm has."""
    roll, pitch = (-2.9, 2.9), (-2.0, 2.0)
    offsets = (0.36, 0.0, 0.42, 0.0, 0.4, 0.0, 0.0)
    joints = []
    for i, z in enumerate(offsets):
        lower, upper = roll if i % 2 == 0 else pitch
        joints.append({"type": "revolute", "axis": (0, 0, 1) if i % 2 == 0 else (0, 1, 0),
                       "origin": {"xyz": (0, 0, z)}, "lower": lower, "upper": upper})
    joints.append({"type": "fixed", "origin": {"xyz": (0, 0, 0.08)}})
    return JointChain.from_joints(joints)
