"""Cone-limited FABRIK on truly reachable targets: the share reached, limits, latency.

Each case is a chain of 4-12 joints (bones 0.5-1.5 long, bone 0 free) with its own
``EllipticalCone`` on every inner joint (four angles uniform in 5-60°, different per
joint; ``--same``: one for every inner joint; ``--root-frame``: on bone 0 too, against
the identity root frame, started straight along its look), or one ``Cone`` of 10-60°
(``--cones``). Its target is the end point of a random pose that satisfies the limits,
of one of two kinds:

- ``projected``: random bone directions made admissible by the constraints' own forward
  pass (``max_iterations=0``), so most bends lie on their limit;
- ``sampled``: every bend a random point of its limit's cross-section (70% uniform in
  it, 30% within the outer tenth).

Each target is solved by one ``fabrik`` call from the straight chain (along +Y, or the
root frame's look) with the default options. The script prints the share reached within the default tolerance, the
largest move the forward pass makes on a solved pose (0 when no limit is broken), and
the per-call time (median, 95th percentile, worst). ``--no-polish`` turns the
elliptical-cone polish off, to compare.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from limbik import Cone, EllipticalCone, Frame, fabrik
from limbik.solvers.constraints import encode_constraints
from limbik.solvers.fabrik import chain as fabrik_chain
from limbik.solvers.fabrik.chain import _IDENTITY_FRAME
from limbik.solvers.fabrik.polish import _Chain

ROOT = Frame.identity()


def case(rng: np.random.Generator, kind: str, cones: bool, same: bool = False,
         rooted: bool = False) -> tuple[list, np.ndarray, np.ndarray]:
    """(constraints, straight start pose, target) of one random chain."""
    n = int(rng.integers(4, 13))
    lengths = rng.uniform(0.5, 1.5, n - 1)
    if cones:
        limits: list = [None] + [Cone(np.radians(rng.uniform(10, 60)))] * (n - 2)
    elif rooted:
        limits = [EllipticalCone(*np.radians(rng.uniform(5, 60, 4))) for _ in range(n - 1)]
    elif same:
        limits = [None] + [EllipticalCone(*np.radians(rng.uniform(5, 60, 4)))] * (n - 2)
    else:
        limits = [None] + [EllipticalCone(*np.radians(rng.uniform(5, 60, 4)))
                           for _ in range(n - 2)]
    start = np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * (
        [0.0, 0.0, -1.0] if rooted else [0.0, 1.0, 0.0])
    if kind == "projected":
        bones = rng.normal(size=(n - 1, 3))
        bones *= (lengths / np.linalg.norm(bones, axis=-1))[:, None]
        raw = np.concatenate([[np.zeros(3)], np.cumsum(bones, axis=0)])
    else:
        encoded = encode_constraints(limits, n - 1)
        chain = _Chain((*encoded, False, False), _IDENTITY_FRAME)
        angle = rng.uniform(0.0, 2 * np.pi, n - 2)
        edge = rng.uniform(size=n - 2) < 0.3
        radius = np.where(edge, rng.uniform(0.9, 1.0, n - 2), np.sqrt(rng.uniform(size=n - 2)))
        rho = np.arcsin(radius)  # the parameterisation's sin(ρ) is the radius
        q = np.concatenate([rng.normal(size=3), np.c_[rho * np.cos(angle),
                                                      rho * np.sin(angle)].ravel()])
        d0 = np.array([0.0, 0.0, -1.0])
        raw = chain.positions(q[None, None], d0[None], np.zeros((1, 3)), lengths[None])[0, 0]
    target = fabrik(raw, raw[-1], constraints=limits, max_iterations=0,
                    root_frame=ROOT if rooted else None).positions[-1]
    return limits, start, target


def measure(count: int, seed: int, kind: str, cones: bool, same: bool, rooted: bool) -> None:
    rng = np.random.default_rng(seed)
    cases = [case(rng, kind, cones, same, rooted) for _ in range(count)]
    frame = ROOT if rooted else None
    fabrik(cases[0][1], cases[0][2], constraints=cases[0][0], root_frame=frame)  # compile
    reached = np.zeros(count, dtype=bool)
    seconds = np.zeros(count)
    broken = 0.0
    ran = np.zeros(count, dtype=bool)
    calls = [0]
    polish_rows = fabrik_chain._polish_rows

    def counted(*args: object) -> None:
        calls[0] += 1
        polish_rows(*args)

    fabrik_chain._polish_rows = counted
    for k, (limits, start, target) in enumerate(cases):
        calls[0] = 0
        t0 = time.perf_counter()
        s = fabrik(start, target, constraints=limits, root_frame=frame)
        seconds[k] = time.perf_counter() - t0
        reached[k] = bool(s.reached)
        ran[k] = calls[0] > 0
        again = fabrik(s.positions, target, constraints=limits, max_iterations=0,
                       root_frame=frame).positions
        broken = max(broken, float(np.abs(again - s.positions).max()))
    ms = 1e3 * seconds
    name = ("cones" if cones else "one ellipse" if same
            else "ellipses, bone 0 too" if rooted else "ellipses")
    print(f"{name} {kind:9s} polish={fabrik_chain._POLISH!s:5s} "
          f"reached {reached.mean():7.2%} of {count}  largest forward-pass move {broken:.1e}  "
          f"ms per call: median {np.median(ms):.3f}, 95% {np.percentile(ms, 95):.2f}, "
          f"worst {ms.max():.1f}")
    fabrik_chain._polish_rows = polish_rows
    polished = ms[ran]
    if polished.size:
        print(f"  {polished.size} calls polished: ms per call median {np.median(polished):.1f}, "
              f"95% {np.percentile(polished, 95):.1f}, worst {polished.max():.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="targets per kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kind", choices=("projected", "sampled", "both"), default="both")
    parser.add_argument("--cones", action="store_true", help="circular Cone limits instead")
    parser.add_argument("--same", action="store_true",
                        help="one EllipticalCone on every inner joint of a chain")
    parser.add_argument("--root-frame", action="store_true",
                        help="ellipses on bone 0 too, against the identity root frame "
                             "(projected targets)")
    parser.add_argument("--no-polish", action="store_true", help="without the polish")
    args = parser.parse_args()
    fabrik_chain._POLISH = not args.no_polish
    kinds = ("projected", "sampled") if args.kind == "both" else (args.kind,)
    for kind in ("projected",) if args.root_frame else kinds:
        measure(args.count, args.seed, kind, args.cones, args.same, args.root_frame)


if __name__ == "__main__":
    main()
