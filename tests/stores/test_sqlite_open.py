"""Opening SQLite stores: URL forms, read-only proof (bytes and files unchanged), bad input."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path


from tests.support.cli import run

INSPECTING = [
    ["transcript", "show", "--thread", "acme:_:s-001", "--format", "json"],
    ["transcript", "show", "--thread", "acme:_:s-001", "--since", "2000-01-01", "--format", "json"],
    ["threads", "list", "--format", "json"],
    ["store", "info", "--format", "json"],
]


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_quiescent_wal_store_no_file_created_no_byte_changed(sqlite_store):
    folder = sqlite_store.parent
    assert not Path(f"{sqlite_store}-wal").exists() and not Path(f"{sqlite_store}-shm").exists()
    before = snapshot(folder)
    for args in INSPECTING:
        res = run(*args, "--store", str(sqlite_store))
        assert res.code == 0, (args, res.err)
        assert snapshot(folder) == before, args


def test_compat_report_is_read_only_too(sqlite_store):
    before = snapshot(sqlite_store.parent)
    res = run("compat", "report", "--store", str(sqlite_store), "--format", "json")
    assert res.code in (0, 5), res.err
    assert snapshot(sqlite_store.parent) == before


def test_reading_while_an_application_writes(sqlite_store):
    """An application holds the file open in WAL mode and keeps writing; reads work and change nothing of its files."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.scenarios import long_thread

    conn = sqlite3.connect(str(sqlite_store), check_same_thread=False)
    saver = SqliteSaver(conn)
    long_thread(saver, "live:_:writer", 2)  # the application now has -wal and -shm open
    wal = Path(f"{sqlite_store}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    db_hash = hashlib.sha256(sqlite_store.read_bytes()).hexdigest()
    wal_hash = hashlib.sha256(wal.read_bytes()).hexdigest()
    for args in INSPECTING:
        assert run(*args, "--store", str(sqlite_store)).code == 0
    assert hashlib.sha256(sqlite_store.read_bytes()).hexdigest() == db_hash
    assert hashlib.sha256(wal.read_bytes()).hexdigest() == wal_hash
    # The reader sees what the application committed to its WAL.
    listed = json.loads(run("threads", "list", "--store", str(sqlite_store), "--format", "json").out)
    assert "live:_:writer" in [t["key"] for t in listed]

    errors: list[BaseException] = []
    stop = threading.Event()

    def writer():
        try:
            i = 0
            while not stop.is_set() and i < 30:
                long_thread(saver, f"live:_:w{i}", 1)
                i += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(10):
            res = run("transcript", "show", "--store", str(sqlite_store), "--thread", "acme:_:s-001", "--format", "json")
            assert res.code == 0, res.err
            assert json.loads(res.out)[1]["content"] == "What is the status of order 1042?"
    finally:
        stop.set()
        t.join()
        conn.close()
    assert not errors


def test_rollback_journal_store_creates_no_file(sqlite_store):
    conn = sqlite3.connect(sqlite_store)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    before = snapshot(sqlite_store.parent)
    for args in INSPECTING:
        assert run(*args, "--store", str(sqlite_store)).code == 0
    assert snapshot(sqlite_store.parent) == before
    info = json.loads(run("store", "info", "--store", str(sqlite_store), "--format", "json").out)
    assert info["journal_mode"] == "delete"


def test_url_forms_and_environment(sqlite_store, monkeypatch):
    expected = run("threads", "list", "--store", str(sqlite_store), "--format", "json").out
    monkeypatch.chdir(sqlite_store.parent)
    assert run("threads", "list", "--store", f"sqlite:///{sqlite_store.name}", "--format", "json").out == expected
    assert run("threads", "list", "--store", f"sqlite:///{sqlite_store}", "--format", "json").out == expected
    assert run("threads", "list", "--format", "json", env={"SYMFONIC_STORE": str(sqlite_store)}).out == expected


def test_named_store_from_config(sqlite_store, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[stores.dev]\nurl = "sqlite:///{sqlite_store}"\n')
    res = run("threads", "list", "--store", "dev", "--format", "json", env={"SYMFONIC_CONFIG": str(cfg)})
    assert res.code == 0, res.err
    assert len(json.loads(res.out)) == 8


def test_no_store_given_is_usage_error():
    res = run("threads", "list")
    assert res.code == 2 and "SYMFONIC_STORE" in res.err


def _bad(path: Path, *, expect: str):
    res = run("threads", "list", "--store", str(path))
    assert res.code == 4, res
    assert expect in res.err
    assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    return res


def test_missing_file_is_error_and_never_created(tmp_path):
    path = tmp_path / "nope.db"
    _bad(path, expect="no SQLite file")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []
    res = run("threads", "list", "--store", f"sqlite:///{path}")
    assert res.code == 4 and not path.exists()


def test_directory_is_error(tmp_path):
    _bad(tmp_path, expect="is a directory")


def test_not_sqlite_file(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("hello, I am not a database\n" * 10)
    _bad(path, expect="not an SQLite database")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    _bad(empty, expect="empty")


def test_truncated_file(sqlite_store, tmp_path):
    data = sqlite_store.read_bytes()
    path = tmp_path / "truncated.db"
    path.write_bytes(data[: len(data) // 3])
    res = run("transcript", "show", "--store", str(path), "--thread", "acme:_:s-rewrite")
    assert res.code == 4, res
    assert "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1
    head = tmp_path / "head.db"
    head.write_bytes(data[:50])
    _bad(head, expect="not an SQLite database")


def test_sqlite_without_langgraph_tables(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    _bad(path, expect="not a LangGraph checkpoint store")
    assert path.read_bytes() == before


def test_unsupported_scheme(tmp_path):
    res = run("threads", "list", "--store", "redis://user:hunter2@localhost/0")
    assert res.code == 4 and "hunter2" not in res.err and "redis" in res.err


def test_unreadable_file(sqlite_store):
    """A file this user may not read: exit 4 with a clear line.

    Root reads every file, so when the suite runs as root the command runs in a forked child
    that has dropped to the unprivileged user ``nobody`` (everything it needs is imported first).
    """
    import pwd
    import tempfile

    import symfonic_cli.cli.app as app_module
    import symfonic_cli.cli.listing  # loaded before privileges are dropped
    import symfonic_cli.stores.sqlite  # noqa: F401 - loaded before privileges are dropped

    folder = Path(tempfile.mkdtemp(prefix="symfonic-unreadable-", dir="/tmp"))
    try:
        os.chmod(folder, 0o755)
        path = folder / "secret.db"
        shutil.copyfile(sqlite_store, path)
        os.chmod(path, 0o600 if os.geteuid() == 0 else 0)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                import sys

                sys.stderr = os.fdopen(write_end, "w")
                if os.geteuid() == 0:
                    nobody = pwd.getpwnam("nobody")
                    os.setgid(nobody.pw_gid)
                    os.setuid(nobody.pw_uid)
                app_module.main(["threads", "list", "--store", str(path)])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(write_end)
        err = os.read(read_end, 65536).decode()
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 4, err
        assert "not readable" in err and "Traceback" not in err
    finally:
        shutil.rmtree(folder)


def test_read_only_file_can_be_read(sqlite_store):
    os.chmod(sqlite_store, 0o444)
    try:
        res = run("threads", "list", "--store", str(sqlite_store), "--format", "json")
        assert res.code == 0 and len(json.loads(res.out)) == 8
    finally:
        os.chmod(sqlite_store, 0o644)
