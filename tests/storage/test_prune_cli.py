"""``symfonic thread prune`` and ``symfonic store usage`` through the real command line, on stores
real graphs wrote (the shared scenarios plus an interrupt, a checkpointer=True subgraph and a
DeltaChannel graph)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest

from tests.conftest import backend_for
from tests.support.cli import run, run_process
from tests.support import prune_graphs as pg
from tests.support.scenarios import write_scenarios


@pytest.fixture(scope="module")
def _prune_master(tmp_path_factory):
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path_factory.mktemp("prune") / "master.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    write_scenarios(saver)
    pg.write_prune_threads(saver)
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def store(_prune_master, tmp_path):
    dest = tmp_path / "store.db"
    src, dst = sqlite3.connect(_prune_master), sqlite3.connect(dest)
    src.backup(dst)
    src.close()
    dst.close()
    return dest


def _rows(path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0], conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    finally:
        conn.close()


def _new_store(kind: str, request) -> str:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_scenarios(saver)
        pg.write_prune_threads(saver)
    return url


def test_dry_run_changes_nothing_and_lists_every_thread(store):
    before = _rows(store)
    res = run("thread", "prune", "-s", str(store), "--all", "--dry-run", "-f", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["dry_run"] is True and len(doc["threads"]) == 11
    assert _rows(store) == before
    delta = next(t for t in doc["threads"] if t["key"] == pg.DELTA)
    assert delta["delta_ancestors_kept"] > 0
    chat = next(t for t in doc["threads"] if t["key"] == "acme:_:s-001")
    # The plan says how many messages' transcript times change, and to what.
    assert chat["timestamps_change"]["messages"] > 0 and chat["timestamps_change"]["to"]
    assert doc["summary"]["checkpoints"] == sum(t["rows"].get("checkpoints", 0) for t in doc["threads"])


def test_without_terminal_or_yes_nothing_is_deleted(store):
    before = _rows(store)
    res = run("thread", "prune", "-s", str(store), "--all")
    assert res.code == 6 and "not confirmed" in res.err
    assert _rows(store) == before


def test_prune_all_with_receipt_file(store, tmp_path):
    receipt = tmp_path / "receipts.jsonl"
    before = _rows(store)
    res = run("thread", "prune", "-s", str(store), "--all", "--yes", "-f", "json", "--receipt", str(receipt))
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["summary"]["pruned"] == 11 and doc["summary"]["failed"] == 0
    after = _rows(store)
    assert after[0] == before[0] - doc["summary"]["rows_deleted"]["checkpoints"]
    assert all(t["verification"]["ok"] for t in doc["threads"])
    lines = [json.loads(line) for line in receipt.read_text().splitlines()]
    assert [r["record"] for r in lines] == ["start"] + ["thread"] * 11 + ["end"]
    assert stat.S_IMODE(os.stat(receipt).st_mode) == 0o600
    assert {r["receipt_id"] for r in lines} == {doc["receipt_id"]}
    # The end line carries when the run ended and began, as erase's (one record for both).
    from datetime import datetime

    at = [datetime.fromisoformat(r["time"].replace("Z", "+00:00")) for r in lines]
    assert lines[-1]["started"] == lines[0]["time"] and at[-1] >= max(at[1:-1]) >= at[0]
    # Nothing of the conversations is in the audit record.
    assert "order 1042" not in receipt.read_text()
    again = run("thread", "prune", "-s", str(store), "--all", "--yes", "-f", "jsonl")
    assert again.code == 0
    records = [json.loads(line) for line in again.out.splitlines()]
    assert {r["status"] for r in records if r["record"] == "thread"} == {"nothing-to-prune"}


def test_usage_predicts_what_prune_removes(store):
    res = run("store", "usage", "-s", str(store), "-f", "json", "--top", "3")
    assert res.code == 0, res.err
    usage = json.loads(res.out)
    assert [t["bytes"] for t in usage["largest_threads"]] == sorted((t["bytes"] for t in usage["largest_threads"]), reverse=True)
    assert len(usage["largest_threads"]) == 3 and usage["files"]["page_size"] > 0
    pruned = json.loads(run("thread", "prune", "-s", str(store), "--all", "--yes", "-f", "json").out)
    assert usage["reclaimable"]["checkpoints"] == pruned["summary"]["rows_deleted"]["checkpoints"]
    assert usage["reclaimable"]["writes"] == pruned["summary"]["rows_deleted"]["writes"]


@pytest.mark.parametrize("kind", ["postgres", "mongodb"])
def test_usage_predicts_what_prune_removes_on_servers(kind, request):
    url = _new_store(kind, request)
    usage = json.loads(run("store", "usage", "-s", url, "-f", "json", "--keep", "2").out)
    pruned = run("thread", "prune", "-s", url, "--all", "--keep", "2", "--yes", "-f", "json")
    assert pruned.code == 0, pruned.err
    rows = json.loads(pruned.out)["summary"]["rows_deleted"]
    assert usage["reclaimable"]["checkpoints"] == rows["checkpoints"] > 0
    if kind == "postgres":
        assert usage["reclaimable"]["blobs"] == rows["checkpoint_blobs"]
        assert {t["name"] for t in usage["tables"]} == {"checkpoints", "checkpoint_blobs", "checkpoint_writes"}
    else:
        assert {c["name"] for c in usage["collections"]} == {"checkpoints", "checkpoint_writes"}


def test_unknown_key_is_not_found_exit_3(store):
    before = _rows(store)
    res = run("thread", "prune", "-s", str(store), "-t", "acme:_:s-00l", "--yes")
    assert res.code == 3 and "acme:_:s-001" in res.err  # a near miss suggested
    assert _rows(store) == before
    ok = run("thread", "prune", "-s", str(store), "-t", "nobody:_:x", "--yes", "--missing-ok")
    assert ok.code == 0


def test_one_thread_and_keep_n(store):
    res = run("thread", "prune", "-s", str(store), "-t", "acme:_:s-001", "--keep", "3", "--yes", "-f", "json")
    assert res.code == 0, res.err
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'acme:_:s-001'").fetchone()[0] == 3
    assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'globex:_:s-100'").fetchone()[0] > 3
    conn.close()


def test_compact_gives_the_space_back(store):
    before = os.path.getsize(store)
    res = run("thread", "prune", "-s", str(store), "--all", "--yes", "--compact", "-f", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["compact"]["done"] and doc["compact"]["bytes_before"]["file"] == before
    assert doc["compact"]["bytes_after"]["file"] < before == doc["compact"]["bytes_before"]["file"]
    assert os.path.getsize(store) == doc["compact"]["bytes_after"]["file"]


def test_role_without_delete_is_exit_4_before_anything(request):
    backend = backend_for("postgres", request)
    url = _new_store("postgres", request)
    reader = backend.create_role(backend.db_of(url), "pw-prune", grant=("SELECT",))
    res = run("thread", "prune", "-s", reader, "--all", "--yes")
    assert res.code == 4 and "DELETE" in res.err and "pw-prune" not in res.err
    dry = run("thread", "prune", "-s", reader, "--all", "--dry-run")
    assert dry.code == 4  # the dry run makes the same checks


def test_ctrl_c_stops_between_threads(store, tmp_path):
    """SIGINT during a prune: the thread in flight finishes, the rest are left, the receipt says so, exit 130."""
    import signal
    import subprocess
    import sys
    import time

    receipt = tmp_path / "r.jsonl"
    env = {**os.environ, "SYMFONIC_FAULT_SLOW_THREAD": "0.4"}
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", str(store), "--all", "--yes",
                             "-f", "jsonl", "--receipt", str(receipt)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            # a suite run as a background job ignores SIGINT; the operator's Ctrl-C is not
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    def threads_done() -> int:
        return sum(json.loads(line)["record"] == "thread" for line in receipt.read_text().splitlines()) if receipt.exists() else 0

    while time.time() < deadline and threads_done() < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    records = [json.loads(line) for line in out.splitlines()]
    end = records[-1]
    assert end["record"] == "end" and end["interrupted"] is True
    done = [r for r in records if r["record"] == "thread"]
    assert 2 <= len(done) < 11 and end["summary"]["not_attempted"] == 11 - len(done)
    assert [json.loads(line)["record"] for line in receipt.read_text().splitlines()][-1] == "end"


def test_transcript_rows_are_the_same_except_timestamps_as_the_plan_says(store):
    """After the prune the transcript is the same rows; the messages the plan named are dated by the
    oldest kept checkpoint, the time the plan gave."""
    key = "acme:_:s-001"
    before = json.loads(run("transcript", "show", "-s", str(store), "-t", key, "-f", "json").out)
    plan = json.loads(run("thread", "prune", "-s", str(store), "-t", key, "--dry-run", "-f", "json").out)["threads"][0]
    assert run("thread", "prune", "-s", str(store), "-t", key, "--yes").code == 0
    after = json.loads(run("transcript", "show", "-s", str(store), "-t", key, "-f", "json").out)
    strip = [{k: v for k, v in r.items() if k != "timestamp"} for r in before]
    assert [{k: v for k, v in r.items() if k != "timestamp"} for r in after] == strip
    moved = [a for b, a in zip(before, after) if a["timestamp"] != b["timestamp"]]
    assert len(moved) == plan["timestamps_change"]["messages"] > 0
    assert {m["timestamp"] for m in moved} == {plan["timestamps_change"]["to"]}


def test_older_than_keeps_what_is_newer(store):
    """Everything here was written just now: with --older-than 1d nothing goes; a bare number is refused."""
    before = _rows(store)
    res = run("thread", "prune", "-s", str(store), "--all", "--older-than", "1d", "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["summary"]["nothing_to_prune"] == 11 and _rows(store) == before
    bad = run("thread", "prune", "-s", str(store), "--all", "--older-than", "30", "--yes")
    assert bad.code == 2 and "--older-than" in bad.err


def test_all_prunes_threads_whose_activity_cannot_be_dated(any_kind):
    """Only a time window cannot judge an undatable thread: ``--all`` (and ``--all-sessions``) have
    none, so such a thread is planned and pruned like the others, as store usage predicts (it was
    silently left out, its checkpoints counted by usage and never removed)."""
    from tests.support.rewritten_ids import rewrite_ids

    url = any_kind.new_store()
    key = "acme:_:s-001"
    rewrite_ids(any_kind.kind, url, key, "undatable")
    usage = json.loads(run("store", "usage", "-s", url, "-f", "json").out)
    plan = json.loads(run("thread", "prune", "-s", url, "--all", "--dry-run", "-f", "json").out)
    assert key in {t["key"] for t in plan["threads"]}
    tenant = json.loads(run("thread", "prune", "-s", url, "--tenant", "acme", "--all-sessions", "--dry-run", "-f", "json").out)
    assert key in {t["key"] for t in tenant["threads"]}
    done = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json")
    assert done.code == 0, done.err
    doc = json.loads(done.out)
    assert {t["key"]: t["status"] for t in doc["threads"]}[key] == "pruned"
    assert usage["reclaimable"]["checkpoints"] == doc["summary"]["rows_deleted"]["checkpoints"]
    left = json.loads(run("thread", "history", "-s", url, "-t", key, "-f", "json").out)
    assert len(left) == 1 and left[0]["checkpoint_id"].startswith("step-")  # its latest, kept


def test_a_prune_tells_what_the_store_warned_about_while_opening_as_an_erase_does(request):
    """MongoDB's driver warns while opening (here about a URL option given twice): a prune writes the
    warning as erase does (it did not: the prune's run never told the Report its store was opened)."""
    url = backend_for("mongodb", request).new_store()
    warned = url + ("&" if "?" in url else "?") + "w=1&w=1"
    line = "symfonic: warning: MongoDB URL: Duplicate URI option 'w'."
    for command in ("erase", "prune"):
        r = run("thread", command, "-s", warned, "-t", "acme:_:s-001", "--dry-run", "-f", "json")
        assert r.code == 0, (command, r.err)
        assert r.err.splitlines().count(line) == 1, (command, r.err)
    # The real binary: that one line, never the driver's own multi-line warning (a path, a source line).
    r = run_process("thread", "prune", "-s", warned, "-t", "acme:_:s-001", "--dry-run", "-f", "json")
    assert r.code == 0 and r.err.splitlines() == [line], r.err
