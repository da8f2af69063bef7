"""A store whose every text field holds bytes that would take over a terminal, written by a real graph.

The key, the node names (and so the task paths and the subgraph namespace ``node:task-id``), a
channel name, the interrupt value, the error text, a message's content and name, the run's
metadata values and the compat envelope's writer line and package version each hold ``HOSTILE``:
a window-title OSC, a clear-screen CSI, C1 controls, a bidi override, DEL and a line separator.
What the tests check: none of it reaches stdout or stderr unescaped, on a pipe or on a terminal.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from typing_extensions import TypedDict

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b1m\x85\u202e\x7f\u2028"
# Node names may not hold ':' or '|' (LangGraph's namespace separators); the rest of HOSTILE is allowed.
NODE = f"n{HOSTILE}"
SUB = f"s{HOSTILE}"
CHANNEL = f"c{HOSTILE}"
KEY = f"t{HOSTILE}:_:s{HOSTILE}"  # tenant and session both hostile; '_' is no sub-tenant
DONE_KEY = f"d{HOSTILE}:_:s{HOSTILE}"
ENVELOPE_TEXT = f"v{HOSTILE}"

# Raw bytes a screen would act on. On a terminal our own SGR styles (ESC [ ... m) are allowed;
# nothing else is.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
SGR = re.compile("\x1b\\[[0-9;]*m")


def raw_bytes(text: str, *, terminal: bool) -> list[str]:
    """The raw control characters in ``text`` (our own SGR styles removed on a terminal)."""
    if terminal:
        text = SGR.sub("", text)
    return sorted(set(RAW.findall(text)))


def _state():
    from langgraph.graph import MessagesState

    def keep(a: Any, b: Any) -> Any:
        return b

    # A channel with a hostile name, next to the messages.
    messages = MessagesState.__annotations__["messages"]
    return TypedDict("HostileState", {"messages": messages, CHANNEL: Annotated[str, keep]})


def _graph(fail: bool):
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    State = _state()

    def ask(state) -> dict:
        answer = interrupt({HOSTILE: HOSTILE, "question": f"approve {HOSTILE}?"})
        if fail:
            raise RuntimeError(f"gateway down {HOSTILE}")
        return {"messages": [AIMessage(content=f"said {answer}", name=HOSTILE)], CHANNEL: HOSTILE}

    inner = StateGraph(State)
    inner.add_node(NODE, lambda s: {"messages": [AIMessage(content=f"inner {HOSTILE}")], CHANNEL: HOSTILE})
    inner.add_node("ask", ask)
    inner.add_edge(START, NODE)
    inner.add_edge(NODE, "ask")

    outer = StateGraph(State)
    outer.add_node(NODE, lambda s: {"messages": [AIMessage(content=f"outer {HOSTILE}", id=f"m{HOSTILE}")], CHANNEL: HOSTILE})
    outer.add_node(SUB, inner.compile())
    outer.add_edge(START, NODE)
    outer.add_edge(NODE, SUB)
    return outer


def write(saver) -> None:
    """KEY left failed inside the subgraph (after an interrupt and its resume), DONE_KEY waiting
    on the subgraph's interrupt; both with hostile metadata and envelope values."""
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command

    from tests.support.envelope_saver import EnvelopeSaver, migrated

    wrapped = EnvelopeSaver(saver)
    wrapped.envelope = migrated(finalized=True, writer_line=ENVELOPE_TEXT, package_version=ENVELOPE_TEXT)
    meta = {"metadata": {HOSTILE: HOSTILE, "user": HOSTILE}}
    for key, fail in ((KEY, True), (DONE_KEY, False)):
        graph = _graph(fail).compile(checkpointer=wrapped)
        cfg = {"configurable": {"thread_id": key}, **meta}
        graph.invoke({"messages": [HumanMessage(content=f"hello {HOSTILE}", id=f"u{HOSTILE}")], CHANNEL: HOSTILE}, cfg)
        if fail:
            try:
                graph.invoke(Command(resume=HOSTILE), cfg)
            except RuntimeError:
                pass


def inspecting_commands(url: str, cid: str) -> list[list[str]]:
    """Every inspecting command, in every format it takes, over the hostile threads in ``url``."""
    formats = ("table", "text", "json", "jsonl")
    missing = f"x{HOSTILE}:_:s{HOSTILE}"  # not found: the error and its suggestions
    out = []
    for args in (
        ["threads", "list"],
        ["threads", "list", "--status", "interrupted,error,done,pending", "--with-size"],
        ["threads", "list", "--tenant", f"t{HOSTILE}"],
        ["store", "info"],
        ["store", "list"],
        ["transcript", "show", "-t", KEY],
        ["transcript", "show", "-t", KEY, "--tools"],
        ["transcript", "show", "-t", missing],
        ["thread", "show", "-t", KEY],
        ["thread", "show", "-t", DONE_KEY],
        ["thread", "history", "-t", KEY],
        ["thread", "diff", "-t", KEY, "--", "-3", "-1"],
        ["compat", "report"],
        ["compat", "report", "-t", KEY],
        ["compat", "report", "--by-thread"],
        ["compat", "show", "-t", KEY],
        ["compat", "show", "-t", KEY, "--checkpoint", cid],
    ):
        for fmt in formats:
            store = ["--store", url] if args[:2] != ["store", "list"] else []
            out.append([*args[:2], *store, "--format", fmt, *args[2:]])
    return out


def _drive(commands: list[list[str]]) -> None:
    """Run each command through the real entry point in this process (stdout and stderr being
    whatever the caller gave it: a pty), a marker line after each."""
    import sys

    from symfonic_cli.cli.app import main

    for i, args in enumerate(commands):
        code = 0
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout.write(f"\n@@END {i} {code}@@\n")
        sys.stdout.flush()


if __name__ == "__main__":
    import json
    import sys

    _drive(json.loads(sys.argv[1]))
