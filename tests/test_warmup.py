"""Compiling ahead: after ``limbik compile``, a new process compiles nothing for those calls."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from limbik.app.warmup import (
    FAMILIES,
    SHARED_KERNELS,
    available_cores,
    compile_kernels,
    worker_groups,
)
from limbik.errors import InvalidInputError, KernelCompileError

#: Run in a fresh process: each family's calls, counting the limbik kernels compiled.
CHECK = """
import sys
from numba.core import event
from limbik.app import warmup

compiled = []


class Count(event.Listener):
    def on_start(self, ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if getattr(func, "__module__", "").startswith("limbik."):
            compiled.append(func.__qualname__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Count())
for name in sys.argv[1:]:
    warmup.FAMILIES[name]()
print("compiled:", ",".join(compiled))
"""


def run(args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_after_limbik_compile_the_first_calls_load_from_the_cache(tmp_path):
    families = ["ccd_points", "two_bone"]
    # on an empty cache the calls compile: the check below can see a compilation
    cold = run(["-c", CHECK, "ccd_points"], tmp_path / "cold")
    assert cold.returncode == 0, cold.stderr
    assert "ccd_points_solve_range" in cold.stdout

    done = run(["-m", "limbik", "compile", "--jobs", "2",
                *[a for f in families for a in ("--family", f)]], tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[:2]] == families
    assert "2 families compiled (or loaded from the cache)" in lines[-1]

    warm = run(["-c", CHECK, *families], tmp_path / "cache")
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.strip() == "compiled:"


def test_a_failing_worker_is_one_clear_error(monkeypatch):
    false = shutil.which("false")
    if false is None:
        pytest.skip("no 'false' command to stand in for a failing worker")
    monkeypatch.setattr(sys, "executable", false)  # every worker exits 1
    with pytest.raises(KernelCompileError, match=r"compiling the two_bone kernels failed \(exit 1\)"):
        compile_kernels(["two_bone", "ccd_points"], jobs=2)


def test_bad_families_and_jobs_are_refused():
    with pytest.raises(InvalidInputError, match="families must be names from two_bone"):
        compile_kernels(["two_bones"])
    with pytest.raises(InvalidInputError, match=r"got 'fabrick'$"):
        compile_kernels("fabrick")  # one name, not its letters
    with pytest.raises(InvalidInputError, match="got none"):
        compile_kernels([])
    with pytest.raises(InvalidInputError, match="jobs must be a positive int, got 0"):
        compile_kernels(["two_bone"], jobs=0)
    assert set(FAMILIES) >= {"two_bone", "fabrik", "fabrik_tree", "jacobian", "footplant"}
    assert available_cores() >= 1


def test_families_that_share_kernels_share_a_worker():
    groups = worker_groups(list(FAMILIES))
    assert sorted(n for g in groups for n in g) == sorted(FAMILIES)  # each family once
    for shared in SHARED_KERNELS:
        assert any(set(shared) <= set(g) for g in groups)
    assert worker_groups(["footplant", "fabrik", "two_bone"]) == [["footplant", "two_bone"],
                                                                  ["fabrik"]]
    assert worker_groups(["fabrik"]) == [["fabrik"]]
