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
