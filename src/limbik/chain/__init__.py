"""Joint-space chains: :class:`JointChain` (revolute, continuous, prismatic, fixed), URDF import."""

from limbik.chain.joint_chain import JOINT_TYPES, Joint, JointChain, frame_from_xyz_rpy
from limbik.chain.urdf import load_urdf, parse_urdf

__all__ = ["JOINT_TYPES", "Joint", "JointChain", "frame_from_xyz_rpy", "load_urdf", "parse_urdf"]
