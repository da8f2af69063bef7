"""Every argument of every public function of the Python API is checked before a store is opened
(issue 33 items 2 and 8): a value that is not of its annotated type, or outside its option's range,
is a ``SymfonicError`` with ``exit_code == 2`` (``UsageError``), never a raw exception, and the
store's bytes stay as they were. The functions and their parameters are read from the API itself
(``symfonic_cli.api.__all__``, ``Store``'s public methods, ``inspect.signature``), so a function
or a parameter added later is covered by this test without an edit."""

from __future__ import annotations

import inspect
import math
import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symfonic_cli import api
from symfonic_cli.errors import SymfonicError

KEY = "acme:_:s-001"

# Values of every kind an integration could pass by mistake.
WRONG = [
    "no", "false", "", "2", "0", 0, 1, -1, 3.0, 1.5, math.nan, math.inf, True, False, None, [1, 2], ["x", 3], [],
    {"a": 1}, b"x", object(), timedelta(days=999_999_999), timedelta(seconds=-1), datetime(2026, 1, 1),
    10**30, -(10**30),
]


def _kinds(annotation: str) -> list[str]:
    return [k.strip() for k in annotation.split("|")]


def _type_fits(value: object, annotation: str) -> bool:
    """Whether the value's TYPE fits the annotation (ranges aside): the test's own oracle."""
    for kind in _kinds(annotation):
        if (kind == "None" and value is None) or (kind == "bool" and type(value) is bool) \
                or (kind == "int" and type(value) is int) or (kind == "float" and type(value) in (int, float)) \
                or (kind == "str" and isinstance(value, str)) or (kind == "timedelta" and isinstance(value, timedelta)) \
                or (kind == "datetime" and isinstance(value, datetime)) or (kind == "dict[str, Any]" and isinstance(value, dict)) \
                or (kind == "list[str]" and isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return True
    return False


def _functions() -> list[tuple[str, object]]:
    out = [(name, getattr(api, name)) for name in api.__all__ if inspect.isfunction(getattr(api, name))]
    out += [(f"Store.{name}", fn) for name, fn in inspect.getmembers(api.Store, inspect.isfunction) if not name.startswith("_")]
    return out


def _cases() -> list[tuple[str, str, str]]:
    """(function, parameter, annotation) of every annotated parameter of every public function."""
    cases = []
    for name, fn in _functions():
        for p in inspect.signature(fn).parameters.values():  # type: ignore[arg-type]
            if p.name != "self" and isinstance(p.annotation, str) and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                cases.append((name, p.name, p.annotation))
    return cases


CASES = _cases()


def test_the_cases_cover_the_documented_api():
    names = {c[0] for c in CASES}
    assert {"erase", "export", "prune", "migrate", "Store.threads", "Store.transcript", "Store.search", "Store.usage",
            "Store.history", "Store.diff", "Store.compat_report"} <= names
    assert len(CASES) > 60
    flags = {(f, p) for f, p, a in CASES if a == "bool"}
    assert {("erase", "yes"), ("erase", "dry_run"), ("prune", "yes"), ("prune", "compact"), ("erase", "vacuum"),
            ("erase", "missing_ok")} <= flags


@pytest.fixture(scope="module")
def store_file(tmp_path_factory, _sqlite_backend) -> Path:
    import sqlite3

    path = tmp_path_factory.mktemp("api-args") / "store.db"
    src, dst = sqlite3.connect(str(_sqlite_backend.master())), sqlite3.connect(str(path))
    src.backup(dst)
    src.close()
    dst.close()
    return path


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _call(name: str, store: Path, param: str, value: object):
    """``name`` with one wrong argument; every other argument valid (what a real change needs,
    so only the wrong one can be refused), the store the module's file."""
    target = str(store.parent / "target.db")
    base: dict[str, dict] = {
        "erase": {"thread": KEY, "yes": True}, "prune": {"thread": KEY, "yes": True},
        "export": {"thread": KEY}, "migrate": {"thread": KEY, "init_target": True},
        "rewind": {"thread": KEY, "to": "-2", "idle_for": "0", "dry_run": True},
    }
    if name.startswith("Store."):
        method = name.split(".", 1)[1]
        positional = {"transcript": [KEY], "thread_state": [KEY], "resume_window": [KEY], "retained": [KEY], "history": [KEY], "diff": [KEY, -2, -1], "search": ["refund"]}
        args = positional.get(method, [])
        order = list(inspect.signature(getattr(api.Store, method)).parameters)[1:]
        kwargs = {}
        if param in order[:len(args)]:
            args = list(args)
            args[order.index(param)] = value
        else:
            kwargs[param] = value
        with api.open_store(str(store)) as st_:
            return getattr(st_, method)(*args, **kwargs)
    fn = getattr(api, name)
    kwargs = {**base.get(name, {}), param: value}
    if name == "export":
        output = kwargs.pop("output", str(store.parent / "bundle"))
        return fn(str(store), output, **kwargs)
    if name == "migrate":
        return fn(str(store), target, **kwargs)
    return fn(str(store), **kwargs)


@settings(max_examples=300, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(case=st.sampled_from(CASES), value=st.sampled_from(WRONG))
def test_a_wrong_type_is_a_usage_error_and_the_store_is_untouched(store_file, case, value):
    name, param, annotation = case
    if _type_fits(value, annotation):
        return  # a value of the right type: the range cases below
    before = _bytes(store_file.parent)
    with pytest.raises(SymfonicError) as info:
        _call(name, store_file, param, value)
    assert info.value.exit_code == 2, (name, param, value, info.value)
    assert _bytes(store_file.parent) == before, (name, param, value)


@pytest.mark.parametrize("name,param,value", [
    ("erase", "yes", "no"), ("prune", "yes", "false"), ("erase", "dry_run", "no"), ("prune", "compact", 1),
    ("erase", "thread", [1, 2]), ("erase", "grace", 5), ("prune", "older_than", timedelta(days=999_999_999)),
    ("migrate", "jobs", "2"), ("Store.transcript", "index", "0"), ("Store.threads", "limit", "3"),
    ("prune", "keep", 0), ("Store.threads", "limit", -1), ("migrate", "jobs", 65), ("erase", "batch_size", 100_001),
    ("Store.transcript", "index", 10**30), ("Store.usage", "top", 0), ("prune", "older_than", timedelta(seconds=-1)),
    ("Store.compat_report", "grace", timedelta(days=40_000)), ("Store.compat_report", "now", datetime(2026, 1, 1)),
    ("erase", "connect_timeout", math.nan), ("export", "connect_timeout", "10"), ("erase", "thread", ""),
])
def test_the_issues_cases_and_ranges(store_file, name, param, value):
    before = _bytes(store_file.parent)
    with pytest.raises(SymfonicError) as info:
        _call(name, store_file, param, value)
    assert info.value.exit_code == 2, info.value
    assert _bytes(store_file.parent) == before


def test_prune_all_threads_with_yes_no_prunes_nothing(store_file):
    before = _bytes(store_file.parent)
    for value in ("no", "false", 0, None):
        with pytest.raises(SymfonicError) as info:
            api.prune(str(store_file), all_threads=True, yes=value)
        assert info.value.exit_code == 2
    assert _bytes(store_file.parent) == before
    assert os.path.exists(store_file)


def test_the_api_takes_its_ranges_from_limits():
    # One rule: the API's numbers are the limits the command-line options use.
    from symfonic_cli import limits
    from symfonic_cli.api.arguments import RANGES

    assert RANGES["limit"] == (0, limits.MAX_COUNT)
    assert RANGES["current_format"] == (1, limits.MAX_FORMAT_VERSION)
    # A changing operation's ranges are declared once, for its option and its keyword alike.
    from typing import get_args

    from symfonic_cli.api.params import PRUNE
    from symfonic_cli.cli.declared import option

    declared = {p.name: p for p in PRUNE}
    assert (declared["jobs"].low, declared["jobs"].high) == (1, limits.MAX_JOBS)
    assert (declared["batch_size"].low, declared["batch_size"].high) == (1, limits.MAX_BATCH)
    assert (declared["piece_size"].low, declared["piece_size"].high) == (1, limits.MAX_PIECE)
    info = get_args(option(declared["jobs"]))[1]
    assert (info.min, info.max) == (1, limits.MAX_JOBS)
