"""docs/architecture.md names only modules that exist, and the rooms keep their import rules."""

from __future__ import annotations

import ast
import re

from conftest import ROOT

PAGE = ROOT / "docs" / "architecture.md"
# The library's and the CLI's faces render documents, as the action does.
ENTRY_POINTS = ("leaderboard/__init__.py", "leaderboard/cli.py")


def test_every_module_the_architecture_page_names_exists() -> None:
    named = set(re.findall(r"`(leaderboard/[\w/]+\.py)`", PAGE.read_text()))
    assert len(named) > 40
    missing = sorted(path for path in named if not (ROOT / path).is_file())
    assert missing == []


def test_every_module_of_the_package_is_on_the_architecture_page() -> None:
    named = set(re.findall(r"`(leaderboard/[\w/]+\.py)`", PAGE.read_text()))
    modules = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "leaderboard").rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py") and not path.name.startswith("_")
    }
    assert sorted(modules - named) == []


def imports_of(path: str) -> set[str]:
    """The package modules a module imports, as dotted names relative to the package."""
    tree = ast.parse((ROOT / path).read_text())
    package = path.removesuffix(".py").replace("/", ".").rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                out.add(".".join([*base, node.module] if node.module else base))
            elif node.module and node.module.startswith("leaderboard"):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name.startswith("leaderboard"))
    return out


def test_the_core_imports_neither_the_documents_nor_the_action_and_the_documents_not_the_action() -> None:
    broken = []
    for path in sorted((ROOT / "leaderboard").rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if relative in ENTRY_POINTS:
            continue
        room = relative.split("/")[1] if relative.count("/") > 1 else "core"
        for target in imports_of(relative):
            if room in ("core", "stats", "formats") and target.startswith(("leaderboard.report", "leaderboard.action")):
                broken.append((relative, target))
            if room == "report" and target.startswith("leaderboard.action"):
                broken.append((relative, target))
    assert broken == []
