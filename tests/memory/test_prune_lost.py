"""``thread prune`` says what it removes for good: per thread, the messages held only by the
checkpoints it deletes (compaction had removed them from the conversation); the receipt records
the count, never the content. Checked against LangGraph's own history before and after the prune,
on stores a real SymfonicAgent wrote, every kind."""

from __future__ import annotations

import json

import pytest

from tests.memory.test_retained import _held_by_langgraph
from tests.support import agent_stores as ag
from tests.support.cli import run

KINDS = ("sqlite", "postgres", "mongodb")


@pytest.mark.parametrize("kind", KINDS)
def test_plan_and_receipt_count_what_the_prune_removes_for_good(kind, agent_stores, agent_sqlite, tmp_path):
    backend, url = ag.own_copy(kind, agent_stores, agent_sqlite, tmp_path)
    with backend.saver(url) as saver:
        before = {key: _held_by_langgraph(saver, key) for key in ag.THREADS}
    plan = json.loads(run("thread", "prune", "-s", url, "--all", "--keep", "1", "--dry-run", "-f", "json").out)
    planned = {p["key"]: p["messages_only_in_deleted"] for p in plan["threads"]}
    receipt = tmp_path / "receipt.jsonl"
    r = run("thread", "prune", "-s", url, "--all", "--keep", "1", "--yes", "--receipt", str(receipt), "-f", "json")
    assert r.code == 0, r.err
    with backend.saver(url) as saver:
        after = {key: _held_by_langgraph(saver, key) for key in ag.THREADS}
    lines = [json.loads(line) for line in receipt.read_text().splitlines()]
    recorded = {t["key"]: t["messages_only_in_deleted"] for t in lines if "key" in t and t.get("status") == "pruned"}
    for key in ag.THREADS:
        gone = before[key] - after[key]
        assert after[key] <= before[key]
        assert planned[key] == recorded[key] == len(gone), (kind, key)
    assert planned[ag.LONG] > 0 and plan["summary"]["messages_only_in_deleted"] == sum(planned.values())
    text = receipt.read_text()
    assert "question 0 from Ada" not in text and "order 1000" not in text  # counts, never content


def test_plan_text_names_the_count(agent_stores, agent_sqlite, tmp_path):
    _backend, url = ag.own_copy("sqlite", agent_stores, agent_sqlite, tmp_path)
    r = run("thread", "prune", "-s", url, "-t", ag.LONG, "--dry-run")
    assert r.code == 0 and "held only in deleted checkpoints" in r.out and "gone for good:" in r.out
