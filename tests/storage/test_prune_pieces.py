"""Huge threads in pieces (issue #38 item 5): a real graph's long agent loop (one checkpoint a step,
a subgraph call's namespace every 250 steps) is pruned in transactions of at most --piece-size
checkpoints, oldest first, each committed and recorded in the receipt. Killed between two pieces
(``SYMFONIC_FAULT_AFTER_PIECES``), the thread is one LangGraph reads exactly as before with fewer
old checkpoints; the same command takes the rest, and the result equals a one-transaction prune of
a copy (and, on PostgreSQL, PostgresSaver.prune of another copy), on every store kind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from typing import Any

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run
from tests.support.prune_graphs import HUGE, write_huge_thread

# Root checkpoints of the huge thread (the 2,000), plus a subgraph call's namespace every 250
# steps; the MongoDB test server (SecantusDB) writes a real graph's checkpoints slowly: 300 there.
STEPS = {"sqlite": 2000, "postgres": 2000, "mongodb": 300}
PIECE = {"sqlite": 300, "postgres": 300, "mongodb": 50}


def _copy(kind: str, backend: Any, url: str) -> str:
    """A second store holding the same rows: the file, the database as a template, or every
    checkpoint put through the saver (MongoDB)."""
    if kind == "sqlite":
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
        new = f"{path}.{uuid.uuid4().hex[:6]}.db"
        shutil.copyfile(path, new)
        return new
    if kind == "postgres":
        db = f"symfonic_t_{uuid.uuid4().hex[:12]}"
        backend._create(db, backend.db_of(url))
        return backend.url(db)
    from tests.support.mongo_server import database_of

    db = backend.new_database()
    backend._copy(database_of(url), db)  # the same documents and indexes
    return backend.url(db)


def _tuples(backend: Any, url: str) -> dict[tuple[str, str], Any]:
    """What LangGraph reads of every checkpoint of the thread: (ns, id) -> (parent id, checkpoint,
    metadata, pending writes), through the real saver (blobs and writes loaded)."""
    out = {}
    with backend.saver(url) as saver:
        for t in saver.list({"configurable": {"thread_id": HUGE}}):
            c = t.config["configurable"]
            parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
            writes = sorted((w[0], w[1], repr(w[2])) for w in t.pending_writes or [])
            cp = {k: v for k, v in t.checkpoint.items() if k != "updated_channels"}
            out[(c["checkpoint_ns"], c["checkpoint_id"])] = (parent, repr(cp), repr(t.metadata), writes)
    return out


def _latest(backend: Any, url: str) -> Any:
    from tests.support.prune_graphs import huge_graph

    with backend.saver(url) as saver:
        state = huge_graph(saver, steps=1).get_state({"configurable": {"thread_id": HUGE}})
        return state.values, state.config, state.next


def _prune(url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "-t", HUGE, "--yes", "-f", "json", *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)


@pytest.mark.parametrize("kind", KINDS)
def test_huge_thread_in_pieces_killed_between_two_resumes_to_the_one_transaction_result(kind, request, tmp_path):
    backend = backend_for(kind, request)
    steps, piece = STEPS[kind], PIECE[kind]
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_huge_thread(saver, steps=steps)
    one_shot = _copy(kind, backend, url)
    upstream = _copy(kind, backend, url) if kind == "postgres" else None
    before = _tuples(backend, url)
    latest = _latest(backend, url)
    assert len(before) > steps and any(ns for ns, _ in before)

    # Killed (SIGKILL) right after the second piece is committed and recorded.
    receipt = tmp_path / "r.jsonl"
    killed = _prune(url, "--piece-size", str(piece), "--receipt", str(receipt), env={"SYMFONIC_FAULT_AFTER_PIECES": "2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    lines = [json.loads(x) for x in receipt.read_text().splitlines()]
    pieces = [r for r in lines if r["record"] == "piece"]
    assert [r["record"] for r in lines] == ["start", "piece", "piece"]
    assert [p["piece"] for p in pieces] == [1, 2] and all(p["key"] == HUGE for p in pieces)
    gone = sum(p["rows_deleted"]["checkpoints"] for p in pieces)
    assert 0 < gone <= 2 * piece + 3 and all(p["checkpoints_left"] > 0 for p in pieces)

    # Half pruned: the latest state as before; every checkpoint left reads as it did (its parent
    # cut only where the parent went); only old ones are gone.
    half = _tuples(backend, url)
    assert _latest(backend, url) == latest
    assert len(half) == len(before) - gone and set(half) < set(before)
    for k, (parent, *rest) in half.items():
        assert rest == list(before[k][1:]), k
        assert parent == before[k][0] or (parent is None and (k[0], before[k][0]) not in half)
    newest_gone = max(cid for ns, cid in set(before) - set(half) if ns == "")
    assert all(cid > newest_gone for ns, cid in half if ns == "")  # oldest first (the saver's order)
    assert pieces[-1]["checkpoints_left"] == len(half) - 1  # keep 1: all but the latest go

    # The same command takes the rest; the result is the one-transaction prune's.
    again = _prune(url, "--piece-size", str(piece), "--receipt", str(receipt))
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    (entry,) = doc["threads"]
    assert entry["status"] == "pruned" and entry["verification"]["ok"] and entry["pieces"] == -(-(len(half) - 1) // piece)
    assert f"in {entry['pieces']} transactions (--piece-size)" in again.stderr  # the reader's line
    whole = _prune(one_shot, "--piece-size", "1000000")
    assert whole.returncode == 0, whole.stderr
    assert "pieces" not in json.loads(whole.stdout)["threads"][0]
    after = _tuples(backend, url)
    assert after == _tuples(backend, one_shot) and len(after) == 1
    assert _latest(backend, url) == latest
    if upstream is not None:  # and PostgresSaver.prune's, side by side
        with backend.saver(upstream) as saver:
            saver.prune([HUGE], strategy="keep_latest")
        assert _tuples(backend, upstream) == after


@pytest.mark.parametrize("value", ["0", "-1", "1000001", "many", "1.5"])
def test_bad_piece_size_is_a_usage_error(value, tmp_path):
    res = run("thread", "prune", "-s", str(tmp_path / "none.db"), "-t", "a:_:b", "--yes", "--piece-size", value)
    assert res.code == 2 and "--piece-size" in res.err and "Traceback" not in res.err, res.err


@pytest.mark.parametrize("value", [0, -3, 1_000_001, "500", 2.0, True])
def test_api_checks_the_piece_size(value, tmp_path):
    from symfonic_cli import api
    from symfonic_cli.errors import UsageError

    with pytest.raises(UsageError, match="piece_size"):
        api.prune(str(tmp_path / "none.db"), thread="a:_:b", yes=True, piece_size=value)


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
def test_a_thread_in_pieces_on_a_terminal(cols, no_color, request, tmp_path):
    """What a person sees: the thread's line says how many transactions it took, within the width."""
    from tests.support.terminal import on_terminal

    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_huge_thread(saver, steps=400)
    code, screen = on_terminal("thread", "prune", "-s", url, "--all", "--yes", "--piece-size", "100", "--receipt", str(tmp_path / "r.jsonl"), cols=cols,
                               env={"NO_COLOR": "1"} if no_color else None)
    assert code == 0, screen
    assert "in 5 transactions (--piece-size)" in " ".join(screen.split()), screen
    assert all(len(line) <= cols for line in screen.splitlines()), screen
    assert ("\x1b[" not in screen) if no_color else True


def test_erase_of_a_huge_thread_is_one_transaction_and_the_plan_says_so(request, tmp_path):
    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_huge_thread(saver, steps=600)
    plan = run("thread", "erase", "-s", url, "-t", HUGE, "--dry-run")
    assert plan.code == 0, plan.err
    assert "1 thread(s) hold more than 500 checkpoints: each is still erased in ONE transaction" in " ".join(plan.out.split())
    receipt = tmp_path / "r.jsonl"
    res = run("thread", "erase", "-s", url, "-t", HUGE, "--yes", "-f", "json", "--receipt", str(receipt))
    assert res.code == 0, res.err
    records = [json.loads(x) for x in receipt.read_text().splitlines()]
    assert [r["record"] for r in records] == ["start", "thread", "end"] and records[1]["status"] == "erased"
    assert any("ONE transaction" in n for n in records[-1]["notes"])
    assert run("threads", "list", "-s", url, "-f", "json").out.strip() in ("[]", "")
