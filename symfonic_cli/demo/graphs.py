"""The graphs that write scenario stores: the demo (``symfonic demo``), the benchmarks and the tests
share them, so they live in the library and nothing outside ``tests/`` imports from it.

``agent_graph`` is a tool-calling agent (a model node, LangGraph's prebuilt ``ToolNode`` with one
``lookup`` tool, ``tools_condition``); its default model answers without a network: a user message
``tool:<query>`` calls the tool, anything else is echoed. The demo gives its own scripted model.
``long_thread`` writes one long conversation through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _echo_model(state: Any) -> dict:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    last = state["messages"][-1]
    text = last.content if isinstance(last.content, str) else "multimodal"
    if isinstance(last, HumanMessage) and isinstance(last.content, str) and last.content.startswith("tool:"):
        return {"messages": [AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": text[5:]}, "id": f"call-{len(state['messages'])}"}])]}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"the tool said: {last.content}")]}
    return {"messages": [AIMessage(content=f"echo: {text[:60]}")]}


def agent_graph(subgraph: bool = False, *, model: Callable[..., dict] | None = None,
                tool_result: Callable[[str], str] | None = None) -> Any:
    """The agent's StateGraph (uncompiled): ``model`` is the model node (default: the echo model
    above), ``tool_result`` what the lookup tool answers for a query; ``subgraph`` nests the agent
    under an outer graph, as a specialist."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    answer = tool_result or (lambda query: f"result for {query}")

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return answer(query)

    builder = StateGraph(MessagesState)
    builder.add_node("model", model or _echo_model)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    if not subgraph:
        return builder

    inner = builder.compile()

    def outer_intro(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content="handing over to the specialist")]}

    outer = StateGraph(MessagesState)
    outer.add_node("intro", outer_intro)
    outer.add_node("specialist", inner)
    outer.add_edge(START, "intro")
    outer.add_edge("intro", "specialist")
    return outer


def long_thread(checkpointer: Any, key: str, turns: int, *, tool_every: int = 4) -> None:
    """A single long conversation: ``turns`` user turns, a tool call every few turns."""
    from langchain_core.messages import HumanMessage

    graph = agent_graph().compile(checkpointer=checkpointer)
    config = {"configurable": {"thread_id": key}}
    for i in range(turns):
        text = f"tool:item {i}" if tool_every and i % tool_every == tool_every - 1 else f"question number {i}"
        graph.invoke({"messages": [HumanMessage(content=text)]}, config)
