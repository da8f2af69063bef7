"""Issue #37, item 2: ``threads list`` shows the same columns on a terminal (the table) and in a pipe
(text: the table's columns, tab-separated, with a header), the run state among them, and ``--wide``
every column (``kubectl -o wide``). Run on a pseudo-terminal at 80 and 120 columns, on a pipe and
in-process, on every store kind."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

DEFAULT = ["key", "status", "checkpoints", "last_activity"]
EVERY = ["key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity", "status", "size_bytes", "first_message"]


def _plain(screen: str) -> list[str]:
    return re.sub(r"[┃│]", " ", re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", screen)).splitlines()


def _statuses(url: str) -> dict[str, str]:
    listed = json.loads(run("threads", "list", "-s", url, "--columns", "key,status", "-f", "json").out)
    return {r["key"]: r["status"] for r in listed}


def test_pipe_shows_the_table_columns_with_status(any_kind):
    url = any_kind.new_store()
    want = _statuses(url)
    piped = run_process("threads", "list", "-s", url)
    assert piped.code == 0, piped.err
    lines = piped.out.splitlines()
    assert lines[0].split("\t") == DEFAULT
    rows = [line.split("\t") for line in lines[1:]]
    assert {r[0]: r[1] for r in rows} == want and len(rows) == len(want)


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("color", [True, False])
def test_terminal_shows_the_same_columns(run_state_stores, cols, color):
    url = run_state_stores("sqlite")[1]
    want = _statuses(url)
    assert set(want.values()) >= {"done", "interrupted", "error"}
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", cols=cols, rows=500, env={} if color else {"NO_COLOR": "1"})
    assert code == 0, screen
    lines = _plain(screen)
    header = next(line for line in lines if line.split()[:1] == ["key"])
    assert header.split()[:3] == ["key", "status", "checkpoints"] and "last activity" in header
    for key, status in want.items():
        assert any(line.split()[:2] == [key, status] for line in lines), (key, status, screen)
    assert max(len(line) for line in lines) <= cols
    piped = run_process("threads", "list", "-s", url)
    assert {tuple(line.split("\t")[:2]) for line in piped.out.splitlines()[1:]} == set(want.items())
    if not color:
        assert "\x1b[" not in screen


def test_wide_shows_every_column_on_a_pipe_and_a_terminal(any_kind):
    url = any_kind.new_store()
    piped = run("threads", "list", "-s", url, "--wide")
    assert piped.code == 0, piped.err
    assert piped.out.splitlines()[0].split("\t") == EVERY
    wide_json = json.loads(run("threads", "list", "-s", url, "--wide", "-f", "json").out)
    assert wide_json and all(list(r) == EVERY for r in wide_json)
    # JSON without --wide keeps its fields as before (a program's contract).
    plain_json = json.loads(run("threads", "list", "-s", url, "-f", "json").out)
    assert list(plain_json[0]) == EVERY[:7]
    both = run("threads", "list", "-s", url, "--wide", "--columns", "key")
    assert both.code == 2 and both.out == "" and both.err.count("\n") == 1


@pytest.mark.parametrize("cols", [80, 120])
def test_wide_on_a_terminal_keeps_keys_whole(sqlite_master, cols):
    url = str(sqlite_master)
    code, screen = on_terminal("threads", "list", "-s", url, "--wide", "--no-pager", cols=cols, rows=900)
    assert code == 0, screen
    text = "\n".join(_plain(screen))
    for key in _statuses(url):
        assert key in text
    assert "first message" in text or "first_message" in text or "RECORD" in text


@pytest.mark.parametrize("cols", [80, 120])
def test_statuses_in_colour_only_when_colour_is_on(run_state_stores, cols):
    """Issue #37, item 9: error red, interrupted yellow, pending cyan; done plain; no colour under
    NO_COLOR, --color never or in a pipe."""
    url = run_state_stores("sqlite")[1]
    want = _statuses(url)
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", cols=cols, rows=500)
    assert code == 0, screen
    for status, sgr in (("error", "31"), ("interrupted", "33"), ("pending", "36")):
        if status in want.values():
            assert re.search(rf"\x1b\[{sgr}m{status}\s*\x1b\[0m", screen), (status, screen)
    assert not re.search(r"\x1b\[3\dmdone", screen)
    for env, extra in (({"NO_COLOR": "1"}, ()), ({}, ("--color", "never"))):
        code, plain = on_terminal("threads", "list", "-s", url, "--no-pager", *extra, cols=cols, rows=500, env=env)
        assert code == 0 and "\x1b[" not in plain
    assert "\x1b[" not in run_process("threads", "list", "-s", url).out
