"""An erase while the application holds a read snapshot (issue #44 item 3). SQLite cannot truncate
the write-ahead log past a reader's snapshot, so the -wal file keeps pages with the erased text.
The receipt used to say "no erased text remains in the database file or its -wal" in every thread
record while only a note said the log was not truncated. Now each thread record states what it
verified (the database file's pages) and points at the run's notes; the run says what is left
(exit 12, one line naming the -wal, the end record's ``stopped`` and notes), and ``--wait`` waits
for the readers and then truncates it (exit 0, the note that it was). A real reader connection
holds the snapshot."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

from tests.conftest import backend_for
from tests.support.cli import run

KEY = "acme:_:wal-reader-7"


def _store_with_a_reader(request) -> tuple[str, sqlite3.Connection]:
    """A store the application has open: it writes KEY (real graph, real saver; the pages go to the
    -wal, which stays while a connection is open), and then reads, holding a snapshot that
    predates the erase. Returns the store and the reader's connection."""
    from tests.support.prune_graphs import write_huge_thread

    backend = backend_for("sqlite", request)
    url = backend.new_store()
    reader = sqlite3.connect(url, isolation_level=None)
    assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with backend.saver(url) as saver:
        write_huge_thread(saver, steps=3, key=KEY)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (KEY,)).fetchone()[0] > 0
    assert KEY.encode() in _wal(url)  # the thread's rows are in the -wal
    return url, reader


def _wal(url: str) -> bytes:
    """The -wal's bytes (none once the last connection closed and SQLite removed it)."""
    try:
        return open(url + "-wal", "rb").read()
    except FileNotFoundError:
        return b""


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_reader_keeps_the_wal_and_the_receipt_and_exit_say_so(request, tmp_path):
    url, reader = _store_with_a_reader(request)
    text = KEY.encode()
    receipt = tmp_path / "r.jsonl"
    try:
        # --lock-timeout: the truncation waits that long for the reader, which never lets go here.
        res = run("thread", "erase", "-s", url, "-t", KEY, "--yes", "-f", "json", "--receipt", str(receipt), "--lock-timeout", "200ms")
        # What is left is really there: the erased thread's rows in the -wal.
        assert res.code == 12, res.err
        assert text in _wal(url)
    finally:
        reader.close()
    assert res.code == 12, res.err
    assert f"{os.path.basename(url)}-wal file still holds erased text" in res.err and "--wait" in res.err
    assert res.err.splitlines()[-1].startswith("symfonic: error: the ") and "Traceback" not in res.err
    doc = json.loads(res.out)  # the whole receipt, still printed
    (thread,) = doc["threads"]
    assert thread["status"] == "erased" and thread["verification"]["ok"] is True
    assert "no erased text remains in the database file or its -wal" not in thread["residual_copies"]
    assert "run's notes say whether" in thread["residual_copies"]
    assert "still holds erased text" in doc["stopped"] and any("still holds erased text" in n for n in doc["notes"])
    end = _records(receipt)[-1]
    assert end["record"] == "end" and "still holds erased text" in end["stopped"]
    assert not any("was truncated" in n for n in end["notes"])
    # The thread is gone from the database all the same.
    assert run("transcript", "show", "-s", url, "-t", KEY).code == 3


def test_without_a_reader_the_notes_say_the_wal_was_truncated(request, tmp_path):
    url, reader = _store_with_a_reader(request)
    reader.close()
    res = run("thread", "erase", "-s", url, "-t", KEY, "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert any("write-ahead log was truncated" in n for n in json.loads(res.out)["notes"])
    assert KEY.encode() not in _wal(url) and KEY.encode() not in open(url, "rb").read()


def test_wait_waits_for_the_reader_then_truncates(request, tmp_path):
    url, reader = _store_with_a_reader(request)
    text = KEY.encode()
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "-t", KEY, "--yes", "-f", "json",
                             "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        said = next((line for line in proc.stderr if "waiting" in line), "")
        assert "waiting for the readers of" in said and "-wal" in said, said
        time.sleep(1)
        assert proc.poll() is None  # still waiting while the snapshot is held
        assert text in _wal(url)
    finally:
        reader.close()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["summary"]["erased"] == 1 and "stopped" not in doc
    assert any("write-ahead log was truncated" in n for n in doc["notes"])
    assert text not in _wal(url) and text not in open(url, "rb").read()
