"""A SQLite store reached through two names (issue #44 item 2). A hard link is another name of the
same file, and SQLite keeps a -wal beside each name: through two names two connections do not see
each other's log, so an erase through ``link.db`` while a prune ran on ``s.db`` was undone when the
prune's log was checkpointed (the thread came back). Changing commands now refuse a file with more
than one name (exit 4, also on a dry run), and the one-runner lock is also held on the file's
identity (device and inode), so a name made while a run goes is held off too."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import backend_for
from tests.support.cli import run, wait_for_receipt_record

KEY = "globex:_:s-100"


def _thread(url: str) -> str:
    return run("transcript", "show", "-s", url, "-t", KEY, "-f", "json").out


def _start_prune(url: str, receipt: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "--all", "--yes", "-f", "json",
                             "--pause", "2s", "--receipt", str(receipt)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_an_erase_through_a_link_made_while_a_prune_runs_is_refused_and_the_store_stays_whole(request, tmp_path):
    url = backend_for("sqlite", request).new_store()
    before = _thread(url)
    assert json.loads(before)  # the thread is there
    prune = _start_prune(url, tmp_path / "r.jsonl")
    try:
        wait_for_receipt_record(prune, tmp_path / "r.jsonl")
        link = str(tmp_path / "link.db")
        os.link(url, link)
        for args in (("thread", "erase", "-s", link, "-t", KEY, "--yes"), ("thread", "prune", "-s", link, "--all", "--yes"),
                     ("thread", "erase", "-s", link, "-t", KEY, "--dry-run")):
            res = run(*args)
            assert res.code == 4, (args, res.err)
            assert "2 names (hard links)" in res.err and res.err.count("\n") == 1 and "Traceback" not in res.err
        # The running prune goes on (it took the file while it had one name).
    finally:
        out, err = prune.communicate(timeout=300)
    assert prune.returncode == 0, err
    assert json.loads(out)["summary"]["failed"] == 0
    os.unlink(link)
    # Not erased through the other name, nor brought back: the thread is as the prune left it, the file sound.
    after = json.loads(_thread(url))
    assert [m["content"] for m in after] == [m["content"] for m in json.loads(before)]
    with sqlite3.connect(url) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # With one name again, the erase runs.
    res = run("thread", "erase", "-s", url, "-t", KEY, "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert run("transcript", "show", "-s", url, "-t", KEY).code == 3


def test_a_store_with_two_names_is_not_changed_through_either(request, tmp_path):
    url = backend_for("sqlite", request).new_store()
    link = str(tmp_path / "second-name.db")
    os.link(url, link)
    size = os.path.getsize(url)
    for name in (url, link):
        for args in (("thread", "prune", "-s", name, "--all", "--yes"), ("thread", "erase", "-s", name, "-t", KEY, "--yes"),
                     ("thread", "erase", "-s", name, "--inactive-for", "1d", "--yes")):
            res = run(*args)
            assert res.code == 4 and "hard links" in res.err, (args, res.err)
    res = run("migrate", "--from", str(backend_for("sqlite", request).new_store()), "--to", link, "--all")
    assert res.code == 4 and "hard links" in res.err, res.err
    assert os.path.getsize(url) == size and json.loads(_thread(url))
    # Reading through either name is not refused.
    assert run("threads", "list", "-s", link).code == 0


@pytest.mark.parametrize("operation", ["prune", "erase"])
def test_the_run_lock_is_held_on_the_files_identity(request, tmp_path, operation):
    """The lock itself, beneath the refusal above: a run holding the store through one name holds
    it through every other name (a link made after that run took it), as SQLite's own locks do."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = backend_for("sqlite", request).new_store()
    first = open_store(parse_location(url), writable=True)
    try:
        assert first.take_run_lock("prune") is None
        link = str(tmp_path / "link.db")
        os.link(url, link)
        second = open_store(parse_location(link), writable=True)
        try:
            holder = second.take_run_lock(operation)
            assert holder is not None and "another of its names" in holder
        finally:
            second.close()
    finally:
        first.close()
    os.unlink(link)
    # Let go with the first run's close: the next run takes it.
    again = open_store(parse_location(url), writable=True)
    try:
        assert again.take_run_lock(operation) is None
    finally:
        again.close()
