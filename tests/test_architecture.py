"""The package's layers: every import points down, and no modules import each other.

DESIGN.md states the rule; this test reads every ``import`` in ``src/limbik`` (also the
ones inside functions) and checks it against :data:`LEVELS`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "limbik"

#: Each top-level module or package of limbik and its level: a module may import only
#: from levels below its own (or from its own package). The root package (the lazy
#: public names) and ``__main__`` sit above everything.
LEVELS = {
    "errors": 0, "tolerances": 0,
    "threads": 1,
    "_runtime": 2,
    "geometry": 3,
    "chain": 4, "skeleton": 4,
    "solvers": 5,
    "io": 6,
    "body": 7, "metrics": 7, "roblox": 7,
    "placement": 8, "rigs": 8,
    "viz": 9,
    "app": 10,
    "__init__": 11, "__main__": 11,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The limbik modules ``name`` imports (a name imported from a package counts as its
    submodule where one exists)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "limbik"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if base.split(".")[0] != "limbik":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return found & set(MODULES)


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_top_level_part_has_a_level():
    assert {_top(m) for m in MODULES} <= set(LEVELS)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    own = _top(name)
    wrong = sorted(m for m in GRAPH[name]
                   if _top(m) not in (own, "__init__") and LEVELS[_top(m)] >= LEVELS[own])
    assert not wrong, f"{name} (level {LEVELS[own]}) imports {wrong}"


def test_no_import_cycles():
    """Tarjan's strongly connected components over module imports (the root package,
    which every import passes through, left out)."""
    graph = {m: {d for d in deps if d != "limbik"} for m, deps in GRAPH.items()
             if m != "limbik"}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_module_names_numbas_private_parts():
    private = ("numba.core", "numba.misc", "numba.np", "numba.typed", "numba.cpython",
               "_nrt", "no_cpython_wrapper", "no_cfunc_wrapper")
    hits = [f"{path.relative_to(SRC)}: {word}" for path in SRC.rglob("*.py")
            for word in private if word in path.read_text()]
    assert hits == []
