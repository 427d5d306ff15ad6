"""``limbik solve``: one IK problem from options or a JSON file, printed or as JSON."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from limbik.app.cli._args import non_negative_int
from limbik.errors import LimbikError

SOLVE_METHODS = ("two_bone", "fabrik", "ccd", "lm", "transpose", "pinv", "dls", "svd-dls")

_JACOBIAN = ("lm", "transpose", "pinv", "dls", "svd-dls")

#: problem-file keys (the long options with ``_`` for ``-``)
_SOLVE_KEYS = ("lengths", "urdf", "base", "tip", "target", "method", "root", "direction",
               "pole", "reference", "unreachable", "max_stretch", "tolerance",
               "max_iterations", "damping", "q0", "orientation", "restarts", "close_gap")

#: which options each kind of problem accepts (besides target and method)
_SOLVE_OPTIONS = {
    "two_bone": {"lengths", "root", "pole", "reference", "unreachable", "max_stretch"},
    "fabrik": {"lengths", "root", "direction", "tolerance", "max_iterations", "close_gap"},
    "ccd": {"lengths", "root", "direction", "tolerance", "max_iterations"},
    "ccd-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "q0", "orientation",
                 "restarts"},
    "jacobian": {"lengths", "root", "direction", "tolerance", "max_iterations", "damping",
                 "q0", "orientation", "restarts"},
    "jacobian-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "damping", "q0",
                      "orientation", "restarts"},
}

def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (JSON keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} twice in one object")
        out[key] = value
    return out

def _solve_problem(args: argparse.Namespace) -> dict[str, Any]:
    """The problem: the JSON file's keys, overridden by the options given."""
    import json

    from limbik.errors import InvalidInputError

    problem: dict[str, Any] = {}
    if args.problem is not None:
        from limbik._runtime.reading import read_bytes

        path, raw = read_bytes(args.problem, "problem file")
        try:
            loaded = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_unique_keys)
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"problem file {path} must be UTF-8 text, got byte "
                                    f"{exc.object[exc.start]:#04x} at offset {exc.start}",
                                    argument="problem") from None
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"problem file {path} must be JSON, got an error at line "
                                    f"{exc.lineno}: {exc.msg}", argument="problem") from None
        except (RecursionError, ValueError) as exc:
            what = ("values nested too deeply" if isinstance(exc, RecursionError)
                    else str(exc))
            raise InvalidInputError(f"problem file {path} must be plain JSON, got {what}",
                                    argument="problem") from None
        if not isinstance(loaded, dict):
            raise InvalidInputError(f"problem file {path} must hold a JSON object, got "
                                    f"{type(loaded).__name__}", argument="problem")
        unknown = sorted(set(loaded) - set(_SOLVE_KEYS))
        if unknown:
            raise InvalidInputError(f"problem file keys must be among {', '.join(_SOLVE_KEYS)}"
                                    f"; got {', '.join(unknown)}", argument="problem")
        problem.update(loaded)
        if isinstance(problem.get("urdf"), str):  # relative to the problem file
            problem["urdf"] = str(path.parent / problem["urdf"])
    for key in _SOLVE_KEYS:
        value = getattr(args, key)
        if value is not None:
            problem[key] = value
    return problem

def _target(problem: dict[str, Any]) -> Any:
    """The problem's target point ``(3,)``."""
    from limbik._runtime.validation import as_points
    from limbik.errors import InvalidInputError

    if "target" not in problem:
        raise InvalidInputError("target is required: --target X Y Z, or \"target\" in the "
                                "problem file", argument="target")
    target = as_points(problem["target"], "target")
    if target.shape != (3,):
        raise InvalidInputError(f"target must have shape (3,), got {target.shape}",
                                argument="target")
    return target


def _lengths(problem: dict[str, Any]) -> Any:
    """The bone lengths ``(n,)`` of a ``--lengths`` problem, None for a URDF one."""
    from limbik._runtime.validation import as_positive
    from limbik.errors import InvalidInputError

    has_lengths = problem.get("lengths") is not None
    if has_lengths == (problem.get("urdf") is not None):
        raise InvalidInputError("give either --lengths L1 L2 ... or --urdf FILE (with --base "
                                "and --tip), got " + ("both" if has_lengths else "neither"),
                                argument="lengths")
    if not has_lengths:
        return None
    lengths = as_positive(problem["lengths"], "lengths")
    if lengths.ndim != 1 or lengths.size < 2:
        raise InvalidInputError(f"lengths must be two or more bone lengths, got "
                                f"{lengths.size if lengths.ndim == 1 else lengths.shape}",
                                argument="lengths")
    if not math.isfinite(sum(float(length) for length in lengths)):
        raise InvalidInputError(
            f"lengths must add up to a finite reach (below {sys.float_info.max:.4g}), got "
            + " ".join(f"{float(length):g}" for length in lengths[:8])
            + (" ..." if lengths.size > 8 else ""), argument="lengths")
    return lengths


def _method(problem: dict[str, Any], lengths: Any) -> tuple[str, set[str]]:
    """The method (given or by default) and the options given, each checked to apply."""
    from limbik.errors import InvalidInputError

    has_urdf = lengths is None
    default = "lm" if has_urdf else ("two_bone" if lengths.size == 2 else "fabrik")
    method = problem.get("method") or default
    if method not in SOLVE_METHODS:
        raise InvalidInputError(f"method must be one of {', '.join(SOLVE_METHODS)}, got "
                                f"{method!r}", argument="method")
    if method == "two_bone" and (has_urdf or lengths.size != 2):
        raise InvalidInputError("method two_bone needs exactly two --lengths, got "
                                + ("a URDF" if has_urdf else f"{lengths.size}"),
                                argument="method")
    if method == "fabrik" and has_urdf:
        raise InvalidInputError("method fabrik needs --lengths (a point chain), got a URDF; "
                                "use ccd or a Jacobian method", argument="method")
    kind = ("jacobian" if method in _JACOBIAN else method) + ("-urdf" if has_urdf else "")
    given = {k for k, v in problem.items() if v is not None} - {"target", "method"}
    extra = sorted(given - _SOLVE_OPTIONS[kind])
    if extra:
        raise InvalidInputError(f"option {', '.join(extra)} does not apply to method {method}"
                                f"{' with a URDF' if has_urdf else ''}; it takes "
                                f"{', '.join(sorted(_SOLVE_OPTIONS[kind]))}", argument=extra[0])
    return method, given


def _urdf_links(problem: dict[str, Any]) -> None:
    """``problem``'s base and tip links: given, or the file's one root link as the base
    (said on stderr); else an error listing the links."""
    from limbik.chain.urdf import read_urdf_tree
    from limbik.errors import InvalidInputError

    for key in ("base", "tip"):
        if problem.get(key) is not None:
            continue
        try:
            tree = read_urdf_tree(problem["urdf"])
        except LimbikError as exc:
            raise InvalidInputError(f"--urdf needs --{key} LINK (and the links could "
                                    f"not be listed: {exc})", argument=key) from None
        if key == "base" and len(tree.roots) == 1:  # the chain can only start there
            problem["base"] = tree.roots[0]
            print(f"limbik: no --base given: using {tree.roots[0]!r}, the one root "
                  f"link of {problem['urdf']}", file=sys.stderr)
            continue
        raise InvalidInputError(
            f"--urdf needs --{key} LINK, one of the links of {problem['urdf']}: "
            f"{', '.join(tree.links)} (bases: {', '.join(tree.roots)}; tips: "
            f"{', '.join(tree.tips)}; 'limbik urdf FILE' lists the joints)", argument=key)


def _goal(problem: dict[str, Any], target: Any, given: set[str]) -> Any:
    """The target point, or with ``orientation`` the pose (a Frame) to reach."""
    import numpy as np

    from limbik.errors import InvalidInputError
    from limbik.geometry.frame import Frame

    if "orientation" not in given:
        return target
    try:
        quat = np.asarray(problem["orientation"], dtype=np.float64)
    except (TypeError, ValueError):
        quat = np.zeros(0)
    if quat.shape != (4,) or not np.all(np.isfinite(quat)) or not np.any(quat):
        raise InvalidInputError(f"orientation must be a quaternion X Y Z W (scalar last, "
                                f"non-zero), got {problem['orientation']}",
                                argument="orientation")
    return Frame.from_quaternion(quat / np.linalg.norm(quat), target)


def _point_chain(problem: dict[str, Any], root: Any, lengths: Any) -> Any:
    """The straight chain ``(n + 1, 3)`` of ``lengths`` from ``root`` along ``direction``."""
    import numpy as np

    from limbik._runtime.validation import as_points
    from limbik.errors import InvalidInputError
    from limbik.geometry.vectors import normalize

    direction = as_points(problem.get("direction", (1.0, 0.0, 0.0)), "direction")
    if direction.shape != (3,) or not np.any(direction):
        raise InvalidInputError(f"direction must be a non-zero vector (3,), got "
                                f"{problem.get('direction')}", argument="direction")
    steps = np.concatenate([[0.0], np.cumsum(lengths)])
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below
        chain = root + steps[:, None] * normalize(direction)
    if not np.all(np.isfinite(chain)):
        raise InvalidInputError(f"lengths and root must keep the straight chain finite, "
                                f"got a joint beyond ±{sys.float_info.max:.4g}",
                                argument="lengths")
    return chain


def _joint_chain(method: str, chain: Any) -> Any:
    """A point chain as the JointChain of ball joints through its points."""
    import numpy as np

    from limbik.chain.joint_chain import MAX_MAGNITUDE, JointChain
    from limbik.errors import InvalidInputError

    if np.max(np.abs(chain)) > MAX_MAGNITUDE:
        raise InvalidInputError(
            f"lengths and root must keep the chain within ±{MAX_MAGNITUDE:g} for "
            f"method {method} (a JointChain through its points), got "
            f"{np.max(np.abs(chain)):g}", argument="lengths")
    return JointChain.from_points(chain)


def _solve(problem: dict[str, Any]) -> tuple[str, Any, Any, tuple[str, ...]]:
    """Solve one problem; returns (method, target, Solution, names of the q values)."""
    from limbik._runtime.validation import as_float, as_points

    target = _target(problem)
    lengths = _lengths(problem)
    method, given = _method(problem, lengths)
    if lengths is None:
        _urdf_links(problem)
    passed = ("tolerance", "max_iterations", "damping", "q0", "restarts", "close_gap")
    options: dict[str, Any] = {key: problem[key] for key in passed if key in given}
    goal = _goal(problem, target, given)
    root = as_points(problem.get("root", (0.0, 0.0, 0.0)), "root")
    if method == "two_bone":
        from limbik.solvers.two_bone.solver import two_bone

        hints: dict[str, Any] = {k: as_points(problem[k], k) for k in ("pole", "reference")
                                 if k in given}
        return method, target, two_bone(
            root, target, float(lengths[0]), float(lengths[1]), **hints,
            unreachable=problem.get("unreachable", "extend"),
            max_stretch=(as_float(problem["max_stretch"], "max_stretch", minimum=1.0)
                         if "max_stretch" in problem else None)), ()
    if lengths is None:
        from limbik.chain.urdf import load_urdf

        chain: Any = load_urdf(problem["urdf"], str(problem["base"]), str(problem["tip"]))
    else:
        chain = _point_chain(problem, root, lengths)
    if method == "fabrik":
        from limbik.solvers.fabrik.chain import fabrik

        return method, target, fabrik(chain, target, **options), ()
    if method in _JACOBIAN:
        from limbik.solvers.joint.jacobian import jacobian_ik

        if lengths is not None:
            chain = _joint_chain(method, chain)
        _one_q0(options, chain.dof)
        return (method, target, jacobian_ik(chain, goal, method=method, **options),
                chain.joint_names)
    from limbik.solvers.ccd import ccd

    if lengths is None:  # (q0 is refused for a point chain above)
        _one_q0(options, chain.dof)
    names = chain.joint_names if lengths is None else ()
    return method, target, ccd(chain, goal, **options), names


def _one_q0(options: dict[str, Any], dof: int) -> None:
    """``options["q0"]``, where given, checked as one set of ``dof`` joint values."""
    if "q0" not in options:
        return
    from limbik._runtime.validation import as_float_array
    from limbik.errors import InvalidInputError

    q0 = as_float_array(options["q0"], "q0")
    if q0.shape != (dof,):
        raise InvalidInputError(f"q0 must be one set of {dof} joint values, shape ({dof},), "
                                f"got shape {q0.shape}", argument="q0")
    options["q0"] = q0

def _fmt(values: Any) -> str:
    import numpy as np

    return "(" + ", ".join(f"{v:.6g}" for v in np.asarray(values).reshape(-1)) + ")"

def _cmd_solve(args: argparse.Namespace) -> int:
    import json

    from limbik.app.compile_notice import announce_compilation

    announce_compilation()

    problem = _solve_problem(args)
    method, target, solution, names = _solve(problem)
    orientation = problem.get("orientation")
    if args.json:
        extra = {"orientation": list(orientation)} if orientation is not None else {}
        named = {"joint_names": list(names)} if names else {}
        print(json.dumps({"method": method, "target": target.tolist(), **extra,
                          **solution.to_dict(), **named}, indent=2))
        return 0
    n = solution.positions.shape[-2]
    what = "pose error" if orientation is not None else "error"
    steps = int(solution.iterations)
    per_attempt = solution.q is not None and method != "fabrik"
    print(f"{method}: {'reached' if bool(solution.reached) else 'NOT reached'}, "
          f"{what} {float(solution.error):.3g}, {steps} iterations"
          + (" in all attempts (--max-iterations caps each attempt)" if per_attempt else ""))
    print(f"target      {_fmt(target)}")
    if orientation is not None:
        print(f"orientation {_fmt(orientation)} (x, y, z, w)")
    print(f"end effector {_fmt(solution.end_effector)}")
    if solution.root_offset is not None:
        print(f"root moved  {_fmt(solution.root_offset)} (--unreachable push_root)")
    print(f"positions ({n} joints, root first):")
    for k, p in enumerate(solution.positions):
        print(f"  {k:3d}  {_fmt(p)}")
    if solution.q is not None:
        print(f"q ({solution.q.size} joint values, radians or length units):")
        labels = names if len(names) == solution.q.size else [f"q{k}" for k in
                                                              range(solution.q.size)]
        width = max(len(label) for label in labels)
        for label, value in zip(labels, solution.q.reshape(-1), strict=True):
            print(f"  {label:<{width}}  {float(value):.6g}")
    return 0


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    from limbik.tolerances import JACOBIAN_RESTARTS, LM_RESTARTS

    solve = sub.add_parser(
        "solve", help="solve one IK problem given as options or a JSON file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Solve one problem and print the Solution (--json: as JSON).",
        epilog="""\
The chain is either bone lengths (--lengths, root first) or a URDF (--urdf FILE
--base LINK --tip LINK). Two lengths default to the analytic two_bone solver; more
lengths make a straight point chain from --root along --direction (default +X),
solved by FABRIK by default; a URDF defaults to lm (Levenberg-Marquardt).
Methods: two_bone, fabrik, ccd, lm, transpose, pinv, dls, svd-dls (Jacobian
methods and ccd on lengths use ball joints through the straight chain's points).

Options by method:
  two_bone          --root --pole | --reference --unreachable --max-stretch
  fabrik            --root --direction --tolerance --max-iterations
  ccd               --root --direction (or --urdf ... --q0 --orientation --restarts)
                    --tolerance --max-iterations
  Jacobian methods  as ccd, plus --damping; --orientation and --restarts also on lengths

--max-iterations caps each attempt of ccd and the Jacobian methods on joints; a result
reports the iterations of all attempts (--restarts 0: one attempt, the cap is a total;
lm adds one last run from its best point when no attempt reached the target).
'limbik urdf FILE' lists a URDF's links and joints.

A problem file is a JSON object with the same names, '_' for '-', e.g.
  {"lengths": [0.3, 0.25], "target": [0.2, 0.3, 0.1], "pole": [0, 0, 1],
   "unreachable": "stretch", "max_stretch": 1.2}
  {"urdf": "panda.urdf", "base": "panda_link0", "tip": "panda_hand",
   "target": [0.4, 0.1, 0.5], "method": "svd-dls"}
(a relative "urdf" path is relative to the file). Options given on the command
line override the file's values.

Examples:
  limbik solve --lengths 0.3 0.25 --target 0.2 0.3 0.1 --pole 0 0 1
  limbik solve --lengths 0.2 0.2 0.2 0.2 --target 0.3 0.4 0 --method ccd --json
  limbik solve problem.json""")
    solve.add_argument("problem", nargs="?", help="a JSON problem file (optional)")
    solve.add_argument("--lengths", type=float, nargs="+", metavar="L",
                       help="bone lengths, root first (two or more)")
    solve.add_argument("--urdf", help="a URDF file (instead of --lengths)")
    solve.add_argument("--base", help="the URDF chain's base link (default: the file's root "
                       "link, where it has only one)")
    solve.add_argument("--tip", help="the URDF chain's tip link")
    solve.add_argument("--target", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="where the end effector should go")
    solve.add_argument("--method", help="two_bone, fabrik, ccd, lm, transpose, pinv, dls, svd-dls "
                       "(default: two_bone for 2 lengths, fabrik for more, lm for a URDF)")
    solve.add_argument("--root", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="root position of a --lengths chain (default origin)")
    solve.add_argument("--direction", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="direction of the straight starting chain (default 1 0 0)")
    solve.add_argument("--pole", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="two_bone: the mid joint bends toward this point")
    solve.add_argument("--reference", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="two_bone: the animated mid joint to stay close to")
    solve.add_argument("--unreachable", choices=("extend", "push_root", "stretch"),
                       help="two_bone: policy for targets out of reach (default extend)")
    solve.add_argument("--max-stretch", type=float, help="two_bone: largest bone scale for "
                       "--unreachable stretch (default 1.25)")
    solve.add_argument("--tolerance", type=float, help="reach distance (default 1e-6 of the "
                       "chain length)")
    solve.add_argument("--max-iterations", type=non_negative_int,
                       help="iteration cap; for ccd and the Jacobian methods on joints, per "
                       "attempt (a result reports the iterations of all attempts)")
    solve.add_argument("--restarts", type=non_negative_int,
                       help="ccd/Jacobian on joints: extra attempts from random starts while "
                       f"the target is not reached (default {JACOBIAN_RESTARTS}, {LM_RESTARTS} for "
                       "lm); 0 makes "
                       "--max-iterations a total")
    solve.add_argument("--orientation", type=float, nargs=4, metavar=("X", "Y", "Z", "W"),
                       help="ccd/Jacobian on joints: the tip's orientation as a quaternion "
                       "(scalar last), making the target a pose")
    solve.add_argument("--damping", type=float, help="Jacobian methods: damping relative to "
                       "the reach")
    solve.add_argument("--q0", type=float, nargs="+", metavar="Q",
                       help="ccd/Jacobian: starting joint values")
    solve.add_argument("--close-gap", action="store_true", default=None,
                       help="fabrik: reach the targets near the edges of the chain's reach "
                       "that FABRIK stops short of (docs/fabrik.md)")
    solve.add_argument("--json", action="store_true", help="print the Solution as JSON")
    solve.set_defaults(handler=_cmd_solve)
