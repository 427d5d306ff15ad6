"""Thread scaling of every batched solver, with a bit-for-bit check, in one run.

For each family, one batch is solved at every thread count given (default: 1 and
all of Numba's threads); the time is the best of ``--repeat`` runs, interleaved so
load from other processes hits every count alike. Printed: the speed-up over one
thread and the speed-up divided by the thread count (parallel efficiency), and
whether every output array is identical, bit for bit, to the one-thread result.

    PYTHONPATH=src python benchmarks/threads.py [--threads 1 2] [--repeat 3] [--scale 1.0]

Batches (``--scale`` multiplies them): 10^6 two-bone limbs, 2·10^4 FABRIK chains of
8 joints, 10^4 FabrikTree trees (7 joints, 2 effectors), 2·10^4 CCD point chains,
10^4 Panda pose targets for ``jacobian_ik`` (LM), 10^5 frames of forward kinematics
of a 30-joint skeleton; and two batches of about a millisecond, where waking the helper
threads is a visible share of the time: 3·10^4 two-bone limbs and 600 FABRIK chains.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from numba import config

import limbik
from limbik.skeleton.motion import forward_kinematics

DATA = Path(os.environ.get("LIMBIK_SHARED_DATA",
                           Path(__file__).resolve().parents[1].parent / "shared" / "data"))
PANDA = DATA / "urdf" / "panda_example-robot-data.urdf"


def chains(rng, batch, n):
    steps = rng.normal(size=(batch, n - 1, 3))
    return np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(steps, axis=1)], axis=1)


def families(rng, scale):
    def size(n):
        return max(1, int(n * scale))

    limb_goals = rng.normal(size=(size(10**6), 3))
    fab = chains(rng, size(2 * 10**4), 8)
    fab_goals = rng.normal(scale=3.0, size=(len(fab), 3))
    tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], chains(rng, 1, 7)[0])
    tree_goals = rng.normal(scale=2.0, size=(size(10**4), 2, 3))
    parents = np.r_[-1, np.arange(29)]
    rot = rng.normal(size=(size(10**5), 30, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    trans = rng.normal(size=(size(10**5), 30, 3))
    out = {
        "two_bone (10^6)": lambda: limbik.two_bone(np.zeros(3), limb_goals, 0.8, 0.7,
                                                   pole=[0.0, 0.0, 1.0]),
        "fabrik": lambda: limbik.fabrik(fab, fab_goals),
        "FabrikTree": lambda: tree.solve({4: tree_goals[:, 0], 6: tree_goals[:, 1]}),
        "ccd (points)": lambda: limbik.ccd(fab, fab_goals),
        "forward kinematics": lambda: forward_kinematics(parents, rot, trans),
        "two_bone (3*10^4, ~1 ms)": lambda: limbik.two_bone(
            np.zeros(3), limb_goals[:30_000], 0.8, 0.7, pole=[0.0, 0.0, 1.0]),
        "fabrik (600, ~0.7 ms)": lambda: limbik.fabrik(fab[:600], fab_goals[:600]),
    }
    if PANDA.exists():
        arm = limbik.load_urdf(PANDA, "panda_link0", "panda_hand_tcp")
        poses = arm.forward(arm.random_q(size(10**4), rng))
        out["jacobian_ik (Panda pose, lm)"] = lambda: limbik.jacobian_ik(arm, poses)
    else:
        print(f"no Panda URDF at {PANDA}: jacobian_ik skipped (set LIMBIK_SHARED_DATA)")
    return out


def arrays(result):
    if isinstance(result, tuple):
        return list(result)
    return [a for a in (result.positions, result.reached, result.error, result.iterations,
                        result.q) if a is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    most = int(config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    parser.add_argument("--threads", type=int, nargs="+", default=sorted({1, most}))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, Numba threads available: {most}; threads timed: "
          f"{args.threads}; best of {args.repeat}")
    header = f"{'family':<30}" + "".join(f"{f'{n} thr':>10}" for n in args.threads[1:])
    print(header + f"{'efficiency':>12}{'bit-identical':>15}")
    for name, solve in families(np.random.default_rng(0), args.scale).items():
        limbik.set_num_threads(1)
        reference = arrays(solve())  # also compiles / loads the kernels
        best = {n: float("inf") for n in args.threads}
        same = True
        for _ in range(args.repeat):
            for n in args.threads:
                limbik.set_num_threads(n)
                start = time.perf_counter()
                result = solve()
                best[n] = min(best[n], time.perf_counter() - start)
                same &= all(a.tobytes() == b.tobytes()
                            for a, b in zip(reference, arrays(result), strict=True))
        base = best[args.threads[0]]
        speedups = [base / best[n] for n in args.threads[1:]]
        eff = speedups[-1] / args.threads[-1] * args.threads[0] if speedups else 1.0
        print(f"{name:<30}" + "".join(f"{s:>9.2f}x" for s in speedups)
              + f"{eff:>11.0%} {'yes' if same else 'NO':>14}", flush=True)
    limbik.set_num_threads(most)


if __name__ == "__main__":
    main()
