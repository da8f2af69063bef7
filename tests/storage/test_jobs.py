"""--jobs N (issue #45 item 7): ``thread prune`` and the retention sweeps on PostgreSQL and MongoDB
with N sessions under the one run lock. The stores are real graphs' threads, copied under generated
keys (every byte of a copy is a real row's but its thread id) so the sessions share enough threads;
each run has its own exact copy of the store. With ``--jobs 3`` the rows left are the ones
``--jobs 1`` leaves (and ``PostgresSaver.prune``); the receipt has one complete line per thread;
Ctrl-C and ``--max-duration`` stop with every started thread finished and recorded; a failed or busy
thread is recorded and the others go on, with one job's exit code; the run lock is held once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import backend_for
from tests.support.cli import run

SERVERS = ("postgres", "mongodb")
COPIES = 5  # generated copies of each real thread, beside it (8 real threads: 48 in all)


def _grow(backend: Any, url: str, copies: int = COPIES) -> None:
    """Each thread copied ``copies`` times under the key ``<key>-cN`` (its session id suffixed)."""
    if backend.kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                cols = [r[0] for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND column_name <> 'thread_id' "
                    "ORDER BY ordinal_position", (table,)).fetchall()]
                names = ", ".join(cols)
                for n in range(1, copies + 1):
                    conn.execute(f"INSERT INTO {table} (thread_id, {names}) SELECT thread_id || %s, {names} FROM {table} "
                                 "WHERE thread_id NOT LIKE '%%-c_'", (f"-c{n}",))
        return
    from tests.support.mongo_server import database_of

    db = backend.client[database_of(url)]
    for name in db.list_collection_names():
        docs = list(db[name].find({"thread_id": {"$exists": True}}, {"_id": False}))
        for n in range(1, copies + 1):
            if docs:
                db[name].insert_many([{**d, "thread_id": f"{d['thread_id']}-c{n}"} for d in docs], ordered=True)


def _copy(backend: Any, url: str) -> str:
    """An exact copy of the store (its own database)."""
    if backend.kind == "postgres":
        name = f"symfonic_t_{uuid.uuid4().hex[:12]}"
        backend._create(name, backend.db_of(url))
        return backend.url(name)
    from tests.support.mongo_server import database_of

    name = backend.new_database()
    backend._copy(database_of(url), name)
    return backend.url(name)


def _rows(backend: Any, url: str) -> dict[str, list]:
    """Every row of the store's tables (PostgreSQL: each column, the bytes hashed; MongoDB: each
    document but its _id), sorted: two stores holding the same rows give the same value."""
    if backend.kind == "postgres":
        import psycopg

        with psycopg.connect(url) as conn:
            return {table: sorted(map(repr, conn.execute(f"SELECT t.*, md5(t::text) FROM {table} t").fetchall()))
                    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")}
    from tests.support.mongo_server import database_of

    db = backend.client[database_of(url)]
    return {name: sorted(repr(sorted(d.items())) for d in db[name].find({"thread_id": {"$exists": True}}, {"_id": False}))
            for name in db.list_collection_names() if not name.startswith("symfonic_")}


def _keys(url: str) -> list[str]:
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store

    with open_store(resolve_store(url), writable=False) as st:
        return st.thread_keys_with_prefix("")


def _receipt(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _threads(lines: list[dict]) -> dict[str, str]:
    """key -> status of the receipt's thread lines; each key once (one line per thread)."""
    threads = [r for r in lines if r["record"] == "thread"]
    out = {r["key"]: r["status"] for r in threads}
    assert len(out) == len(threads), "a thread has two lines"
    return out


def _grown_store(kind: str, request) -> tuple[Any, str]:
    backend = backend_for(kind, request)
    url = backend.new_store()
    _grow(backend, url)
    return backend, url


def _to_prune(url: str) -> set[str]:
    res = run("thread", "prune", "-s", url, "--all", "--dry-run", "-f", "json")
    assert res.code == 0, res.err
    return {t["key"] for t in json.loads(res.out)["threads"] if t["status"] == "prune"}


@pytest.mark.parametrize("kind", SERVERS)
def test_prune_with_3_jobs_leaves_the_rows_one_job_leaves(kind, request, tmp_path):
    backend, url = _grown_store(kind, request)
    keys = _keys(url)
    assert len(keys) == 48
    one, three = url, _copy(backend, url)
    before = _rows(backend, one)
    assert before == _rows(backend, three)
    done = {}
    for jobs, target in (("1", one), ("3", three)):
        res = run("thread", "prune", "-s", target, "--all", "--keep", "1", "--yes", "-f", "json", "--batch-size", "7",
                  "--receipt", str(tmp_path / f"{jobs}.jsonl"), "--jobs", jobs)
        assert res.code == 0, res.err
        done[jobs] = json.loads(res.out), _receipt(tmp_path / f"{jobs}.jsonl")
    after = _rows(backend, three)
    assert after == _rows(backend, one)
    assert sum(map(len, after.values())) < sum(map(len, before.values()))  # something was pruned
    (doc1, lines1), (doc3, lines3) = done["1"], done["3"]
    assert _threads(lines3) == _threads(lines1) and set(_threads(lines3)) == set(keys)  # one line per thread, each thread
    assert {t["key"]: t["status"] for t in doc3["threads"]} == _threads(lines3)
    assert doc3["summary"] == doc1["summary"] == lines3[-1]["summary"]
    assert doc3["summary"]["threads"] == len(keys) and doc3["summary"]["pruned"] > 0
    assert [r["record"] for r in lines3] == ["start", *["thread"] * len(keys), "end"]


@pytest.mark.postgres
def test_prune_with_3_jobs_leaves_what_postgres_saver_prune_leaves(request):
    """PostgresSaver.prune(keep_latest) beside ``thread prune --jobs 3`` and the Python API's
    ``prune(jobs=3)``, on exact copies: the same checkpoint, blob and write rows left."""
    from symfonic_cli import api

    backend, url = _grown_store("postgres", request)
    by_api = _copy(backend, url)
    keys = _keys(url)
    cli = _copy(backend, url)
    with backend.saver(url) as saver:
        saver.prune(keys, strategy="keep_latest")
    res = run("thread", "prune", "-s", cli, "--all", "--yes", "-f", "json", "--jobs", "3")
    assert res.code == 0, res.err
    result = api.prune(by_api, all_threads=True, yes=True, jobs=3)
    assert result.document["summary"]["threads"] == len(keys)
    assert _rows(backend, cli) == _rows(backend, url) == _rows(backend, by_api)


@pytest.mark.parametrize("kind", SERVERS)
def test_a_retention_sweep_with_3_jobs_erases_what_one_job_erases(kind, request, tmp_path):
    from tests.support.old_threads import write_aged

    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    old = {f"acme:_:old-{i:02}": timedelta(days=40) for i in range(6)}
    write_aged(backend, url, {**old, "acme:_:fresh-1": timedelta(0), "globex:_:fresh-2": timedelta(hours=1)})
    _grow(backend, url)  # 36 idle threads, 12 active ones
    three = _copy(backend, url)
    done = {}
    for jobs, target in (("1", url), ("3", three)):
        res = run("thread", "erase", "-s", target, "--inactive-for", "30d", "--yes", "-f", "json", "--batch-size", "5",
                  "--receipt", str(tmp_path / f"{jobs}.jsonl"), "--jobs", jobs)
        assert res.code == 0, res.err
        done[jobs] = json.loads(res.out), _receipt(tmp_path / f"{jobs}.jsonl")
    assert _rows(backend, three) == _rows(backend, url)
    idle = {f"{k}{s}" for k in old for s in ("", *(f"-c{n}" for n in range(1, COPIES + 1)))}
    assert set(_keys(three)) == {f"{k}{s}" for k in ("acme:_:fresh-1", "globex:_:fresh-2") for s in ("", *(f"-c{n}" for n in range(1, COPIES + 1)))}
    (doc1, lines1), (doc3, lines3) = done["1"], done["3"]
    assert _threads(lines3) == _threads(lines1) == dict.fromkeys(idle, "erased")
    assert doc3["summary"] == doc1["summary"] and doc3["summary"]["erased"] == len(idle)
    assert [r["record"] for r in lines3] == ["start", *["thread"] * len(idle), "end"]


def _start(url: str, receipt: Path, *extra: str, slow: str = "0.3") -> subprocess.Popen:
    env = {**os.environ, "SYMFONIC_FAULT_SLOW_THREAD": slow}  # each session sleeps after each thread
    return subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "--all", "--yes", "-f", "json",
                             "--receipt", str(receipt), "--jobs", "3", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_threads(proc: subprocess.Popen, receipt: Path, n: int) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if receipt.exists() and receipt.read_text().count('"record": "thread"') >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError(f"the prune never recorded {n} threads")


def _stopped_cleanly(url: str, before: set[str], proc: subprocess.Popen, receipt: Path, code: int, words: str) -> None:
    """Exit ``code``; every thread the run started is finished and recorded once, pruned (nothing
    failed, nothing half done: what is still to prune is exactly what has no line); the counts add up."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert "Traceback" not in err and words in err
    lines = _receipt(receipt)
    assert lines[0]["record"] == "start" and lines[-1]["record"] == "end" and words in lines[-1]["stopped"]
    recorded = _threads(lines)
    assert 1 <= len(recorded) < len(before)
    assert set(recorded.values()) == {"pruned"}
    assert _to_prune(url) == before - set(recorded)
    summary = lines[-1]["summary"]
    assert summary["threads"] == summary["pruned"] == len(recorded)
    assert summary["not_attempted"] == summary["planned"] - len(recorded)
    assert json.loads(out)["summary"] == summary


@pytest.mark.parametrize(("kind", "presses"), [("postgres", 1), ("postgres", 2), ("mongodb", 1), ("mongodb", 2)])
def test_ctrl_c_stops_every_session_after_its_thread_in_flight(kind, presses, request, tmp_path):
    """Ctrl-C (once, or twice: the second does not cut the transactions in flight short)."""
    backend, url = _grown_store(kind, request)
    before = _to_prune(url)
    proc = _start(url, tmp_path / "r.jsonl")
    try:
        _wait_for_threads(proc, tmp_path / "r.jsonl", 3)
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        _stopped_cleanly(url, before, proc, tmp_path / "r.jsonl", 130, "interrupted")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("kind", SERVERS)
def test_max_duration_stops_every_session_between_two_threads(kind, request, tmp_path):
    backend, url = _grown_store(kind, request)
    before = _to_prune(url)
    # SecantusDB plans slowly: a longer window there, and a longer sleep so a session's 16 threads outlast it
    limit, slow = ("5s", "0.6") if kind == "postgres" else ("15s", "1.0")
    proc = _start(url, tmp_path / "r.jsonl", "--max-duration", limit, slow=slow)
    try:
        _stopped_cleanly(url, before, proc, tmp_path / "r.jsonl", 11, f"--max-duration {limit}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.postgres
def test_a_thread_failing_in_one_session_is_recorded_failed_and_the_others_go_on(request, tmp_path):
    """A session plans its chunk of threads, then takes them one by one (slowed here): the agent
    writes a thread of that chunk before its turn, the thread's transaction finds rows the plan did
    not have and rolls back (failed, left as it was); every other thread is pruned; exit 4, as
    with one job."""
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    backend, url = _grown_store("postgres", request)
    keys = sorted(_keys(url))
    victim = keys[12]  # late in the first chunk of 16: planned at the start, taken about 4 s later
    proc = _start(url, tmp_path / "r.jsonl")
    try:
        _wait_for_threads(proc, tmp_path / "r.jsonl", 1)
        with backend.saver(url) as saver:
            agent_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="one more")]},
                                                             {"configurable": {"thread_id": victim}})
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 4, err
    assert "1 thread(s) failed and were left as they were" in err and "Traceback" not in err
    recorded = _threads(_receipt(tmp_path / "r.jsonl"))
    assert recorded[victim] == "failed"
    assert set(recorded) == set(keys) and {s for k, s in recorded.items() if k != victim} <= {"pruned", "nothing_to_prune"}
    summary = json.loads(out)["summary"]
    assert summary["failed"] == 1 and summary["threads"] == len(keys)
    assert _to_prune(url) == {victim}  # left as it was: still to prune


@pytest.mark.parametrize("kind", SERVERS)
def test_a_busy_thread_in_one_session_is_skipped_and_the_others_go_on(kind, request, tmp_path):
    from tests.storage.test_lock_timeout import holding

    backend, url = _grown_store(kind, request)
    held = sorted(_keys(url))[20]
    before = _to_prune(url)
    assert held in before
    with holding(kind, backend, url, held):
        res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--jobs", "3", "--lock-timeout", "0.5",
                  "--receipt", str(tmp_path / "r.jsonl"))
    assert res.code == 9, res.err
    recorded = _threads(_receipt(tmp_path / "r.jsonl"))
    assert recorded[held] == "busy" and len(recorded) == len(_keys(url))
    assert json.loads(res.out)["summary"]["busy"] == 1
    assert _to_prune(url) == {held}


@pytest.mark.postgres
def test_the_run_lock_is_held_once_and_refuses_a_second_run(request, tmp_path):
    """N sessions, one run lock: a second prune refuses (exit 10) naming the first; the server
    shows the run's own session holding the one advisory lock, and its N sessions beside it."""
    import psycopg

    backend, url = _grown_store("postgres", request)
    db = backend.db_of(url)
    proc = _start(url, tmp_path / "r.jsonl", slow="0.5")
    try:
        _wait_for_threads(proc, tmp_path / "r.jsonl", 1)
        second = run("thread", "prune", "-s", url, "--all", "--yes")
        assert second.code == 10, second.err
        assert f"pid {proc.pid}" in second.err and second.err.count("\n") == 1
        with psycopg.connect(backend.url("postgres")) as conn:
            locks = conn.execute("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                                 "WHERE l.locktype = 'advisory' AND l.granted AND d.datname = %s", (db,)).fetchone()[0]
            sessions = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                                    (db,)).fetchone()[0]
        assert locks == 1
        assert sessions >= 4  # the run's own (the lock, the pages) and its 3 sessions
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
        assert proc.returncode == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_jobs_on_sqlite_is_a_usage_error(tmp_path, sqlite_store):
    from symfonic_cli import api
    from symfonic_cli.errors import UsageError

    for args in (("thread", "prune", "--all"), ("thread", "erase", "--inactive-for", "1d")):
        res = run(*args, "-s", str(sqlite_store), "--yes", "--jobs", "2")
        assert res.code == 2, res.err
        assert res.err.count("\n") == 1 and "--jobs applies to database servers" in res.err and "one writer" in res.err
    assert run("thread", "prune", "-s", str(sqlite_store), "--all", "--yes", "--jobs", "1", "-f", "json").code == 0
    with pytest.raises(UsageError, match="one writer"):
        api.prune(str(sqlite_store), all_threads=True, yes=True, jobs=2)
    for bad in (0, 65, "2", 2.0, True):
        with pytest.raises(UsageError, match="jobs"):
            api.prune(str(sqlite_store), all_threads=True, yes=True, jobs=bad)
        with pytest.raises(UsageError, match="jobs"):
            api.erase(str(sqlite_store), inactive_for="1d", yes=True, jobs=bad)


@pytest.mark.postgres
def test_jobs_on_an_erase_of_given_threads_is_a_usage_error(request):
    backend = backend_for("postgres", request)
    url = backend.new_store()
    before = _rows(backend, url)
    res = run("thread", "erase", "-s", url, "-t", "acme:_:s-001", "--yes", "--jobs", "2")
    assert res.code == 2, res.err
    assert res.err.count("\n") == 1 and "retention sweep" in res.err
    assert _rows(backend, url) == before


@pytest.mark.postgres
def test_pause_and_max_rate_with_3_jobs(request, tmp_path):
    """--pause waits after each of a session's transactions (3 sessions, a chunk of 16 threads
    each: at least 15 pauses end to end); --max-rate counts the run's threads together (thread k
    no sooner than (k - 1) / N s after the first)."""
    from tests.storage.test_pace import _gaps

    backend, url = _grown_store("postgres", request)
    rate = _copy(backend, url)
    for target, pace, least in ((url, ("--pause", "300ms"), 15 * 0.3), (rate, ("--max-rate", "10"), 47 / 10)):
        receipt = tmp_path / f"{pace[0]}.jsonl"
        res = run("thread", "prune", "-s", target, "--all", "--yes", "-f", "json", "--jobs", "3", "--receipt", str(receipt), *pace)
        assert res.code == 0, res.err
        gaps = _gaps(receipt)
        assert len(gaps) == 47 and sum(gaps) >= least - 0.2, (pace, sum(gaps))
        assert sum(gaps) < 47 * 0.3  # three sessions: not one after the other


@pytest.mark.postgres
def test_huge_threads_go_in_pieces_with_3_jobs_as_with_one(request, tmp_path):
    """--piece-size with --jobs 3: each session prunes its huge thread in pieces, every piece's line
    written by the recording thread, whole; the rows left are one job's."""
    from tests.support.prune_graphs import write_huge_thread

    backend = backend_for("postgres", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        for i in range(6):
            write_huge_thread(saver, steps=12, key=f"acme:_:huge-{i}")
    three = _copy(backend, url)
    lines = {}
    for jobs, target in (("1", url), ("3", three)):
        res = run("thread", "prune", "-s", target, "--all", "--yes", "-f", "json", "--piece-size", "4", "--batch-size", "2",
                  "--receipt", str(tmp_path / f"{jobs}.jsonl"), "--jobs", jobs)
        assert res.code == 0, res.err
        lines[jobs] = _receipt(tmp_path / f"{jobs}.jsonl")
    assert _rows(backend, three) == _rows(backend, url)

    def pieces(recs: list[dict]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for r in recs:
            if r["record"] == "piece":
                out.setdefault(r["key"], []).append(r["piece"])
        return out

    assert pieces(lines["3"]) == pieces(lines["1"]) and len(pieces(lines["3"])) == 6
    assert all(p == list(range(1, len(p) + 1)) and len(p) >= 2 for p in pieces(lines["3"]).values())
    assert _threads(lines["3"]) == _threads(lines["1"]) == {f"acme:_:huge-{i}": "pruned" for i in range(6)}
