"""The erase plan says what goes: besides the rows, the messages the conversation no longer shows
that older checkpoints still hold (symfonic-core's compaction removed them from the state; issue
36's retained messages, ``transcript show --retained``), which an erase deletes with the rest.
Counted per thread in the plan (text, table, JSON) and in the receipt (a count, never content), on
stores a real SymfonicAgent wrote, on every store kind."""

from __future__ import annotations

import json

import pytest

from tests.support import agent_stores as ag
from tests.support.backends import KINDS
from tests.support.cli import run


def _retained(url: str, key: str) -> int:
    r = run("transcript", "show", "-s", url, "-t", key, "--retained", "-f", "json")
    assert r.code == 0, r.err
    return sum(not m["current"] for m in json.loads(r.out))


@pytest.mark.parametrize("kind", KINDS)
def test_the_erase_plan_counts_the_retained_messages(agent_stores, kind):
    _backend, url = agent_stores(kind)
    expected = {key: _retained(url, key) for key in ag.THREADS}
    assert expected[ag.LONG] > 0  # compaction fired on the long thread: the premise
    every = [a for key in ag.THREADS for a in ("-t", key)]
    plan = json.loads(run("thread", "erase", "-s", url, *every, "--dry-run", "-f", "json").out)
    assert {t["key"]: t["messages_retained"] for t in plan["threads"]} == expected
    text = run("thread", "erase", "-s", url, "-t", ag.LONG, "--dry-run")
    assert text.code == 0 and f"with {expected[ag.LONG]} message(s) the conversation no longer shows" in text.out, text.out
    table = run("thread", "erase", "-s", url, "-t", ag.LONG, "--dry-run", "-f", "table")
    assert f"with {expected[ag.LONG]}" in table.out and "no longer shows" in table.out, table.out  # the cell wraps at spaces
    # A key that names nothing carries no count.
    missing = json.loads(run("thread", "erase", "-s", url, "-t", "acme:_:nobody", "--dry-run", "--missing-ok", "-f", "json").out)
    assert "messages_retained" not in missing["threads"][0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_receipt_records_the_count(agent_stores, agent_sqlite, kind, tmp_path):
    backend, url = ag.own_copy(kind, agent_stores, agent_sqlite, tmp_path)  # the shared store stays whole
    expected = _retained(url, ag.LONG)
    r = run("thread", "erase", "-s", url, "-t", ag.LONG, "--yes", "-f", "json")
    assert r.code == 0, r.err
    (entry,) = json.loads(r.out)["threads"]
    assert entry["status"] == "erased" and entry["messages_retained"] == expected > 0
    assert "content" not in json.dumps(entry)
    with backend.saver(url) as saver:
        assert not list(saver.list({"configurable": {"thread_id": ag.LONG}}))
