"""The command line, called in-process."""

from __future__ import annotations

import json

import pytest

from limbik import __version__
from limbik.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_demo_prints_a_table_as_json(capsys):
    assert main(["demo", "--no-pictures", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list)
    for row in rows:
        assert {"scene", "solver", "reached", "max_error", "mean_iterations", "ms"} <= set(row)
