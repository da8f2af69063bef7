"""Issue #37, item 10: ``symfonic demo PATH --threads N --turns T`` writes a larger store through the
same real graphs and saver: the tour's eight threads as ``symfonic demo`` writes them, then N - 8
conversations of T turns each. Bounded values (exit 2, one line, no file); a progress line on a
terminal (80 and 120 columns), none in a pipe."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

TOUR = {"acme:_:s-001", "acme:eu:s-002", "globex:_:s-100", "acme:eu:s-040", "globex:apac:s-101", "acme:_:s-400",
        "acme:eu:s-003", "globex:apac:s-102"}


def _users(url: str, key: str) -> list[str]:
    return [r["content"] for r in json.loads(run("transcript", "show", "-s", url, key, "--speaker", "user", "-f", "json").out)]


@pytest.mark.parametrize("cols", [80, 120])
def test_a_larger_demo_store_on_a_terminal(tmp_path, cols):
    path = tmp_path / "big.db"
    env = {} if cols == 80 else {"NO_COLOR": "1"}
    code, screen = on_terminal("demo", str(path), "--threads", "13", "--turns", "4", cols=cols, rows=50, env=env, timeout=300)
    assert code == 0, screen
    assert "\rwrote " in screen  # the progress line, rewritten in place
    assert re.search(r"created \S*big\.db with 13 threads: the tour's 8 \(.*\) and 5 more of 4 turns each", " ".join(screen.split())), screen
    url = str(path)
    listed = json.loads(run("threads", "list", "-s", url, "--columns", "key,status,checkpoints,last_activity", "-f", "json").out)
    keys = {r["key"] for r in listed}
    assert len(listed) == 13 and TOUR <= keys
    added = sorted(keys - TOUR)
    assert len(added) == 5 and {k.split(":")[0] for k in added} >= {"acme", "globex", "initech"}
    for key in added:
        users = _users(url, key)
        assert len(users) == 4 and all(users), (key, users)
        row = next(r for r in listed if r["key"] == key)
        assert row["status"] == "done" and row["checkpoints"] >= 4 * 3  # input, model (, tools, model) per turn
    # The tour's threads as the plain demo writes them, run states included.
    plain = tmp_path / "plain.db"
    assert run("demo", str(plain)).code == 0
    for key in TOUR:
        assert _users(url, key) == _users(str(plain), key), key
    statuses = {r["key"]: r["status"] for r in listed}
    assert (statuses["acme:eu:s-003"], statuses["globex:apac:s-102"]) == ("interrupted", "error")
    # Spread over time: retention and activity windows have something to show.
    old = json.loads(run("threads", "list", "-s", url, "--inactive-for", "90d", "-f", "json").out)
    assert {r["key"] for r in old} - TOUR


def test_a_pipe_gets_no_progress_and_bad_values_are_refused(tmp_path):
    path = tmp_path / "piped.db"
    res = run_process("demo", str(path), "--threads", "10")
    assert res.code == 0 and res.err == "" and "with 10 threads" in res.out and "of 3 turns each" in res.out
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 10
    conn.close()
    target = tmp_path / "never.db"
    for args in (["--threads", "7"], ["--threads", "10001"], ["--threads", "20", "--turns", "0"], ["--threads", "20", "--turns", "201"],
                 ["--threads", "10000", "--turns", "3"], ["--turns", "3"], ["--threads", "many"], ["--threads", "-1"]):
        res = run("demo", str(target), *args)
        assert res.code == 2 and res.out == "" and res.err.count("\n") == 1 and "Traceback" not in res.err, (args, res.err)
        assert not target.exists(), args
    # An existing file is never overwritten, the demo store either once a size is asked for.
    again = run("demo", str(path), "--threads", "12")
    assert again.code == 2 and "already exists" in again.err
    assert run("demo", str(Path(tmp_path / "plain.db"))).code == 0
    assert "kept as it is" in run("demo", str(tmp_path / "plain.db")).out
