"""--lock-timeout (issue #38 item 1): ``thread erase`` (requests and retention sweeps) and ``thread
prune`` on a live store whose application holds locks on a thread's rows. A thread whose locks are
not had within the timeout is left exactly as it was and reported ``busy`` (the summary, the JSON,
the receipt file), the other threads are done, the run ends with exit 9, and a rerun after the
application lets go takes it. The locks are real: PostgreSQL ``SELECT ... FOR UPDATE`` in another
session; SQLite a writer holding a write transaction (one lock for the whole file: every thread is
busy); MongoDB another session's transaction that wrote the thread's documents (the test server,
SecantusDB, answers a conflicting write at once with WriteConflict, which the erase retries until
the lock timeout; maxTimeMS is accepted on each write, and a write it keeps waiting is ended by the
client at the same bound)."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from typing import Any, Iterator

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run

HELD, FREE = "acme:eu:s-002", "globex:_:s-100"
TIMEOUT = "0.5"


@contextmanager
def holding(kind: str, backend: Any, url: str, key: str) -> Iterator[None]:
    """Another session of the application holding locks on ``key``'s rows until the block ends
    (rolled back: it changes nothing)."""
    if kind == "sqlite":
        conn = sqlite3.connect(url, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")  # the file's write lock
        conn.execute("UPDATE checkpoints SET metadata = metadata WHERE thread_id = ?", (key,))
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
    elif kind == "postgres":
        import psycopg

        with psycopg.connect(url) as conn:
            conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s FOR UPDATE", (key,)).fetchall()
            try:
                yield
            finally:
                conn.rollback()
    else:
        from tests.support.mongo_server import database_of

        client = backend.client
        with client.start_session() as session:
            session.start_transaction()
            client[database_of(url)]["checkpoints"].update_many({"thread_id": key}, {"$set": {"held": 1}}, session=session)
            try:
                yield
            finally:
                session.abort_transaction()


def _transcript(url: str, key: str) -> str:
    res = run("transcript", "show", "-s", url, "-t", key, "-f", "json")
    assert res.code == 0, res.err
    return res.out


def _statuses(doc: dict) -> dict[str, str]:
    return {t["key"]: t["status"] for t in doc["threads"]}


@pytest.mark.parametrize("kind", KINDS)
def test_erase_skips_a_busy_thread_and_a_rerun_takes_it(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    receipt = tmp_path / "receipts.jsonl"
    held_before = _transcript(url, HELD)
    args = ("thread", "erase", "-s", url, "-t", HELD, "-t", FREE, "--yes", "-f", "json", "--receipt", str(receipt),
            "--lock-timeout", TIMEOUT)
    with holding(kind, backend, url, HELD):
        started = time.monotonic()
        res = run(*args)
        took = time.monotonic() - started
        assert res.code == 9, res.err
        assert "busy" in res.err and "--lock-timeout" in res.err and "Traceback" not in res.err
        doc = json.loads(res.out)
        statuses = _statuses(doc)
        # SQLite has one write lock for the whole file: every thread waits for it.
        assert statuses == ({HELD: "busy", FREE: "busy"} if kind == "sqlite" else {HELD: "busy", FREE: "erased"})
        assert doc["summary"]["busy"] == len([s for s in statuses.values() if s == "busy"])
        held = next(t for t in doc["threads"] if t["key"] == HELD)
        assert held["rows_deleted"] == {} and held["verification"] == {"checked": False} and "lock timeout" in held["reason"]
        # bounded by --lock-timeout, not by the application (nor by the 5 s default, per thread)
        assert took < 4.5, took
    assert _transcript(url, HELD) == held_before  # left exactly as it was
    lines = [json.loads(line) for line in receipt.read_text().splitlines()]
    assert [r["status"] for r in lines if r["record"] == "thread" and r["key"] == HELD] == ["busy"]
    assert lines[-1]["record"] == "end" and lines[-1]["summary"]["busy"] == doc["summary"]["busy"]
    # The application let go: the same command takes what was busy (the rest already-erased by the receipt).
    again = run(*args)
    assert again.code == 0, again.err
    assert _statuses(json.loads(again.out))[HELD] == "erased"
    gone = run("transcript", "show", "-s", url, "-t", HELD)
    assert gone.code == 3


@pytest.mark.parametrize("kind", KINDS)
def test_prune_skips_a_busy_thread_and_a_rerun_takes_it(kind, request):
    backend = backend_for(kind, request)
    url = backend.new_store()
    args = ("thread", "prune", "-s", url, "-t", HELD, "-t", FREE, "--yes", "-f", "json", "--lock-timeout", TIMEOUT)
    plan = json.loads(run("thread", "prune", "-s", url, "-t", HELD, "--dry-run", "-f", "json").out)["threads"][0]
    assert plan["status"] == "prune"
    with holding(kind, backend, url, HELD):
        res = run(*args)
        assert res.code == 9, res.err
        assert "busy" in res.err and "Traceback" not in res.err
        doc = json.loads(res.out)
        statuses = _statuses(doc)
        assert statuses == ({HELD: "busy", FREE: "busy"} if kind == "sqlite" else {HELD: "busy", FREE: "pruned"})
        assert doc["summary"]["busy"] == len([s for s in statuses.values() if s == "busy"])
    after = json.loads(run("thread", "prune", "-s", url, "-t", HELD, "--dry-run", "-f", "json").out)["threads"][0]
    assert after == plan  # nothing of the busy thread was deleted
    again = run(*args)
    assert again.code == 0, again.err
    assert _statuses(json.loads(again.out))[HELD] == "pruned"


def test_a_retention_sweep_reports_busy_threads(request, tmp_path):
    """The sweep driver shares the step: a busy thread of a sweep is counted in its end record."""
    backend = backend_for("postgres", request)
    url = backend.new_store()
    time.sleep(1.1)  # the window is 1 s: a store written just now (this test run alone) has no thread older yet
    with holding("postgres", backend, url, HELD):
        res = run("thread", "erase", "-s", url, "--inactive-for", "1s", "--yes", "-f", "json", "--lock-timeout", TIMEOUT)
    assert res.code == 9, res.err
    doc = json.loads(res.out)
    assert doc["summary"]["busy"] == 1 and doc["summary"]["erased"] >= 1
    assert _statuses(doc)[HELD] == "busy"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "3601", "abc", "2h", "5ms", "5 parsecs"])
def test_bad_lock_timeout_is_a_usage_error(value, tmp_path):
    for command in ("erase", "prune"):
        res = run("thread", command, "-s", str(tmp_path / "none.db"), "-t", HELD, "--yes", "--lock-timeout", value)
        assert res.code == 2, (command, value, res.err)
        assert "--lock-timeout" in res.err and "Traceback" not in res.err


@pytest.mark.parametrize("value", [0, -1, float("nan"), "5", True])
def test_api_checks_lock_timeout(value, tmp_path):
    from symfonic_cli import api
    from symfonic_cli.errors import UsageError

    for fn in (api.erase, api.prune):
        with pytest.raises(UsageError, match="lock_timeout"):
            fn(str(tmp_path / "none.db"), thread=HELD, yes=True, lock_timeout=value)


def test_api_prune_reports_busy(request):
    from symfonic_cli import api
    from symfonic_cli.errors import EXIT_BUSY, BusyThreads

    backend = backend_for("postgres", request)
    url = backend.new_store()
    with holding("postgres", backend, url, HELD):
        with pytest.raises(BusyThreads) as caught:
            api.prune(url, thread=[HELD, FREE], yes=True, lock_timeout=0.5)
    assert caught.value.exit_code == EXIT_BUSY
    result = caught.value.result  # type: ignore[attr-defined]
    assert result.summary["busy"] == 1 and result.summary["pruned"] == 1


@pytest.mark.parametrize("value", ["300ms", "0.3", "1s"])
def test_lock_timeout_takes_a_unit_as_every_duration_does(value, request):
    """``--lock-timeout 300ms`` (as ``--pause 200ms``, ``--max-duration 30m``) or bare seconds: the
    held thread is busy within that bound, not the 5 s default."""
    backend = backend_for("sqlite", request)
    url = backend.new_store()
    with holding("sqlite", backend, url, HELD):
        started = time.monotonic()
        res = run("thread", "prune", "-s", url, "-t", HELD, "--yes", "-f", "json", "--lock-timeout", value)
        took = time.monotonic() - started
    assert res.code == 9 and _statuses(json.loads(res.out)) == {HELD: "busy"}, res.err
    assert took < 4.5, took
