"""Long fuzz runs of the BVH, URDF and ``limbik solve`` JSON inputs.

    python tools/fuzz.py --seconds 600 --seed 1000 [--only bvh] [--memory-gib 1]

Runs the seeded fuzzers of ``tests/fuzzers.py`` in rounds of 200 cases, each round
with the next seed, until the time is up; prints every broken promise with the seed
and case that reproduce it, and exits 1 if there was one. The address space is
capped (default 1 GiB) so a memory blow-up is a failure, not a swapping machine.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzers import FUZZERS, check_bvh_text, hostile_bvh_files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--only", choices=sorted(FUZZERS), action="append")
    parser.add_argument("--memory-gib", type=float, default=1.0)
    args = parser.parse_args()
    limit = int(args.memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    failures = [f"hostile {name}: {problem}" for name, text in hostile_bvh_files().items()
                if (problem := check_bvh_text(text)) is not None]
    names = args.only or sorted(FUZZERS)
    cases = dict.fromkeys(names, 0)
    seed = args.seed
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for name in names:
            failures += FUZZERS[name](seed, 200)
            cases[name] += 200
        seed += 1
    for line in failures:
        print(line)
    print(f"seeds {args.seed}..{seed - 1}, cases {cases}, failures {len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
