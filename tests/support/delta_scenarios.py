"""Threads written by real graphs whose ``messages`` is a LangGraph ``DeltaChannel``.

Each scenario runs through any real saver at a given ``snapshot_frequency``: plain turns, two
tool calls run as parallel tasks (``Send``) in one superstep, a ``RemoveMessage``, a
``REMOVE_ALL_MESSAGES``, a fork (``update_state`` on an earlier checkpoint) and a second
delta channel (``notes``) that symfonic shows as not rebuilt.
"""



import operator
from typing import Annotated, Any

DELTA_KEYS = ("delta:_:plain", "delta:_:tools", "delta:_:remove", "delta:_:fork", "delta:_:clear")


def _notes_reducer(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def delta_graph(snapshot_frequency: int):
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import _messages_delta_reducer
    from langgraph.types import Send
    from typing_extensions import TypedDict

    class State(TypedDict, total=False):
        messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=snapshot_frequency)]
        notes: Annotated[list, DeltaChannel(_notes_reducer, snapshot_frequency=snapshot_frequency)]
        turns: Annotated[int, operator.add]

    class Call(TypedDict):
        call: dict

    def model(state: State) -> dict:
        last = state["messages"][-1]
        n = len(state["messages"])
        if isinstance(last, HumanMessage) and isinstance(last.content, str) and last.content.startswith("tools:"):
            calls = [{"name": "lookup", "args": {"q": q}, "id": f"call-{n}-{i}"} for i, q in enumerate(last.content[6:].split(","))]
            return {"messages": [AIMessage(content="", tool_calls=calls, id=f"ai-{n}")], "turns": 1}
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(content=f"the tools said {n}", id=f"ai-{n}")], "notes": [f"tool turn {n}"], "turns": 1}
        return {"messages": [AIMessage(content=f"echo: {last.content}", id=f"ai-{n}")], "notes": [f"turn {n}"], "turns": 1}

    def route(state: State):
        last = state["messages"][-1]
        calls = getattr(last, "tool_calls", None)
        if calls:
            return [Send("tool", {"call": c}) for c in calls]
        return END

    def tool(arg: Call) -> dict:
        c = arg["call"]
        return {"messages": [ToolMessage(content=f"result for {c['args']['q']}", tool_call_id=c["id"], id=f"tm-{c['id']}")]}

    b = StateGraph(State)
    b.add_node("model", model)
    b.add_node("tool", tool)
    b.add_edge(START, "model")
    b.add_conditional_edges("model", route, ["tool", END])
    b.add_edge("tool", "model")
    return b


def write_delta_scenarios(checkpointer, snapshot_frequency, *, keys=DELTA_KEYS):
    from langchain_core.messages import HumanMessage, RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    graph = delta_graph(snapshot_frequency).compile(checkpointer=checkpointer)

    def conf(key: str, checkpoint_id: str | None = None) -> dict[str, Any]:
        c: dict[str, Any] = {"thread_id": key, "checkpoint_ns": ""}
        if checkpoint_id:
            c["checkpoint_id"] = checkpoint_id
        return {"configurable": c}

    def say(key: str, text: str, mid: str) -> None:
        graph.invoke({"messages": [HumanMessage(content=text, id=mid)]}, conf(key))

    if "delta:_:plain" in keys:
        for i in range(7):
            say("delta:_:plain", f"question {i}", f"p-{i}")
    if "delta:_:tools" in keys:
        say("delta:_:tools", "hello", "t-0")
        say("delta:_:tools", "tools:alpha,beta,gamma", "t-1")
        say("delta:_:tools", "thanks", "t-2")
        say("delta:_:tools", "tools:delta,epsilon", "t-3")
    if "delta:_:remove" in keys:
        k = "delta:_:remove"
        for i in range(4):
            say(k, f"keep or drop {i}", f"r-{i}")
        graph.update_state(conf(k), {"messages": [RemoveMessage(id="r-1"), HumanMessage(content="replaced zero", id="r-0")]})
        say(k, "after the removal", "r-9")
    if "delta:_:clear" in keys:
        k = "delta:_:clear"
        say(k, "before the clear", "c-0")
        say(k, "tools:one,two", "c-1")
        graph.update_state(conf(k), {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="fresh start", id="c-5")]})
        say(k, "after the clear", "c-6")
    if "delta:_:fork" in keys:
        k = "delta:_:fork"
        for i in range(4):
            say(k, f"branch question {i}", f"f-{i}")
        history = list(graph.get_state_history(conf(k)))
        earlier = history[len(history) // 2].config["configurable"]["checkpoint_id"]
        forked = graph.update_state(conf(k, earlier), {"messages": [HumanMessage(content="a fork", id="f-fork")]})
        graph.invoke(None, forked)
        say(k, "on the fork", "f-after")
