"""migrate towards a live target (issue #38 items 1-4 where they apply to a copy): one changing run
per target (a prune running in a second process: exit 10 naming it, --wait waits), a bound on each
write's lock wait (another session holding the target's write lock: the threads are 'busy', nothing
written, exit 9, a rerun copies them), --max-duration (exit 11 between two threads, the JSON saying
'stopped'; the same command copies the rest) and --pause/--max-rate between the threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run


def _others(sq) -> str:
    """A source of threads the scenario stores do not hold, written by the real graph."""
    from tests.support.prune_graphs import write_huge_thread

    url = sq.new_store(scenarios=False)
    with sq.saver(url) as saver:
        for i in range(4):
            write_huge_thread(saver, steps=3, key=f"initech:_:s-{i}")
    return url


def _keys(url: str) -> list[str]:
    return [t["key"] for t in json.loads(run("threads", "list", "-s", url, "-f", "json").out)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_prune_running_on_the_target_holds_migrate_off_and_wait_waits(kind, request, tmp_path):
    sq = backend_for("sqlite", request)
    backend = backend_for(kind, request)
    src, dst = _others(sq), backend.new_store()  # the target's own threads are pruned meanwhile
    receipt = tmp_path / "prune.jsonl"
    prune = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", dst, "--all", "--yes", "-f", "json",
                              "--receipt", str(receipt)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "SYMFONIC_FAULT_SLOW_THREAD": "0.6"})
    try:
        deadline = time.monotonic() + 60
        while not (receipt.exists() and '"record": "thread"' in receipt.read_text()):
            assert prune.poll() is None and time.monotonic() < deadline, prune.communicate()
            time.sleep(0.05)
        refused = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json")
        assert refused.code == 10, refused.err
        assert f"pid {prune.pid}" in refused.err and "thread prune" in refused.err and "--wait" in refused.err
        assert refused.err.count("\n") == 1 and "Traceback" not in refused.err
        waited = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json", "--wait")
    finally:
        prune.communicate(timeout=120)
    assert prune.returncode == 0
    assert waited.code == 0, waited.err
    assert "waiting for" in waited.err and f"pid {prune.pid}" in waited.err


def test_a_held_write_lock_makes_threads_busy_then_a_rerun_copies_them(request):
    import sqlite3

    sq = backend_for("sqlite", request)
    src, dst = sq.new_store(), sq.new_store(scenarios=False)
    holder = sqlite3.connect(dst, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the application's write transaction, left open
    try:
        started = time.monotonic()
        res = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json", "--lock-timeout", "0.2")
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert res.code == 9, res.err
    doc = json.loads(res.out)
    assert {t["status"] for t in doc["threads"]} == {"busy"} and doc["totals"]["busy"] == len(_keys(src))
    assert "lock timeout" in doc["threads"][0]["message"] and took < 0.2 * len(doc["threads"]) + 20
    assert _keys(dst) == []  # nothing written
    again = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json")
    assert again.code == 0, again.err
    assert _keys(dst) == _keys(src)


@pytest.mark.postgres
def test_a_locked_postgres_target_makes_threads_busy(request):
    sq = backend_for("sqlite", request)
    pg = backend_for("postgres", request)
    src, dst = sq.new_store(), pg.new_store(scenarios=False)
    import psycopg

    with psycopg.connect(dst) as holder:
        holder.execute("LOCK TABLE checkpoints IN EXCLUSIVE MODE")  # writers wait; held until the end of the block
        res = run("migrate", "--from", src, "--to", dst, "-t", _keys(src)[0], "-f", "json", "--lock-timeout", "0.3")
    assert res.code == 9, res.err
    assert json.loads(res.out)["threads"][0]["status"] == "busy"
    assert run("migrate", "--from", src, "--to", dst, "-t", _keys(src)[0], "-f", "json").code == 0


@pytest.mark.parametrize("kind", KINDS)
def test_max_duration_stops_between_threads_and_the_same_command_copies_the_rest(kind, request):
    sq = backend_for("sqlite", request)
    backend = backend_for(kind, request)
    src, dst = sq.new_store(), backend.new_store(scenarios=False)
    args = ("migrate", "--from", src, "--to", dst, "--all", "-f", "json", "--pause", "400ms")
    res = run(*args, "--max-duration", "1s")
    assert res.code == 11, res.err
    doc = json.loads(res.out)
    assert "time limit" in doc["stopped"] and "time limit" in res.err and res.err.count("\n") == 1
    done = [t["thread"] for t in doc["threads"]]
    assert f"{len(done)} of {len(_keys(src))} thread(s) done" in res.err  # what is left
    assert 1 <= len(done) < len(_keys(src)) and all(t["status"] == "copied" and t["verified"] for t in doc["threads"])
    assert sorted(_keys(dst)) == sorted(done)
    rest = run(*args)
    assert rest.code == 0, rest.err
    statuses = {t["thread"]: t["status"] for t in json.loads(rest.out)["threads"]}
    assert all(statuses[k] == "skipped" for k in done) and sorted(_keys(dst)) == sorted(_keys(src))


def test_max_rate_paces_the_copies(request):
    sq = backend_for("sqlite", request)
    src, dst = sq.new_store(), sq.new_store(scenarios=False)
    n = len(_keys(src))
    started = datetime.now()
    res = run("migrate", "--from", src, "--to", dst, "--all", "-f", "json", "--max-rate", "8")
    assert res.code == 0, res.err
    assert (datetime.now() - started).total_seconds() >= (n - 1) / 8 - 0.05


@pytest.mark.parametrize("args", [("--lock-timeout", "0"), ("--max-duration", "0s"), ("--pause", "soon"), ("--max-rate", "-1")])
def test_bad_live_options_are_usage_errors(args, request):
    sq = backend_for("sqlite", request)
    res = run("migrate", "--from", sq.new_store(), "--to", sq.new_store(scenarios=False), "--all", *args)
    assert res.code == 2 and args[0] in res.err and "Traceback" not in res.err, res.err
