"""``symfonic thread erase`` on every store kind: stores written by real graphs, erased through the CLI,
checked through the real LangGraph saver (independent of the code under test)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from symfonic_cli.environment import Environment
from tests.support.cli import run, run_process
from tests.support.scenarios import SECRET_SENTENCE, scenarios

ALL_KEYS = [sc.key for sc in scenarios()]


@pytest.fixture
def store(any_kind):
    return any_kind, any_kind.new_store()


def saved(backend, url: str, key: str) -> tuple[int, int, set[str]]:
    """(checkpoints, pending writes, namespaces) of a thread, read by the real saver."""
    with backend.saver(url) as saver:
        tuples = list(saver.list({"configurable": {"thread_id": key}}))
    writes = sum(len(t.pending_writes or []) for t in tuples)
    return len(tuples), writes, {t.config["configurable"]["checkpoint_ns"] for t in tuples}


def transcript(url: str, key: str) -> str:
    r = run("transcript", "show", "-s", url, "-t", key, "-f", "json")
    assert r.code == 0, r.err
    return r.out


def receipt_of(out: str) -> dict:
    start = out.index("receipt:\n") + len("receipt:\n")
    end = out.rindex("\n}\n") + 2
    return json.loads(out[start:end])


def erase(url: str, *args: str, **kw):
    return run("thread", "erase", "-s", url, *args, **kw)


# -- the cascade ------------------------------------------------------------------------------


def test_single_thread_erased_others_untouched(store):
    backend, url = store
    key = "globex:_:s-100"
    others = {k: transcript(url, k) for k in ALL_KEYS if k != key}
    before = saved(backend, url, key)
    assert before[0] > 0 and before[1] > 0

    r = erase(url, "--thread", key, "--yes")

    assert r.code == 0, r.err
    assert saved(backend, url, key) == (0, 0, set())
    rec = receipt_of(r.out)
    (t,) = rec["threads"]
    assert t["key"] == key and t["status"] == "erased"
    assert sum(t["rows_deleted"].values()) >= before[0]
    assert t["verification"] == {"checked": True, "rows_remaining": 0, "ok": True}
    assert t["residual_copies"]
    assert rec["tool_version"] and rec["receipt_id"] and rec["time"].endswith("Z")
    assert SECRET_SENTENCE not in r.out
    assert {k: transcript(url, k) for k in others} == others
    assert run("transcript", "show", "-s", url, "-t", key).code == 3


def test_rerun_is_idempotent(store):
    backend, url = store
    key = "acme:_:s-001"
    assert erase(url, "--thread", key, "--yes").code == 0
    # The key names nothing now: not-found (exit 3), or exit 0 with --missing-ok; no --yes needed.
    again = erase(url, "--tenant", "acme", "--session", "s-001")
    assert again.code == 3 and "no thread 'acme:_:s-001'" in again.err
    again = erase(url, "--tenant", "acme", "--session", "s-001", "--missing-ok")
    assert again.code == 0, again.err
    assert receipt_of(again.out)["threads"][0]["status"] == "not-found"
    assert "erased 0 thread(s), 0 with nothing to erase, 0 failed, 1 not found" in again.out.splitlines()[-1]


def test_subgraph_namespaces_erased(store):
    backend, url = store
    key = "initech:_:s-sub"
    assert len(saved(backend, url, key)[2]) > 1  # root and subgraph namespaces
    r = erase(url, "--thread", key, "--yes")
    assert r.code == 0, r.err
    assert saved(backend, url, key) == (0, 0, set())


def test_batch_from_file(store, tmp_path):
    backend, url = store
    batch = ["acme:eu:s-002", "acme:eu:s-003", "legacy-thread-id"]
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("# ticket 4711\n" + "\n".join(batch) + "\n\nnobody:_:never\nacme:eu:s-002\n")
    kept = {k: transcript(url, k) for k in ALL_KEYS if k not in batch}

    r = erase(url, "--from-file", str(keys_file), "--yes")

    assert r.code == 3 and "nobody:_:never" in r.err  # the others are erased all the same
    statuses = {t["key"]: t["status"] for t in receipt_of(r.out)["threads"]}
    assert statuses == {**{k: "erased" for k in batch}, "nobody:_:never": "not-found"}
    for k in batch:
        assert saved(backend, url, k)[0] == 0
    assert {k: transcript(url, k) for k in kept} == kept


def test_whole_tenant_and_sub_tenant(store):
    backend, url = store
    r = erase(url, "--tenant", "acme", "--sub-tenant", "eu", "--all-sessions", "--yes")
    assert r.code == 0, r.err
    assert {t["key"] for t in receipt_of(r.out)["threads"]} == {"acme:eu:s-002", "acme:eu:s-003"}
    assert saved(backend, url, "acme:_:s-001")[0] > 0

    r = erase(url, "--tenant", "acme", "--all-sessions", "--yes")
    assert r.code == 0, r.err
    assert {t["key"] for t in receipt_of(r.out)["threads"]} == {"acme:_:s-001", "acme:_:s-rewrite"}
    for k in ALL_KEYS:
        assert (saved(backend, url, k)[0] == 0) == k.startswith("acme:")


# -- declared extra tables -------------------------------------------------------------------


def _extra_rows(kind: str, url: str, create: bool, rows: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """Create/fill the deployment's own tables, or read them back (sorted tuples per table)."""
    if kind == "sqlite":
        import sqlite3

        conn = sqlite3.connect(url)
        try:
            if create:
                for table, data in rows.items():
                    ncol = len(data[0])
                    cols = ("thread_id", "body") if ncol == 2 else ("tenant_id", "session_id", "token")
                    conn.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
                    conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * ncol)})", data)
                conn.commit()
            return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in rows}
        finally:
            conn.close()
    if kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            if create:
                for table, data in rows.items():
                    ncol = len(data[0])
                    cols = ("thread_id", "body") if ncol == 2 else ("tenant_id", "session_id", "token")
                    conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' text' for c in cols)})")
                    with conn.cursor() as cur:
                        cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * ncol)})", data)
            return {t: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {t}").fetchall()) for t in rows}
    from pymongo import MongoClient

    from tests.support.mongo_server import database_of

    client = MongoClient(url)
    try:
        db = client[database_of(url)]
        out = {}
        for table, data in rows.items():
            cols = ("thread_id", "body") if len(data[0]) == 2 else ("tenant_id", "session_id", "token")
            if create:
                db[table].insert_many([dict(zip(cols, r)) for r in data])
            out[table] = sorted(tuple(d[c] for c in cols) for d in db[table].find())
        return out
    finally:
        client.close()


def test_cascade_into_declared_extra_tables(store, tmp_path):
    backend, url = store
    rows = {
        "conversations": [("globex:_:s-100", "erase me"), ("globex:_:s-101", "keep me")],
        "pause_tokens": [("globex", "s-100", "tok-1"), ("globex", "s-101", "tok-2"), ("acme", "s-100", "tok-3")],
        "audit_log": [("globex:_:s-100", "undeclared: never touched")],
    }
    _extra_rows(backend.kind, url, True, rows)
    config = tmp_path / "config.toml"
    config.write_text(
        f"[stores.prod]\nurl = {json.dumps(url)}\nerase_extra = [\n"
        '  {table = "conversations", column = "thread_id"},\n'
        '  {table = "pause_tokens", match = {tenant_id = "tenant", session_id = "session"}, all_sub_tenants = true},\n]\n'
    )
    env = {"SYMFONIC_CONFIG": str(config)}

    plan = run("thread", "erase", "-s", "prod", "--thread", "globex:_:s-100", "--dry-run", env=env)
    assert plan.code == 0, plan.err
    assert "conversations 1" in plan.out and "pause_tokens 1" in plan.out

    r = run("thread", "erase", "-s", "prod", "--thread", "globex:_:s-100", "--yes", env=env)

    assert r.code == 0, r.err
    (t,) = receipt_of(r.out)["threads"]
    assert t["rows_deleted"]["conversations"] == 1 and t["rows_deleted"]["pause_tokens"] == 1
    after = _extra_rows(backend.kind, url, False, rows)
    assert after["conversations"] == [("globex:_:s-101", "keep me")]
    assert after["pause_tokens"] == [("acme", "s-100", "tok-3"), ("globex", "s-101", "tok-2")]
    assert after["audit_log"] == rows["audit_log"]
    assert saved(backend, url, "globex:_:s-100")[0] == 0


@pytest.mark.parametrize(
    "entry, message",
    [
        ('{table = "x; DROP TABLE checkpoints", column = "thread_id"}', "plain identifier"),
        ('{table = "conversations", column = "thread_id\\" OR 1=1 --"}', "plain identifier"),
        ('{table = "checkpoints", column = "thread_id"}', "checkpoint table"),
        ('{table = "pause_tokens", match = {session_id = "session"}}', "tenant column"),
        ('{table = "pause_tokens", match = {session_id = "everything"}}', "must hold one of"),
    ],
)
def test_bad_extra_config_is_refused_before_anything(sqlite_store, tmp_path, entry, message):
    config = tmp_path / "config.toml"
    config.write_text(f"[stores.prod]\nurl = {json.dumps(str(sqlite_store))}\nerase_extra = [{entry}]\n")
    r = run("thread", "erase", "-s", "prod", "--thread", "globex:_:s-100", "--yes", env={"SYMFONIC_CONFIG": str(config)})
    assert r.code == 2 and message in r.err and r.err.count("\n") == 1
    assert run("transcript", "show", "-s", str(sqlite_store), "-t", "globex:_:s-100").code == 0


def test_missing_declared_table_is_a_store_error(sqlite_store, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[stores.prod]\nurl = {json.dumps(str(sqlite_store))}\nerase_extra = [{{table = "conversations", column = "thread_id"}}]\n')
    r = run("thread", "erase", "-s", "prod", "--thread", "globex:_:s-100", "--yes", env={"SYMFONIC_CONFIG": str(config)})
    assert r.code == 4 and "conversations" in r.err
    assert run("transcript", "show", "-s", str(sqlite_store), "-t", "globex:_:s-100").code == 0


# -- confirmation ----------------------------------------------------------------------------


def test_refused_without_yes_and_without_terminal(store):
    backend, url = store
    before = saved(backend, url, "globex:_:s-100")
    r = erase(url, "--thread", "globex:_:s-100")
    assert r.code == 6
    assert r.err.startswith("symfonic: error: not confirmed") and r.err.count("\n") == 1
    assert "--yes" in r.err and "Traceback" not in r.err
    assert "globex:_:s-100: " in r.out  # the plan came first
    assert saved(backend, url, "globex:_:s-100") == before


def test_dry_run_deletes_nothing(store):
    backend, url = store
    before = saved(backend, url, "globex:_:s-100")
    r = erase(url, "--thread", "globex:_:s-100", "--dry-run")
    assert r.code == 0 and "dry run: nothing deleted" in r.out
    assert f"checkpoints {before[0]}" in r.out and "first activity 20" in r.out and "Not erased:" in r.out
    assert saved(backend, url, "globex:_:s-100") == before


def test_typed_confirmation(sqlite_store, monkeypatch):
    url = str(sqlite_store)
    monkeypatch.setattr(Environment, "stdin_isatty", lambda self: True)

    wrong = erase(url, "--thread", "globex:_:s-100", input="globex:_:s-101\n")
    assert wrong.code == 6 and "expected 'globex:_:s-100'" in wrong.err
    assert "Type the thread key" in wrong.err
    assert run("transcript", "show", "-s", url, "-t", "globex:_:s-100").code == 0

    right = erase(url, "--thread", "globex:_:s-100", input="globex:_:s-100\n")
    assert right.code == 0, right.err
    assert receipt_of(right.out)["threads"][0]["status"] == "erased"

    batch = erase(url, "--tenant", "acme", "--all-sessions", input="acme\n")
    assert batch.code == 6 and "(4)" in batch.err
    batch = erase(url, "--tenant", "acme", "--all-sessions", input="4\n")
    assert batch.code == 0 and receipt_of(batch.out)["summary"]["erased"] == 4


def test_typed_confirmation_on_a_pseudo_terminal(sqlite_store):
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(sqlite_store), "--thread", "globex:_:s-100"],
        stdin=slave, stdout=subprocess.PIPE, stderr=slave, text=True,
    )
    os.close(slave)
    seen = b""
    while b"Type the thread key" not in seen:
        chunk = os.read(master, 1024)
        assert chunk, seen
        seen += chunk
    os.write(master, b"globex:_:s-100\n")
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0
    assert receipt_of(out)["threads"][0]["status"] == "erased"


# -- faults, concurrency ---------------------------------------------------------------------

BATCH = ["acme:_:s-001", "acme:eu:s-002", "acme:eu:s-003", "globex:_:s-100"]


def _batch_file(tmp_path: Path) -> Path:
    f = tmp_path / "batch.txt"
    f.write_text("\n".join(BATCH) + "\n")
    return f


@pytest.fixture(params=["sqlite", "postgres"])
def closing_kind(request):
    """Kinds whose server rolls a transaction back when its client dies. A MongoDB server keeps
    an orphaned transaction open until transactionLifetimeLimitSeconds (60 s by default)."""
    from tests.conftest import backend_for

    return backend_for(request.param, request)


def test_killed_between_commits(store, tmp_path):
    _killed_mid_batch(*store, tmp_path, "SYMFONIC_FAULT_AFTER_THREADS", 2)


def test_killed_inside_a_thread_transaction(closing_kind, tmp_path):
    _killed_mid_batch(closing_kind, closing_kind.new_store(), tmp_path, "SYMFONIC_FAULT_IN_THREAD", 1)


def _killed_mid_batch(backend, url, tmp_path, fault, gone):
    before = {k: saved(backend, url, k) for k in BATCH}
    batch = _batch_file(tmp_path)

    r = run_process("thread", "erase", "-s", url, "--from-file", str(batch), "--yes", env={fault: "2"})

    assert r.code == -9  # SIGKILL: no cleanup ran
    for i, k in enumerate(BATCH):
        assert saved(backend, url, k) == ((0, 0, set()) if i < gone else before[k]), k
    rerun = run("thread", "erase", "-s", url, "--from-file", str(batch), "--yes", "--missing-ok")
    assert rerun.code == 0, rerun.err
    statuses = [t["status"] for t in receipt_of(rerun.out)["threads"]]
    assert statuses == ["not-found"] * gone + ["erased"] * (len(BATCH) - gone)
    assert all(saved(backend, url, k)[0] == 0 for k in BATCH)


def test_two_concurrent_erasers(store):
    import subprocess
    import sys

    backend, url = store
    # One runner per store: the second waits for the first (--wait), else it would refuse (exit 10).
    cmd = [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "--thread", "globex:_:s-100", "--yes", "--missing-ok", "--wait"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    statuses = sorted(receipt_of(o)["threads"][0]["status"] for o, _ in outs)
    # The loser planned before or after the winner's commit.
    assert statuses in (["erased", "nothing-to-erase"], ["erased", "not-found"])
    assert saved(backend, url, "globex:_:s-100")[0] == 0


def test_application_writing_other_threads_meanwhile(sqlite_store):
    from tests.support.scenarios import long_thread

    from tests.support import backends

    backend = backends.get("sqlite")
    errors: list[BaseException] = []
    stop = threading.Event()

    def app_writes():
        try:
            with backend.saver(str(sqlite_store)) as saver:
                n = 0
                while not stop.is_set() and n < 40:
                    long_thread(saver, f"app:_:live-{n % 3}", 1)
                    n += 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    writer = threading.Thread(target=app_writes)
    writer.start()
    try:
        r = run("thread", "erase", "-s", str(sqlite_store), "--tenant", "acme", "--all-sessions", "--yes")
    finally:
        stop.set()
        writer.join()
    assert r.code == 0, r.err
    assert not errors
    assert receipt_of(r.out)["summary"]["erased"] == 4
    assert saved(backend, str(sqlite_store), "app:_:live-0")[0] > 0


# -- SQLite: no text left behind, read-only, receipts ----------------------------------------


def test_no_erased_text_left_in_db_or_wal(tmp_path):
    import sqlite3

    from tests.support import backends

    backend = backends.get("sqlite")
    path = tmp_path / "live.db"
    # The application keeps its connection open, so the -wal holds the conversation too.
    app = sqlite3.connect(str(path), check_same_thread=False)
    from langgraph.checkpoint.sqlite import SqliteSaver
    from tests.support.scenarios import write_scenarios

    write_scenarios(SqliteSaver(app), ["globex:_:s-100", "globex:_:s-101"])
    wal = Path(f"{path}-wal")
    raw = path.read_bytes() + wal.read_bytes()
    assert SECRET_SENTENCE.encode() in raw and b"Keep this conversation." in raw
    try:
        r = erase(str(path), "--thread", "globex:_:s-100", "--yes")
        assert r.code == 0, r.err
        db_bytes = path.read_bytes()
        wal_bytes = wal.read_bytes() if wal.exists() else b""
        assert SECRET_SENTENCE.encode() not in db_bytes
        assert SECRET_SENTENCE.encode() not in wal_bytes
        assert b"Keep this conversation." in db_bytes + wal_bytes
        # The application goes on working with the file.
        write_scenarios(SqliteSaver(app), ["acme:_:s-001"])
    finally:
        app.close()
    assert saved(backend, str(path), "acme:_:s-001")[0] > 0


def test_vacuum_gives_space_back(sqlite_store):
    size = sqlite_store.stat().st_size
    r = erase(str(sqlite_store), "--tenant", "acme", "--all-sessions", "--yes", "--vacuum")
    assert r.code == 0, r.err
    assert "VACUUM" in " ".join(receipt_of(r.out)["notes"])
    assert sqlite_store.stat().st_size < size
    assert SECRET_SENTENCE.encode() in sqlite_store.read_bytes()  # globex was kept


def _without_root_file_powers() -> None:
    # Root ignores file modes: drop the capabilities that let it (CAP_DAC_OVERRIDE,
    # CAP_DAC_READ_SEARCH, CAP_FOWNER) from the bounding set, so the exec'd process has them not.
    import ctypes
    import os

    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_read_only_store_fails_before_deleting(sqlite_master, tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    path = tmp_path / "store.db"
    shutil.copyfile(sqlite_master, path)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(path), "--thread", "globex:_:s-100", "--yes"],
            capture_output=True, text=True, timeout=60, preexec_fn=_without_root_file_powers,
        )
    finally:
        os.chmod(path, 0o644)
    assert proc.returncode == 4, proc.stderr
    assert ("read-only" in proc.stderr or "not writable" in proc.stderr) and proc.stderr.count("\n") == 1
    assert "erased " not in proc.stdout
    assert path.read_bytes() == before


def test_receipt_file_appends_jsonl(sqlite_store, tmp_path):
    audit = tmp_path / "audit.jsonl"
    url = str(sqlite_store)
    env = {"USER": "support-jane"}
    assert erase(url, "--thread", "globex:_:s-100", "--yes", "--receipt", str(audit), env=env).code == 0
    assert erase(url, "--thread", "globex:_:s-100", "--yes", "--receipt", str(audit), env=env).code == 0
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [rec["record"] for rec in lines] == ["start", "thread", "end"] * 2
    first, second = lines[1], lines[4]
    assert first["operator"] == "support-jane" and first["store"] == url
    assert first["key"] == second["key"] == "globex:_:s-100"
    assert first["status"] == "erased" and second["status"] == "already-erased"
    assert second["erased_by"] == {"receipt_id": first["receipt_id"], "time": first["time"]}
    assert first["receipt_id"] != second["receipt_id"]
    assert SECRET_SENTENCE not in audit.read_text()


def test_unwritable_receipt_file_stops_before_deleting(sqlite_store, tmp_path):
    r = erase(str(sqlite_store), "--thread", "globex:_:s-100", "--yes", "--receipt", str(tmp_path / "no" / "dir.jsonl"))
    assert r.code == 4 and "receipt" in r.err and "does not exist" in r.err
    assert run("transcript", "show", "-s", str(sqlite_store), "-t", "globex:_:s-100").code == 0


def test_grace_warning_for_recent_activity(sqlite_store):
    # The scenario store was written seconds ago: an agent could still hold these sessions.
    r = erase(str(sqlite_store), "--thread", "globex:_:s-100", "--yes", "--grace", "1h")
    assert "warning: 1 thread(s) had recent activity" in r.out.splitlines()[-1]
    assert "can write the thread again" in receipt_of(r.out)["threads"][0]["warning"]
    r = erase(str(sqlite_store), "--thread", "globex:_:s-101", "--yes", "--grace", "0s")
    assert "warning" not in r.out.splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["--all-sessions"],
        ["--tenant", "acme", "--all-sessions", "--thread", "acme:_:s-001"],
        ["--thread", "a:_:b", "--tenant", "a", "--session", "b"],
        ["--thread", "a:_:b", "--grace", "soon"],
        [],
    ],
)
def test_usage_errors(sqlite_store, args):
    r = erase(str(sqlite_store), *args, "--yes")
    assert r.code == 2 and r.err.count("\n") == 1
    assert run("threads", "list", "-s", str(sqlite_store)).out.count("\n") == len(ALL_KEYS) + 1
