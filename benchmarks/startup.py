"""Startup: import time, each solver family's first call (empty and warm cache), and cliffs.

For each family, a fresh Python process with an empty Numba cache (``NUMBA_CACHE_DIR``
pointed at a new temporary folder) times ``import limbik``, the first call (which
compiles the kernels it uses and writes them to the cache) and later calls. A second
fresh process on the now-filled cache times the first call again (loading the kernels
from the cache). Every figure is the minimum over ``--repeat`` runs.

Printed per family: the cold first call, the cached first call, a warm call, and the
ratios cold / warm and cached / warm, measured in this run. ``*_batch`` families time a
first call on 1000 chains, trees or Panda targets.

``--cliffs`` checks, per family, in a fresh process on a warm cache, a one-element call
followed by 20 batch calls: it prints the slowest of those batch calls after the first
against the median of the last ten (1.0x: no slow stretch after a small call).

Also ``import limbik`` and ``limbik --help`` against ``python -c pass`` (interpreter
start) in the same run.

    PYTHONPATH=src python benchmarks/startup.py [--repeat 3] [--family fabrik ...] [--cliffs]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PANDA = Path(os.environ.get("LIMBIK_SHARED_DATA", ROOT.parent / "shared" / "data")) / "urdf" / "panda_example-robot-data.urdf"

#: family → (setup code, call code); the call is timed twice in the process.
FAMILIES = {
    "two_bone": ("", "limbik.two_bone([0, 0, 0], [0.3, 0.2, 0.1], 0.3, 0.25)"),
    "two_bone_batch": ("rng = np.random.default_rng(0)\n"
                       "targets = rng.normal(scale=0.3, size=(100_000, 3))",
                       "limbik.two_bone(np.zeros(3), targets, 0.3, 0.25)"),
    "fabrik": ("chain = np.c_[np.arange(6.0), np.zeros(6), np.zeros(6)]",
               "limbik.fabrik(chain, [2.0, 3.0, 1.0])"),
    "FabrikTree": ("tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], [[0, 0, 0], [0, 1, 0], "
                   "[0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0], [1.4, 3.4, 0]])",
                   "tree.solve({4: [-1.0, 3.0, 0.5], 6: [1.0, 3.2, -0.4]})"),
    "fabrik_batch": ("rng = np.random.default_rng(0)\n"
                     "chains = np.cumsum(rng.normal(size=(1000, 6, 3)), axis=1)\n"
                     "goals = rng.normal(scale=2.0, size=(1000, 3))",
                     "limbik.fabrik(chains, goals)"),
    "FabrikTree_batch": ("rng = np.random.default_rng(0)\n"
                         "tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], [[0, 0, 0], [0, 1, 0], "
                         "[0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0], [1.4, 3.4, 0]])\n"
                         "goals = rng.normal(scale=2.0, size=(1000, 2, 3))",
                         "tree.solve({4: goals[:, 0], 6: goals[:, 1]})"),
    "ccd": ("chain = np.c_[np.arange(6.0), np.zeros(6), np.zeros(6)]",
            "limbik.ccd(chain, [2.0, 3.0, 1.0])"),
    "ccd_batch": ("rng = np.random.default_rng(0)\n"
                  "chains = np.cumsum(rng.normal(size=(1000, 6, 3)), axis=1)\n"
                  "goals = rng.normal(scale=2.0, size=(1000, 3))",
                  "limbik.ccd(chains, goals)"),
    "jacobian_ik": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', 'panda_hand_tcp')",
                    "limbik.jacobian_ik(arm, [0.4, 0.1, 0.5])"),
    "jacobian_ik_batch": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', 'panda_hand_tcp')\n"
                          "rng = np.random.default_rng(0)\n"
                          "targets = rng.uniform([0.1, -0.4, 0.1], [0.6, 0.4, 0.8], size=(1000, 3))",
                          "limbik.jacobian_ik(arm, targets)"),
    "jacobian_ik_pose_batch": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', "
                               "'panda_hand_tcp')\n"
                               "goals = arm.forward(arm.random_q(1000, np.random.default_rng(0)))",
                               "limbik.jacobian_ik(arm, goals)"),
}
FAMILIES["jacobian_ik_dls_batch"] = (FAMILIES["jacobian_ik_batch"][0],
                                     "limbik.jacobian_ik(arm, targets, method='dls')")
FAMILIES["jacobian_ik_dls_pose_batch"] = (FAMILIES["jacobian_ik_pose_batch"][0],
                                          "limbik.jacobian_ik(arm, goals, method='dls')")

CHILD = """
import time
t0 = time.perf_counter()
import limbik
t1 = time.perf_counter()
import numpy as np
{setup}
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
{call}
t4 = time.perf_counter()
{call}
t5 = time.perf_counter()
import json
print(json.dumps({{"import": t1 - t0, "first": t3 - t2, "second": min(t4 - t3, t5 - t4)}}))
"""

#: A one-element call, then 20 batch calls, each timed (warm cache).
CLIFF = """
import time, json
import limbik
import numpy as np
{setup}
{small}
times = []
for _ in range(20):
    t = time.perf_counter()
    {call}
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""

#: family → its one-element call, for ``--cliffs`` (the batch call is FAMILIES' call).
SMALL = {
    "two_bone_batch": "limbik.two_bone(np.zeros(3), targets[:1], 0.3, 0.25)",
    "fabrik_batch": "limbik.fabrik(chains[:1], goals[:1])",
    "FabrikTree_batch": "tree.solve({4: goals[:1, 0], 6: goals[:1, 1]})",
    "ccd_batch": "limbik.ccd(chains[:1], goals[:1])",
    "jacobian_ik_batch": "limbik.jacobian_ik(arm, targets[:2])",
    "jacobian_ik_dls_batch": "limbik.jacobian_ik(arm, targets[:2], method='dls')",
    "jacobian_ik_pose_batch": "limbik.jacobian_ik(arm, goals[:2])",
    "jacobian_ik_dls_pose_batch": "limbik.jacobian_ik(arm, goals[:2], method='dls')",
}


def run_child(code: str, cache: str) -> object:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def wall(argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def family(name: str, repeat: int) -> dict[str, float]:
    setup, call = FAMILIES[name]
    code = CHILD.format(setup=setup, call=call)
    best = {"cold": float("inf"), "cached": float("inf"), "warm": float("inf")}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            cold = run_child(code, cache)
            cached = run_child(code, cache)
        assert isinstance(cold, dict) and isinstance(cached, dict)
        best["cold"] = min(best["cold"], cold["first"])
        best["cached"] = min(best["cached"], cached["first"])
        best["warm"] = min(best["warm"], cold["second"], cached["second"])
    return best


def cliff(name: str) -> tuple[float, float]:
    """(slowest batch call after the first, median of the last ten) after a small call."""
    setup, call = FAMILIES[name]
    with tempfile.TemporaryDirectory() as cache:
        run_child(CHILD.format(setup=setup, call=call + "\n" + SMALL[name]), cache)  # fills it
        times = run_child(CLIFF.format(setup=setup, small=SMALL[name], call=call), cache)
    assert isinstance(times, list)
    return max(times[1:]), sorted(times[10:])[5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--family", action="append", choices=list(FAMILIES))
    parser.add_argument("--cliffs", action="store_true", help="also the small-call check")
    args = parser.parse_args()
    py = sys.executable
    base = min(wall([py, "-c", "pass"]) for _ in range(args.repeat * 3))
    imp = min(wall([py, "-c", "import limbik"]) for _ in range(args.repeat * 3))
    cli = min(wall([py, "-m", "limbik", "--help"]) for _ in range(args.repeat * 3))
    print(f"python -c pass    {base:7.3f} s")
    print(f"import limbik     {imp:7.3f} s   ({imp - base:.3f} s over the interpreter, "
          f"{imp / base:.2f}x python -c pass)")
    print(f"limbik --help     {cli:7.3f} s   ({cli - base:.3f} s over the interpreter, "
          f"{cli / base:.2f}x python -c pass)")
    print(f"\nfirst call per family, minimum of {args.repeat} (fresh process each; cold = "
          "empty Numba cache)")
    print(f"{'family':<26} {'cold s':>7} {'cached s':>9} {'warm ms':>9} {'cold/warm':>10} "
          f"{'cached/warm':>12}")
    for name in args.family or list(FAMILIES):
        b = family(name, args.repeat)
        print(f"{name:<26} {b['cold']:7.2f} {b['cached']:9.3f} {1e3 * b['warm']:9.3f} "
              f"{b['cold'] / b['warm']:9.0f}x {b['cached'] / b['warm']:11.1f}x", flush=True)
    if args.cliffs:
        print("\nafter a one-element call, warm cache: slowest later batch call / steady state")
        for name in args.family or list(SMALL):
            if name in SMALL:
                worst, steady = cliff(name)
                print(f"{name:<26} {worst / steady:6.2f}x", flush=True)


if __name__ == "__main__":
    main()
