"""migrate from an encrypted store (same serializer and key, or --to-plaintext) and of
delta-encoded threads (the whole parent chain copied, the rebuilt values verified), to every kind."""

from __future__ import annotations

import json

import pytest

from tests.support import backends
from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS, write_delta_scenarios
from tests.transcript.test_encrypted import KEY, _encrypted_serde

ENV = {"LANGGRAPH_AES_KEY": KEY}


@pytest.fixture(scope="module")
def encrypted_sqlite(tmp_path_factory, _sqlite_backend):
    path = str(tmp_path_factory.mktemp("enc") / "enc.db")
    with _sqlite_backend.saver(str(_sqlite_backend.master())) as src, _sqlite_backend.saver(path) as dst:
        dst.setup()
        dst.serde = _encrypted_serde(KEY)
        backends.copy_store(src, dst)
    return path


def _transcripts(url, keys, env=None):
    out = {}
    for k in keys:
        res = run("transcript", "show", "-s", url, "-t", k, "--tools", "-f", "json", env=env)
        assert res.code == 0, res.err
        out[k] = json.loads(res.out)
    return out


def _messages(transcripts):
    return {k: [{f: v for f, v in r.items() if f != "not_read_by_application"} for r in rows] for k, rows in transcripts.items()}


@pytest.mark.parametrize("plaintext", [False, True], ids=["same-key", "to-plaintext"])
def test_migrate_an_encrypted_store(any_kind, encrypted_sqlite, plaintext):
    target = any_kind.new_store(scenarios=False)
    args = ["migrate", "--from", encrypted_sqlite, "--to", target, "--all", "-f", "json"]
    res = run(*args, *(["--to-plaintext"] if plaintext else []), env=ENV)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert ("plaintext" in doc["target_serializer"]) == plaintext
    assert doc["totals"]["verified"] == doc["totals"]["threads"] == 8
    keys = [t["thread"] for t in doc["threads"]]
    got, want = _transcripts(target, keys, ENV), _transcripts(encrypted_sqlite, keys, ENV)
    # The messages are the same; only the note that the application's own serializer cannot read an
    # encrypted store (transcript show's not_read_by_application) goes with the encryption.
    assert _messages(got) == _messages(want)
    assert all("not_read_by_application" in r for rows in want.values() for r in rows)
    assert all(("not_read_by_application" in r) != plaintext for rows in got.values() for r in rows)
    without_key = run("transcript", "show", "-s", target, "-t", "acme:_:s-001")
    assert (without_key.code == 0) == plaintext  # an encrypted target needs the key, a plaintext one does not
    with any_kind.saver(target) as saver:
        if not plaintext:
            saver.serde = _encrypted_serde(KEY)
        assert len(list(saver.list({"configurable": {"thread_id": "acme:_:s-001"}}))) == 11
    assert run("migrate", "--from", encrypted_sqlite, "--to", target, "--all").code == 4  # no key: exit 4


@pytest.mark.parametrize("freq", [3, 100])
def test_migrate_delta_threads(any_kind, tmp_path, freq, _sqlite_backend):
    source = str(tmp_path / "delta.db")
    with _sqlite_backend.saver(source) as saver:
        saver.setup()
        write_delta_scenarios(saver, freq)
    target = any_kind.new_store(scenarios=False)
    res = run("migrate", "--from", source, "--to", target, "--all", "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["totals"]["verified"] == len(DELTA_KEYS)
    want, got = _transcripts(source, DELTA_KEYS), _transcripts(target, DELTA_KEYS)
    if any_kind.kind == "mongodb":
        # MongoDBSaver replays a checkpoint's writes in the server's order, not writes_sort_key:
        # parallel tool answers may come back in another order there (the messages are the same).
        for k in DELTA_KEYS:
            assert sorted(r["message_id"] for r in got[k]) == sorted(r["message_id"] for r in want[k])
            assert [r["message_id"] for r in got[k] if r["role"] != "tool"] == [r["message_id"] for r in want[k] if r["role"] != "tool"]
    else:
        assert got == want
    from tests.support.delta_scenarios import delta_graph

    with any_kind.saver(target) as saver:  # LangGraph's own rebuild on the target agrees
        graph = delta_graph(freq).compile(checkpointer=saver)
        for k in DELTA_KEYS:
            got = graph.get_state({"configurable": {"thread_id": k}}).values["messages"]
            assert [m.id for m in got] == [r["message_id"] for r in _transcripts(target, [k])[k]]
