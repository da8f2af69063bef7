"""A small real store that shows every feature: LangGraph graphs with a scripted model, written by the
real SqliteSaver.

No network and no API key: the "model" is a node that answers from a script, and tool calls run
through LangGraph's prebuilt ToolNode, so the checkpoints are exactly what a real agent writes.
The store holds two tenants with sub-tenants, conversations with tool calls, a refund waiting at
an operator's approval (an interrupt), a payment whose node raised, threads last active 40, 100
and 400 days ago (their checkpoint ids and ``ts`` written as of then, as a saver at that time did)
and checkpoints from two releases: legacy ones without an envelope and migrated ones with it.
The graph and the saver wrapper are the ones the benchmarks and tests share (graphs.py, savers.py).
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from symfonic_cli.threadkey import derive_key

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

DAY = timedelta(days=1)
# The releases that wrote the demo's checkpoints: the legacy writer puts no envelope.
LEGACY, MIGRATED = None, "9.12.0"
# (tenant, sub-tenant, session, age, release, [(user question, tool query or None, answer)])
# (tenant, sub-tenant, session, age, release, turns: (question, tool query or None, answer))
CONVERSATIONS: list[tuple[str, str | None, str, timedelta, str | None, list[tuple[str, str | None, str]]]] = [
    ("acme", None, "s-001", timedelta(0), MIGRATED, [
        ("What is the status of order 1042?", "order 1042", "Order 1042 shipped yesterday and arrives Friday."),
        ("Can I change the delivery address?", None, "Yes, until it leaves the local depot. Which address?"),
        ("Thanks, that's all.", None, "You're welcome!"),
    ]),
    ("acme", "eu", "s-002", timedelta(0), MIGRATED, [
        ("Do you ship to Norway?", "shipping Norway", "Yes, Norway ships in 3 to 5 working days."),
    ]),
    ("globex", None, "s-100", timedelta(0), LEGACY, [
        ("Reset my password please.", None, "I sent a reset link to the address on file."),
        ("It did not arrive.", "mail log", "The mail server shows it was delivered at 09:12; please check spam."),
    ]),
    ("acme", "eu", "s-040", 40 * DAY, MIGRATED, [
        ("Is the blue kettle back in stock?", "stock kettle blue", "Yes, 12 blue kettles arrived this morning."),
    ]),
    ("globex", "apac", "s-101", 100 * DAY, LEGACY, [
        ("What are your opening hours in Singapore?", None, "Our Singapore desk answers 9:00 to 18:00, Monday to Friday."),
    ]),
    ("acme", None, "s-400", 400 * DAY, LEGACY, [
        ("Please cancel my subscription.", "subscription", "Done: your subscription ends on the 31st."),
    ]),
]
# (tenant, sub-tenant, session, question): a refund the operator must approve, and one whose payment failed.
APPROVAL = ("acme", "eu", "s-003", "I want a refund of 42 EUR for order 1042.")
FAILED = ("globex", "apac", "s-102", "Refund my 42 EUR, order 77.")


def _scripted_model(script: dict[str, list]):
    """The demo's model: each thread answers from its script (a tool call first where the turn has a query)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def model(state, config) -> dict:
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

    return model


def _approval_graph(failing: set[str]):
    """draft -> approve (an interrupt: the operator decides) -> pay (raises for ``failing`` threads)."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def draft(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content="I can refund 42 EUR; an operator has to approve it.")]}

    def approve(state: MessagesState) -> dict:
        answer = interrupt({"question": "approve the refund of 42 EUR?", "amount": 42, "currency": "EUR"})
        return {"messages": [AIMessage(content=f"The operator answered: {answer}.")]}

    def pay(state: MessagesState, config) -> dict:
        if config["configurable"]["thread_id"] in failing:
            raise RuntimeError("payment gateway timed out after 30 s")
        return {"messages": [AIMessage(content="The refund is on its way.")]}

    b = StateGraph(MessagesState)
    b.add_node("draft", draft)
    b.add_node("approve", approve)
    b.add_node("pay", pay)
    b.add_edge(START, "draft")
    b.add_edge("draft", "approve")
    b.add_edge("approve", "pay")
    b.add_edge("pay", END)
    return b


# ``symfonic demo --threads N --turns T``: N threads in all (the tour's own first), the added ones
# with T turns each; bounded so that a typo cannot fill a disk (about 4 checkpoints a turn).
MIN_THREADS, MAX_THREADS = len(CONVERSATIONS) + 2, 10_000
MIN_TURNS, MAX_TURNS = 1, 200
MAX_TOTAL_TURNS = 20_000  # added threads times turns: about 15 minutes on a busy laptop
DEFAULT_TURNS = 3
_TENANTS = (("acme", None), ("acme", "eu"), ("globex", None), ("globex", "apac"), ("initech", None))
_QUESTIONS = (
    ("Where is order {n}?", "order {n}", "Order {n} left the warehouse this morning."),
    ("Can I return item {n}?", None, "Yes, within 30 days; I sent you the return label."),
    ("Is product {n} in stock?", "stock {n}", "Product {n} is in stock: 7 left."),
    ("Please update my address for order {n}.", "order {n}", "Done: order {n} goes to the new address."),
    ("What does shipping to zone {n} cost?", None, "Shipping to zone {n} costs 4.90 EUR."),
    ("Thanks!", None, "You're welcome!"),
)


def added_conversations(threads: int, turns: int) -> list[tuple[str, str | None, str, timedelta, str | None, list]]:
    """The conversations ``--threads``/``--turns`` add after the tour's: keys over five tenants and
    sub-tenants, last active from today to 450 days ago, half written by each release (fixed:
    the same store every time)."""
    out: list[tuple[str, str | None, str, timedelta, str | None, list]] = []
    for i in range(max(threads - MIN_THREADS, 0)):
        tenant, sub = _TENANTS[i % len(_TENANTS)]
        script = []
        for t in range(turns):
            question, query, answer = _QUESTIONS[(i + t) % len(_QUESTIONS)]
            n = 1000 + (i * 31 + t * 7) % 9000
            script.append((question.format(n=n), query.format(n=n) if query else None, answer.format(n=n)))
        out.append((tenant, sub, f"s-{i + 1:05d}", (i * 37 % 451) * DAY, LEGACY if i % 2 else MIGRATED, script))
    return out


def create_demo_store(path: Path, *, threads: int = MIN_THREADS, turns: int = DEFAULT_TURNS,
                      progress: Callable[[int, int], None] | None = None, aes_key: bytes | None = None) -> list[str]:
    """Write the demo conversations to a new SQLite file; returns the thread keys. ``threads``:
    how many in all (the tour's own first); the added ones hold ``turns`` turns each.
    ``progress(done, total)`` is told after each thread. ``aes_key``: written through LangGraph's
    ``EncryptedSerializer.from_pycryptodome_aes`` with that key, as an application encrypting at rest."""
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
    from langgraph.types import Command

    from langgraph.checkpoint.sqlite import SqliteSaver

    from symfonic_cli.compat.envelope import StateEnvelope
    from symfonic_cli.demo.graphs import agent_graph
    from symfonic_cli.demo.savers import NO_ENVELOPE, EnvelopeSaver

    conversations = CONVERSATIONS + added_conversations(threads, turns)
    total = len(conversations) + 2
    script = {derive_key(t, s, sess): turns for t, s, sess, _, _, turns in conversations}
    conn = sqlite3.connect(str(path), check_same_thread=False)
    keys = []

    def written_as(age: timedelta, release: str | None) -> None:
        # Each checkpoint's id and ts as a saver ``age`` ago wrote them; the release's envelope (none: legacy).
        saver.clock_offset = -age if age else None
        saver.envelope = NO_ENVELOPE if release is None else StateEnvelope(
            format_version=1, writer_line="migrated", package_version=release).to_metadata()

    try:
        if aes_key is None:
            inner = SqliteSaver(conn)
        else:
            from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

            inner = SqliteSaver(conn, serde=EncryptedSerializer.from_pycryptodome_aes(key=aes_key))
        saver = EnvelopeSaver(inner, ts_too=True)
        graph = agent_graph(model=_scripted_model(script), tool_result=lambda query: f"back-office record for {query!r}").compile(checkpointer=saver)
        for (tenant, sub, session, age, release, said) in conversations:
            key = derive_key(tenant, sub, session)
            config = {"configurable": {"thread_id": key}}
            written_as(age, release)
            for i, (question, _, _) in enumerate(said):
                if key == derive_key("acme", None, "s-001"):
                    written_as(age, LEGACY if i == 0 else MIGRATED)  # upgraded during the conversation
                inputs: list[BaseMessage] = [HumanMessage(content=question)]
                if i == 0:
                    inputs.insert(0, SystemMessage(content="You are the support assistant of a web shop."))
                graph.invoke({"messages": inputs}, config)
            keys.append(key)
            if progress is not None:
                progress(len(keys), total)
        written_as(timedelta(0), MIGRATED)
        failing = {derive_key(*FAILED[:3])}
        approvals = _approval_graph(failing).compile(checkpointer=saver)
        for tenant, sub, session, question in (APPROVAL, FAILED):
            key = derive_key(tenant, sub, session)
            config = {"configurable": {"thread_id": key}}
            approvals.invoke({"messages": [HumanMessage(content=question)]}, config)  # stops at the approval
            if key in failing:
                try:
                    approvals.invoke(Command(resume="approved"), config)
                except RuntimeError:
                    pass  # LangGraph recorded the node's error in the thread: what `threads list --status error` finds
            keys.append(key)
            if progress is not None:
                progress(len(keys), total)
        conn.execute("PRAGMA user_version = %d" % DEMO_VERSION)
        conn.commit()
    finally:
        conn.close()
    return keys


def new_aes_key() -> bytes:
    """A random AES-256 key: 32 URL-safe characters (192 random bits), so the same bytes serve as a
    key file and as ``LANGGRAPH_AES_KEY`` (which LangGraph reads as text)."""
    import secrets

    return secrets.token_urlsafe(24).encode("ascii")


def write_key_file(path: Path, key: bytes) -> None:
    """``key`` into a new file readable by its owner only (0600 from the start; never an existing file)."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, key)  # data: the key file's bytes
    finally:
        os.close(fd)


# The demo store's mark (SQLite's user_version): ``symfonic demo`` run again on it keeps it.
DEMO_VERSION = 0x5D3E0001


def is_demo_store(path: Path) -> bool:
    """Whether ``path`` is a store ``symfonic demo`` wrote (read-only look at its header)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0] == DEMO_VERSION
        finally:
            conn.close()
    except sqlite3.Error:
        return False
