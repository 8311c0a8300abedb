"""The layout's rules that import-linter (pyproject.toml, run by scripts/test) does not
check: no `_private` name crosses a module, no import of the app hides in a function
(the way a cycle is dodged), and the README stays a newcomer's page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "app").rglob("*.py"))


def parsed():
    for path in SOURCES:
        yield path.relative_to(ROOT), ast.parse(path.read_text())


def app_module(node: ast.ImportFrom) -> bool:
    return node.level > 0 or (node.module or "").split(".")[0] == "app"


def test_no_private_name_is_imported_from_another_module():
    crossing = [
        f"{path}:{node.lineno} imports {alias.name}"
        for path, tree in parsed()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and app_module(node)
        for alias in node.names
        if alias.name.startswith("_")
    ]
    assert crossing == []


def test_no_private_name_is_read_through_another_module():
    """`module._name` of a module of the app imported under that name."""
    reads = []
    for path, tree in parsed():
        modules = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and app_module(node)
            for alias in node.names
        } | {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
            if alias.name.split(".")[0] == "app"
        }
        reads += [
            f"{path}:{node.lineno} reads {node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ]
    assert reads == []


def test_no_import_of_the_app_inside_a_function():
    hidden = [
        f"{path}:{node.lineno} in {func.name}"
        for path, tree in parsed()
        for func in ast.walk(tree)
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(func)
        if (isinstance(node, ast.ImportFrom) and app_module(node))
        or (
            isinstance(node, ast.Import)
            and any(alias.name.split(".")[0] == "app" for alias in node.names)
        )
    ]
    assert hidden == []


def test_the_readme_is_short_and_names_no_work_period():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    periods = re.compile(
        r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
        r"twelfth|\w+teenth|twentieth|twenty-\w+|thirtieth)\s+(session|period|stop)\b",
        re.IGNORECASE,
    )
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        assert periods.findall(doc.read_text()) == [], doc.name
