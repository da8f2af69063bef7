"""Encrypted DeltaChannel threads are pruned with the right key as plain ones are (issue 33 item 6),
on every store kind: the DeltaChannel graph writes through the real saver with LangGraph's
EncryptedSerializer; with the key, ``thread prune`` keeps each delta channel's ancestors back to
its snapshot, and LangGraph's own get_state (the encrypted saver) reads the same values before and
after; without the key (SQLite, MongoDB) each is skipped, nothing deleted."""

from __future__ import annotations

import json

from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS, delta_graph, write_delta_scenarios
from tests.transcript.test_encrypted import KEY, _encrypted_serde

FREQ = 3
ENV = {"LANGGRAPH_AES_KEY": KEY}


def _state(backend, url: str) -> dict:
    with backend.saver(url) as saver:
        saver.serde = _encrypted_serde(KEY)
        graph = delta_graph(FREQ).compile(checkpointer=saver)
        out = {}
        for key in DELTA_KEYS:
            s = graph.get_state({"configurable": {"thread_id": key}})
            out[key] = ([(m.id, m.content) for m in s.values["messages"]], s.values.get("notes"), s.values.get("turns"),
                        len(list(saver.list({"configurable": {"thread_id": key}}))))
        return out


def test_encrypted_delta_threads_are_pruned_with_the_key(any_kind):
    url = any_kind.new_store(scenarios=False)
    with any_kind.saver(url) as saver:
        saver.serde = _encrypted_serde(KEY)
        write_delta_scenarios(saver, FREQ)
    before = _state(any_kind, url)
    if any_kind.kind != "postgres":  # PostgreSQL finds the snapshots without decrypting (blob rows)
        # Without the key the snapshots cannot be found: each thread skipped, nothing deleted.
        blind = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json")
        assert blind.code == 0, blind.err
        assert {t["status"] for t in json.loads(blind.out)["threads"]} == {"skipped"}
        assert _state(any_kind, url) == before
    res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", env=ENV)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    statuses = {t["key"]: t["status"] for t in doc["threads"]}
    assert statuses == dict.fromkeys(DELTA_KEYS, "pruned"), doc["threads"]
    after = _state(any_kind, url)
    for key in DELTA_KEYS:
        assert after[key][:3] == before[key][:3], key  # LangGraph rebuilds the same values
        assert after[key][3] < before[key][3], key  # and something was pruned
    again = json.loads(run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", env=ENV).out)
    assert again["summary"]["nothing_to_prune"] == len(DELTA_KEYS)
