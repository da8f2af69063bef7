"""Threads for thread rewind's side-by-side tests, written by real graphs through a real saver: each
conversation twice, under two keys (``<name>-lg`` for LangGraph's own ``update_state(...,
as_node="__copy__")``, ``<name>-sy`` for ``symfonic thread rewind``), so the two forks can be
compared checkpoint for checkpoint. ``snapshot`` is what a comparison looks at: the state's values
(message ids the graph made up at random left out), next, tasks, interrupts and the fork's metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support import run_state_scenarios as rs
from tests.support.delta_scenarios import delta_graph

FREQ = 3  # the DeltaChannel graph's snapshot frequency


def cfg(key: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": key}
    if checkpoint_id is not None:
        conf["checkpoint_ns"], conf["checkpoint_id"] = "", checkpoint_id
    return {"configurable": conf}


def _react(graph: Any, key: str) -> None:
    from langchain_core.messages import HumanMessage

    graph.invoke({"messages": [HumanMessage(content="Where is order 1042?", id="u1")]}, cfg(key))
    graph.invoke({"messages": [HumanMessage(content="and a refund?", id="u2")]}, cfg(key))


def _approval(graph: Any, key: str) -> None:
    from langchain_core.messages import HumanMessage

    graph.invoke({"messages": [HumanMessage(content="refund please", id="a-1")]}, cfg(key))  # waits on approve


def _subgraph(graph: Any, key: str) -> None:
    from langchain_core.messages import HumanMessage

    graph.invoke({"messages": [HumanMessage(content="ship it", id="s-1")]}, cfg(key))  # waits inside the subgraph


def _delta(graph: Any, key: str) -> None:
    from langchain_core.messages import HumanMessage

    for i, text in enumerate(("hello", "tools:alpha,beta", "thanks", "tools:gamma")):
        graph.invoke({"messages": [HumanMessage(content=text, id=f"d-{i}")]}, cfg(key))


# name -> (graph builder, how the conversation is written, which checkpoint is rewound to: its
# place in get_state_history, newest first)
PLAIN: dict[str, tuple[Callable[[], Any], Callable[[Any, str], None], int]] = {
    "react": (rs.react_graph, _react, 6),  # back into the first turn, a tool result on the way
    "approve": (rs.approval_graph, _approval, 1),  # back to before the interrupt
    "sub": (rs.subgraph_graph, _subgraph, 1),  # back to before the subgraph ran
}
DELTA: dict[str, tuple[Callable[[], Any], Callable[[Any, str], None], int]] = {
    "delta": (lambda: delta_graph(FREQ), _delta, 5),
}


def scenarios(fmt: str) -> dict[str, tuple[Callable[[], Any], Callable[[Any, str], None], int]]:
    return DELTA if fmt == "delta" else PLAIN


def write(saver: Any, fmt: str) -> dict[str, Any]:
    """Each scenario twice (``-lg``, ``-sy``); name -> the compiled graph."""
    graphs = {}
    for name, (build, converse, _) in scenarios(fmt).items():
        graph = build().compile(checkpointer=saver)
        for side in ("lg", "sy"):
            converse(graph, f"acme:_:{name}-{side}")
        graphs[name] = graph
    return graphs


def _message(m: Any) -> tuple:
    return (type(m).__name__, m.content, getattr(m, "tool_calls", None), getattr(m, "tool_call_id", None))


def _values(values: Any) -> Any:
    if isinstance(values, dict):
        return {k: _values(v) for k, v in values.items()}
    if isinstance(values, list):
        return [_message(v) if hasattr(v, "content") else _values(v) for v in values]
    return values


def snapshot(state: Any) -> dict[str, Any]:
    """What must be equal on LangGraph's fork and symfonic's: ids and times aside."""
    return {
        "values": _values(state.values),
        "next": state.next,
        "tasks": [(t.name, [i.value for i in t.interrupts], t.error) for t in state.tasks],
        "interrupts": [i.value for i in state.interrupts],
        "metadata": {k: state.metadata.get(k) for k in ("source", "step", "parents", "counters_since_delta_snapshot")},
    }
