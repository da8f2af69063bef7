"""--max-replica-lag (issue #38 item 6) against a real streaming standby of the suite's PostgreSQL
cluster (tests/support/pg_standby.py: ``pg_basebackup -R``, a second cluster on its own port). The
standby's replay is paused (``pg_wal_replay_pause()``) so that the WAL the prune writes is not
replayed: the run waits before its next transaction, says so, and stops at --max-duration (exit 11,
the receipt's end record 'time limit'); the same command, with replay resumed while it waits, goes
on and finishes. MongoDB's lag comes from replSetGetStatus, which the test server (SecantusDB, no
replica set) does not answer: there the option checks nothing, as the last test shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from tests.conftest import backend_for
from tests.support.cli import run
from tests.support.prune_graphs import write_huge_thread

THREADS = [f"acme:_:lag-{i:02d}" for i in range(12)]


def _store(backend: Any) -> str:
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        for key in THREADS:
            write_huge_thread(saver, steps=4, key=key)  # a few checkpoints each: every thread has some to prune
    return url


def _records(receipt) -> list[dict[str, Any]]:
    return [json.loads(x) for x in receipt.read_text().splitlines()] if receipt.exists() else []


@pytest.mark.parametrize("jobs", ["1", "3"])  # --jobs 3: each session waits before its transactions
def test_a_paused_standby_holds_the_prune_until_the_time_limit_and_the_same_command_then_finishes(jobs, pg_standby, request, tmp_path):
    backend_for("postgres", request)  # the marker check
    backend = pg_standby.primary  # the standby streams from it
    url = _store(backend)
    pg_standby.caught_up()
    with backend.admin() as conn:  # the primary sees its standby streaming
        assert conn.execute("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").fetchone()[0] >= 1
    pg_standby.pause_replay()
    try:
        receipt = tmp_path / "r.jsonl"
        args = ("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--receipt", str(receipt), "--pause", "300ms",
                "--max-replica-lag", "1s", "--jobs", jobs, "--batch-size", "4")
        started = time.monotonic()
        res = run(*args, "--max-duration", "6s")
        took = time.monotonic() - started
        assert res.code == 11, res.err
        assert "waiting: replica lag" in res.err and "--max-replica-lag 1 s" in res.err
        recs = _records(receipt)
        done = [r for r in recs if r["record"] == "thread"]
        end = recs[-1]
        assert end["record"] == "end" and "time limit" in end["stopped"]
        # Some threads went before the lag passed 1 s; the others waited for the standby.
        assert 1 <= len(done) < len(THREADS) and end["summary"]["not_attempted"] == len(THREADS) - len(done)
        assert 6 <= took < 30

        # The same command: it waits again (replay still paused) until replay resumes, then finishes.
        proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ})
        try:
            assert proc.stderr is not None
            said = next((line for line in proc.stderr if "waiting: replica lag" in line), None)
            assert said is not None and proc.poll() is None, "the run did not wait for the standby"
            waited_at = len([r for r in _records(receipt) if r["record"] == "thread"])
            time.sleep(2)  # still waiting: no thread done meanwhile
            assert len([r for r in _records(receipt) if r["record"] == "thread"]) == waited_at and proc.poll() is None
            pg_standby.resume_replay()
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err
        summary = json.loads(out)["summary"]
        assert summary["pruned"] == len(THREADS) - len(done) and summary["failed"] == 0
    finally:
        pg_standby.resume_replay()
    again = json.loads(run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--max-replica-lag", "1s").out)
    assert again["summary"]["pruned"] == 0


def test_the_lag_is_timed_from_the_commit_the_standby_did_not_replay(pg_standby, request, tmp_path):
    """Right after replay is paused, replay_lag still holds its last (small) value; the lag is read
    from WAL positions instead, the primary's taken right after each commit. With a 2 s pause and a
    1 s bound, the second thread would go if the position were first seen after the pause (the
    standby then looks 0 s behind): only the first does (issue #44 item 9)."""
    backend_for("postgres", request)  # the marker check
    backend = pg_standby.primary  # the standby streams from it
    url = _store(backend)
    pg_standby.caught_up()
    pg_standby.pause_replay()
    try:
        receipt = tmp_path / "r.jsonl"
        res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--receipt", str(receipt), "--pause", "2s",
                  "--max-replica-lag", "1s", "--max-duration", "5s")
    finally:
        pg_standby.resume_replay()
    assert res.code == 11, res.err
    assert "waiting: replica lag" in res.err
    assert len([r for r in _records(receipt) if r["record"] == "thread"]) == 1


def test_a_standby_that_goes_away_is_waited_for_until_it_is_back(pg_standby, request, tmp_path):
    """A standby streaming when the run started and then gone (stopped): no lag can be read, so the
    run waits, says so on stderr, and goes on once the standby streams again (issue #44 item 9)."""
    backend_for("postgres", request)  # the marker check
    backend = pg_standby.primary  # the standby streams from it
    url = _store(backend)
    pg_standby.caught_up()
    receipt = tmp_path / "r.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "--all", "--yes", "-f", "json",
                             "--receipt", str(receipt), "--pause", "500ms", "--max-replica-lag", "60s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped = False
    try:
        deadline = time.monotonic() + 60
        while not [r for r in _records(receipt) if r["record"] == "thread"]:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        pg_standby.disconnect()
        stopped = True
        assert proc.stderr is not None
        said = next((line for line in proc.stderr if "waiting" in line), None)
        assert said is not None and "is not connected" in said and "--max-replica-lag 60 s" in said, said
        waited_at = len([r for r in _records(receipt) if r["record"] == "thread"])
        assert waited_at < len(THREADS)
        time.sleep(2)  # still waiting: no thread done meanwhile
        assert len([r for r in _records(receipt) if r["record"] == "thread"]) == waited_at and proc.poll() is None
        pg_standby.reconnect()
        stopped = False
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        if stopped:
            pg_standby.reconnect()
    assert proc.returncode == 0, err
    assert json.loads(out)["summary"]["pruned"] == len(THREADS)


def test_without_a_lagging_standby_the_run_does_not_wait(pg_standby, request):
    backend_for("postgres", request)  # the marker check
    backend = pg_standby.primary  # the standby streams from it
    url = _store(backend)
    pg_standby.caught_up()
    res = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes", "-f", "json", "--max-replica-lag", "10s")
    assert res.code == 0, res.err
    assert "waiting" not in res.err and json.loads(res.out)["summary"]["erased"] == len(THREADS)


@pytest.mark.parametrize("value", ["0s", "soon", "2h", "-1s"])
def test_bad_max_replica_lag_is_a_usage_error(value, tmp_path):
    for command in ("erase", "prune"):
        res = run("thread", command, "-s", str(tmp_path / "none.db"), "-t", "a:_:b", "--yes", "--max-replica-lag", value)
        assert res.code == 2 and "--max-replica-lag" in res.err and "Traceback" not in res.err, (command, value, res.err)


def test_a_sqlite_store_has_no_replicas(tmp_path):
    backend = backend_for("sqlite", None)
    url = backend.new_store()
    for command in ("erase", "prune"):
        res = run("thread", command, "-s", url, "--all" if command == "prune" else "--tenant", *(() if command == "prune" else ("acme", "--all-sessions")),
                  "--yes", "--max-replica-lag", "5s")
        assert res.code == 2 and "no replicas" in res.err and res.err.count("\n") == 1, res.err


def test_mongodb_without_a_replica_set_checks_nothing(request):
    """SecantusDB (like a standalone mongod) answers no replSetGetStatus: there is no lag to wait for."""
    backend = backend_for("mongodb", request)
    url = backend.new_store()
    res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--max-replica-lag", "1s")
    assert res.code == 0, res.err
    assert "waiting" not in res.err and json.loads(res.out)["summary"]["failed"] == 0
