"""Threads in every run state, written by real LangGraph graphs through any real saver.

Each scenario leaves its thread waiting on an interrupt, failed, cut off mid-step, fanned out or
finished, so ``thread show`` and ``threads list --status`` can be checked against the graph's own
``get_state``. ``graphs()`` returns the compiled graphs so tests can ask them.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

# key -> expected status (the oracle decides next/interrupts; the status follows from them)
EXPECTED_STATUS = {
    "acme:_:killed": "pending",
    "acme:_:fanout-killed": "pending",
    "acme:_:react": "done",
    "acme:_:approve": "interrupted",
    "acme:_:approved": "done",
    "acme:_:boom": "error",
    "acme:_:exit-crash": "error",
    "acme:_:sub-ask": "interrupted",
    "acme:_:fanout": "error",
    "acme:_:fanout-done": "done",
    "globex:_:react-2": "done",
    "acme:_:spoof": "done",
    "acme:_:parallel": "interrupted",
}


def react_graph():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"result for {query}"

    @tool
    def refund(order: int, amount: float, currency: str = "EUR") -> str:
        """Refund an order."""
        return f"refunded {amount} {currency} on {order}"

    def model(state: MessagesState) -> dict:
        last = state["messages"][-1]
        n = len(state["messages"])
        if isinstance(last, HumanMessage):
            # several calls in one turn, run in parallel by the ToolNode
            return {"messages": [AIMessage(content="Let me check two things.", tool_calls=[
                {"name": "lookup", "args": {"query": f"order {n}"}, "id": f"call-a-{n}"},
                {"name": "refund", "args": {"order": 1042, "amount": 42.5}, "id": f"call-b-{n}"},
            ])]}
        if isinstance(last, ToolMessage) and n < 8:
            return {"messages": [AIMessage(content="", tool_calls=[
                {"name": "lookup", "args": {"query": "follow-up \x1b[31m"}, "id": f"call-c-{n}"}])]}
        return {"messages": [AIMessage(content=f"done after {n} messages")]}

    b = StateGraph(MessagesState)
    b.add_node("model", model)
    b.add_node("tools", ToolNode([lookup, refund]))
    b.add_edge(START, "model")
    b.add_conditional_edges("model", tools_condition)
    b.add_edge("tools", "model")
    return b


def approval_graph(fail: bool = False):
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def draft(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content="I propose a refund of 42 EUR.")]}

    def approve(state: MessagesState) -> dict:
        answer = interrupt({"question": "approve refund of 42 EUR?", "amount": 42, "ctl": "\x1b]0;x\x07"})
        return {"messages": [AIMessage(content=f"operator said {answer}")]}

    def pay(state: MessagesState) -> dict:
        if fail:
            raise RuntimeError("payment gateway down \x1b[2J")
        return {"messages": [AIMessage(content="paid")]}

    b = StateGraph(MessagesState)
    b.add_node("draft", draft)
    b.add_node("approve", approve)
    b.add_node("pay", pay)
    b.add_edge(START, "draft")
    b.add_edge("draft", "approve")
    b.add_edge("approve", "pay")
    b.add_edge("pay", END)
    return b


def subgraph_graph():
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def ask(state: MessagesState) -> dict:
        answer = interrupt("which warehouse?")
        return {"messages": [AIMessage(content=f"warehouse {answer}")]}

    inner = StateGraph(MessagesState)
    inner.add_node("prepare", lambda s: {"messages": [AIMessage(content="preparing")]})
    inner.add_node("ask", ask)
    inner.add_edge(START, "prepare")
    inner.add_edge("prepare", "ask")

    outer = StateGraph(MessagesState)
    outer.add_node("intro", lambda s: {"messages": [AIMessage(content="routing")]})
    outer.add_node("shipping", inner.compile())
    outer.add_edge(START, "intro")
    outer.add_edge("intro", "shipping")
    return outer


class FanState(TypedDict):
    items: list[str]
    results: Annotated[list[str], operator.add]


def fanout_graph(crash_on: str | None = None, kill_on: str | None = None):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    def plan(state: FanState) -> dict:
        return {}

    def route(state: FanState):
        return [Send("work", {"items": [item], "results": []}) for item in state["items"]]

    def work(state: FanState) -> dict:
        item = state["items"][0]
        if crash_on is not None and item == crash_on:
            raise KeyboardInterrupt  # recorded by LangGraph as the task's error
        if kill_on is not None and item == kill_on:
            import os
            import signal
            import time

            time.sleep(0.5)  # the other tasks of the step finish and record their writes first
            os.kill(os.getpid(), signal.SIGKILL)
        return {"results": [item.upper()]}

    b = StateGraph(FanState)
    b.add_node("plan", plan)
    b.add_node("work", work)
    b.add_node("summarize", lambda s: {"results": ["summary"]})
    b.add_edge(START, "plan")
    b.add_conditional_edges("plan", route, ["work"])
    b.add_edge("work", "summarize")
    b.add_edge("summarize", END)
    return b


def parallel_graph():
    """Two branches run in one step: one asks, the other finishes (its writes are recorded)."""
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    def ask(state: FanState) -> dict:
        return {"results": [f"asked {interrupt('which branch?')}"]}

    b = StateGraph(FanState)
    b.add_node("split", lambda s: {})
    b.add_node("zeta_ask", ask)
    b.add_node("alpha_work", lambda s: {"results": ["worked"]})
    b.add_node("join", lambda s: {"results": ["joined"]})
    b.add_edge(START, "split")
    b.add_edge("split", "zeta_ask")
    b.add_edge("split", "alpha_work")
    b.add_edge(["zeta_ask", "alpha_work"], "join")
    return b


def write_states(saver) -> dict[str, Any]:
    """Write every run-state thread into ``saver``; returns key -> compiled graph (the oracle)."""
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command

    out: dict[str, Any] = {}

    def cfg(key):
        return {"configurable": {"thread_id": key}}

    react = react_graph().compile(checkpointer=saver)
    for key in ("acme:_:react", "globex:_:react-2"):
        react.invoke({"messages": [HumanMessage(content="Where is order 1042?", id=f"{key}-u1")]}, cfg(key))
        out[key] = react
    react.invoke({"messages": [HumanMessage(content="and a refund?", id="u2")]}, cfg("acme:_:react"))
    # a message holding the checkpoint's own trailing keys: a look-alike for the listing's tail reader
    spoof = {"type": "text", "text": "see attached", "channel_versions": {"branch:to:model": "99999999999999999999999999999999.0.9"},
             "versions_seen": {}, "updated_channels": ["branch:to:model"]}
    react.invoke({"messages": [HumanMessage(content=[spoof], id="sp-1")]}, cfg("acme:_:spoof"))
    out["acme:_:spoof"] = react

    approval = approval_graph().compile(checkpointer=saver)
    approval.invoke({"messages": [HumanMessage(content="refund please", id="a-1")]}, cfg("acme:_:approve"))
    out["acme:_:approve"] = approval
    approval.invoke({"messages": [HumanMessage(content="refund please", id="b-1")]}, cfg("acme:_:approved"))
    approval.invoke(Command(resume="yes"), cfg("acme:_:approved"))
    out["acme:_:approved"] = approval

    failing = approval_graph(fail=True).compile(checkpointer=saver)
    failing.invoke({"messages": [HumanMessage(content="refund please", id="c-1")]}, cfg("acme:_:boom"))
    try:
        failing.invoke(Command(resume="yes"), cfg("acme:_:boom"))
    except RuntimeError:
        pass
    out["acme:_:boom"] = failing

    # durability "exit": only the run's end is saved; a run stopped by an interrupt keeps its
    # input checkpoint with nodes due and nothing recorded (what a crash mid-run leaves).
    crashing = fanout_graph(crash_on="b").compile(checkpointer=saver)
    try:
        crashing.invoke({"items": ["a", "b"], "results": []}, cfg("acme:_:exit-crash"), durability="exit")
    except KeyboardInterrupt:
        pass
    out["acme:_:exit-crash"] = fanout_graph().compile(checkpointer=saver)

    par = parallel_graph().compile(checkpointer=saver)
    par.invoke({"items": [], "results": []}, cfg("acme:_:parallel"))
    out["acme:_:parallel"] = par

    sub = subgraph_graph().compile(checkpointer=saver)
    sub.invoke({"messages": [HumanMessage(content="ship it", id="s-1")]}, cfg("acme:_:sub-ask"))
    out["acme:_:sub-ask"] = sub

    # a Send fan-out still pending: the process died inside one of the parallel tasks
    try:
        crashing.invoke({"items": ["a", "b", "c"], "results": []}, cfg("acme:_:fanout"))
    except KeyboardInterrupt:
        pass
    out["acme:_:fanout"] = fanout_graph().compile(checkpointer=saver)
    fan = fanout_graph().compile(checkpointer=saver)
    fan.invoke({"items": ["x", "y"], "results": []}, cfg("acme:_:fanout-done"))
    out["acme:_:fanout-done"] = fan
    return out


def kill_graph():
    from langgraph.graph import END, START, StateGraph

    def step_one(state: FanState) -> dict:
        return {"results": ["one"]}

    def step_two(state: FanState) -> dict:
        import os
        import signal

        if state["items"] == ["kill"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return {"results": ["two"]}

    b = StateGraph(FanState)
    b.add_node("step_one", step_one)
    b.add_node("step_two", step_two)
    b.add_edge(START, "step_one")
    b.add_edge("step_one", "step_two")
    b.add_edge("step_two", END)
    return b


KILLED = {"acme:_:killed": kill_graph, "acme:_:fanout-killed": fanout_graph}


def _saver_for(kind: str, url: str):
    from contextlib import contextmanager

    @contextmanager
    def make():
        if kind == "sqlite":
            import sqlite3

            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(url, check_same_thread=False)
            try:
                yield SqliteSaver(conn)
            finally:
                conn.close()
        elif kind == "postgres":
            from langgraph.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(url) as saver:
                yield saver
        else:
            from langgraph.checkpoint.mongodb import MongoDBSaver
            from pymongo import MongoClient

            from symfonic_cli.stores.mongodb.connect import split_url

            client = MongoClient(url)
            try:
                yield MongoDBSaver(client, db_name=split_url(url)[1])
            finally:
                client.close()

    return make()


def write_killed(kind: str, url: str) -> None:
    """Run each KILLED thread in a child process that SIGKILLs itself mid-step."""
    import subprocess
    import sys

    for key in KILLED:
        proc = subprocess.run([sys.executable, "-m", "tests.support.run_state_scenarios", kind, url, key], capture_output=True, timeout=120)
        assert proc.returncode == -9, (proc.returncode, proc.stderr.decode()[-2000:])


if __name__ == "__main__":
    import sys

    kind, url, key = sys.argv[1:4]
    with _saver_for(kind, url) as saver:
        cfg = {"configurable": {"thread_id": key}}
        if key == "acme:_:killed":
            g = kill_graph().compile(checkpointer=saver)
            g.invoke({"items": ["ok"], "results": []}, cfg)
            g.invoke({"items": ["kill"], "results": []}, cfg, durability="sync")
        else:
            g = fanout_graph(kill_on="b").compile(checkpointer=saver)
            g.invoke({"items": ["a", "b", "c"], "results": []}, cfg, durability="sync")
