"""``thread show`` and ``threads list --status`` against LangGraph's own ``get_state``, on every store kind.

Real graphs write every thread (tests/support/run_state_scenarios.py): a ReAct agent with parallel tool
calls, an approval stopped at ``interrupt()``, a node that raised, processes SIGKILLed mid-step
(one node, and inside a Send fan-out), a subgraph that interrupts, fan-outs failed and finished.
The oracle is the compiled graph's ``get_state(config)`` (and ``subgraphs=True`` for the
subgraph's own state).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.support import run_state_scenarios as rs
from tests.support.cli import run


@pytest.fixture(scope="module")
def state_stores(run_state_stores):
    """kind -> (backend, url, oracle graphs by key): conftest's ``run_state_stores``, written once
    per kind per session and only read (the modules that import this fixture share them)."""
    return run_state_stores


KINDS = ("sqlite", "postgres", "mongodb")


def _oracle(backend, url, graph, key):
    with backend.saver(url) as saver:
        g = graph.copy(update={"checkpointer": saver}) if hasattr(graph, "copy") else graph
        g.checkpointer = saver
        cfg = {"configurable": {"thread_id": key}}
        return g.get_state(cfg), g.get_state(cfg, subgraphs=True)


def _show(url, key):
    r = run("thread", "show", "-s", url, "-t", key, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("kind", KINDS)
def test_show_matches_get_state(kind, state_stores):
    backend, url, graphs = state_stores(kind)
    for key, graph in graphs.items():
        state, deep = _oracle(backend, url, graph, key)
        got = _show(url, key)
        assert list(got) == ["key", "status", "next", "interrupts", "errors", "checkpoint_id", "step", "source", "rewound",
                             "checkpoints", "namespaces", "messages", "restart_recalls", "size_bytes", "first_activity", "last_activity"]
        assert Counter(got["next"]) == Counter(state.next), key
        want_interrupts = [(i.id, i.value) for i in state.interrupts]
        assert [(i["id"], i["value"]) for i in got["interrupts"]] == want_interrupts, key
        assert got["status"] == rs.EXPECTED_STATUS[key], key
        assert got["checkpoint_id"] == state.config["configurable"]["checkpoint_id"]
        assert got["step"] == state.metadata["step"]
        assert got["source"] == state.metadata["source"]
        assert got["rewound"] is None  # none of these threads' newest checkpoint is a copy
        errors = [t.error for t in state.tasks if t.error is not None]
        assert len(got["errors"]) == len(errors), key
        for e in got["errors"]:
            assert e["node"] in {t.name for t in state.tasks}
        if "messages" in state.values:
            assert got["messages"] == len(state.values["messages"])
        assert got["size_bytes"] > 0
        # every subgraph's own state
        for task in deep.tasks:
            if task.state is None or not hasattr(task.state, "next"):
                continue
            ns = task.state.config["configurable"]["checkpoint_ns"]
            mine = [n for n in got["namespaces"] if n["namespace"] == ns]
            assert mine, (key, ns)
            assert Counter(mine[0]["next"]) == Counter(task.state.next)
            assert [(i["id"], i["value"]) for i in mine[0]["interrupts"]] == [(i.id, i.value) for i in task.state.interrupts]
            assert mine[0]["status"] == ("interrupted" if task.state.interrupts else "pending" if task.state.next else "done")


def test_bad_input_and_unknown_thread(state_stores):
    _, url, _ = state_stores("sqlite")
    r = run("threads", "list", "-s", url, "--status", "stuck")
    assert r.code == 2 and "unknown --status 'stuck'" in r.err and not r.out
    r = run("threads", "list", "-s", url, "--sort", "name")
    assert r.code == 2 and not r.out
    r = run("thread", "show", "-s", url, "-t", "acme:_:nope", "-f", "json")
    assert r.code == 3 and "did you mean: 'acme:_:" in r.err and not r.out


def test_text_output_escapes_untrusted_values(state_stores):
    _, url, _ = state_stores("sqlite")
    for fmt in ("text", "table"):
        r = run("thread", "show", "-s", url, "-t", "acme:_:approve", "-f", fmt)
        assert r.code == 0 and "\x1b" not in r.out and "\x07" not in r.out
        assert "approve refund of 42 EUR?" in r.out and ("\\x1b" in r.out or "\\u001b" in r.out)
    r = run("thread", "show", "-s", url, "-t", "acme:_:boom", "-f", "text")
    assert "\x1b" not in r.out and "payment gateway down" in r.out
    j = json.loads(run("thread", "show", "-s", url, "-t", "acme:_:approve", "-f", "json").out)
    assert j["interrupts"][0]["value"]["ctl"] == "\x1b]0;x\x07"  # exact in JSON


def test_scenario_threads_match_get_state(any_kind):
    """The shared scenarios (tests/support/scenarios.py): tool calls, a subgraph, a history rewritten by
    ``update_state``: every thread ``done``, as the graph's own state says."""
    from tests.support.scenarios import agent_graph, scenarios

    url = any_kind.new_store()
    with any_kind.saver(url) as saver:
        for sc in scenarios():
            graph = agent_graph(sc.subgraph).compile(checkpointer=saver)
            state = graph.get_state({"configurable": {"thread_id": sc.key}})
            got = _show(url, sc.key)
            assert Counter(got["next"]) == Counter(state.next), sc.key
            assert got["status"] == ("pending" if state.next else "done"), sc.key
            assert got["checkpoint_id"] == state.config["configurable"]["checkpoint_id"]
            assert got["messages"] == len(state.values["messages"])
    rows = json.loads(run("threads", "list", "-s", url, "--status", "done", "-f", "json").out)
    assert {r["key"] for r in rows} == {sc.key for sc in scenarios()}
