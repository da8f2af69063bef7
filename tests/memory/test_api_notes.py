"""``Store.transcript()`` gives, as data, what ``transcript show`` says beside its rows: each row's
``not_read_by_application`` (symfonic-core's own get_transcript and restart-resume read none of a
DeltaChannel or encrypted thread's messages; tests/memory/test_application_reads.py checks the
reason against symfonic-core), the list's ``.not_read_by_application`` and ``.warnings`` (messages
shown from their raw fields). ``to_json()`` of each row equals the command's JSON record, on every
store kind."""

from __future__ import annotations

import json

import pytest

from symfonic_cli.api import open_store
from tests.support import agent_stores as ag
from tests.support import hostile
from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS


def _cli(url: str, key: str, *args: str, env: dict[str, str] | None = None) -> tuple[list[dict], str]:
    r = run("transcript", "show", "-s", url, "-t", key, "-f", "json", *args, env=env)
    assert r.code == 0, r.err
    return json.loads(r.out), r.err


@pytest.mark.parametrize("key", DELTA_KEYS)
def test_delta_rows_carry_the_note_the_command_shows(delta_store, key):
    backend, url, freq = delta_store
    records, _ = _cli(url, key)
    with open_store(url) as store:
        rows = store.transcript(key)
        assert [r.to_json() for r in rows] == records
        reason = records[0]["not_read_by_application"]
        assert "DeltaChannel" in reason
        assert rows.not_read_by_application == reason and {r.not_read_by_application for r in rows} == {reason}
        assert rows.warnings == []
        # With --tools, a filter and a limit: the same records as the command's.
        tools, _ = _cli(url, key, "--tools", "--speaker", "assistant", "--limit", "2")
        assert [r.to_json(True) for r in store.transcript(key, tools=True, speaker="assistant", limit=2)] == tools
        # As of an older checkpoint the note, about the latest one, is not given (as the command).
        root = [h.checkpoint_id for h in store.history(key) if h.checkpoint_ns == ""]
        old, _ = _cli(url, key, "--checkpoint", root[1])
        older = store.transcript(key, checkpoint=root[1])
        assert [r.to_json() for r in older] == old and older.not_read_by_application is None


def test_plain_rows_carry_no_note(tmp_path):
    path = str(tmp_path / "agent.db")
    ag.write_agent_store(path)
    with open_store(path) as store:
        for key in ag.THREADS:
            records, _ = _cli(path, key)
            rows = store.transcript(key)
            assert [r.to_json() for r in rows] == records
            assert rows.not_read_by_application is None and rows.warnings == []
            assert all(r.not_read_by_application is None and "not_read_by_application" not in r.to_json() for r in rows)


def test_encrypted_rows_carry_the_note(tmp_path, monkeypatch):
    key = "0123456789abcdef0123456789abcdef"
    _, enc = ag.write_encrypted_agent_store(tmp_path, key)
    records, _ = _cli(enc, ag.SHORT, env={"LANGGRAPH_AES_KEY": key})
    monkeypatch.setenv("LANGGRAPH_AES_KEY", key)
    with open_store(enc) as store:
        rows = store.transcript(ag.SHORT)
    assert [r.to_json() for r in rows] == records
    assert "encrypted" in rows.not_read_by_application and rows[0].not_read_by_application == rows.not_read_by_application


def test_the_warnings_the_command_prints_are_data(request):
    """A message with odd fields is shown from its raw fields; the command warns on stderr, the
    API gives the same lines in ``.warnings``."""
    from tests.conftest import backend_for

    backend = backend_for("sqlite", request)
    url = hostile.clone(backend, hostile.write_base(backend))
    ns, cid = hostile.sqlite_latest(url)
    import sqlite3

    conn = sqlite3.connect(url)
    t, b = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", (hostile.TARGET, cid)).fetchone()
    conn.close()
    odd = [hostile.message_ext("HumanMessage", id=[1, 2])]
    hostile.sqlite_set(url, "checkpoint", hostile.checkpoint_blob_with_messages(None, (t, bytes(b)), odd)[1])
    records, err = _cli(url, hostile.TARGET)
    with open_store(url) as store:
        rows = store.transcript(hostile.TARGET)
    assert [r.to_json() for r in rows] == records
    assert rows.warnings and [f"symfonic: warning: {w}" for w in rows.warnings] == [x for x in err.splitlines() if "warning" in x]
    assert "shown from its raw fields" in rows.warnings[0]
