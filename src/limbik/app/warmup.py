"""Compile limbik's kernels ahead of their first use, solver families in parallel processes.

Numba compiles each kernel on its first call and caches it on disk (``__pycache__``
next to the sources, or ``NUMBA_CACHE_DIR``), so the first call of a family after an
install waits for the compiler (seconds per family),
more for batched calls and foot placement. :func:`compile_kernels` makes those first
calls ahead of time (in a container build, on a cluster node, behind a game's loading
screen), the families in worker processes so that they compile on all cores at once.
Later processes load the kernels from the cache. ``limbik compile`` runs it from the
command line.

Each family makes the calls of its common forms, so their kernels are compiled for the
argument types those calls pass: single targets and batches (with the threaded driver
where Numba has more than one thread), and the options that select other kernels.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from limbik.errors import InvalidInputError, KernelCompileError

__all__ = ["FAMILIES", "SHARED_KERNELS", "available_cores", "compile_kernels", "worker_groups"]


def _limbs(n: int) -> tuple[Any, Any]:
    """Random limb poses ``(n, 3, 3)`` (root, mid, end) and targets ``(n, 3)``."""
    import numpy as np

    rng = np.random.default_rng(0)
    root = rng.normal(size=(n, 3))
    mid = root + rng.normal(size=(n, 3))
    end = mid + rng.normal(size=(n, 3))
    target = root + rng.normal(size=(n, 3))
    return np.stack([root, mid, end], axis=-2), target


def _two_bone() -> None:
    import numpy as np

    from limbik.geometry.quaternion import quaternion_normalize
    from limbik.solvers import two_bone

    two_bone([0.0, 0.0, 0.0], [0.3, 0.2, 0.1], 0.3, 0.25)
    pose, target = _limbs(1000)
    root = pose[:, 0]
    solved = two_bone(root, target, 1.0, 0.9, pole=[0.0, 0.0, 1.0])
    two_bone(root, target, 1.0, 0.9, pole=[0.0, 0.0, 1.0], out=solved)
    two_bone(root[:4], target[:4], 1.0, 0.9, pole=[0.0, 0.0, 1.0])
    two_bone(root, target, 1.0, 0.9, bend_axis=[1.0, 0.0, 0.0], softness=0.1)
    rotations = quaternion_normalize(np.random.default_rng(1).normal(size=(1000, 3, 4)))
    two_bone(root, target, 1.0, 0.9, pose=pose, pose_rotations=rotations,
             target_rotation=rotations[:, 2])


def _chains(batch: int, joints: int) -> Any:
    """Random point chains ``(batch, joints, 3)`` rooted at the origin."""
    import numpy as np

    steps = np.random.default_rng(2).normal(size=(batch, joints - 1, 3))
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(steps, axis=1)], axis=1)


def _fabrik() -> None:
    import numpy as np

    from limbik.solvers import Cone, fabrik

    chains = _chains(1000, 6)
    goals = np.random.default_rng(3).normal(scale=2.0, size=(1000, 3))
    for n in (1, 4, 1000):
        fabrik(chains[:n], goals[:n])
        fabrik(chains[:n], goals[:n], constraints=[Cone(0.8)] * 5)
    fabrik(chains[0], goals[0], fixed_root=False)
    folded = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [4.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
    fabrik(folded, [0.0, 1.05, 0.0], close_gap=True)  # FABRIK ends short: the gap kernel


def _fabrik_tree() -> None:
    import numpy as np

    from limbik.solvers import Cone, FabrikTree

    parents = [-1, 0, 1, 2, 3, 2, 5]
    rest = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0],
            [1.4, 3.4, 0]]
    goals = np.random.default_rng(4).normal(scale=2.0, size=(1000, 2, 3))
    for tree in (FabrikTree(parents, rest), FabrikTree(parents, rest, constraints=[Cone(0.8)] * 6)):
        for n in (1, 4, 1000):
            tree.solve({4: goals[:n, 0], 6: goals[:n, 1]})


def _arm() -> tuple[Any, Any]:
    """A 5-joint revolute arm with a fixed tip, and 200 reachable tip poses of it."""
    import numpy as np

    from limbik.chain import Joint, JointChain
    from limbik.geometry import Frame

    step = Frame.from_translation([0.0, 0.3, 0.0])
    joints = [Joint(f"j{i}", "revolute", origin=step, axis=axis, lower=-2.5, upper=2.5)
              for i, axis in enumerate(([0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]))]
    arm = JointChain([*joints, Joint("tip", "fixed", origin=step)])
    return arm, arm.forward(arm.random_q(200, np.random.default_rng(5)))


def _jacobian() -> None:
    """``jacobian_ik``'s default (Levenberg–Marquardt) on positions and poses."""
    from limbik.solvers import jacobian_ik

    arm, poses = _arm()
    q0 = [0.0] * arm.dof
    for target in (poses.position[0], poses.position, poses[0], poses):
        jacobian_ik(arm, target)
    for target in (poses.position, poses):  # warm starts (q0) compile their own variant
        jacobian_ik(arm, target, q0=q0)


def _joint_methods() -> None:
    """The other ``jacobian_ik`` methods, and ``ccd``, on joint chains."""
    from limbik.solvers import ccd, jacobian_ik

    arm, poses = _arm()
    for target in (poses.position[0], poses.position, poses[0], poses):
        ccd(arm, target)
        for method in ("dls", "pinv", "transpose", "svd-dls"):
            jacobian_ik(arm, target, method=method)
    q0 = [0.0] * arm.dof
    for target in (poses.position, poses):  # warm starts: a variant for CCD, one for the rest
        ccd(arm, target, q0=q0)
        jacobian_ik(arm, target, method="dls", q0=q0)


def _ccd_points() -> None:
    """``ccd`` on point chains."""
    import numpy as np

    from limbik.solvers import ccd

    chains = _chains(200, 6)
    goals = np.random.default_rng(6).normal(scale=2.0, size=(200, 3))
    for n in (1, 4, 200):
        ccd(chains[0] if n == 1 else chains[:n], goals[0] if n == 1 else goals[:n])


def _footplant() -> None:
    """Foot placement of a short walk (forward kinematics, contacts, springs, legs), as a
    clip and as joint positions (fitting rotations to them)."""
    from limbik.app.batch import plant_clip
    from limbik.placement.positions import footplant_positions
    from limbik.placement.walk import walk_cycle

    walk = walk_cycle(cycles=0.5, frame_rate=30.0)
    plant_clip(walk)
    plant_clip(walk, terrain="hills")
    footplant_positions(walk.world_positions(), walk.skeleton.parents,
                        names=walk.skeleton.names, fps=30.0)


#: The families :func:`compile_kernels` knows, each a function making its common calls.
FAMILIES: dict[str, Callable[[], None]] = {
    "two_bone": _two_bone,
    "fabrik": _fabrik,
    "fabrik_tree": _fabrik_tree,
    "jacobian": _jacobian,
    "joint_methods": _joint_methods,
    "ccd_points": _ccd_points,
    "footplant": _footplant,
}


#: Families whose calls compile some of the same cached kernels. Each group runs in one
#: worker, one family after the other: two processes adding different type signatures of
#: one kernel to its on-disk cache index at the same time could lose one of them.
SHARED_KERNELS = (("two_bone", "footplant"), ("jacobian", "joint_methods", "ccd_points"))


def worker_groups(names: Sequence[str]) -> list[list[str]]:
    """``names`` split into the groups that run in one worker each (see
    :data:`SHARED_KERNELS`), in the order of their first member."""
    groups: list[list[str]] = []
    placed: dict[str, list[str]] = {}
    for name in names:
        shared = next((g for g in SHARED_KERNELS if name in g), (name,))
        group = next((placed[n] for n in shared if n in placed), None)
        if group is None:
            group = []
            groups.append(group)
        group.append(name)
        placed[name] = group
    return groups


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _compile_family(name: str) -> float:
    """Make one family's calls in this process; return the seconds they took."""
    start = time.perf_counter()
    FAMILIES[name]()
    return time.perf_counter() - start


def compile_kernels(families: str | Sequence[str] | None = None, *, jobs: int | None = None
                    ) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of ``families`` ahead of their use.

    Parameters
    ----------
    families : a name from :data:`FAMILIES`, or several; default all of them.
    jobs : worker processes (default: one per available core); ``1`` compiles in this
        process. Workers are new Python processes, so a script may call this at top level
        (no ``if __name__ == "__main__"`` guard). Families that share kernels share a
        worker (:data:`SHARED_KERNELS`).

    Returns
    -------
    dict
        Seconds per family, as its worker measured them. Kernels already in the cache
        load in a fraction of a second.

    Raises
    ------
    KernelCompileError
        When a worker fails; the message ends with the last line of its error output.
    """
    names = list(FAMILIES) if families is None else (
        [families] if isinstance(families, str) else list(families))
    unknown = [n for n in names if n not in FAMILIES]
    if unknown or not names:
        raise InvalidInputError(
            f"families must be names from {', '.join(FAMILIES)}, got "
            f"{', '.join(map(repr, unknown)) or 'none'}", argument="families")
    if jobs is None:
        jobs = available_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidInputError(f"jobs must be a positive int, got {jobs!r}", argument="jobs")
    if jobs == 1:
        return {name: _compile_family(name) for name in names}
    from concurrent.futures import ThreadPoolExecutor

    # the largest groups first, so that the long ones do not start last
    groups = sorted(worker_groups(names), key=len, reverse=True)
    seconds: dict[str, float] = {}
    # threads that each wait on one worker process
    with ThreadPoolExecutor(max_workers=min(jobs, len(groups))) as pool:
        for result in pool.map(_compile_in_worker, groups):
            seconds.update(result)
    return {name: seconds[name] for name in names}


def _compile_in_worker(names: list[str]) -> dict[str, float]:
    """Compile ``names``, one family after the other, in a new Python process; return
    each family's seconds."""
    import subprocess
    import sys

    code = ("import sys; from limbik.app.warmup import _compile_family; "
            "[print(name, repr(_compile_family(name))) for name in sys.argv[1:]]")
    done = subprocess.run([sys.executable, "-c", code, *names], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        raise KernelCompileError(f"compiling the {' and '.join(names)} kernels failed (exit "
                                 f"{done.returncode}): {last}")
    lines = [line.split() for line in done.stdout.splitlines()]
    seconds = {words[0]: float(words[1]) for words in lines if len(words) == 2
               and words[0] in names}
    if set(seconds) != set(names):
        raise KernelCompileError(f"compiling the {' and '.join(names)} kernels: the worker "
                                 "did not report every family")
    return seconds
