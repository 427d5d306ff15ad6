"""``limbik compile``: the kernels compiled ahead of their first use."""

from __future__ import annotations

import argparse
from typing import Any

from limbik.app.cli._args import positive_int


def _cmd_compile(args: argparse.Namespace) -> int:
    import time

    from limbik.app.warmup import available_cores, compile_kernels, worker_groups

    names = args.family or None
    jobs = args.jobs if args.jobs is not None else available_cores()
    start = time.perf_counter()
    seconds = compile_kernels(names, jobs=jobs)
    elapsed = time.perf_counter() - start
    for name, took in seconds.items():
        print(f"{name:<14} {took:6.1f} s")
    processes = 1 if jobs == 1 else min(jobs, len(worker_groups(list(seconds))))
    where = "in this process" if jobs == 1 else f"on {processes} processes"
    count = f"{len(seconds)} famil{'y' if len(seconds) == 1 else 'ies'}"
    print(f"{count} compiled (or loaded from the cache) in {elapsed:.1f} s "
          f"{where}; their first calls now load the kernels from the cache")
    return 0


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    from limbik.app.warmup import FAMILIES

    compile_ = sub.add_parser(
        "compile", help="compile the kernels ahead of their first use (all cores)",
        description="Compile limbik's kernels ahead of their first use and cache them on "
        "disk, the solver families in parallel processes, so that later first calls load "
        "them in a fraction of a second. Run it once after an install (a container build, "
        "a cluster node, a game's loading screen).")
    compile_.add_argument("--family", action="append", choices=list(FAMILIES), metavar="NAME",
                          help="only this family (repeatable): " + ", ".join(FAMILIES))
    compile_.add_argument("--jobs", type=positive_int, default=None,
                          help="worker processes (default: one per core)")
    compile_.set_defaults(handler=_cmd_compile)
