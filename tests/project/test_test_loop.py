"""The edit-test loop stays what docs/contributing.md says (issues #35 item 7, #46 item 5): the
markers follow from what a test uses, no test is named in the rules, a store written for the test
alone makes it slow and a shared one does not, and the tests of pure modules (the clock) reach no
database server."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from tests.support import markers

TESTS = Path(__file__).resolve().parents[1]
SERVER_FIXTURES = {"any_kind", *markers.FIXTURES}


def test_the_rules_name_no_test():
    # No hand-kept list: no string in the rules names a test module or a test function.
    strings = [node.value for node in ast.walk(ast.parse(inspect.getsource(markers)))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert [s for s in strings if re.fullmatch(r"(test_\w+)?(::)?(test_\w+)?", s) and s] == []


def _writes_a_store(really: bool = False) -> None:
    from tests.support.prune_graphs import write_huge_thread

    if really:  # never here: what the fixture would write is what marks the test
        write_huge_thread(None, steps=1, key="k")


@pytest.fixture
def store_of_its_own():
    _writes_a_store()


@pytest.fixture(scope="module")
def store_shared_by_the_module():
    _writes_a_store()


def test_a_store_written_for_the_test_alone_makes_it_slow(store_of_its_own, request):
    assert request.node.get_closest_marker("slow") is not None


def test_a_store_shared_by_the_module_does_not(store_shared_by_the_module, request):
    assert request.node.get_closest_marker("slow") is None


def test_a_fixture_elsewhere_that_starts_processes_marks_the_test(run_state_stores, request):
    # run_state_stores (tests/conftest.py) is only asked for here, never called: what its getter
    # would do, followed into tests/support/run_state_scenarios.py (SIGKILLed writers), marks it.
    assert request.node.get_closest_marker("slow") is not None


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
