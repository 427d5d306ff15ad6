"""URDF import: ``load_urdf(path, base_link, tip_link) -> JointChain``.

Reads joint origins (``xyz``, and ``rpy`` as fixed-axis roll-pitch-yaw,
``R = Rz·Ry·Rx``), axes (default ``(1, 0, 0)``), limits and the revolute,
continuous, prismatic and fixed types. Meshes, inertia and mimic tags are ignored.
The URDF spec requires ``<limit>`` on revolute and prismatic joints; hand-written
files often leave it out, so a missing ``<limit>`` loads as an unlimited joint.

Every problem raises :class:`limbik.errors.URDFError` with the file and line.
Numbers must be finite and, for origins, axes and limits, within ±``MAX_MAGNITUDE``
(1e100), so every distance and reach computed from them stays finite.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from xml.parsers import expat

import numpy as np

from limbik._runtime.reading import read_bytes
from limbik.chain.joint_chain import (
    JOINT_TYPES,
    MAX_MAGNITUDE,
    Joint,
    JointChain,
    frame_from_xyz_rpy,
)
from limbik.errors import InvalidInputError, URDFError

__all__ = ["MAX_MAGNITUDE", "URDFTree", "load_urdf", "parse_urdf", "read_urdf_tree"]



@dataclasses.dataclass
class _Element:
    tag: str
    attrib: dict[str, str]
    line: int
    children: list[_Element] = dataclasses.field(default_factory=list)

    def find(self, tag: str) -> _Element | None:
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> list[_Element]:
        return [child for child in self.children if child.tag == tag]


class _EntityRefused(Exception):
    """An ``<!ENTITY>`` declaration met while parsing (its name)."""


#: A decimal number as URDF files write them: ASCII digits, no ``_`` separators.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _parse_xml(data: str | bytes, path: str) -> _Element:
    """A small element tree that remembers each element's line number."""
    parser = expat.ParserCreate()
    stack: list[_Element] = []
    roots: list[_Element] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        element = _Element(tag, dict(attrib), parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(element)
        else:
            roots.append(element)
        stack.append(element)

    def end(tag: str) -> None:
        stack.pop()

    def entity(name: str, *_: object) -> None:  # no entity is ever expanded: a few
        raise _EntityRefused(name)                 # nested ones can take gigabytes

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.EntityDeclHandler = entity
    try:
        parser.Parse(data, True)
    except _EntityRefused as exc:
        raise URDFError(path, parser.CurrentLineNumber, "no XML entity declarations",
                        f"<!ENTITY {str(exc)[:40]} ...>") from None
    except expat.ExpatError as exc:
        raise URDFError(path, exc.lineno, "well-formed XML",
                        expat.ErrorString(exc.code)) from None
    except (ValueError, UnicodeError, LookupError) as exc:  # undecodable, unknown encoding
        raise URDFError(path, parser.CurrentLineNumber, "well-formed XML",
                        f"{type(exc).__name__}: {exc}") from None
    if not roots:  # pragma: no cover - expat reports "no element found" first
        raise URDFError(path, 1, "a <robot> element", "an empty document")
    return roots[0]


def _floats(element: _Element, attribute: str, count: int, default: tuple[float, ...] | None,
            path: str, what: str, bound: float = math.inf) -> tuple[float, ...]:
    text = element.attrib.get(attribute)
    if text is None:
        if default is None:
            raise URDFError(path, element.line, f"attribute {attribute!r} on <{element.tag}> "
                            f"of {what}", "none")
        return default
    parts = text.split()
    values = (tuple(float(v) for v in parts)
              if all(_NUMBER.fullmatch(v) for v in parts) else ())
    if len(values) != count or not all(math.isfinite(v) and abs(v) <= bound for v in values):
        expected = f"{count} finite number{'s' if count > 1 else ''} in {attribute!r} of {what}"
        if len(values) == count and all(math.isfinite(v) for v in values):
            expected += f", each within ±{bound:g}"
        raise URDFError(path, element.line, expected, repr(text[:80]))
    return values


@dataclasses.dataclass
class _JointSpec:
    element: _Element
    name: str
    type: str
    parent: str
    child: str


def _read_joint(spec: _JointSpec, path: str) -> Joint:
    el = spec.element
    what = f"joint {spec.name!r}"
    if spec.type not in JOINT_TYPES:
        listed = ", ".join(JOINT_TYPES)
        raise URDFError(path, el.line, f"a joint type in ({listed}) for {what}",
                        repr(spec.type))
    xyz: tuple[float, ...] = (0.0, 0.0, 0.0)
    rpy: tuple[float, ...] = (0.0, 0.0, 0.0)
    origin = el.find("origin")
    if origin is not None:
        xyz = _floats(origin, "xyz", 3, (0.0, 0.0, 0.0), path, what, MAX_MAGNITUDE)
        rpy = _floats(origin, "rpy", 3, (0.0, 0.0, 0.0), path, what, MAX_MAGNITUDE)
    axis: tuple[float, ...] = (1.0, 0.0, 0.0)
    axis_el = el.find("axis")
    if axis_el is not None:
        axis = _floats(axis_el, "xyz", 3, None, path, what, MAX_MAGNITUDE)
        if spec.type != "fixed" and math.hypot(*axis) < 1e-12:
            raise URDFError(path, axis_el.line, f"a non-zero axis for {what}", "0 0 0")
    lower, upper = -np.inf, np.inf
    limit = el.find("limit") if spec.type in ("revolute", "prismatic") else None
    if limit is not None:
        # URDF: lower and upper default to 0
        (lower,) = _floats(limit, "lower", 1, (0.0,), path, what, MAX_MAGNITUDE)
        (upper,) = _floats(limit, "upper", 1, (0.0,), path, what, MAX_MAGNITUDE)
        if lower > upper:
            raise URDFError(path, limit.line, f"lower <= upper in the limits of {what}",
                            f"{lower} > {upper}")
    try:
        return Joint(spec.name, spec.type, frame_from_xyz_rpy(xyz, rpy), axis, lower, upper,
                     parent=spec.parent, child=spec.child)
    except InvalidInputError as exc:  # pragma: no cover - the checks above come first
        raise URDFError(path, el.line, f"a valid {what}", str(exc)) from None


def _link_attribute(joint: _Element, tag: str, path: str, what: str) -> str:
    element = joint.find(tag)
    if element is None:
        raise URDFError(path, joint.line, f"a <{tag}> element in {what}", "none")
    link = element.attrib.get("link")
    if not link:
        raise URDFError(path, element.line, f"attribute 'link' on <{tag}> of {what}", "none")
    return link


@dataclasses.dataclass(frozen=True)
class URDFTree:
    """The links and joints of a URDF file, in file order, without reading joint details.

    ``joints`` holds ``(name, type, parent link, child link)``; ``roots`` are the links no
    joint moves (chain bases), ``tips`` the links no joint starts from (chain tips).
    """

    links: tuple[str, ...]
    joints: tuple[tuple[str, str, str, str], ...]

    @property
    def roots(self) -> tuple[str, ...]:
        children = {joint[3] for joint in self.joints}
        return tuple(link for link in self.links if link not in children)

    @property
    def tips(self) -> tuple[str, ...]:
        parents = {joint[2] for joint in self.joints}
        return tuple(link for link in self.links if link not in parents)


def read_urdf_tree(path: str | Path) -> URDFTree:
    """The links and joints of the URDF file ``path`` (see :class:`URDFTree`)."""
    data = _read(path)
    links, by_child = _links_and_joints(_robot(data, str(path)), str(path))
    return URDFTree(tuple(links), tuple((s.name, s.type, s.parent, s.child)
                                        for s in by_child.values()))


def _read(path: str | Path) -> bytes:
    """The bytes of the URDF file ``path``, or a URDFError saying why it cannot be read."""
    try:
        return read_bytes(path)[1]
    except (ValueError, OSError) as exc:  # read_bytes: a bad path, an unreadable file
        raise URDFError(str(path), 0, "a readable URDF file",
                        getattr(exc, "strerror", None) or str(exc)) from None


def _robot(text: str | bytes, path: str) -> _Element:
    root = _parse_xml(text, path)
    if root.tag != "robot":
        raise URDFError(path, root.line, "a <robot> root element", f"<{root.tag}>")
    return root


def _links_and_joints(root: _Element, path: str) -> tuple[list[str], dict[str, _JointSpec]]:
    links: list[str] = []
    for link in root.findall("link"):
        name = link.attrib.get("name")
        if not name:
            raise URDFError(path, link.line, "attribute 'name' on <link>", "none")
        if name in links:
            raise URDFError(path, link.line, "link names that are unique",
                            f"a second link {name!r}")
        links.append(name)
    declared = set(links)
    by_child: dict[str, _JointSpec] = {}
    joint_names: set[str] = set()
    for joint in root.findall("joint"):
        name = joint.attrib.get("name")
        if not name:
            raise URDFError(path, joint.line, "attribute 'name' on <joint>", "none")
        if name in joint_names:
            raise URDFError(path, joint.line, "joint names that are unique",
                            f"a second joint {name!r}")
        joint_names.add(name)
        what = f"joint {name!r}"
        jtype = joint.attrib.get("type")
        if not jtype:
            raise URDFError(path, joint.line, f"attribute 'type' on {what}", "none")
        parent = _link_attribute(joint, "parent", path, what)
        child = _link_attribute(joint, "child", path, what)
        for role, end in (("parent", parent), ("child", child)):
            if end not in declared:
                raise URDFError(path, joint.line, f"a {role} link of {what} declared as a "
                                "<link>", repr(end))
        if child in by_child:
            raise URDFError(path, joint.line, f"one parent joint for link {child!r}",
                            f"joints {by_child[child].name!r} and {name!r}")
        by_child[child] = _JointSpec(joint, name, jtype, parent, child)
    rooted: set[str] = set()  # links whose parents lead to a link no joint moves
    for start in links:  # a cycle never gets there
        at, walk = start, {start}
        while at in by_child and at not in rooted:
            at = by_child[at].parent
            if at in walk:
                raise URDFError(path, by_child[at].element.line,
                                "joints that form a tree (no cycle)",
                                f"a cycle through link {at!r}")
            walk.add(at)
        rooted |= walk
    return links, by_child


def parse_urdf(text: str | bytes, base_link: str, tip_link: str, *,
               path: str = "<string>") -> JointChain:
    """Like :func:`load_urdf`, from the URDF text itself (``path`` names it in errors)."""
    if not isinstance(text, str | bytes | bytearray):
        raise InvalidInputError(f"text must be URDF text (str or bytes), got "
                                f"{type(text).__name__}", argument="text")
    links, by_child = _links_and_joints(_robot(text, path), path)
    known = set(links)
    for label, link_name in (("base_link", base_link), ("tip_link", tip_link)):
        if not isinstance(link_name, str) or link_name not in known:
            listed = ", ".join(links) if links else "(none)"
            raise URDFError(path, 0, f"{label} to be one of the links: {listed}",
                            repr(link_name))
    chain_specs: list[_JointSpec] = []
    current = tip_link
    seen = {current}
    while current != base_link:
        spec = by_child.get(current)
        if spec is None or spec.parent in seen:
            raise URDFError(path, 0, f"a chain of joints from {base_link!r} to {tip_link!r}",
                            f"none (link {current!r} has no parent leading to {base_link!r})")
        chain_specs.append(spec)
        current = spec.parent
        seen.add(current)
    if not chain_specs:
        raise URDFError(path, 0, "different base_link and tip_link",
                        f"{base_link!r} for both")
    chain_specs.reverse()
    joints = [_read_joint(spec, path) for spec in chain_specs]
    return JointChain(joints, name=f"{base_link}->{tip_link}")


def load_urdf(path: str | Path, base_link: str, tip_link: str) -> JointChain:
    """The serial chain from ``base_link`` to ``tip_link`` of a URDF file.

    Parameters
    ----------
    path : str or Path
        The URDF file.
    base_link, tip_link : str
        Link names; the chain's base frame is ``base_link``'s frame and its tip is
        ``tip_link``'s frame.

    Returns
    -------
    JointChain
        Every joint between the two links, fixed ones included.

    Raises
    ------
    limbik.errors.URDFError
        For an unreadable file, malformed XML (with its line), a missing element or
        attribute, a bad number, an unsupported joint type on the chain, an unknown
        link (the message lists the links), or links that no chain connects.
    """
    return parse_urdf(_read(path), base_link, tip_link, path=str(path))
