"""A small real store: a LangGraph agent graph with a scripted model, written by the real SqliteSaver.

No network and no API key: the "model" is a node that answers from a script, and tool calls run
through LangGraph's prebuilt ToolNode, so the checkpoints are exactly what a real agent writes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from symfonic_cli.threadkey import derive_key

# (tenant, sub-tenant, session, [(user question, tool query or None, answer)])
CONVERSATIONS = [
    ("acme", None, "s-001", [
        ("What is the status of order 1042?", "order 1042", "Order 1042 shipped yesterday and arrives Friday."),
        ("Can I change the delivery address?", None, "Yes, until it leaves the local depot. Which address?"),
        ("Thanks, that's all.", None, "You're welcome!"),
    ]),
    ("acme", "eu", "s-002", [
        ("Do you ship to Norway?", "shipping Norway", "Yes, Norway ships in 3 to 5 working days."),
    ]),
    ("globex", None, "s-100", [
        ("Reset my password please.", None, "I sent a reset link to the address on file."),
        ("It did not arrive.", "mail log", "The mail server shows it was delivered at 09:12; please check spam."),
    ]),
]


def _build_graph(script: dict[str, list]):
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def lookup(query: str) -> str:
        """Look something up in the back office."""
        return f"back-office record for {query!r}"

    def model(state: MessagesState, config) -> dict:
        turns = script[config["configurable"]["thread_id"]]
        last = state["messages"][-1]
        turn = turns[sum(isinstance(m, HumanMessage) for m in state["messages"]) - 1]
        question, tool_query, answer = turn
        if isinstance(last, HumanMessage) and tool_query:
            call_id = f"call_{len(state['messages'])}"
            return {"messages": [AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": tool_query}, "id": call_id}])]}
        if isinstance(last, ToolMessage) or not tool_query:
            return {"messages": [AIMessage(content=answer)]}
        return {"messages": []}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder


def create_demo_store(path: Path) -> list[str]:
    """Write the demo conversations to a new SQLite file; returns the thread keys."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    script = {derive_key(t, s, sess): turns for t, s, sess, turns in CONVERSATIONS}
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        graph = _build_graph(script).compile(checkpointer=SqliteSaver(conn))
        for key, turns in script.items():
            config = {"configurable": {"thread_id": key}}
            for i, (question, _, _) in enumerate(turns):
                inputs = [HumanMessage(content=question)]
                if i == 0:
                    inputs.insert(0, SystemMessage(content="You are the support assistant of a web shop."))
                graph.invoke({"messages": inputs}, config)
    finally:
        conn.close()
    return list(script)
