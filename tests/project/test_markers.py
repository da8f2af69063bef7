"""The suite's markers (tests/support/markers.py): registered, and put on tests by what they use."""

from __future__ import annotations

import sys

import pytest

from tests.support import markers

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the suite needs 3.11
    import tomli as tomllib


def test_the_markers_are_registered_in_pyproject():
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    names = [line.partition(":")[0].strip() for line in config["markers"]]
    assert sorted(names) == sorted(markers.MARKERS)
    assert "--strict-markers" in config["addopts"].split()


@pytest.mark.parametrize("kind", ["postgres-icu", ("sqlite", "mongodb")])
def test_a_kind_parameter_marks_the_test(kind, request):
    # No server is reached: the parameter alone puts the mark (and a test that reaches one must have it).
    assert request.node.get_closest_marker("postgres" if kind == "postgres-icu" else "mongodb") is not None
    assert request.node.get_closest_marker("mongodb" if kind == "postgres-icu" else "postgres") is None


def _helper_on_a_terminal(really: bool = False):
    from tests.support.terminal import on_terminal

    if really:  # never here: the call written in a helper of the test is what marks it
        on_terminal("--help")


def test_a_helper_that_calls_a_terminal_marks_the_test(request):
    _helper_on_a_terminal()
    assert request.node.get_closest_marker("pty") is not None
    assert request.node.get_closest_marker("slow") is not None


def test_reaching_what_a_marker_stands_for_without_it_fails(request):
    assert request.node.get_closest_marker("mongodb") is None
    with pytest.raises(pytest.fail.Exception, match="not marked"):
        markers.require("mongodb")
