"""Receipts name the same tables, no one else, and are read in constant memory; the dry run checks
the receipt as the real run does (issue 21 items 3 to 6, 10).

Stores are written by real graphs through the real savers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import backend_for
from tests.support.cli import run
from tests.erase.test_erase_trust import write_threads


def erase(url: str, *args: str, **kw):
    return run("thread", "erase", "-s", url, *args, **kw)


def statuses(out: str) -> list[str]:
    return [t["status"] for t in json.loads(out)["threads"]]


# -- 3. "the same store" is the same tables ------------------------------------------------------


def test_postgres_another_schema_is_another_store(request, tmp_path):
    import psycopg

    pg = backend_for("postgres", request)
    url = pg.new_store(scenarios=False)
    write_threads(pg, url, ["Bob:_:s-1"])  # public: the person's live thread
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Mixed"')
    mixed = url + ("&" if "?" in url else "?") + "options=-csearch_path%3D%22Mixed%22"
    with pg.saver(mixed) as saver:
        saver.setup()
    write_threads(pg, mixed, ["bob:_:s-1"])
    audit = tmp_path / "audit.jsonl"
    first = erase(url, "--pg-schema", "Mixed", "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert first.code == 0 and statuses(first.out) == ["erased"], first.err
    # The same key in schema public (which never held it): not-found, pointing to Bob:_:s-1.
    again = erase(url, "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert again.code == 3 and statuses(again.out) == ["not-found"], again.err
    assert "Bob:_:s-1" in again.err
    # Schema Mixed again: already-erased.
    third = erase(url, "--pg-schema", "Mixed", "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert third.code == 0 and statuses(third.out) == ["already-erased"], third.err
    identity = json.loads(first.out)["store_identity"]
    assert identity["schema"] == "Mixed" and identity["database"] == pg.db_of(url) and identity["port"] == int(pg.port)


def test_postgres_identity_is_what_libpq_resolves_from_the_environment(request, tmp_path):
    pg = backend_for("postgres", request)
    url = pg.new_store()
    audit = tmp_path / "audit.jsonl"
    first = erase(url, "-t", "acme:_:s-001", "--yes", "--receipt", str(audit), "-f", "json")
    assert first.code == 0, first.err
    # The same server and database named by libpq's environment variables and a service file.
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(url)
    service = tmp_path / "pg_service.conf"
    service.write_text(f"[audit]\nhost={parts['host']}\nport={parts['port']}\ndbname={parts['dbname']}\n")
    env = {"PGSERVICEFILE": str(service), "PGUSER": str(parts["user"])}
    if parts.get("password"):
        env["PGPASSWORD"] = str(parts["password"])
    again = erase("service=audit", "-t", "acme:_:s-001", "--yes", "--receipt", str(audit), "-f", "json", env=env)
    assert again.code == 0 and statuses(again.out) == ["already-erased"], again.err


def test_mongodb_other_collections_are_another_store(request, tmp_path):
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.support.mongo_server import database_of
    from tests.support.scenarios import agent_graph

    mongo = backend_for("mongodb", request)
    url = mongo.new_store(scenarios=False)
    write_threads(mongo, url, ["Bob:_:s-1"])
    saver = MongoDBSaver(mongo.client, db_name=database_of(url), checkpoint_collection_name="cp2", writes_collection_name="wr2")
    graph = agent_graph().compile(checkpointer=saver)
    graph.invoke({"messages": [HumanMessage(content="hello")]}, {"configurable": {"thread_id": "bob:_:s-1"}})
    audit = tmp_path / "audit.jsonl"
    other = ("--checkpoint-collection", "cp2", "--writes-collection", "wr2")
    first = erase(url, *other, "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert first.code == 0 and statuses(first.out) == ["erased"], first.err
    again = erase(url, "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert again.code == 3 and statuses(again.out) == ["not-found"], again.err
    assert "Bob:_:s-1" in again.err
    third = erase(url, *other, "-t", "bob:_:s-1", "--yes", "--receipt", str(audit), "-f", "json")
    assert third.code == 0 and statuses(third.out) == ["already-erased"], third.err
    assert json.loads(first.out)["store_identity"]["collections"] == ["cp2", "wr2"]


def test_sqlite_identity_is_the_resolved_file(sqlite_store, tmp_path):
    audit = tmp_path / "audit.jsonl"
    first = erase(str(sqlite_store), "-t", "acme:_:s-001", "--yes", "--receipt", str(audit), "-f", "json")
    assert first.code == 0, first.err
    # The same file through a symbolic link: the same tables.
    link = tmp_path / "link.db"
    link.symlink_to(sqlite_store)
    again = erase(str(link), "-t", "acme:_:s-001", "--yes", "--receipt", str(audit), "-f", "json")
    assert again.code == 0 and statuses(again.out) == ["already-erased"], again.err
    # A copy is another store.
    copy = tmp_path / "copy.db"
    copy.write_bytes(Path(sqlite_store).read_bytes())
    third = erase(str(copy), "-t", "acme:_:s-001", "--yes", "--receipt", str(audit), "-f", "json")
    assert third.code == 3 and statuses(third.out) == ["not-found"], third.err
    assert json.loads(first.out)["store_identity"] == {"kind": "sqlite", "path": os.path.realpath(sqlite_store)}


# -- 6. the dry run checks the receipt as the real run does -----------------------------------------


@pytest.mark.parametrize("selection", [("-t", "acme:_:s-001"), ("--inactive-for", "1d")])
def test_receipt_in_a_missing_directory_is_exit_4_dry_or_not(any_kind, tmp_path, selection):
    from tests.support.hostile import fingerprint

    url = any_kind.new_store()
    before = fingerprint(any_kind.kind, url)
    receipt = str(tmp_path / "missing" / "audit.jsonl")
    for mode in ("--dry-run", "--yes"):
        r = erase(url, *selection, mode, "--receipt", receipt)
        assert r.code == 4, (mode, r.code, r.err)
        assert "does not exist" in r.err and r.err.count("\n") == 1 and r.out == ""
    assert fingerprint(any_kind.kind, url) == before


def test_receipt_in_an_unwritable_directory_is_exit_4_dry_or_not(sqlite_master, tmp_path):
    import shutil
    import subprocess
    import sys

    from tests.erase.test_erase import _without_root_file_powers

    store = tmp_path / "store.db"
    shutil.copyfile(sqlite_master, store)
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    before = store.read_bytes()
    try:
        for mode in ("--dry-run", "--yes"):
            proc = subprocess.run(
                [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(store), "-t", "acme:_:s-001", mode,
                 "--receipt", str(locked / "audit.jsonl")],
                capture_output=True, text=True, timeout=60, preexec_fn=_without_root_file_powers,
            )
            assert proc.returncode == 4, (mode, proc.returncode, proc.stderr)
            assert "receipt" in proc.stderr and proc.stderr.count("\n") == 1 and proc.stdout == ""
    finally:
        os.chmod(locked, 0o700)
    assert store.read_bytes() == before and not (locked / "audit.jsonl").exists()


# -- 4. a receipt records no one else ---------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "table", "json", "jsonl"])
def test_suggestions_never_reach_the_receipt_or_stdout(any_kind, tmp_path, fmt):
    url = any_kind.new_store()
    audit = tmp_path / "audit.jsonl"
    keys = tmp_path / "keys.txt"
    keys.write_text("acme:_:s-002\nacme:eu:s-00\n")  # near acme:eu:s-002, acme:_:s-001, ...: other customers
    for mode in ("--yes", "--dry-run"):
        r = erase(url, "--from-file", str(keys), mode, "--missing-ok", "--receipt", str(audit), "-f", fmt)
        assert r.code == 0, r.err
        assert "acme:eu:s-002" in r.err and "acme:_:s-001" in r.err  # the operator still sees them
        assert "acme:eu:s-002" not in r.out and "acme:_:s-001" not in r.out, r.out
    recorded = audit.read_text()
    assert "acme:eu:s-002" not in recorded and "acme:_:s-001" not in recorded
    lines = [json.loads(line) for line in recorded.splitlines()]
    assert not any("suggestions" in t for t in lines)
    assert {(t["key"], t["status"]) for t in lines if t["record"] == "thread"} == {("acme:_:s-002", "not-found"), ("acme:eu:s-00", "not-found")}


# -- 10. the smaller ones ---------------------------------------------------------------------------


# A sweep by a cut-off every thread is before (one "inactive for 1s" could find none yet).
@pytest.mark.parametrize("selection", [("--thread", "globex:_:s-100"), ("--inactive-since", "2999-01-01")])
def test_ctrl_c_at_the_confirmation_prompt_says_nothing_erased(sqlite_store, tmp_path, selection):
    from tests.erase.test_erase_trust import _pty_run, listed

    before = sorted(listed(str(sqlite_store)))
    code, terminal, stdout = _pty_run(["thread", "erase", "-s", str(sqlite_store), *selection], tmp_path, answer="\x03")
    assert code == 130, terminal
    assert "not confirmed" in terminal and "nothing erased" in terminal and "Traceback" not in terminal
    assert sorted(listed(str(sqlite_store))) == before


# A sweep by a cut-off every thread is before (one "inactive for 1s" could find none yet).
@pytest.mark.parametrize("selection", [("--thread", "globex:_:s-100"), ("--inactive-since", "2999-01-01")])
def test_the_end_record_carries_the_end_time(any_kind, tmp_path, selection):
    from datetime import datetime

    url = any_kind.new_store()
    audit = tmp_path / "audit.jsonl"
    # The run lasts at least 0.3 s in all, however many threads the selection holds.
    from tests.erase.test_erase_trust import listed

    pause = 0.3 / (1 if selection[0] == "--thread" else len(listed(url)))
    r = erase(url, *selection, "--yes", "--receipt", str(audit), "-f", "jsonl", env={"SYMFONIC_FAULT_SLOW_THREAD": f"{pause + 1e-6:.6f}"})
    assert r.code == 0, r.err
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    start, *threads, end = lines
    assert start["record"] == "start" and end["record"] == "end" and threads

    def t(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))

    assert t(end["time"]) >= max(t(x["time"]) for x in threads) > t(start["time"])
    assert end["started"] == start["time"] and t(end["time"]).timestamp() - t(start["time"]).timestamp() >= 0.3
    if selection[0] == "--inactive-for":  # the sweep's jsonl on stdout ends with the same record
        assert json.loads(r.out.splitlines()[-1])["time"] == end["time"]


def test_a_terminated_postgres_backend_is_one_line(request):
    import subprocess
    import sys
    import time

    import psycopg

    pg = backend_for("postgres", request)
    url = pg.new_store()
    key = "acme:_:s-001"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    with psycopg.connect(url) as holder:
        # A row lock: the erase plans (reads are not blocked), then its DELETE waits on it.
        holder.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s FOR UPDATE", (key,))
        proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "-t", key, "--yes"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            with psycopg.connect(url, autocommit=True) as admin:
                deadline, pid = time.monotonic() + 60, None
                while pid is None and time.monotonic() < deadline:
                    row = admin.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%%DELETE FROM%%'").fetchone()
                    pid = row[0] if row else time.sleep(0.05)
                assert pid is not None, "the erase never waited on the lock"
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        holder.rollback()
    assert proc.returncode == 4, err
    assert "Pipeline" not in err + out and "Traceback" not in err + out, err
    # One line says what happened to the thread; the receipt says it too; nothing else.
    (line,) = [x for x in out.splitlines() if x.startswith("failed ")]
    assert key in line and "terminat" in line, out
    assert err == "", err
    r = run("transcript", "show", "-s", url, "-t", key)
    assert r.code == 0  # rolled back: the thread is whole


@pytest.mark.parametrize("fmt", ["text", "table"])
# A sweep by a cut-off every thread is before (one "inactive for 1s" could find none yet).
@pytest.mark.parametrize("selection", [("--thread", "globex:_:s-100"), ("--inactive-since", "2999-01-01")])
def test_a_confirmed_erase_prints_a_summary_and_the_receipt_path(any_kind, tmp_path, fmt, selection):
    url = any_kind.new_store()
    audit = tmp_path / "audit.jsonl"
    r = erase(url, *selection, "--yes", "--receipt", str(audit), "-f", fmt)
    assert r.code == 0, r.err
    receipt_id = json.loads(audit.read_text().splitlines()[0])["receipt_id"]
    lines = r.out.splitlines()
    assert lines[-1] == f"receipt {receipt_id}: {audit}" and lines[-2].startswith("erased "), r.out
    assert "residual_copies" not in r.out and "receipt:" not in r.out and "not_erased" not in r.out, r.out
