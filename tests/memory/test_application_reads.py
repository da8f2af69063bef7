"""Where symfonic-core itself reads no messages while ``transcript show`` shows them: a DeltaChannel
``messages`` (langgraph 1.2) and an encrypted store. ``transcript show`` keeps the rows and says so
(stderr for text and table, ``not_read_by_application`` in JSON); ``--resume-window`` and
``thread show`` say a restart recalls nothing. Checked against symfonic-core's own get_transcript
and WorkingLayer.rehydrate_from_messages, on every store kind."""

from __future__ import annotations

import json

import pytest

from tests.support import agent_stores as ag
from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS

KEY = "0123456789abcdef0123456789abcdef"


def _reference_rows(backend, url: str, key: str) -> list:
    """symfonic-core's get_transcript over the store's own saver (SQLite: its AsyncSqliteSaver)."""
    if backend.kind != "sqlite":
        return None
    from tests.support.reference import reference_transcript

    tenant, sub, session = key.split(":")
    return reference_transcript(url, tenant, None if sub == "_" else sub, session)


@pytest.mark.parametrize("key", DELTA_KEYS)
def test_delta_thread_shows_rows_and_says_the_application_reads_none(delta_store, key):
    backend, url, freq = delta_store
    with backend.saver(url) as saver:
        assert ag.rehydrated(saver, key, 1000) == []  # symfonic-core's restart-resume: nothing
    reference = _reference_rows(backend, url, key)
    if reference is not None:  # get_transcript: nothing, or the snapshot read as one empty 'other' row
        assert [(r["role"], r["content"]) for r in reference] == ([("other", "")] if freq == 1 else [])
    rows = json.loads(run("transcript", "show", "-s", url, "-t", key, "-f", "json").out)
    assert rows  # the rebuilt messages are still shown
    reason = rows[0]["not_read_by_application"]
    assert all(r["not_read_by_application"] == reason for r in rows)
    assert ("holds a snapshot" in reason) == (freq == 1) and "DeltaChannel" in reason
    text = run("transcript", "show", "-s", url, "-t", key, "-f", "text")
    assert text.code == 0 and text.err.count("reads none of these messages") == 1 and "DeltaChannel" in text.err
    assert "DeltaChannel" not in text.out
    table = run("transcript", "show", "-s", url, "-t", key, "-f", "table")
    assert "reads none of these messages" in table.err
    csv = run("transcript", "show", "-s", url, "-t", key, "-f", "csv")  # a program's format: the records say it, as JSON's
    assert csv.code == 0 and "reads none" not in csv.err and "not_read_by_application" in csv.out.splitlines()[0]
    window = run("transcript", "show", "-s", url, "-t", key, "--resume-window", "-f", "json")
    assert (window.code, json.loads(window.out)) == (0, []) and "DeltaChannel" in window.err
    shown = json.loads(run("thread", "show", "-s", url, "-t", key, "-f", "json").out)["restart_recalls"]
    assert shown == {"turns": 0, "last_at": None, "reason": reason}


def test_plain_threads_carry_no_note(tmp_path):
    path = str(tmp_path / "agent.db")
    ag.write_agent_store(path)
    for key in ag.THREADS:
        r = run("transcript", "show", "-s", path, "-t", key, "-f", "json")
        assert r.code == 0 and r.err == "" and all("not_read_by_application" not in row for row in json.loads(r.out))
        assert "reads none" not in run("transcript", "show", "-s", path, "-t", key, "-f", "text").err


def test_encrypted_store_the_application_cannot_read(tmp_path):
    """symfonic-core's checkpointer serializer (SafeCheckpointSerde) has no cipher: its saver fails
    to read an EncryptedSerializer store, so get_transcript fails and a restart recalls nothing."""
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from symfonic.agent.checkpointer.serde import make_safe_serde

    plain, enc = ag.write_encrypted_agent_store(tmp_path, KEY)

    async def app_reads() -> None:
        async with AsyncSqliteSaver.from_conn_string(enc) as saver:
            saver.serde = make_safe_serde()
            await saver.aget_tuple({"configurable": {"thread_id": ag.SHORT}})

    with pytest.raises(NotImplementedError):
        asyncio.run(app_reads())
    env = {"LANGGRAPH_AES_KEY": KEY}
    rows = json.loads(run("transcript", "show", "-s", enc, "-t", ag.SHORT, "-f", "json", env=env).out)
    assert rows == [{**r, "not_read_by_application": rows[0]["not_read_by_application"]}
                    for r in json.loads(run("transcript", "show", "-s", plain, "-t", ag.SHORT, "-f", "json").out)]
    assert "encrypted" in rows[0]["not_read_by_application"]
    window = run("transcript", "show", "-s", enc, "-t", ag.SHORT, "--resume-window", "-f", "json", env=env)
    assert (window.code, json.loads(window.out)) == (0, []) and "encrypted" in window.err
    assert json.loads(run("transcript", "show", "-s", plain, "-t", ag.SHORT, "--resume-window", "-f", "json").out)
