"""DeltaChannel messages (langgraph 1.2): every command that reads messages gives what LangGraph's
own get_state / get_state_history rebuilds, on SQLite, PostgreSQL and MongoDB, at snapshot
frequencies 1, 3 and 100 (forks, RemoveMessage, REMOVE_ALL_MESSAGES, parallel tool calls).
"""

from __future__ import annotations

import json

import pytest

from tests.support import backends
from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS, delta_graph

FREQUENCIES = (1, 3, 100)


@pytest.fixture(scope="module", params=[(k, f) for k in backends.KINDS for f in FREQUENCIES], ids=lambda p: f"{p[0]}-{p[1]}")
def delta_store(request, delta_stores):
    """``(backend, url, frequency)``: a store the delta scenarios were written into by real graphs."""
    kind, freq = request.param
    return (*delta_stores(kind, freq, request), freq)


def _reference(backend, url, freq, key):
    """LangGraph's own answers: get_state's messages, and get_transcript's timestamps over
    get_state_history (the oldest checkpoint holding each id)."""
    from symfonic_cli.transcript.rows import parse_checkpoint_ts

    with backend.saver(url) as saver:
        graph = delta_graph(freq).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": key}}
        latest = graph.get_state(config).values.get("messages", [])
        history = list(graph.get_state_history(config))
    ts = {}
    for snap in history:  # newest first: the oldest holding an id is written last
        for m in snap.values.get("messages", []):
            ts[m.id] = parse_checkpoint_ts(snap.created_at)
    return latest, history, ts


def _iso(dt) -> str:
    from symfonic_cli.clock import iso_utc

    return iso_utc(dt)


@pytest.mark.parametrize("key", DELTA_KEYS)
def test_transcript_is_what_get_state_rebuilds(delta_store, key):
    backend, url, freq = delta_store
    latest, _, ts = _reference(backend, url, freq, key)
    res = run("transcript", "show", "-s", url, "-t", key, "--tools", "-f", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)
    assert [(r["message_id"], r["role"], r["content"]) for r in rows] == [
        (m.id, {"human": "user", "ai": "assistant"}.get(m.type, m.type), m.content) for m in latest
    ]
    assert [r["timestamp"] for r in rows] == [_iso(ts[m.id]) for m in latest]
    if key == "delta:_:tools":  # parallel tool calls: every call and every answer, in LangGraph's order
        calls = [c["id"] for r in rows for c in (r.get("tool_calls") or [])]
        assert len(calls) == 5 and [r["message_id"] for r in rows].count(None) == 0


def test_transcript_by_ordinal_and_time_range(delta_store):
    backend, url, freq = delta_store
    key = "delta:_:remove"
    latest, _, ts = _reference(backend, url, freq, key)
    res = run("transcript", "show", "-s", url, "-t", key, "-i", "-2", "-f", "json")
    assert res.code == 0, res.err
    assert [r["message_id"] for r in json.loads(res.out)] == [latest[-2].id]
    since = _iso(ts[latest[3].id])
    res = run("transcript", "show", "-s", url, "-t", key, "--since", since, "-f", "json")
    assert res.code == 0, res.err
    assert [r["message_id"] for r in json.loads(res.out)] == [m.id for m in latest if ts[m.id] >= ts[latest[3].id]]
    # The removed message is gone, the replaced one kept its place with the new content.
    assert "r-1" not in {m.id for m in latest} and latest[0].content == "replaced zero"


def test_history_counts_and_rewrites_match_get_state_history(delta_store):
    backend, url, freq = delta_store
    key = "delta:_:remove"
    _, history, _ = _reference(backend, url, freq, key)
    res = run("thread", "history", "-s", url, "-t", key, "-f", "json")
    assert res.code == 0, res.err
    entries = {e["checkpoint_id"]: e for e in json.loads(res.out)}
    expected = {s.config["configurable"]["checkpoint_id"]: len(s.values.get("messages", [])) for s in history}
    assert {cid: entries[cid]["messages"] for cid in expected} == expected
    update = [e for e in entries.values() if e["source"] == "update"]
    assert len(update) == 1 and update[0]["rewrote"] and "r-1" in update[0]["removed_messages"]


def test_thread_show_and_diff(delta_store):
    backend, url, freq = delta_store
    key = "delta:_:tools"
    latest, history, _ = _reference(backend, url, freq, key)
    res = run("thread", "show", "-s", url, "-t", key, "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["messages"] == len(latest)
    res = run("thread", "diff", "-s", url, "-t", key, "-f", "json", "--", "-5", "-1")
    assert res.code == 0, res.err
    diff = json.loads(res.out)
    older = {m.id for m in history[4].values["messages"]}
    assert [m["id"] for m in diff["messages"]["added"]] == [m.id for m in latest if m.id not in older]
    notes = [v for v in diff["values"] if v["channel"] == "notes"]
    for v in notes:  # the other delta channel: never shown as empty
        for side in ("before", "after"):
            assert v[side] is not None and v[side] != []
            assert isinstance(v[side], list) or "delta-encoded, not rebuilt" in v[side]


def test_export_holds_the_rebuilt_transcript(delta_store, tmp_path):
    backend, url, freq = delta_store
    key = "delta:_:fork"
    latest, _, _ = _reference(backend, url, freq, key)
    out = tmp_path / "bundle"
    res = run("thread", "export", "-s", url, "-t", key, "-o", str(out))
    assert res.code == 0, res.err
    files = list((out / "transcript").glob("*.json"))
    assert files, list(out.rglob("*"))
    rows = json.loads(files[0].read_text())
    assert [r["message_id"] for r in rows] == [m.id for m in latest]
