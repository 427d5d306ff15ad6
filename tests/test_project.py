"""Project hygiene: README's commands, CI script, lint and types."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_has_exactly_two_commands():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert "limbik demo" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quick_start_commands()[1] in ci


@pytest.mark.parametrize("tool", ["ruff", "mypy"])
def test_lint_and_types_are_clean(tool):
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (it comes with the test extra)")
    args = {"ruff": ["-m", "ruff", "check", "src", "tests", "benchmarks", "tools"],
            "mypy": ["-m", "mypy"]}[tool]
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_readme_api_lines_run(shared_data, tmp_path, monkeypatch):
    """The README's API block runs as written, given the files it names."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The API in ten lines", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    code = block.group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    # the block writes its own clip; it must never write into the shared data
    assert str(shared_data) not in code and "../shared" not in code
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert bool(scope["arm"].reached) and bool(scope["reach"].reached)  # type: ignore[attr-defined]
    assert (tmp_path / "out.bvh").exists()


def test_the_package_namespace_is_the_public_api():
    """Everything public on ``limbik`` is in ``__all__`` (submodules aside), nothing more."""
    import types

    import limbik

    public = {name for name in dir(limbik) if not name.startswith("_")}
    modules = {name for name in public if isinstance(getattr(limbik, name), types.ModuleType)}
    assert public - modules == set(limbik.__all__) - modules - {"__version__"}
    assert "version" not in public and "PackageNotFoundError" not in public
    assert isinstance(limbik.__version__, str)
