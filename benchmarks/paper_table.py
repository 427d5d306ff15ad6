"""Table 1 of the FABRIK paper (Aristidou & Lasenby 2011), replicated with limbik.

One chain of 10 joints (9 unit bones, straight along +Y, root at the origin) and
``--n`` random targets, each solved from that same straight pose by FABRIK, CCD,
Jacobian transpose, DLS and SVD-DLS:

- reachable targets: uniform in the ball of radius 9 (the chain's length);
- unreachable targets: uniform directions at distance 9.5 to 18.

FABRIK and CCD move the points directly (``limbik.fabrik`` / ``limbik.ccd`` on the
``(n, 3)`` positions). The Jacobian methods run on the same chain converted to
unlimited ball joints (``JointChain.from_points``: three revolute axes per joint,
27 degrees of freedom), from ``q = 0``, without restarts, with the default damping.
Every method stops at distance ``--tolerance`` (default 1e-3) or after
``--max-iterations`` (default 10000). On unreachable targets CCD stops when a sweep
gains less than ``tolerance / 1000``, and the Jacobian methods after 20 steps
without a 0.1 % gain (their ``patience``); on reachable ones the Jacobian methods
run without that early stop, as the paper's plain methods do.

The paper ran MATLAB on a 2011 laptop: only iteration counts and the ratios between
methods are comparable, not absolute times. Each limbik time is one batched call over
all targets divided by ``--n``, after a warm-up call that compiles the kernels.

    PYTHONPATH=src python benchmarks/paper_table.py [--n 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import limbik

# method: (mean iterations, ms per solve) reachable; mean iterations unreachable
PAPER = {
    "FABRIK": (15.461, 13.28, 67.564),
    "CCD": (26.308, 123.56, 390.135),
    "Jacobian transpose": (1311.19, 12990.0, None),
    "Jacobian DLS": (998.648, 10481.0, None),
    "Jacobian SVD-DLS": (808.797, 9297.0, None),
}
N_JOINTS = 10


def targets(rng: np.random.Generator, n: int, low: float, high: float, *,
            in_ball: bool) -> np.ndarray:
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    if in_ball:  # uniform in the ball of radius `high`
        r = high * rng.random(n) ** (1.0 / 3.0)
    else:
        r = rng.uniform(low, high, n)
    return d * r[:, None]


def solvers(points: np.ndarray, tolerance: float, cap: int,
            reachable: bool) -> dict[str, Callable[[np.ndarray], limbik.Solution]]:
    chain = limbik.JointChain.from_points(points)
    q0 = np.zeros(chain.dof)
    patience = cap if reachable else 20

    def jacobian(method: str) -> Callable[[np.ndarray], limbik.Solution]:
        return lambda t: limbik.jacobian_ik(chain, t, method=method, q0=q0, restarts=0,
                                            tolerance=tolerance, max_iterations=cap,
                                            patience=patience)

    return {
        "FABRIK": lambda t: limbik.fabrik(points, t, tolerance=tolerance, max_iterations=cap),
        "CCD": lambda t: limbik.ccd(points, t, tolerance=tolerance, max_iterations=cap),
        "Jacobian transpose": jacobian("transpose"),
        "Jacobian DLS": jacobian("dls"),
        "Jacobian SVD-DLS": jacobian("svd-dls"),
    }


def measure(solve: Callable[[np.ndarray], limbik.Solution],
            goals: np.ndarray) -> tuple[float, float, float]:
    solve(goals[:2])  # compile / load cached kernels
    start = time.perf_counter()
    sol = solve(goals)
    per = (time.perf_counter() - start) / len(goals)
    return float(np.mean(sol.iterations)), per * 1e3, float(np.mean(sol.reached))


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="targets of each kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--max-iterations", type=int, default=10000)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    points = np.stack([np.zeros(N_JOINTS), np.arange(N_JOINTS, dtype=float),
                       np.zeros(N_JOINTS)], axis=-1)
    length = float(N_JOINTS - 1)
    reachable = targets(rng, args.n, 0.0, length, in_ball=True)
    unreachable = targets(rng, args.n, 1.05 * length, 2.0 * length, in_ball=False)

    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    for kind, goals in (("reachable", reachable), ("unreachable", unreachable)):
        results[kind] = {}
        for name, solve in solvers(points, args.tolerance, args.max_iterations,
                                   kind == "reachable").items():
            results[kind][name] = measure(solve, goals)

    reference = "FABRIK"
    print(f"Chain of {N_JOINTS} joints, {args.n} targets of each kind, tolerance "
          f"{args.tolerance:g}, cap {args.max_iterations} iterations.")
    ref_it, ref_ms, _ = results["reachable"][reference]
    paper_ref_it, paper_ref_ms, _ = PAPER[reference]
    print("\nReachable targets")
    print(f"{'method':<20}{'reached':>9}{'iterations':>12}{'paper':>10}"
          f"{'ms/solve':>10}{'paper ms':>10}   iterations / {reference:<7}   time / {reference}")
    print(f"{'':<20}{'':>9}{'':>12}{'':>10}{'':>10}{'':>10}{'limbik':>11}{'paper':>9}"
          f"{'limbik':>10}{'paper':>9}")
    for name, (paper_it, paper_ms, _) in PAPER.items():
        it, ms, reached = results["reachable"][name]
        print(f"{name:<20}{reached:>9.1%}{it:>12.3f}{paper_it:>10.3f}{ms:>10.4f}{paper_ms:>10.2f}"
              f"{it / ref_it:>11.2f}{paper_it / paper_ref_it:>9.2f}"
              f"{ms / ref_ms:>10.2f}{paper_ms / paper_ref_ms:>9.2f}")
    print("\nUnreachable targets (the paper gives iterations for FABRIK and CCD only)")
    print(f"{'method':<20}{'iterations':>12}{'paper':>10}{'ms/solve':>10}")
    for name, (_, _, paper_unreach) in PAPER.items():
        it, ms, _ = results["unreachable"][name]
        print(f"{name:<20}{it:>12.3f}{fmt(paper_unreach, '.3f'):>10}{ms:>10.4f}")


if __name__ == "__main__":
    main()
