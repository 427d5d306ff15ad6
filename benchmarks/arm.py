"""Robot arms: limbik's joint-space solvers against ikpy on the same reachable targets.

For the Franka Panda (``panda_link0`` → ``panda_hand_tcp``) and the KUKA iiwa
(``lbr_iiwa_link_0`` → ``lbr_iiwa_link_7``) from ``../shared/data/urdf/``, draws
``--n`` joint configurations uniformly within the limits and uses their tip
positions as targets. Every limbik method (default options) and ikpy
(``Chain.inverse_kinematics``, default options) solve the same targets in one run.

Reported per method: success (tip within 1 mm of the target, checked with each
library's own forward kinematics), whether all joints stay within the limits, time
per solve, and the speed ratio over ikpy measured in this run. limbik solves the
whole batch in one call (time per solve = batch time / n, after a warm-up call that
compiles the kernels); ikpy solves one target per call.

    PYTHONPATH=src python benchmarks/arm.py [--n 1000] [--ikpy-n N] [--seed 0]

``--ikpy-n`` times ikpy on the first N targets only (it is ~1000x slower); its success
rate and time per solve are then over those N.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import limbik

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"
ROBOTS = [
    ("Panda", "panda_example-robot-data.urdf", "panda_link0", "panda_hand_tcp"),
    ("iiwa", "kuka_iiwa_pybullet_data.urdf", "lbr_iiwa_link_0", "lbr_iiwa_link_7"),
]
METHODS = [("jacobian dls", "dls"), ("jacobian svd-dls", "svd-dls"),
           ("jacobian pinv", "pinv"), ("jacobian transpose", "transpose"), ("ccd", None)]
SUCCESS = 1e-3  # metres


def run_limbik(chain, method, targets):
    def solve(t):
        if method is None:
            return limbik.ccd(chain, t)
        return limbik.jacobian_ik(chain, t, method=method)

    solve(targets[:2])  # compile / load the cached kernels
    start = time.perf_counter()
    sol = solve(targets)
    elapsed = time.perf_counter() - start
    tip = chain.forward(sol.q).position
    success = np.linalg.norm(tip - targets, axis=-1) < SUCCESS
    return success.mean(), bool(chain.within_limits(sol.q, atol=0.0).all()), elapsed / len(targets)


def run_ikpy(path, base, chain, targets):
    from ikpy.chain import Chain

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # ikpy follows the first child at each link; mask the fixed joints out
        ik = Chain.from_urdf_file(str(path), base_elements=[base])
        names = [link.name for link in ik.links]
        mask = [name in chain.joint_names for name in names]
        ik = Chain.from_urdf_file(str(path), base_elements=[base], active_links_mask=mask)
        assert sum(mask) == chain.dof, names
        lo = chain.lower
        hi = chain.upper
        success = []
        within = True
        start = time.perf_counter()
        solutions = [ik.inverse_kinematics(t) for t in targets]
        elapsed = time.perf_counter() - start
        for t, full in zip(targets, solutions, strict=True):
            tip = ik.forward_kinematics(full)[:3, 3]
            success.append(np.linalg.norm(tip - t) < SUCCESS)
            q = np.asarray(full)[np.array(mask)]
            within &= bool(np.all((q >= lo - 1e-9) & (q <= hi + 1e-9)))
    return float(np.mean(success)), within, elapsed / len(targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="targets per robot")
    parser.add_argument("--ikpy-n", type=int, default=None,
                        help="time ikpy on the first N targets only (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for label, filename, base, tip in ROBOTS:
        path = DATA / filename
        chain = limbik.load_urdf(path, base, tip)
        targets = chain.forward(chain.random_q(args.n, rng)).position
        n_ikpy = args.n if args.ikpy_n is None else min(args.ikpy_n, args.n)
        ik_rate, ik_within, ik_time = run_ikpy(path, base, chain, targets[:n_ikpy])
        print(f"\n{label}: {base} -> {tip}, dof {chain.dof}, {args.n} targets "
              f"(ikpy on {n_ikpy}), success = tip within {SUCCESS * 1e3:g} mm")
        print(f"{'method':<26}{'success':>9}{'limits kept':>13}{'time/solve':>13}"
              f"{'speed vs ikpy':>15}")
        for name, method in METHODS:
            rate, within, per = run_limbik(chain, method, targets)
            print(f"{'limbik ' + name:<26}{rate:>9.1%}{('yes' if within else 'NO'):>13}"
                  f"{per * 1e6:>10.1f} us{ik_time / per:>14.0f}x")
        print(f"{'ikpy (defaults)':<26}{ik_rate:>9.1%}{('yes' if ik_within else 'NO'):>13}"
              f"{ik_time * 1e6:>10.1f} us{1.0:>14.0f}x")


if __name__ == "__main__":
    main()
