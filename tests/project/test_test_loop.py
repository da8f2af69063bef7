"""The edit-test loop stays what docs/contributing.md says (issue #35 item 7): every name in the
hand-kept list of slow tests names a test that exists, and the tests of pure modules (the clock)
reach no database server."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from tests.support import markers

TESTS = Path(__file__).resolve().parents[1]
SERVER_FIXTURES = {"any_kind", *markers.FIXTURES}


def _test_functions() -> dict[str, set[str]]:
    """Test module name -> the test functions it defines (a class's methods included)."""
    found: dict[str, set[str]] = {}
    for path in TESTS.rglob("test_*.py"):
        names = found.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                names.add(node.name)
    return found


def test_every_slow_name_resolves_to_a_test():
    tests = _test_functions()
    unknown = sorted(m for m in markers.SLOW["modules"] if m not in tests)
    unknown += sorted(t for t in markers.SLOW["tests"] if t.partition("::")[2] not in tests.get(t.partition("::")[0], set()))
    assert unknown == [], "SLOW names no test (renamed or removed?): " + ", ".join(unknown)


def test_the_resolver_sees_a_missing_name(monkeypatch):
    monkeypatch.setitem(markers.SLOW, "tests", {"test_clock::test_that_never_was"})
    try:
        test_every_slow_name_resolves_to_a_test()
    except AssertionError as exc:
        assert "test_clock::test_that_never_was" in str(exc)
    else:
        raise AssertionError("a missing slow name went unseen")


def test_the_clocks_tests_reach_no_server():
    from tests.cli import test_clock

    reaching = [
        name for name, fn in vars(test_clock).items()
        if name.startswith("test") and callable(fn) and SERVER_FIXTURES & set(inspect.signature(fn).parameters)
    ]
    source = inspect.getsource(test_clock)
    assert reaching == [] and "backend_for" not in source


def test_a_quick_loop_test_that_starts_a_process_fails():
    # A process started where the rules cannot see it (through a variable): the test is unmarked,
    # so the run-time check refuses the process before it starts and names the rule to extend.
    import subprocess
    import sys

    import pytest

    start = subprocess.run
    with pytest.raises(pytest.fail.Exception, match="'slow' marker"):
        start([sys.executable, "-c", "pass"], check=True)
