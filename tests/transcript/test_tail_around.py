"""Issue #37, item 4: ``transcript show --tail N`` (the end of a conversation) and ``--around I
--context K`` (a search hit's context in one step: the search row's index is the one --around
takes). Checked against the whole view read as JSON, in-process, on a pipe and on a
pseudo-terminal at 80 and 120 columns, on every store kind."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"


def _rows(url: str, *args: str) -> list[dict]:
    res = run("transcript", "show", "-s", url, KEY, "-f", "json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_tail_and_around_on_every_kind(any_kind):
    url = any_kind.new_store()
    every = _rows(url)
    assert len(every) >= 5
    assert _rows(url, "--tail", "2") == every[-2:]
    assert _rows(url, "--tail", "0") == []
    assert _rows(url, "--tail", str(len(every) + 5)) == every
    assert _rows(url, "--around", "2", "--context", "1") == every[1:4]
    assert _rows(url, "--around", "0") == every[:4]  # default context 3, clipped at the start
    assert _rows(url, "--around", "-1", "-C", "1") == every[-2:]
    assert _rows(url, "--tail", "3", "--limit", "1") == every[-3:-2]
    # In the speaker's view, as --index counts.
    users = _rows(url, "--speaker", "user")
    assert _rows(url, "--speaker", "user", "--tail", "1") == users[-1:]
    assert _rows(url, "--speaker", "user", "--around", "0", "-C", "0") == _rows(url, "--speaker", "user", "--index", "0")


def test_a_search_hit_opens_its_context_in_one_step(sqlite_master):
    url = str(sqlite_master)
    hits = json.loads(run("threads", "search", "-s", url, "order 1042", "-f", "json").out)
    hit = next(h for h in hits if h["key"] == KEY)
    around = _rows(url, "--around", str(hit["index"]), "-C", "0")
    assert [r["message_id"] for r in around] == [hit["message_id"]]
    assert [r["index"] for r in around] == [hit["index"]]


def test_choosing_rows_twice_is_a_usage_error(sqlite_master):
    url = str(sqlite_master)
    for extra in (("--tail", "1", "--around", "1"), ("--index", "0", "--tail", "1"), ("--index", "0", "--around", "1")):
        res = run_process("transcript", "show", "-s", url, KEY, *extra)
        assert res.code == 2 and res.out == "" and res.err.count("\n") == 1 and "mutually exclusive" in res.err


@pytest.mark.parametrize("cols", [80, 120])
def test_tail_on_a_terminal_and_a_pipe(sqlite_master, cols):
    url = str(sqlite_master)
    every = _rows(url)
    code, screen = on_terminal("transcript", "show", "-s", url, KEY, "--tail", "2", "--no-pager", cols=cols, rows=300)
    assert code == 0, screen
    indexes = re.findall(r"^(\d+)\s*│", re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", screen), re.M)
    assert indexes == [str(r["index"]) for r in every[-2:]]
    piped = run_process("transcript", "show", "-s", url, KEY, "--tail", "2")
    assert re.findall(r"^\[(\d+)\]", piped.out, re.M) == [str(r["index"]) for r in every[-2:]]
