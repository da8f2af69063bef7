"""Conversation scenarios written by real LangGraph graphs through any real checkpoint saver.

The same scenarios run against SQLite, PostgreSQL and MongoDB savers, so the CLI's output can
be compared across store kinds. Every message gets a fixed id where the test needs to know it;
the rest get ids assigned by LangGraph's ``add_messages`` as in production.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The graph builders the demo and the benchmarks share live in the library (symfonic_cli/demo/graphs.py).
from symfonic_cli.demo.graphs import agent_graph, long_thread

__all__ = ["ANSI", "BIG", "MULTIMODAL", "SECRET_SENTENCE", "UNICODE", "Scenario", "agent_graph", "long_thread", "scenarios", "write_greetings", "write_scenarios"]

ANSI = "\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 bell\x07 [bold red]markup[/bold red] \x9b31m c1 \u202eexe.txt\u202c"
BIG = ("fifty kilobytes of text " * 2200)[:50_000]
UNICODE = "Grüße, 世界! 🚀 — naïve café, עברית, العربية"
MULTIMODAL = [
    "lead ",
    {"type": "text", "text": "look at this "},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    {"text": "untyped-text"},
    {"type": "text", "text": None},
    {"type": "text"},
    {"foo": "bar"},
]
SECRET_SENTENCE = "The quick violet giraffe recites the erasure canary 7741."


@dataclass
class Scenario:
    key: str
    turns: list[Any]  # each: list of input messages for one invoke, or a callable(graph, config)
    subgraph: bool = False
    notes: dict[str, Any] = field(default_factory=dict)


def scenarios() -> list[Scenario]:
    from langchain_core.messages import HumanMessage, RemoveMessage, SystemMessage

    def rewrite(graph, config):
        # History rewritten: an earlier message replaced in place (same id) and one removed.
        state = graph.get_state(config)
        msgs = state.values["messages"]
        graph.update_state(config, {"messages": [HumanMessage(content="rewritten first question", id=msgs[0].id), RemoveMessage(id=msgs[1].id)]})

    return [
        Scenario("acme:_:s-001", [
            [SystemMessage(content="You are a helpful support agent.", id="sys-1"), HumanMessage(content="What is the status of order 1042?", id="u-1")],
            [HumanMessage(content="tool:order 1042", id="u-2")],
            [HumanMessage(content="Thanks!", id="u-3")],
        ]),
        Scenario("acme:eu:s-002", [[HumanMessage(content=UNICODE, id="u-uni")], [HumanMessage(content=BIG, id="u-big")]]),
        Scenario("acme:eu:s-003", [[HumanMessage(content=MULTIMODAL, id="u-mm")], [HumanMessage(content=ANSI, id="u-ansi")]]),
        Scenario("globex:_:s-100", [[HumanMessage(content="tool:weather", id="g-1")], [HumanMessage(content=SECRET_SENTENCE, id="g-2")]]),
        Scenario("globex:_:s-101", [[HumanMessage(content="Keep this conversation.", id="g-keep")]]),
        Scenario("initech:_:s-sub", [[HumanMessage(content="tool:subgraph lookup", id="i-1")]], subgraph=True),
        Scenario("acme:_:s-rewrite", [
            [HumanMessage(content="first question", id="r-1")],
            [HumanMessage(content="second question", id="r-2")],
            rewrite,
            [HumanMessage(content="third question", id="r-3")],
        ]),
        Scenario("legacy-thread-id", [[HumanMessage(content="a key without three parts", id="l-1")]]),
    ]


def write_scenarios(checkpointer, only: list[str] | None = None) -> list[Scenario]:
    """Run every scenario's turns through real graphs compiled with ``checkpointer``."""
    written = []
    graphs = {}
    for sc in scenarios():
        if only is not None and sc.key not in only:
            continue
        graph = graphs.get(sc.subgraph)
        if graph is None:
            graph = graphs[sc.subgraph] = agent_graph(sc.subgraph).compile(checkpointer=checkpointer)
        config = {"configurable": {"thread_id": sc.key}}
        for turn in sc.turns:
            if callable(turn):
                turn(graph, config)
            else:
                graph.invoke({"messages": turn}, config)
        written.append(sc)
    return written


def write_greetings(backend: Any, keys: list[str]) -> str:
    """A new store of ``backend`` holding one thread per key, each a greeting ("hello from <key>")
    written by a real graph that only records it."""
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        graph = b.compile(checkpointer=saver)
        for key in keys:
            graph.invoke({"messages": [HumanMessage(content=f"hello from {key}")]}, {"configurable": {"thread_id": key}})
    return url
