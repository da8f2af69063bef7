"""thread rewind on a live store (issue 48 item 3) and its targets (item 1): a writer racing the
rewind makes it write nothing (exit 13, the receipt says so); a thread written within --idle-for is
refused (exit 14), a dry run exits as the run would; without a terminal and --yes nothing is
written (exit 6); another changing run holds the store: exit 10; --to -N and --before-message pick
the checkpoints ``thread diff`` and ``transcript show`` name; never an UPDATE or DELETE."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from langchain_core.messages import HumanMessage

from tests.conftest import backend_for
from tests.support import backends
from tests.support.cli import run
from tests.support.rewind_scenarios import cfg, write
from tests.support import run_state_scenarios as rs

KEY = "acme:_:react-sy"


def _store(request, kind: str = "sqlite") -> tuple[backends.TestBackend, str]:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write(saver, "plain")
    return backend, url


def _ids(backend, url: str, key: str = KEY) -> list[str]:
    with backend.saver(url) as saver:
        graph = rs.react_graph().compile(checkpointer=saver)
        return [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg(key))]


@pytest.mark.parametrize("kind", backends.KINDS)
def test_a_writer_racing_the_rewind_makes_it_write_nothing(kind, request, tmp_path):
    backend, url = _store(request, kind)
    before = _ids(backend, url)
    receipt = tmp_path / "receipt.jsonl"
    env = {**os.environ, "SYMFONIC_FAULT_STOP_BEFORE_CHANGE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "rewind", "-s", url, KEY, "--to", "-4",
                             "--idle-for", "0", "--yes", "-f", "json", "--receipt", str(receipt)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), status
        with backend.saver(url) as saver:  # the application writes the thread now, after the plan
            rs.react_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="hi again", id="race")]}, cfg(KEY))
        written = _ids(backend, url)
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    assert proc.returncode == 13, err
    assert "Traceback" not in err and "was written after the plan" in err.splitlines()[-1]
    assert _ids(backend, url) == written and written[len(written) - len(before):] == before  # nothing of the rewind's
    [t] = json.loads(out)["threads"]
    assert t["status"] == "not-written" and t["new_checkpoint_id"] is None and "written after the plan" in t["reason"]
    lines = [json.loads(line) for line in receipt.read_text().splitlines()]
    assert [r["record"] for r in lines] == ["start", "thread", "end"]
    assert lines[1]["status"] == "not-written" and lines[2]["status"] == "not-written"


def test_a_thread_written_within_idle_for_is_refused(request):
    backend, url = _store(request)
    before = _ids(backend, url)
    for extra in ((), ("--dry-run",)):
        res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--yes", *extra)
        assert res.code == 14, res.err
        assert "within --idle-for 5m" in res.err and "--idle-for 0" in res.err
        assert "refused:" in res.out  # the plan says so
    res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--yes", "--idle-for", "1h", "-f", "json")
    assert res.code == 14
    assert _ids(backend, url) == before


def test_without_a_terminal_and_yes_nothing_is_written(request):
    backend, url = _store(request)
    before = _ids(backend, url)
    res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--idle-for", "0")
    assert res.code == 6, res.err
    assert "nothing written" in res.err and "--yes" in res.err
    assert _ids(backend, url) == before


def test_another_changing_run_holds_the_store(request):
    backend, url = _store(request)
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store

    before = _ids(backend, url)
    holder = open_store(resolve_store(url), writable=True)
    try:
        assert holder.take_run_lock("prune") is None
        res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--idle-for", "0", "--yes")
        assert res.code == 10, res.err
        assert "thread prune" in res.err
    finally:
        holder.close()
    assert _ids(backend, url) == before


def test_to_minus_n_counts_as_thread_diff_and_dry_run_writes_nothing(request):
    backend, url = _store(request)
    before = _ids(backend, url)
    res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--idle-for", "0", "--dry-run", "-f", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    [t] = doc["threads"]
    assert doc["dry_run"] is True and t["target"]["checkpoint_id"] == before[2] and t["head"]["checkpoint_id"] == before[0]
    assert t["undo"] == f"symfonic thread rewind {KEY} --to {before[0]}"
    assert t["branch_left"] == {"head": before[0], "checkpoints": 2}
    assert _ids(backend, url) == before
    diff = json.loads(run("thread", "diff", "-s", url, KEY, "-3", "-1", "-f", "json").out)
    assert before[2] in json.dumps(diff)


def test_before_message_goes_to_the_newest_checkpoint_without_it(request):
    backend, url = _store(request)
    with backend.saver(url) as saver:
        graph = rs.react_graph().compile(checkpointer=saver)
        history = list(graph.get_state_history(cfg(KEY)))
    # transcript message 4 is the second user message ("and a refund?", id u2)
    rows = json.loads(run("transcript", "show", "-s", url, KEY, "-f", "json").out)
    index = next(r["index"] for r in rows if r["message_id"] == "u2")
    res = run("thread", "rewind", "-s", url, KEY, "--before-message", str(index), "--idle-for", "0", "--yes", "-f", "json")
    assert res.code == 0, res.err
    target = json.loads(res.out)["threads"][0]["copy_of"]
    without = [s for s in history if "u2" not in [m.id for m in s.values.get("messages", [])]]
    assert target == without[0].config["configurable"]["checkpoint_id"]  # the newest that does not hold it
    with backend.saver(url) as saver:
        state = rs.react_graph().compile(checkpointer=saver).get_state(cfg(KEY))
    assert "u2" not in [m.id for m in state.values["messages"]] and "u1" in [m.id for m in state.values["messages"]]
    missing = run("thread", "rewind", "-s", url, KEY, "--before-message", "999", "--idle-for", "0", "--yes")
    assert missing.code == 3, missing.err


def test_undo_puts_the_conversation_back(request):
    backend, url = _store(request)
    with backend.saver(url) as saver:
        old = rs.react_graph().compile(checkpointer=saver).get_state(cfg(KEY)).values
    res = run("thread", "rewind", "-s", url, KEY, "--to", "-5", "--idle-for", "0", "--yes", "-f", "json")
    undo = json.loads(res.out)["threads"][0]["undo"].split()
    assert undo[:3] == ["symfonic", "thread", "rewind"]
    res = run(*undo[1:], "-s", url, "--idle-for", "0", "--yes")
    assert res.code == 0, res.err
    with backend.saver(url) as saver:
        assert rs.react_graph().compile(checkpointer=saver).get_state(cfg(KEY)).values == old


def test_a_rewind_only_inserts(request, tmp_path):
    """Every statement the SQLite store runs during a rewind: inserts only, never an UPDATE or DELETE."""
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store

    backend, url = _store(request)
    before = _ids(backend, url)
    seen: list[str] = []
    store = open_store(resolve_store(url), writable=True)
    try:
        store.conn.set_trace_callback(seen.append)
        store.rewind_thread(KEY, before[3], before[0])
    finally:
        store.close()
    written = [s for s in seen if s.split()[0].upper() in ("INSERT", "UPDATE", "DELETE", "REPLACE")]
    assert len(written) == 1 and written[0].upper().startswith("INSERT INTO CHECKPOINTS"), written
    rows = sqlite3.connect(url).execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (KEY,)).fetchone()[0]
    assert rows == len(before) + 1


def test_a_lock_held_past_lock_timeout_is_busy_and_nothing_is_written(request):
    backend, url = _store(request)
    before = _ids(backend, url)
    holder = sqlite3.connect(url, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the application in the middle of a write
    try:
        res = run("thread", "rewind", "-s", url, KEY, "--to", "-3", "--idle-for", "0", "--yes", "--lock-timeout", "0.2", "-f", "json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert res.code == 9, res.err
    assert json.loads(res.out)["threads"][0]["status"] == "busy"
    assert _ids(backend, url) == before
