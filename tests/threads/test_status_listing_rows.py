"""``threads list --status``: the columns of every listed row, and the quick status decision.

On SQLite the status listing reads a thread's totals (checkpoints, first and last activity,
size) only once its status is kept, and decides a thread without pending writes from its blob's
tail in one decode (``model.run_status.status_without_writes``), else through
``status_from_tail``. The rows must be exactly the plain listing's, with or without ``--tenant``
(a key range instead of every key), on every store kind; the quick decision must agree with
the full one, or step aside, on real blobs holding look-alikes of the trailing fields.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.support import run_state_scenarios as rs
from tests.support.cli import run
from tests.thread.test_thread_show import KINDS, state_stores  # noqa: F401 - fixture

PLAIN = ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")


def _rows(url: str, *args: str) -> list[dict]:
    r = run("threads", "list", "-s", url, *args, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("kind", KINDS)
def test_status_rows_carry_the_plain_listing_columns(kind, state_stores):  # noqa: F811
    _, url, _ = state_stores(kind)
    plain = {r["key"]: r for r in _rows(url)}
    every = _rows(url, "--status", "interrupted,error,pending,done", "--with-size")
    assert {r["key"] for r in every} == set(plain) == set(rs.EXPECTED_STATUS)
    for r in every:
        assert {c: r[c] for c in PLAIN} == plain[r["key"]], r["key"]
        assert r["status"] == rs.EXPECTED_STATUS[r["key"]], r["key"]
        assert r["size_bytes"] > 0
    # A tenant: the same rows, only that tenant's (SQLite: a key range, not every key).
    for tenant in ("acme", "globex", "nobody"):
        got = _rows(url, "--tenant", tenant, "--status", "interrupted,error,pending,done", "--with-size")
        assert got == [r for r in every if r["tenant"] == tenant], (kind, tenant)
    # Only the kept statuses, in the default order (newest activity first).
    kept = _rows(url, "--status", "interrupted,pending")
    assert [r["key"] for r in kept] == [r["key"] for r in every if r["status"] in ("interrupted", "pending")]


def _blob(junk: bytes, updated: list, seen_agent: str, step: int = 3) -> bytes:
    """A real LangGraph checkpoint blob holding ``junk`` in its channel values."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [junk, "hello"], "raw": junk, "branch:to:agent": None}
    cp["channel_versions"] = {
        "messages": "00000000000000000000000000000002.0",
        "branch:to:agent": f"0000000000000000000000000000000{step}.0",
    }
    cp["versions_seen"] = {"agent": {"branch:to:agent": seen_agent}}
    cp["updated_channels"] = updated
    type_, blob = JsonPlusSerializer().dumps_typed(cp)
    assert type_ == "msgpack"
    return blob


def test_quick_decision_agrees_with_the_full_one():
    """Generated blobs (fixed seed): look-alikes of the key and of the trailing fields among the
    messages, due and not due, Sends pending, any window from the end: the quick decision is
    None or exactly what ``status_from_tail`` gives (reading further back, or the whole blob)."""
    from symfonic_cli.model.run_status import status_from_tail, status_without_writes

    rnd = random.Random(2026)
    decided = 0
    real = _blob(b"", ["branch:to:agent"], "00000000000000000000000000000003.0")  # seen: nothing due
    real_tail = real[real.index(b"\xb0channel_versions"):]
    for i in range(300):
        pieces = [rnd.randbytes(rnd.randrange(40)), b"\xb0channel_versions", real_tail, real_tail[: rnd.randrange(len(real_tail))]]
        rnd.shuffle(pieces)
        updated = rnd.choice([["messages"], ["branch:to:agent"], ["messages", "branch:to:agent"], ["__pregel_tasks"], [], [1]])
        seen = rnd.choice(["00000000000000000000000000000002.0", "00000000000000000000000000000009.0"])
        blob = _blob(b"".join(pieces[: rnd.randrange(5)]), updated, seen)
        if i % 5 == 0:
            blob += rnd.choice([b"\xa3zzz\xc0", b"\xc0", rnd.randbytes(rnd.randrange(1, 30))])  # bytes after the last field
        window = blob[-rnd.randrange(1, len(blob) + 1):] if i % 3 else blob[-1024:]
        whole = lambda blob=blob: ("msgpack", blob, {"step": 3})  # noqa: E731
        full = status_from_tail(
            "1ef00000-0000-6000-8000-000000000000", 3, "msgpack", blob[:4], window, len(blob), {},
            whole=whole, more=lambda n, blob=blob: blob[-n:],
        )
        quick = status_without_writes(blob[:4], window, len(blob))
        assert quick is None or quick == full, (i, updated, seen)
        decided += quick is not None
    assert decided > 100  # the quick decision does take the common case
    # What it must leave to the full decision: pending Sends, no list of updated channels, a
    # window without the whole trailing fields, a head that is not LangGraph's map.
    assert status_without_writes(real[:4], real[-1024:], len(real)) == "done"
    due = _blob(b"", ["branch:to:agent"], "00000000000000000000000000000001.0")
    assert status_without_writes(due[:4], due[-1024:], len(due)) == "pending"
    sends = _blob(b"", ["__pregel_tasks"], "00000000000000000000000000000002.0")
    assert status_without_writes(sends[:4], sends[-1024:], len(sends)) is None
    assert status_without_writes(real[:4], real[-20:], len(real)) is None
    # Bytes after the last field: the fields do not end the blob, whatever they say.
    extra = _blob(b"", ["messages"], "00000000000000000000000000000001.0") + b"\xa3zzz\xc0"
    assert status_without_writes(extra[:4], extra[-1024:], len(extra)) is None
    assert status_without_writes(b"\x92\xa1v\x04", real[-1024:], len(real)) is None
    assert status_without_writes(None, real[-1024:], len(real)) is None
