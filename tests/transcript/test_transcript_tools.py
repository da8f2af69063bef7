"""``transcript show --tools`` and ``--speaker`` lists on the run-state threads of every store kind."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.thread.test_thread_show import KINDS, _oracle, state_stores  # noqa: F401 - fixture


@pytest.mark.parametrize("kind", KINDS)
def test_tools_rows_match_the_stored_messages(kind, state_stores):  # noqa: F811 - the fixture imported above
    backend, url, graphs = state_stores(kind)
    state, _ = _oracle(backend, url, graphs["acme:_:react"], "acme:_:react")
    messages = state.values["messages"]
    r = run("transcript", "show", "-s", url, "-t", "acme:_:react", "--tools", "-f", "json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert len(rows) == len(messages)
    parallel = 0
    for row, m in zip(rows, messages):
        assert row["message_id"] == m.id
        if m.type == "ai":
            assert row["tool_calls"] == [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in m.tool_calls]
            parallel = max(parallel, len(m.tool_calls))
            assert row["name"] is None and row["tool_call_id"] is None
        elif m.type == "tool":
            assert (row["name"], row["tool_call_id"]) == (m.name, m.tool_call_id)
            assert row["tool_calls"] is None
    assert parallel >= 2
    plain = json.loads(run("transcript", "show", "-s", url, "-t", "acme:_:react", "-f", "json").out)
    assert [list(p) for p in plain] == [["index", "role", "content", "message_id", "timestamp"]] * len(messages)
    assert [{k: row[k] for k in p} for row, p in zip(rows, plain)] == plain
    tools_only = json.loads(run("transcript", "show", "-s", url, "-t", "acme:_:react", "--speaker", "tool", "--index", "-1", "-f", "json").out)
    assert [t["message_id"] for t in tools_only] == [[m for m in messages if m.type == "tool"][-1].id]
    pair = json.loads(run("transcript", "show", "-s", url, "-t", "acme:_:react", "--speaker", "user,tool", "-f", "json").out)
    assert [p["role"] for p in pair] == [("user" if m.type == "human" else "tool") for m in messages if m.type in ("human", "tool")]


def test_speaker_refuses_an_unknown_role(state_stores):  # noqa: F811 - the fixture imported above
    _, url, _ = state_stores("sqlite")
    r = run("transcript", "show", "-s", url, "-t", "acme:_:react", "--speaker", "user,robot")
    assert r.code == 2 and "unknown --speaker 'robot'" in r.err and not r.out


def test_odd_tool_call_shapes_are_shown_raw_with_a_warning():
    from symfonic_cli.transcript import rows as tx

    # messages as the strict decoder leaves a refused class: its raw field mapping
    raw = [
        {"type": "ai", "content": "", "id": "m1", "tool_calls": ["not-a-dict", {"id": "c1", "args": {"q": 1}}, {"name": "x", "id": "c2", "args": "{bad json"}]},
        {"type": "ai", "content": "", "id": "m2", "tool_calls": {"name": "y"}},
        {"type": "tool", "content": "r", "id": "m3", "name": 5, "tool_call_id": "c1"},
    ]
    warnings: list[str] = []
    rows = tx.build_rows(raw, tools=True, warnings=warnings)
    assert rows[0].tool_calls == [{"id": None, "name": None, "args": "not-a-dict"}, {"id": "c1", "name": None, "args": {"q": 1}}, {"id": "c2", "name": "x", "args": "{bad json"}]
    assert rows[1].tool_calls == [{"id": None, "name": None, "args": {"name": "y"}}]
    assert rows[2].name is None and rows[2].tool_call_id == "c1"
    assert len(warnings) == 4


class OddCall(__import__("pydantic").BaseModel):
    """An application's message class, off the decoder's safe list: read back as raw fields."""

    type: str = "ai"
    content: str = ""
    id: str
    tool_calls: list


def test_a_store_with_odd_tool_calls_shows_them_raw_with_a_warning(any_kind):
    from typing import TypedDict

    from langchain_core.messages import HumanMessage, ToolMessage
    from langgraph.graph import START, StateGraph

    class State(TypedDict):
        messages: list

    def node(state: State) -> dict:
        return {"messages": [
            HumanMessage(content="hi", id="h1"),
            OddCall(id="odd-1", tool_calls=["not-a-dict", {"id": "c9", "args": "{not json"}, {"name": "ok", "id": "c8", "args": {"x": 1}}]),
            ToolMessage(content="done", tool_call_id="c8", name="ok", id="t1"),
        ]}

    b = StateGraph(State)
    b.add_node("node", node)
    b.add_edge(START, "node")
    url = any_kind.new_store(scenarios=False)
    with any_kind.saver(url) as saver:
        b.compile(checkpointer=saver).invoke({"messages": []}, {"configurable": {"thread_id": "odd:_:calls"}})
    r = run("transcript", "show", "-s", url, "-t", "odd:_:calls", "--tools", "-f", "json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert rows[1]["role"] == "assistant"
    assert rows[1]["tool_calls"] == [
        {"id": None, "name": None, "args": "not-a-dict"},
        {"id": "c9", "name": None, "args": "{not json"},
        {"id": "c8", "name": "ok", "args": {"x": 1}},
    ]
    assert (rows[2]["name"], rows[2]["tool_call_id"]) == ("ok", "c8")
    assert "unexpected shape" in r.err and "warning" in r.err
    plain = run("transcript", "show", "-s", url, "-t", "odd:_:calls", "-f", "json")
    assert plain.code == 0 and "unexpected shape" not in plain.err
    assert [list(p) for p in json.loads(plain.out)] == [["index", "role", "content", "message_id", "timestamp"]] * 3
