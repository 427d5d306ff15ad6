"""Every fenced ``python`` snippet in README.md and docs/*.md runs as written.

A page's snippets run in order in one namespace (as a reader would paste them), in an
empty folder, so a snippet can only use files it writes itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def snippets(page: Path) -> list[str]:
    return FENCE.findall(page.read_text())


def test_the_pages_have_snippets():
    assert sum(len(snippets(page)) for page in PAGES) >= 7


@pytest.mark.parametrize("page", [p for p in PAGES if snippets(p)], ids=lambda p: p.name)
def test_every_snippet_runs_as_written(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"snippet_{page.stem}"}
    for k, code in enumerate(snippets(page)):
        try:
            exec(compile(code, f"{page.name} snippet {k + 1}", "exec"), namespace)
        except Exception as exc:  # name the page and snippet in the failure
            pytest.fail(f"{page.name} snippet {k + 1} raised {type(exc).__name__}: {exc}")


SEED = re.compile(r"\bseeds? 00\d", re.IGNORECASE)


@pytest.mark.parametrize("page", [p for p in PAGES if SEED.search(p.read_text())
                                  and p.name != "sources.md"], ids=lambda p: p.name)
def test_a_page_that_names_a_seed_links_to_the_sources(page):
    target = "sources.md" if page.parent.name == "docs" else "docs/sources.md"
    assert f"]({target})" in page.read_text(), f"{page.name} names a seed without a link"


def test_the_sources_page_names_every_tutorial():
    text = (ROOT / "docs" / "sources.md").read_text()
    for seed in ("000", "001", "002", "003", "004"):
        assert f"| {seed} |" in text


def test_user_facing_titles_name_the_method_not_the_seed():
    """Picture titles and table rows of the demo say what the method is."""
    source = (ROOT / "src" / "limbik" / "app" / "demo" / "scenes.py").read_text()
    for call in re.findall(r"(?:suptitle|set_title|from_solution)\((.*?)(?:, fontsize|\))",
                           source, re.DOTALL):
        assert not re.search(r"[Ss]eeds? ?0|\(00\d", call), call
