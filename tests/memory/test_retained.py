"""``transcript show --retained`` and ``Store.retained``: every message the store holds, against
the union of ``messages`` over LangGraph's own ``get_state_history`` (every namespace, pending
writes included), on stores a real SymfonicAgent wrote (compaction fired), the scenario store
(a subgraph), DeltaChannel stores, and graphs that remove and rewrite messages; every kind."""

from __future__ import annotations

import json

import pytest

import symfonic_cli
from symfonic_cli.memory.retained import version_key
from tests.conftest import backend_for
from tests.support import agent_stores as ag
from tests.support import backends
from tests.support.cli import run
from tests.support.delta_scenarios import DELTA_KEYS, delta_graph
from tests.support.scenarios import scenarios

KINDS = backends.KINDS


def _messages_graph(checkpointer):
    """A graph whose state is LangGraph's MessagesState, to read any store's history through."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    g = StateGraph(MessagesState)
    g.add_node("noop", lambda s: {})
    g.add_edge(START, "noop")
    g.add_edge("noop", END)
    return g.compile(checkpointer=checkpointer)


def _held_by_langgraph(saver, key: str, graph=None) -> set:
    """Every message version in get_state_history of every namespace, and in pending writes."""
    graph = graph or _messages_graph(saver)
    held = set()
    namespaces = {t.config["configurable"].get("checkpoint_ns", "") for t in saver.list({"configurable": {"thread_id": key}})}
    for ns in namespaces:
        config = {"configurable": {"thread_id": key, "checkpoint_ns": ns}}
        for snap in graph.get_state_history(config):
            held |= {version_key(m) for m in snap.values.get("messages", [])}
    for t in saver.list({"configurable": {"thread_id": key}}):
        for _task, channel, value in t.pending_writes or ():
            if channel == "messages":
                held |= {version_key(m) for m in (value if isinstance(value, list) else [value])
                         if type(m).__name__ != "RemoveMessage" and m.id is not None}
    return held


def _retained(url: str, key: str) -> list[dict]:
    r = run("transcript", "show", "-s", url, "-t", key, "--retained", "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("kind", KINDS)
def test_agent_threads_hold_what_langgraph_history_holds(kind, agent_stores):
    backend, url = agent_stores(kind)
    with backend.saver(url) as saver, symfonic_cli.open_store(url) as store:
        for key in ag.THREADS:
            got = store.retained(key)
            assert [m.to_json() for m in got] == _retained(url, key)
            keys = {(m["message_id"], m["content"]) for m in _retained(url, key)}
            assert keys == {(mid, _content(text)) for mid, text in _held_by_langgraph(saver, key)}, (kind, key)
            current = {r["message_id"] for r in json.loads(run("transcript", "show", "-s", url, "-t", key, "-f", "json").out)}
            assert {m.message_id for m in got if m.current} == current
            assert [m.index for m in got] == list(range(len(got)))


def _content(text: str) -> str:
    """The transcript's content of a version key's stored content (text blocks joined, others named)."""
    from symfonic_cli.transcript.rows import content_of

    kind, content = json.loads(text)
    return content_of({"type": kind, "content": content})


@pytest.mark.parametrize("kind", KINDS)
def test_compaction_removed_messages_are_named_with_when_and_why(kind, agent_stores):
    _backend, url = agent_stores(kind)
    rows = _retained(url, ag.LONG)
    removed = [r for r in rows if not r["current"]]
    assert removed and all(r["removed_by"] == "compaction" and r["removed_at"] and r["removed_checkpoint"] for r in removed)
    assert any("question 0 from Ada" in r["content"] for r in removed)
    summary = next(r for r in rows if r["role"] == "system" and "[Conversation Summary]" in r["content"])
    assert {r["removed_at"] for r in removed} == {summary["first_seen"]}  # removed in the step the summary appeared
    assert rows.index(summary) > max(rows.index(r) for r in removed)


def _rewrite_graph(checkpointer):
    """Turn 1 answers; turn 2 replaces the answer under the same id; turn 3 removes the question."""
    from langchain_core.messages import AIMessage, RemoveMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    def node(state):
        last = state["messages"][-1].content
        if last == "first":
            return {"messages": [AIMessage(content="answer v1", id="a-1")]}
        if last == "second":
            return {"messages": [AIMessage(content="answer v2", id="a-1")]}
        return {"messages": [RemoveMessage(id="q-1"), AIMessage(content="done", id="a-3")]}

    g = StateGraph(MessagesState)
    g.add_node("bot", node)
    g.add_edge(START, "bot")
    g.add_edge("bot", END)
    return g.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("kind", KINDS)
def test_new_versions_and_remove_message(kind, request):
    from langchain_core.messages import HumanMessage

    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    key = "acme:_:rewrite"
    with backend.saver(url) as saver:
        graph = _rewrite_graph(saver)
        config = {"configurable": {"thread_id": key}}
        for i, text in enumerate(("first", "second", "third")):
            graph.invoke({"messages": [HumanMessage(content=text, id=f"q-{i + 1}")]}, config)
        want = _held_by_langgraph(saver, key, graph)
    rows = _retained(url, key)
    assert {(r["message_id"], r["content"]) for r in rows} == {(mid, _content(t)) for mid, t in want}
    by = {(r["message_id"], r["content"]): r for r in rows}
    assert [r["content"] for r in rows if r["message_id"] == "a-1"] == ["answer v1", "answer v2"]  # each version, in order
    assert (by[("a-1", "answer v1")]["current"], by[("a-1", "answer v1")]["removed_by"]) == (False, "new version")
    assert (by[("q-1", "first")]["current"], by[("q-1", "first")]["removed_by"]) == (False, "RemoveMessage")
    assert by[("a-1", "answer v2")]["current"] and by[("a-3", "done")]["current"]


@pytest.mark.parametrize("kind", KINDS)
def test_scenario_threads_every_namespace(kind, request):
    backend = backend_for(kind, request)
    url = backend.new_store()
    with backend.saver(url) as saver:
        for sc in scenarios():
            want = _held_by_langgraph(saver, sc.key)
            got = {(r["message_id"], r["content"]) for r in _retained(url, sc.key)}
            assert got == {(mid, _content(t)) for mid, t in want}, (kind, sc.key)


def test_bad_combinations_are_usage_errors(agent_stores):
    _backend, url = agent_stores("sqlite")
    for args in (("--retained", "--index", "1"), ("--retained", "--resume-window"), ("--retained", "--limit", "2"),
                 ("--retained", "--tail", "2"), ("--retained", "--around", "1")):
        r = run("transcript", "show", "-s", url, "-t", ag.LONG, *args)
        assert r.code == 2 and r.err.count("\n") == 1, (args, r.err)


@pytest.mark.parametrize("key", DELTA_KEYS)
def test_delta_threads_hold_what_langgraph_rebuilds(delta_store, key):
    backend, url, freq = delta_store
    with backend.saver(url) as saver:
        want = _held_by_langgraph(saver, key, delta_graph(freq).compile(checkpointer=saver))
    got = _retained(url, key)
    assert {(r["message_id"], r["content"]) for r in got} == {(mid, _content(t)) for mid, t in want}
    latest = {r["message_id"] for r in json.loads(run("transcript", "show", "-s", url, "-t", key, "-f", "json").out)}
    assert {r["message_id"] for r in got if r["current"]} == latest
