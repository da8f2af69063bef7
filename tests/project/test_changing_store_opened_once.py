"""A changing run's stores are opened in one place (issue #46): its own store and each of its
``--jobs`` sessions by api/opening.py's ``open_changing``, handed down as an opener; no module of
the runs (changes/, prune/, erase/, rewind/, export/) opens a store itself, except the deprecated
``run`` and ``plan`` functions, which stand in for the API. (migrate's worker processes open
their own, in the child process.)"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "symfonic_cli"
RUNS = ("api", "changes", "prune", "erase", "rewind", "export")
DEPRECATED = {("prune/run.py", "run"), ("erase/run.py", "run"), ("rewind/run.py", "run"), ("export/run.py", "run"),
              ("export/run.py", "plan")}


def _openers(tree: ast.AST) -> set[str]:
    """The names under which a module's code reaches stores.open_store: ``open_store`` imported
    from symfonic_cli.stores, or ``stores`` imported from symfonic_cli (then ``stores.open_store``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (node.module, a.name) in {("symfonic_cli.stores", "open_store"), ("symfonic_cli", "stores")}:
                    names.add(a.asname or a.name)
    return names


def _functions_opening(path: Path) -> set[str]:
    """The top-level functions (and methods) of ``path`` that call stores.open_store."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    openers = _openers(tree)
    found = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "open_store" and "open_store" in openers) or \
                    (isinstance(f, ast.Attribute) and f.attr == "open_store" and isinstance(f.value, ast.Name)
                     and f.value.id == "stores" and "stores" in openers):
                found.add(fn.name)
    return found


def test_only_the_opener_opens_a_changing_runs_stores():
    opening = set()
    for path in sorted(p for run in RUNS for p in (PACKAGE / run).rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        opening |= {(rel, fn) for fn in _functions_opening(path)}
    assert ("api/opening.py", "open_changing") in opening  # the reading sees the one opener
    assert opening - DEPRECATED == {("api/opening.py", "open_changing")}
