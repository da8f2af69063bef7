"""Listings that fit a terminal, read off real pseudo-terminals of 80 and 120 columns:
threads list's table, --columns (tables, text and JSON), and thread diff's wrapping."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _screen(*args, cols):
    code, screen = on_terminal(*args, cols=cols, rows=200, env={"NO_COLOR": "1", "SYMFONIC_PAGER": "cat", "PAGER": "cat"})
    return code, ANSI.sub("", screen)


@pytest.mark.parametrize("cols", [80, 120])
def test_the_default_table_fits_with_whole_keys(sqlite_store, cols):
    keys = [t["key"] for t in json.loads(run("threads", "list", "-s", str(sqlite_store), "-f", "json").out)]
    code, screen = _screen("threads", "list", "-s", str(sqlite_store), cols=cols)
    assert code == 0, screen
    assert "RECORD" not in screen
    lines = screen.splitlines()
    assert all(len(line.rstrip()) <= cols for line in lines)
    header = next(line for line in lines if line.lstrip().startswith("key"))
    assert re.findall(r"[a-z]+", header) == ["key", "status", "checkpoints", "last", "activity"]
    for key in keys:
        assert any(line.lstrip().startswith(key + " ") for line in lines), key


@pytest.mark.parametrize("cols", [80, 120])
def test_status_and_size_when_asked_still_fit(sqlite_store, cols):
    code, screen = _screen("threads", "list", "-s", str(sqlite_store), "--status", "done,interrupted,error,pending", "--with-size", cols=cols)
    assert code == 0 and "RECORD" not in screen, screen
    header = next(line for line in screen.splitlines() if line.lstrip().startswith("key"))
    assert re.findall(r"[a-z]+", header) == ["key", "status", "checkpoints", "last", "activity", "size"]


def test_columns_choose_and_order_tables_text_and_json(sqlite_store):
    s = str(sqlite_store)
    every = json.loads(run("threads", "list", "-s", s, "-f", "json").out)
    assert list(every[0]) == ["key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity"]
    chosen = json.loads(run("threads", "list", "-s", s, "-f", "json", "--columns", "session,key,status,first").out)
    assert [list(r) for r in chosen] == [["session", "key", "status", "first_message"]] * len(every)
    assert [r["key"] for r in chosen] == [r["key"] for r in every]
    assert {r["status"] for r in chosen} <= {"done", "interrupted", "error", "pending"}
    for r in chosen:
        rows = json.loads(run("transcript", "show", "-s", s, "-t", r["key"], "--speaker", "user", "-f", "json").out)
        assert r["first_message"] == (rows[0]["content"] if rows else None)
    text = run("threads", "list", "-s", s, "-f", "text", "--columns", "checkpoints,key").out.splitlines()
    assert text[0] == "checkpoints\tkey" and text[1].split("\t")[1] == every[0]["key"]
    sized = json.loads(run("threads", "list", "-s", s, "-f", "json", "--columns", "key,size_bytes").out)
    assert all(isinstance(r["size_bytes"], int) and r["size_bytes"] > 0 for r in sized)
    bad = run("threads", "list", "-s", s, "--columns", "key,nope")
    assert bad.code == 2 and "unknown column 'nope'" in bad.err and "Traceback" not in bad.err
    twice = run("threads", "list", "-s", s, "--columns", "key,key")
    assert twice.code == 2


@pytest.mark.parametrize("cols", [80, 120])
def test_the_first_column_is_cut_to_fit(sqlite_store, cols):
    code, screen = _screen("threads", "list", "-s", str(sqlite_store), "--columns", "key,first", cols=cols)
    assert code == 0 and "RECORD" not in screen, screen
    assert all(len(line.rstrip()) <= cols for line in screen.splitlines())


@pytest.mark.parametrize("cols", [80, 120])
def test_thread_diff_wraps_text_never_ids_or_timestamps(sqlite_store, cols):
    s = str(sqlite_store)
    key = "acme:_:s-001"
    diff = json.loads(run("thread", "diff", "-s", s, "-t", key, "-f", "json", "--", "-1", "-6").out)
    ids = [m["id"] for m in diff["messages"]["removed"] + diff["messages"]["added"] if m.get("id")]
    assert ids
    code, screen = _screen("thread", "diff", "-s", s, "-t", key, "--", "-1", "-6", cols=cols)
    assert code == 0, screen
    assert all(len(line.rstrip()) <= cols for line in screen.splitlines())
    for mid in ids:
        assert mid in screen, mid  # on one line, whole
    for stamp in (diff["from"]["ts"], diff["to"]["ts"]):
        assert stamp.replace("+00:00", "Z") in screen
    # The text has the width of the ids (it had 9 columns at 80): 30 characters stay on one line.
    # (Messages with a LangGraph id, 36 characters: the widest id decides the width.)
    texts = [m["content"] for m in diff["messages"]["removed"] + diff["messages"]["added"]
             if isinstance(m.get("content"), str) and len(m["content"]) >= 30 and m["content"].isascii()
             and m["content"].isprintable() and len(m.get("id") or "") >= 36]
    assert texts
    for text in texts:
        assert text[:30] in screen, text
