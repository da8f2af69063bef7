"""``threads list --status`` when a checkpoint's trailing fields are longer than the first bytes
the SQLite store reads from the end of the blob (a wide graph: many nodes with long names), and
the tail reader against real checkpoint blobs holding look-alikes of those fields.

The wide graph's threads are written by the real savers; each expected status is checked
against the graph's own ``get_state``.
"""

from __future__ import annotations

import json
import operator
import random
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.support.cli import run

KINDS = ("sqlite", "postgres", "mongodb")
WIDE = [f"step-{i:02d}-with-a-rather-long-descriptive-node-name" for i in range(40)]


class WideState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    ask: bool


def wide_graph():
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def make(name):
        def node(state: WideState) -> dict:
            if state.get("ask") and name == WIDE[7]:
                return {"log": [interrupt(f"approve {name}?")]}
            return {"log": [name]}
        return node

    g = StateGraph(WideState)
    for name in WIDE:
        g.add_node(name, make(name))
        g.add_edge(START, name)
    g.add_node("join", lambda s: {"log": ["joined"]})
    g.add_edge(WIDE, "join")
    g.add_edge("join", END)
    return g


@pytest.fixture(scope="module")
def wide_stores(request):
    from tests.conftest import backend_for

    made = {}

    def get(kind):
        if kind not in made:
            backend = backend_for(kind, request)
            url = backend.new_store(scenarios=False)
            with backend.saver(url) as saver:
                cases = {
                    "wide:_:done": (wide_graph().compile(checkpointer=saver), {"log": []}),
                    "wide:_:ask": (wide_graph().compile(checkpointer=saver), {"log": [], "ask": True}),
                    "wide:_:before-join": (wide_graph().compile(checkpointer=saver, interrupt_before=["join"]), {"log": []}),
                }
                expected = {}
                for key, (graph, inp) in cases.items():
                    cfg = {"configurable": {"thread_id": key}}
                    graph.invoke(inp, cfg)
                    state = graph.get_state(cfg)
                    expected[key] = "interrupted" if state.interrupts else "pending" if state.next else "done"
            made[kind] = (url, expected)
        return made[kind]

    return get


@pytest.mark.parametrize("kind", KINDS)
def test_status_of_threads_whose_trailing_fields_are_long(kind, wide_stores):
    url, expected = wide_stores(kind)
    assert expected == {"wide:_:done": "done", "wide:_:ask": "interrupted", "wide:_:before-join": "pending"}
    if kind == "sqlite":
        import sqlite3

        from symfonic_cli.stores.sqlite.state import SqliteState

        # the version maps are longer than the first read from the blob's end: it reads further back
        conn = sqlite3.connect(url[len("sqlite:///"):] if url.startswith("sqlite:///") else url)
        spans = conn.execute(
            "SELECT min(length(checkpoint) - instr(checkpoint, ?)) FROM checkpoints c WHERE checkpoint_ns = '' "
            "AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = c.thread_id AND checkpoint_ns = '')",
            (b"\xb0channel_versions",),
        ).fetchone()[0]
        conn.close()
        assert spans > SqliteState._TAIL_BYTES * 2
    for status in ("interrupted", "pending", "done"):
        r = run("threads", "list", "-s", url, "--status", status, "-f", "json")
        assert r.code == 0, r.err
        assert {row["key"] for row in json.loads(r.out)} == {k for k, s in expected.items() if s == status}, (kind, status)
    r = run("threads", "list", "-s", url, "--status", "interrupted,pending,done", "--with-size", "-f", "json")
    assert {row["key"]: row["status"] for row in json.loads(r.out)} == expected


def _real_blob(junk: bytes) -> tuple[bytes, dict]:
    """A real LangGraph checkpoint blob whose channel values hold ``junk`` (bytes, so they reach
    the blob unencoded), and its trailing fields."""
    import ormsgpack
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [junk, "hello"], "raw": junk}
    cp["channel_versions"] = {"messages": "00000000000000000000000000000002.0", "branch:to:agent": "00000000000000000000000000000003.0"}
    cp["versions_seen"] = {"agent": {"branch:to:agent": "00000000000000000000000000000002.0"}}
    cp["updated_channels"] = ["branch:to:agent"]
    type_, blob = JsonPlusSerializer().dumps_typed(cp)
    assert type_ == "msgpack"
    whole = ormsgpack.unpackb(blob, option=ormsgpack.OPT_NON_STR_KEYS)
    return blob, {k: whole[k] for k in ("channel_versions", "versions_seen", "updated_channels")}


def test_tail_reader_reads_back_past_look_alikes():
    """Real blobs with look-alikes of the trailing fields in their values (generated, fixed seed):
    from any first window, reading further back, the reader returns the real fields."""
    from symfonic_cli.codec.msgpack_head import parse_blob_end

    rnd = random.Random(1414)
    real_tail = _real_blob(b"")[0]
    real_tail = real_tail[real_tail.index(b"\xb0channel_versions"):]
    for _ in range(200):
        pieces = [rnd.randbytes(rnd.randrange(40)), b"\xb0channel_versions", real_tail, real_tail[: rnd.randrange(len(real_tail))]]
        rnd.shuffle(pieces)
        blob, fields = _real_blob(b"".join(pieces))
        reads = []

        def more(n, blob=blob, reads=reads):
            reads.append(n)
            return blob[-n:]

        first = rnd.randrange(1, len(blob) + 1)
        got = parse_blob_end(blob[:4], blob[-first:], len(blob), more)
        assert got is not None and {k: got.get(k) for k in fields} == fields
        assert all(n <= len(blob) for n in reads)
        # without reading further back: the real fields, or None when the window misses the key
        got = parse_blob_end(blob[:4], blob[-first:], len(blob))
        assert got is None or {k: got.get(k) for k in fields} == fields
