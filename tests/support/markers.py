"""pytest plugin: the suite's markers, put on each test by what it uses, so a new test gets them
without being told (``-m "not slow and not pty and not postgres and not mongodb"`` is the quick
loop; docs/contributing.md). No test is named here: every mark follows from code.

What a test uses is read from its source (``ast``): the test function, every fixture it asks for
(wherever defined: its module, a conftest, a plugin) and, transitively, the functions and classes
they call that the suite defines (``tests.*``, followed through imports).

- ``postgres`` / ``mongodb``: the test reaches that server: through its backend fixture, a kind
  parameter (``"postgres"``, ``"postgres-icu"``, a pair of kinds, ...), a module named for it, or
  ``backend_for("postgres", ...)`` and its kin written in what it reaches.
- ``pty``: it opens a pseudo-terminal (``pty.openpty`` and its kin, in any helper it reaches).
- ``corpus``: it uses the hostile-store corpus (``tests/support/hostile.py``).
- ``slow``: it starts a process (``subprocess``, ``os.fork``, the MCP stdio client: in the test, a
  helper or a fixture of any scope), opens a terminal, is property-based (hypothesis), or writes
  a store of its own with real graphs or savers (``invoke``, ``stream``, ``update_state``,
  ``put``: in the test, a helper it calls or a function-scoped fixture; a store written once by a
  module- or session-scoped fixture and shared is not the test's cost). A helper may also say
  what it needs with ``require("slow")`` / ``require("pty")``, which these rules read as well.

A test of the quick loop that starts a process anyway fails (``pytest_runtest_call``), and a test
that reaches a server or a terminal without its mark fails (``require``): the rules cannot silently
miss one, and ``-m "not postgres"`` never starts PostgreSQL. Rules look at names, never at file
paths, so a test module moved to ``tests/<feature>/`` keeps its marks.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from functools import lru_cache

import pytest

MARKERS = ("postgres", "mongodb", "pty", "slow", "corpus")
KINDS = ("postgres", "mongodb")
FIXTURES = {"postgres_backend": "postgres", "mongodb_backend": "mongodb"}  # the servers' own fixtures
# The calls that start a process or open a terminal, wherever a test reaches them.
STARTS = {"Popen": ("slow",), "StdioServerParameters": ("slow",), "os.fork": ("slow",), "os.system": ("slow",),
          "os.posix_spawn": ("slow",), "os.forkpty": ("pty", "slow"), "openpty": ("pty", "slow"), "pty.fork": ("pty", "slow"),
          **{f"subprocess.{f}": ("slow",) for f in ("run", "call", "check_call", "check_output")}}
# The calls that write checkpoints: a test reaching one in its own code or a function-scoped
# fixture writes a store of its own (the cost of most tests that are not quick).
WRITES = {"invoke", "stream", "update_state", "put", "put_writes", "bulk_update_state"}

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
def _module(name: str) -> tuple[dict[str, ast.AST], dict[str, str]]:
    """The suite module ``name``'s functions and classes by name (methods as ``Class.method``), and
    what its imports bind (local name -> ``module`` or ``module:name``), wherever they are written."""
    try:
        tree = ast.parse(inspect.getsource(importlib.import_module(name)))
    except (ImportError, OSError, TypeError, SyntaxError):
        tree = None
    defs: dict[str, ast.AST] = {}
    imports: dict[str, str] = {}
    if tree is None:
        return defs, imports
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = node
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        defs[f"{node.name}.{sub.name}"] = sub
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else alias.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{node.module}:{alias.name}"
    return defs, imports


@lru_cache(maxsize=None)  # per function node: parametrized tests ask again for each case
def _called_names(node: ast.AST) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(names called in ``node``, kinds named as the first argument of backend_for and its kin,
    marks a ``require("...")`` there asks for)."""
    names, kinds, required = set(), set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name:
                names.add(name)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                names.add(f"{f.value.id}.{f.attr}")  # subprocess.run, not any run
            if sub.args and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
                arg = sub.args[0].value
                if name in ("backend_for", "get", "getfixturevalue"):
                    kinds |= _kind_of(arg)
                    if arg in FIXTURES:
                        kinds.add(FIXTURES[arg])
                elif name == "require" and arg in ("pty", "slow"):
                    required.add(arg)
    return frozenset(names), frozenset(kinds), frozenset(required)


@lru_cache(maxsize=None)
def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _resolve(module: str, name: str) -> tuple[str, str] | None:
    """(module, definition) that ``name`` called in ``module`` stands for, when the suite defines it."""
    defs, imports = _module(module)
    if name in defs:
        return module, name
    head, _, attr = name.partition(".")
    target = imports.get(head)
    if target is None or not target.startswith("tests"):
        return None
    where, _, what = target.partition(":")
    if what and attr:  # from tests.x import module; module.attr(...)
        return (f"{where}.{what}", attr) if _is_module(f"{where}.{what}") else None
    if what:  # from tests.x import what
        return where, what
    return (where, attr) if attr else None  # import tests.x as head; head.attr(...)


@lru_cache(maxsize=None)  # per definition: the tests of a module share their helpers and fixtures
def _reach(module: str, name: str) -> tuple[frozenset[str], frozenset[tuple[str, str]], frozenset[str]]:
    """Everything called from ``module``'s ``name`` and, transitively, from the functions and classes
    of the suite it calls: (names called, (module, kind) for the kinds named, marks required)."""
    seen: set[tuple[str, str]] = set()
    todo = [(module, name)]
    names: set[str] = set()
    kinds: set[tuple[str, str]] = set()
    required: set[str] = set()
    while todo:
        where, what = todo.pop()
        if (where, what) in seen:
            continue
        seen.add((where, what))
        defs, _ = _module(where)
        node = defs.get(what)
        if node is None:
            continue
        if isinstance(node, ast.ClassDef):  # a class called: what its methods do
            todo.extend((where, key) for key in defs if key.startswith(what + "."))
            continue
        called, named, asked = _called_names(node)
        names |= called
        kinds |= {(where, kind) for kind in named}
        required |= asked
        todo.extend(found for found in (_resolve(where, n) for n in called) if found is not None)
    return frozenset(names), frozenset(kinds), frozenset(required)


def _reach_all(starts) -> tuple[set[str], set[tuple[str, str]], set[str]]:
    names: set[str] = set()
    kinds: set[tuple[str, str]] = set()
    required: set[str] = set()
    for start in starts:
        more = _reach(*start)
        names |= more[0]
        kinds |= more[1]
        required |= more[2]
    return names, kinds, required


def _fixtures(item) -> list[tuple[str, str, str]]:
    """(module, function name, scope) of each fixture the test uses, wherever it is defined."""
    info = getattr(item, "_fixtureinfo", None)
    out = []
    for name, defs in (getattr(info, "name2fixturedefs", None) or {}).items():
        if not defs or name == "request":
            continue
        func = getattr(defs[-1].func, "__wrapped__", defs[-1].func)
        module = getattr(func, "__module__", None)
        if module and module.startswith("tests"):
            out.append((module, func.__name__, defs[-1].scope))
    return out


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
    if getattr(getattr(item, "function", None), "is_hypothesis_test", False):
        marks.add("slow")
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            marks |= _kind_of(value)
    if module is not None:
        fn = getattr(item, "originalname", None) or item.name.partition("[")[0]
        own = [(module.__name__, fn)]
        if getattr(item, "cls", None) is not None:
            own.append((module.__name__, f"{item.cls.__name__}.{fn}"))
        fixtures = _fixtures(item)
        # What runs for the test alone: its body and its function-scoped fixtures.
        names, kinds, required = _reach_all(own + [(m, f) for m, f, scope in fixtures if scope == "function"])
        shared_names, shared_kinds, shared_required = _reach_all([(m, f) for m, f, scope in fixtures if scope != "function"])
        # A kind counts where the test's own module names it (a shared helper names every kind).
        marks |= {kind for where, kind in kinds | shared_kinds if where == module.__name__} | required | shared_required
        for name in names | shared_names:
            marks.update(STARTS.get(name, ()))
        if WRITES & {name.rpartition(".")[2] for name in names}:
            marks.add("slow")
        if any(getattr(v, "__module__", None) == "tests.support.hostile" or getattr(v, "__name__", None) == "tests.support.hostile"
               for v in vars(module).values()):
            marks.add("corpus")
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


QUICK_LOOP_OUT = ("slow", "pty", "postgres", "mongodb")  # what -m "not ..." leaves out of the quick loop


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A test of the quick loop (none of QUICK_LOOP_OUT) that starts a process fails: what starts
    one is ``slow`` by these rules, never by a list (the servers' own fixtures start theirs before
    the call, outside this check)."""
    if any(item.get_closest_marker(m) is not None for m in QUICK_LOOP_OUT):
        yield
        return
    import os
    import subprocess

    def refused(real):
        def start(*args, **kwargs):
            require("slow")
            return real(*args, **kwargs)
        return start

    saved = [(subprocess.Popen, "_execute_child"), (os, "fork"), (os, "forkpty"), (os, "posix_spawn"), (os, "posix_spawnp")]
    saved = [(owner, name, getattr(owner, name)) for owner, name in saved if hasattr(owner, name)]
    for owner, name, real in saved:
        setattr(owner, name, refused(real))
    try:
        yield
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)


def require(mark: str) -> None:
    """Fail the running test unless it carries ``mark`` (called where a server or terminal is reached)."""
    if _current and _current[-1].get_closest_marker(mark) is None:
        pytest.fail(
            f"{_current[-1].nodeid} reaches what the '{mark}' marker stands for but is not marked: "
            "extend the rules in tests/support/markers.py (or mark it)",
            pytrace=False,
        )
