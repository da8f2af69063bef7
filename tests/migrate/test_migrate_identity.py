"""``symfonic migrate`` never replaces what the target holds: identity is what the saver will write,
and every write path inserts only (checked inside the target transaction), on every kind."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import backend_for
from tests.support import backends
from tests.support.cli import run

KEY = "acme:_:s-001"
PAIRS = [(a, b) for a in backends.KINDS for b in backends.KINDS]


def _open(url: str, *, writable: bool = False):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    return open_store(parse_location(url), writable=writable)


def _rows(url: str, key: str = KEY) -> list:
    with _open(url) as st:
        return st.export_thread(key).rows


def _latest_root_id(url: str, key: str = KEY) -> str:
    with _open(url) as st:
        return [c for c in st.decoded_thread(key).checkpoints if c.checkpoint_ns == ""][-1].checkpoint_id


def _restore_under(kind: str, url: str, key: str, cid: str, new_cid: str) -> None:
    """Store checkpoint ``cid`` under ``new_cid`` (its blob, which names ``cid``, untouched) and
    without a parent, so a write under the blob's id would visibly change the target's row."""
    if kind == "sqlite":
        conn = sqlite3.connect(url)
        conn.execute(
            "UPDATE checkpoints SET checkpoint_id = ?, parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_id = ?",
            (new_cid, key, cid),
        )
        conn.commit()
        conn.close()
    elif kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE checkpoints SET checkpoint_id = %s, parent_checkpoint_id = NULL WHERE thread_id = %s AND checkpoint_id = %s",
                (new_cid, key, cid),
            )
    else:
        from tests.support.mongo_server import database_of

        db = backends.get("mongodb").client[database_of(url)]
        res = db.checkpoints.update_one(
            {"thread_id": key, "checkpoint_ns": "", "checkpoint_id": cid},
            {"$set": {"checkpoint_id": new_cid, "parent_checkpoint_id": None}},
        )
        assert res.modified_count == 1


_sources: dict[str, tuple[str, str, str, str]] = {}


def _sources_of(kind: str, request) -> tuple[str, str, str, str]:
    """``(pristine, misfiled, the blob's id, the stored id)``: one thread written by a real graph,
    and a raw same-kind copy of it whose latest root checkpoint is stored under another id."""
    if kind not in _sources:
        backend = backend_for(kind, request)
        pristine = backend.new_store(scenarios=True, only=[KEY])
        misfiled = backend.new_store(scenarios=False)
        assert run("migrate", "--from", pristine, "--to", misfiled, "--all").code == 0
        cid = _latest_root_id(misfiled)
        new_cid = cid[:-6] + ("ffffff" if not cid.endswith("ffffff") else "eeeeee")
        _restore_under(kind, misfiled, KEY, cid, new_cid)
        _sources[kind] = (pristine, misfiled, cid, new_cid)
    return _sources[kind]


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_a_checkpoint_stored_under_another_id_than_its_blobs_is_failed_and_nothing_replaced(pair, request):
    src_kind, dst_kind = pair
    pristine, misfiled, cid, new_cid = _sources_of(src_kind, request)
    dst = backend_for(dst_kind, request).new_store(scenarios=False)
    assert run("migrate", "--from", pristine, "--to", dst, "--all").code == 0
    before = _rows(dst)
    assert any(r.table == "checkpoints" and r.key[1] == cid for r in before)

    dry = run("migrate", "--dry-run", "--from", misfiled, "--to", dst, "--all", "-f", "json")
    assert dry.code == 7, dry.err
    row = json.loads(dry.out)["threads"][0]
    assert row["status"] == "failed" and new_cid in row["message"] and cid in row["message"]

    r = run("migrate", "--from", misfiled, "--to", dst, "--all", "-f", "json")
    assert r.code == 7, r.err
    doc = json.loads(r.out)  # the summary comes first, whole
    row = doc["threads"][0]
    assert row["status"] == "failed" and row["checkpoints_copied"] == 0 and "blob" in row["message"]
    assert doc["totals"]["failed"] == 1
    assert _rows(dst) == before  # the checkpoint of the blob's id is the target's own, unchanged
    assert not any(r.table == "checkpoints" and r.key[1] == new_cid for r in _rows(dst))


@pytest.mark.parametrize("kind", backends.KINDS)
def test_cross_kind_import_inserts_only_inside_the_target_transaction(kind, request):
    """Below the plan: a checkpoint whose blob names one the target holds never replaces it."""
    from symfonic_cli.model.copy import DecodedCheckpoint, MigrationConflict

    url = backend_for(kind, request).new_store(scenarios=True, only=[KEY])
    before = _rows(url)
    with _open(url, writable=True) as st:
        held = [c for c in st.decoded_thread(KEY).checkpoints if c.checkpoint_ns == ""][-1]
        forged = DecodedCheckpoint(
            "", held.checkpoint_id[:-6] + "ffffff", None, held.checkpoint, {**held.metadata, "source": "forged"}
        )
        with pytest.raises(MigrationConflict):
            st.import_decoded(KEY, [forged], [], [{}])
    assert _rows(url) == before


def test_postgres_blob_the_target_holds_with_other_bytes_is_a_conflict(request):
    """PostgresSaver's blobs are ``ON CONFLICT DO NOTHING``: kept silently, the new checkpoint would
    read back another value. Inserting only, it fails the thread instead."""
    from symfonic_cli.model.copy import DecodedCheckpoint, MigrationConflict

    url = backend_for("postgres", request).new_store(scenarios=True, only=[KEY])
    before = _rows(url)
    with _open(url, writable=True) as st:
        held = [c for c in st.decoded_thread(KEY).checkpoints if c.checkpoint_ns == ""][-1]
        new_id = held.checkpoint_id[:-6] + "ffffff"
        values = {**held.checkpoint["channel_values"], "messages": []}
        forged = DecodedCheckpoint("", new_id, held.checkpoint_id, {**held.checkpoint, "id": new_id, "channel_values": values}, held.metadata)
        version = held.checkpoint["channel_versions"]["messages"]
        with pytest.raises(MigrationConflict, match="blob of channel 'messages'"):
            st.import_decoded(KEY, [forged], [], [{"messages": version}])
    assert _rows(url) == before


@pytest.mark.parametrize("kind", ["sqlite", "mongodb"])
def test_a_target_holding_more_than_the_source_says_so(kind, request):
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    backend = backend_for(kind, request)
    src = backend.new_store(scenarios=True, only=[KEY])
    dst = backend.new_store(scenarios=False)
    assert run("migrate", "--from", src, "--to", dst, "--all").code == 0
    with backend.saver(dst) as saver:  # the agent went on in the target
        agent_graph().compile(checkpointer=saver).invoke(
            {"messages": [HumanMessage(content="one more")]}, {"configurable": {"thread_id": KEY}}
        )
    r = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json")
    assert r.code == 0, r.err
    row = json.loads(r.out)["threads"][0]
    assert row["status"] == "skipped" and row["verified"] is True
    assert "the target holds more than the source" in row["message"]
    v = run("migrate", "--verify-only", "--from", src, "--to", dst, "--all", "-f", "json")
    assert v.code == 0 and "the target holds more than the source" in json.loads(v.out)["threads"][0]["message"]
