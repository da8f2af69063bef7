"""Threads for the prune and usage tests, written by real LangGraph graphs through any real saver:
chats with tool calls (the shared scenarios), an interrupt left pending, a subgraph called as a
node, a ``checkpointer=True`` subgraph (its state outlives each call), and a DeltaChannel graph."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

INTERRUPTED = "acme:_:s-interrupt"
PERSISTENT_SUB = "acme:_:s-persist"
DELTA = "acme:_:s-delta"
DELTA_TURNS = 7  # with snapshot_frequency=3: snapshots at some steps, sentinels between


def interrupt_graph(checkpointer):
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def ask(state: MessagesState) -> dict:
        answer = interrupt({"question": "approve the refund?"})
        return {"messages": [AIMessage(content=f"approved: {answer}")]}

    def reply(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content=f"reply to {len(state['messages'])}")]}

    b = StateGraph(MessagesState)
    b.add_node("reply", reply)
    b.add_node("ask", ask)
    b.add_edge(START, "reply")
    b.add_edge("reply", "ask")
    return b.compile(checkpointer=checkpointer)


def persistent_subgraph_graph(checkpointer):
    """The subgraph compiled with checkpointer=True: its namespace has no task id (no ':')."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    def inner_node(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content=f"inner saw {len(state['messages'])}")]}

    ib = StateGraph(MessagesState)
    ib.add_node("inner", inner_node)
    ib.add_edge(START, "inner")
    inner = ib.compile(checkpointer=True)

    def call_inner(state: MessagesState) -> dict:
        out = inner.invoke({"messages": state["messages"][-1:]})
        return {"messages": [AIMessage(content=f"inner has {len(out['messages'])}")]}

    b = StateGraph(MessagesState)
    b.add_node("outer", call_inner)
    b.add_edge(START, "outer")
    return b.compile(checkpointer=checkpointer)


def _delta_reducer(state, writes):
    from langgraph.graph.message import add_messages

    for w in writes:
        state = add_messages(state, w)
    return state


def delta_graph(checkpointer):
    from langchain_core.messages import AIMessage
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph import START, StateGraph

    State = TypedDict("State", {
        "messages": Annotated[list, DeltaChannel(_delta_reducer, list, snapshot_frequency=3)],
        "turns": Annotated[int, operator.add],
    })

    def node(s):
        return {"messages": [AIMessage(content=f"reply {len(s['messages'])}")], "turns": 1}

    b = StateGraph(State)
    b.add_node("n", node)
    b.add_edge(START, "n")
    return b.compile(checkpointer=checkpointer)


def write_prune_threads(saver) -> None:
    """The extra threads, on top of tests/support/scenarios.write_scenarios."""
    from langchain_core.messages import HumanMessage

    g = interrupt_graph(saver)
    cfg = {"configurable": {"thread_id": INTERRUPTED}}
    g.invoke({"messages": [HumanMessage(content="refund order 7", id="int-1")]}, cfg)
    from langgraph.types import Command

    g.invoke(Command(resume="yes"), cfg)
    g.invoke({"messages": [HumanMessage(content="refund order 8", id="int-2")]}, cfg)  # pending again
    g = persistent_subgraph_graph(saver)
    cfg = {"configurable": {"thread_id": PERSISTENT_SUB}}
    for i in range(3):
        g.invoke({"messages": [HumanMessage(content=f"persist {i}", id=f"p-{i}")]}, cfg)
    g = delta_graph(saver)
    cfg = {"configurable": {"thread_id": DELTA}}
    for i in range(DELTA_TURNS):
        g.invoke({"messages": [HumanMessage(content=f"q{i}", id=f"d-{i}")], "turns": 0}, cfg)


def resume(saver, key: str = INTERRUPTED, answer: str = "granted"):
    """Resume the interrupted thread; its final values."""
    from langgraph.types import Command

    g = interrupt_graph(saver)
    return g.invoke(Command(resume=answer), {"configurable": {"thread_id": key}})


HUGE = "acme:_:s-huge"


class Loop(TypedDict):
    n: int
    trail: Annotated[list[int], operator.add]


def huge_graph(checkpointer, *, steps: int, sub_every: int = 250):
    """A long-running agent loop: one checkpoint per step, and every ``sub_every`` steps a subgraph
    called as a node (a namespace ``sub:<task id>`` of its own, deleted whole with its root)."""
    from langgraph.graph import END, START, StateGraph

    def step(state: Loop) -> dict:
        return {"n": state["n"] + 1, "trail": [state["n"]] if state["n"] % 50 == 0 else []}

    def inner(state: Loop) -> dict:
        return {"trail": [-state["n"]]}

    ib = StateGraph(Loop)
    ib.add_node("inner", inner)
    ib.add_edge(START, "inner")

    def route(state: Loop) -> str:
        if state["n"] >= steps:
            return END
        return "sub" if state["n"] % sub_every == 0 else "step"

    b = StateGraph(Loop)
    b.add_node("step", step)
    b.add_node("sub", ib.compile())
    b.add_edge(START, "step")
    b.add_conditional_edges("step", route)
    b.add_edge("sub", "step")
    return b.compile(checkpointer=checkpointer)


def write_huge_thread(saver, *, steps: int, key: str = HUGE) -> None:
    """One thread of about ``steps`` root checkpoints (plus its subgraph calls'), written by the real graph."""
    config: dict = {"configurable": {"thread_id": key}, "recursion_limit": steps * 2 + 10}
    huge_graph(saver, steps=steps).invoke({"n": 0, "trail": []}, config)
