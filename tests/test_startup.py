"""Startup: importing limbik and building the command line stay cheap (no heavy imports)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import limbik

HEAVY = ("scipy", "numba", "matplotlib")


def modules_after(code: str) -> set[str]:
    """Top-level module names in ``sys.modules`` after running ``code`` in a fresh Python."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import limbik",
    "import limbik; limbik.LimbikError; limbik.errors; limbik.__version__",
    "from limbik.app.cli import build_parser; build_parser().format_help()",
    "from limbik.geometry import Frame; Frame.identity()",
])
def test_cheap_entry_points_import_no_heavy_library(code):
    """Importing limbik, reading its version and building the CLI parser load none of SciPy, Numba, matplotlib."""
    assert modules_after(code).isdisjoint(HEAVY)


def test_every_public_name_resolves():
    """Each name in ``limbik.__all__`` loads on first access and is the object its module defines."""
    for name in limbik.__all__:
        assert getattr(limbik, name) is not None, name
    assert limbik.two_bone is limbik.solvers.two_bone
    assert limbik.Frame.__module__ == "limbik.geometry.frame"
    assert set(limbik.__all__) <= set(dir(limbik))


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = limbik.no_such_name  # type: ignore[attr-defined]


def test_cli_says_once_when_kernels_compile(tmp_path):
    """With an empty Numba cache the first solve says it compiles; the next run is silent."""
    import os

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "limbik", "solve", "--lengths", "0.3", "0.25",
            "--target", "0.2", "0.3", "0.1", "--pole", "0", "0", "1"]
    cold = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    assert cold.stderr.count("compiling kernels on first use") == 1
    assert "compiling" not in warm.stderr
    assert cold.stdout == warm.stdout and "two_bone: reached" in cold.stdout
