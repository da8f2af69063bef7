"""pytest plugin: the suite's markers, put on each test by what it uses, so a new test gets them
without being told (``-m "not slow and not pty"`` is the edit-test loop; README "Tests").

- ``postgres`` / ``mongodb``: the test reaches that server: through its backend fixture, a kind
  parameter (``"postgres"``, ``"postgres-icu"``, a pair of kinds, ...), a module named for it, or
  a ``backend_for("postgres", ...)`` written in the test or in a fixture or helper of its module.
- ``pty``: the test runs the command on a pseudo-terminal (``on_terminal``, ``pty``).
- ``corpus``: the test uses the hostile-store corpus (``tests/support/hostile.py``).
- ``slow``: the test starts processes of its own (the command as a subprocess, a terminal), or its
  module, test or parameters are named in ``SLOW`` (measured with ``--durations``).

Rules look at names, never at file paths, so a test module moved to ``tests/<feature>/`` keeps
its marks. A test that reaches a server or a terminal without its mark fails (``require``): the
rules cannot silently miss one, and ``-m "not postgres"`` never starts PostgreSQL.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import lru_cache

import pytest

MARKERS = ("postgres", "mongodb", "pty", "slow", "corpus")
KINDS = ("postgres", "mongodb")
FIXTURES = {"postgres_backend": "postgres", "mongodb_backend": "mongodb"}
# Called in a test (or a helper or fixture of its module): the mark it needs.
CALLS = {"on_terminal": ("pty", "slow"), "openpty": ("pty", "slow"), "run_process": ("slow",), "Popen": ("slow",)}
# Measured slow although they start no process: module names, test names (module::test).
SLOW = {
    "modules": {"test_terminal_speed"},
    "tests": set(),
}

_current: list[pytest.Item] = []


def pytest_configure(config) -> None:
    # The markers are registered in pyproject.toml (--strict-markers): one missing there stops the run.
    registered = {line.partition(":")[0].strip() for line in config.getini("markers")}
    missing = sorted(set(MARKERS) - registered)
    if missing:
        raise pytest.UsageError(f"markers not registered in pyproject.toml [tool.pytest.ini_options]: {', '.join(missing)}")


def _kind_of(value) -> set[str]:
    if isinstance(value, str):
        return {k for k in KINDS if value == k or value.startswith(k + "-") or value.startswith(k + "_")}
    if isinstance(value, (tuple, list)):
        return set().union(*(_kind_of(v) for v in value)) if value else set()
    return set()


@lru_cache(maxsize=None)
def _module_tree(module) -> dict[str, ast.AST]:
    """Module-level functions (and fixtures) of ``module`` by name."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = sub
    return out


def _called_names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(names called in ``node``, kinds named as the first argument of backend_for/backends.get)."""
    names, kinds = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name:
                names.add(name)
            if name in ("backend_for", "get", "getfixturevalue") and sub.args and isinstance(sub.args[0], ast.Constant):
                arg = sub.args[0].value
                if isinstance(arg, str):
                    kinds |= _kind_of(arg)
                    if arg in FIXTURES:
                        kinds.add(FIXTURES[arg])
    return names, kinds


def _reach(module, start: list[str]) -> tuple[set[str], set[str]]:
    """Everything called from ``start`` and, transitively, from the module's own functions it calls."""
    tree = _module_tree(module)
    seen, todo, names, kinds = set(), list(start), set(), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in tree:
            continue
        seen.add(name)
        called, named = _called_names(tree[name])
        names |= called
        kinds |= named
        todo.extend(called)
    return names, kinds


def marks_for(item) -> set[str]:
    marks: set[str] = set()
    module = getattr(item, "module", None)
    modname = (module.__name__ if module else "").rpartition(".")[2]
    for kind in KINDS:
        if kind in modname or (kind == "mongodb" and "mongo" in modname):
            marks.add(kind)
    if "terminal" in modname:
        marks.add("pty")
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in FIXTURES:
            marks.add(FIXTURES[fixture])
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            marks |= _kind_of(value)
    if module is not None:
        fn = getattr(item, "originalname", None) or item.name.partition("[")[0]
        start = [fn, f"{item.cls.__name__}.{fn}" if getattr(item, "cls", None) else fn]
        start += [f for f in getattr(item, "fixturenames", ()) if f in _module_tree(module)]
        names, kinds = _reach(module, start)
        marks |= kinds
        for name in names:
            marks.update(CALLS.get(name, ()))
        if any(getattr(v, "__module__", None) == "tests.support.hostile" or getattr(v, "__name__", None) == "tests.support.hostile"
               for v in vars(module).values()):
            marks.add("corpus")
        if modname in SLOW["modules"] or f"{modname}::{fn}" in SLOW["tests"]:
            marks.add("slow")
    if "pty" in marks:
        marks.add("slow")
    return marks


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        for name in sorted(marks_for(item)):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current.append(item)
    try:
        yield
    finally:
        _current.pop()


def require(mark: str) -> None:
    """Fail the running test unless it carries ``mark`` (called where a server or terminal is reached)."""
    if _current and _current[-1].get_closest_marker(mark) is None:
        pytest.fail(
            f"{_current[-1].nodeid} reaches what the '{mark}' marker stands for but is not marked: "
            "extend the rules in tests/support/markers.py (or mark it)",
            pytrace=False,
        )
