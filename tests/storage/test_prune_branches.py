"""Forked threads (issue #38 item 7): a real graph's thread forked by LangGraph time travel
(``update_state`` on an older checkpoint, then a turn on the new branch). Keep-latest loses every
branch but the newest, as PostgresSaver.prune does (side by side on PostgreSQL); the plan names the
forked thread and how many branch heads go; ``--keep-branches`` keeps the head of every branch,
which LangGraph still reads, and the latest state is unchanged."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run

FORK = "acme:_:forked"
PLAIN = "acme:_:plain"


def _write_forked(saver: Any) -> dict[str, Any]:
    """Two turns, then time travel to the checkpoint after the first turn: a new message there and
    a turn on that branch. Returns the config of the old branch's head."""
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": FORK}}
    graph.invoke({"messages": [HumanMessage(content="first turn", id="f-1")]}, config)
    graph.invoke({"messages": [HumanMessage(content="second turn", id="f-2")]}, config)
    old_head = graph.get_state(config).config
    after_first = next(s for s in graph.get_state_history(config) if len(s.values.get("messages", [])) == 2 and not s.next)
    forked = graph.update_state(after_first.config, {"messages": [HumanMessage(content="another second turn", id="f-2b")]})
    graph.invoke(None, forked)
    plain: Any = {"configurable": {"thread_id": PLAIN}}
    graph.invoke({"messages": [HumanMessage(content="hello", id="p-1")]}, plain)
    graph.invoke({"messages": [HumanMessage(content="again", id="p-2")]}, plain)
    return old_head


def _store(kind: str, request: Any) -> tuple[Any, str, dict[str, Any]]:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        old_head = _write_forked(saver)
    return backend, url, old_head


def _latest(backend: Any, url: str) -> Any:
    with backend.saver(url) as saver:
        t = saver.get_tuple({"configurable": {"thread_id": FORK, "checkpoint_ns": ""}})
        return t.config, t.checkpoint["channel_values"].get("messages")


def _has(backend: Any, url: str, config: dict[str, Any]) -> bool:
    with backend.saver(url) as saver:
        return saver.get_tuple(config) is not None


@pytest.mark.parametrize("kind", KINDS)
def test_plan_names_the_fork_and_keep_branches_keeps_every_head(kind, request):
    backend, url, old_head = _store(kind, request)
    latest = _latest(backend, url)
    res = run("thread", "prune", "-s", url, "--all", "--dry-run", "-f", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    plans = {t["key"]: t for t in doc["threads"]}
    assert plans[FORK]["branches"] == {"heads": 2, "heads_deleted": 1}
    assert "branches" not in plans[PLAIN]  # a thread without a fork is not named
    assert doc["summary"]["forked_threads"] == 1 and doc["summary"]["branch_heads_deleted"] == 1
    text = run("thread", "prune", "-s", url, "--all", "--dry-run").out
    assert "forked: 1 of 2 branch head(s) go" in text and "forked: 1 thread(s) lose 1 branch head(s)" in text
    kept = json.loads(run("thread", "prune", "-s", url, "--all", "--dry-run", "--keep-branches", "-f", "json").out)
    assert {t["key"]: t for t in kept["threads"]}[FORK]["branches"] == {"heads": 2, "heads_deleted": 0}
    assert kept["keep_branches"] is True and kept["summary"]["forked_threads"] == 0

    res = run("thread", "prune", "-s", url, "--all", "--yes", "--keep-branches", "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["keep_branches"] is True
    assert _has(backend, url, old_head)  # the old branch's head is still there, as LangGraph reads it
    assert _latest(backend, url) == latest
    # Verified: a rerun with the same rules has nothing left to prune.
    again = json.loads(run("thread", "prune", "-s", url, "--all", "--yes", "--keep-branches", "-f", "json").out)
    assert again["summary"]["pruned"] == 0
    # Without --keep-branches the old branch goes, the latest state stays.
    assert run("thread", "prune", "-s", url, "-t", FORK, "--yes").code == 0
    assert not _has(backend, url, old_head)
    assert _latest(backend, url) == latest


@pytest.mark.postgres  # reached through _store("postgres", ...)
def test_keep_latest_on_a_fork_is_postgres_saver_prune(request):
    """Two identical stores: PostgresSaver.prune(keep_latest) on one, thread prune on the other: the
    same checkpoint rows are left (the newest branch's head only)."""
    import psycopg

    backend, url_a, old_head = _store("postgres", request)
    db_b = f"symfonic_t_{uuid.uuid4().hex[:12]}"
    backend._create(db_b, backend.db_of(url_a))
    url_b = backend.url(db_b)
    with backend.saver(url_a) as saver:
        saver.prune([FORK], strategy="keep_latest")
    assert run("thread", "prune", "-s", url_b, "-t", FORK, "--yes").code == 0

    def rows(url: str) -> set:
        with psycopg.connect(url) as conn:
            return set(conn.execute("SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = %s",
                                    (FORK,)).fetchall())

    assert rows(url_a) == rows(url_b) and len(rows(url_b)) == 1
    assert not _has(backend, url_b, old_head)


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
def test_the_fork_on_a_terminal(cols, no_color, request, tmp_path):
    """The plan on a real terminal: the fork's words and counts whole, no line wider than the terminal."""
    from tests.support.terminal import on_terminal

    _, url, _ = _store("sqlite", request)
    code, screen = on_terminal("thread", "prune", "-s", url, "--all", "--dry-run", "--format", "text", cols=cols,
                               env={"NO_COLOR": "1"} if no_color else None)
    assert code == 0, screen
    assert "1 of 2 branch head(s)" in screen and "1 thread(s)" in screen and "--keep-branches" in screen
    assert all(len(line) <= cols for line in screen.splitlines()), screen
    assert ("\x1b[" not in screen) if no_color else True
