"""Linear-time timestamps give exactly the reference algorithm's rows, on every history shape.

The oracle is the reference walk (tests/support/reference.py): the real saver's ``list``,
every checkpoint fully decoded, oldest ts per id; once also symfonic-core's own get_transcript.
Histories are written by real graphs: long threads, rewrites (replace and remove), trimming
nodes, forks from an older checkpoint, durability "exit" runs, subgraphs.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.support.reference import reference_rows, reference_ts_map
from symfonic_cli.transcript import timestamps
from tests.support.cli import run
from tests.support.scenarios import agent_graph, long_thread, scenarios

SCENARIO_KEYS = [sc.key for sc in scenarios()]


def _trimming_graph():
    # A model that keeps at most five messages: it removes the oldest ones as it answers.
    from langchain_core.messages import AIMessage, RemoveMessage
    from langgraph.graph import START, MessagesState, StateGraph

    def model(state: MessagesState) -> dict:
        msgs = state["messages"]
        drop = [RemoveMessage(id=m.id) for m in msgs[: max(0, len(msgs) - 4)]]
        return {"messages": [*drop, AIMessage(content=f"answer {len(msgs)}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder


def _write_shapes(saver) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    long_thread(saver, "t:_:long", 30)

    agent = agent_graph().compile(checkpointer=saver)

    def turns(key, texts, **kw):
        cfg = {"configurable": {"thread_id": key}}
        for text in texts:
            agent.invoke({"messages": [HumanMessage(content=text)]}, cfg, **kw)
        return cfg

    # Rewritten mid-way: one message replaced in place (same id), one removed, then more turns.
    cfg = turns("t:_:rewritten", [f"q{i}" if i % 3 else f"tool:x{i}" for i in range(8)])
    msgs = agent.get_state(cfg).values["messages"]
    agent.update_state(cfg, {"messages": [HumanMessage(content="replaced", id=msgs[2].id), RemoveMessage(id=msgs[3].id)]})
    turns("t:_:rewritten", [f"after {i}" for i in range(6)])

    # An edit that keeps the length: an answer replaced by a new text under its id.
    cfg = turns("t:_:edited", ["a", "b", "c"])
    last = agent.get_state(cfg).values["messages"][-1]
    agent.update_state(cfg, {"messages": [AIMessage(content="edited answer", id=last.id)]})
    turns("t:_:edited", ["d"])

    # A fork: continue from an older checkpoint, so one parent has two children.
    cfg = turns("t:_:fork", ["one", "two", "three", "four"])
    older = [s for s in agent.get_state_history(cfg) if len(s.values.get("messages", [])) == 4][-1]
    agent.invoke({"messages": [HumanMessage(content="forked")]}, older.config)
    turns("t:_:fork", ["after the fork"])

    # A rewriting fork: an update on an older checkpoint (its writes are not stored, the thread
    # moved on) that removes one message and adds two, as many as the original step added
    # there, the last under the id the original step wrote (so counts and ids agree).
    cfg = turns("t:_:fork-rewrite", ["one", "tool:two", "three"])
    older = next(s for s in agent.get_state_history(cfg) if s.next == ("tools",))
    n = len(older.values["messages"])
    original = agent.get_state(cfg).values["messages"][n]
    fork = agent.update_state(
        older.config,
        {"messages": [RemoveMessage(id=older.values["messages"][0].id), AIMessage(content="x"), AIMessage(content="y", id=original.id)]},
        as_node="model",
    )
    agent.invoke({"messages": [HumanMessage(content="on the fork")]}, fork)

    # Durability "exit": only each run's last checkpoint is saved, its writes never are.
    turns("t:_:exit", [f"exit {i}" if i % 2 else f"tool:e{i}" for i in range(6)], durability="exit")

    # Trimming: the list length stays the same while its content moves; in exit mode too.
    trim = _trimming_graph().compile(checkpointer=saver)
    for key, kw in (("t:_:trim", {}), ("t:_:trim-exit", {"durability": "exit"})):
        for i in range(8):
            trim.invoke({"messages": [HumanMessage(content=f"{key} {i}")]}, {"configurable": {"thread_id": key}}, **kw)

    # A subgraph run on every turn: messages also live in the subgraph's namespace.
    sub = agent_graph(subgraph=True).compile(checkpointer=saver)
    for i in range(3):
        sub.invoke({"messages": [HumanMessage(content=f"tool:sub {i}" if i == 1 else f"sub {i}")]}, {"configurable": {"thread_id": "t:_:sub"}})


SHAPES = ["t:_:long", "t:_:rewritten", "t:_:edited", "t:_:fork", "t:_:fork-rewrite", "t:_:exit", "t:_:trim", "t:_:trim-exit", "t:_:sub"]


@pytest.fixture(scope="module")
def shapes_db(tmp_path_factory):
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path_factory.mktemp("shapes") / "shapes.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        _write_shapes(SqliteSaver(conn))
    finally:
        conn.close()
    return path


def _cli_rows(store, key, *args):
    res = run("transcript", "show", "--store", str(store), "--thread", key, "--format", "json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def _resolution(store, key, **filters):
    """How ``transcript show`` resolved the timestamps of these rows (the library's returned report)."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.transcript.read import read_transcript

    with open_store(parse_location(str(store))) as st:
        return read_transcript(st, key, **filters).resolution


def _reference(store, key, **kw):
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(store), check_same_thread=False)
    try:
        return reference_rows(SqliteSaver(conn), key, **kw)
    finally:
        conn.close()


@pytest.mark.parametrize("key", SCENARIO_KEYS)
def test_scenario_rows_match_the_reference(sqlite_master, key):
    ref = _reference(sqlite_master, key)
    assert ref and all("timestamp" in r for r in ref)
    assert _cli_rows(sqlite_master, key) == ref


@pytest.mark.parametrize("key", SHAPES)
def test_history_shapes_match_the_reference(shapes_db, key):
    ref = _reference(shapes_db, key)
    assert len(ref) >= 3 and any(r["timestamp"] for r in ref)
    assert _cli_rows(shapes_db, key) == ref


def test_append_only_thread_decodes_nothing_but_the_latest(shapes_db):
    _cli_rows(shapes_db, "t:_:long")
    run = _resolution(shapes_db, "t:_:long")
    assert (run.path, run.decoded) == ("linear", 0)


@pytest.mark.parametrize("key", ["t:_:rewritten", "t:_:exit", "t:_:trim-exit", "t:_:fork", "t:_:fork-rewrite"])
def test_unprovable_transitions_are_decoded(shapes_db, key):
    # The shortcut cannot prove these appends (removals, unsaved writes, a fork): it decodes there.
    _cli_rows(shapes_db, key)
    run = _resolution(shapes_db, key)
    assert run.path == "linear" and run.decoded >= 1


def test_the_rewritten_history_is_not_the_first_write(shapes_db):
    # Guard on the fixture itself: the replaced message's ts is not its first write's.
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(shapes_db), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        ts = reference_ts_map(saver, "t:_:rewritten")
        latest = saver.get_tuple({"configurable": {"thread_id": "t:_:rewritten", "checkpoint_ns": ""}})
    finally:
        conn.close()
    replaced = [m for m in latest.checkpoint["channel_values"]["messages"] if m.content == "replaced"]
    assert replaced and ts[replaced[0].id] is not None


@pytest.mark.parametrize("key", ["t:_:long", "t:_:rewritten", "t:_:sub", "t:_:trim"])
@pytest.mark.parametrize(
    "args",
    [
        ("--index", "0", "--speaker", "user"),
        ("--index", "-1", "--speaker", "assistant"),
        ("--index", "3"),
        ("--limit", "4"),
        ("--speaker", "user", "--limit", "2"),
    ],
)
def test_selected_rows_match_the_reference(shapes_db, key, args):
    full = _reference(shapes_db, key)
    speaker = args[args.index("--speaker") + 1] if "--speaker" in args else "all"
    view = [r for r in full if speaker == "all" or r["role"] == speaker]
    view = [dict(r, index=i) for i, r in enumerate(view)]
    if "--index" in args:
        i = int(args[args.index("--index") + 1])
        view = [view[i]] if -len(view) <= i < len(view) else []
    if "--limit" in args:
        view = view[: int(args[args.index("--limit") + 1])]
    assert _cli_rows(shapes_db, key, *args) == view


def test_index_zero_stops_early(shapes_db):
    # Only the printed rows need timestamps: the oldest-first pass stops once they have theirs.
    assert _cli_rows(shapes_db, "t:_:long", "--index", "0", "--speaker", "user")[0]["timestamp"]
    assert _resolution(shapes_db, "t:_:long", index=0, speaker={"user"}).path == "linear"


def test_time_range_matches_the_reference(shapes_db):
    full = _reference(shapes_db, "t:_:rewritten")
    stamps = sorted({r["timestamp"] for r in full if r["timestamp"]})
    lo, hi = stamps[1], stamps[-2]
    got = _cli_rows(shapes_db, "t:_:rewritten", "--since", lo, "--until", hi)
    assert got == [r for r in full if r["timestamp"] and lo <= r["timestamp"] <= hi]
    assert got and got != full


def test_earlier_checkpoint_matches_the_reference(shapes_db):
    with sqlite3.connect(str(shapes_db)) as conn:
        cid = conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = 't:_:rewritten' AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id LIMIT 1 OFFSET 12"
        ).fetchone()[0]
    ref = _reference(shapes_db, "t:_:rewritten", checkpoint_id=cid)
    assert ref and ref != _reference(shapes_db, "t:_:rewritten")
    assert _cli_rows(shapes_db, "t:_:rewritten", "--checkpoint", cid) == ref


class _ProtocolOnly:
    """A store whose heads cannot tell a message count cheaply (``message_count`` None, as for a
    delta-encoded channel): the resolver must take the exact walk."""

    def __init__(self, store) -> None:
        self.read_checkpoint = store.read_checkpoint
        self.iter_message_states = store.iter_message_states
        self.iter_message_writes = store.iter_message_writes
        self.iter_checkpoint_heads = lambda key: (h._replace(message_count=None) for h in store.iter_checkpoint_heads(key))


@pytest.mark.parametrize("key", ["t:_:long", "t:_:rewritten", "t:_:sub"])
def test_store_without_fast_reads_walks_exactly(shapes_db, key):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(str(shapes_db))) as store:
        run = timestamps.Resolution()
        linear = timestamps.resolve(store, key, report=run)
        assert run.path == "linear"
        walked = timestamps.resolve(_ProtocolOnly(store), key, report=run)
        assert run.path == "exact"
    assert linear == walked and len(walked) >= 3


def test_symfonic_core_get_transcript_agrees(shapes_db):
    from tests.support.reference import reference_transcript

    assert _cli_rows(shapes_db, "t:_:rewritten") == reference_transcript(shapes_db, "t", None, "rewritten")


def test_heads_read_from_blob_prefixes(shapes_db):
    from symfonic_cli.codec.strict import lean_loads
    from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

    with sqlite3.connect(str(shapes_db)) as conn:
        blobs = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchall()
    assert len(blobs) > 100
    for type_, blob in blobs:
        value = lean_loads(type_, blob)
        expected = (value["ts"], len(value["channel_values"].get("messages", [])))
        assert checkpoint_blob_head(blob) == expected
        cut = blob[: len(blob) // 3]
        try:
            assert checkpoint_blob_head(cut) == expected
        except NeedMore:
            pass
    with pytest.raises(NeedMore):
        checkpoint_blob_head(blobs[-1][1][:20])


class _Without:
    """A real object minus one optional capability, which the code under test must do without."""

    def __init__(self, obj, missing: str) -> None:
        self._obj = obj
        self._missing = missing

    def __getattr__(self, name):
        if name == self._missing:
            raise AttributeError(name)
        return getattr(self._obj, name)


def test_heads_without_incremental_blob_io_are_the_same(shapes_db, sqlite_master):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    for db in (shapes_db, sqlite_master):
        with open_store(parse_location(str(db))) as st:
            keys = [t.key for t in st.list_threads()]
            with_blob_io = {k: list(st.iter_checkpoint_heads(k)) for k in keys}
            st.conn = _Without(st.conn, "blobopen")  # a connection as Python 3.10 has it
            assert not hasattr(st.conn, "blobopen")
            by_substr = {k: list(st.iter_checkpoint_heads(k)) for k in keys}
        assert by_substr == with_blob_io
        assert sum(h.message_count is not None for hs in by_substr.values() for h in hs) > 20


def test_step_is_read_from_the_checkpoint_id(shapes_db):
    with sqlite3.connect(str(shapes_db)) as conn:
        rows = conn.execute("SELECT checkpoint_id, metadata FROM checkpoints").fetchall()
    for cid, meta in rows:
        assert timestamps.step_of(cid) == json.loads(meta)["step"] & 0x3FFF


def test_every_store_kind_matches_its_own_saver(any_kind):
    url = any_kind.new_store(scenarios=False)
    with any_kind.saver(url) as saver:
        long_thread(saver, "k:_:long", 12)
        from tests.support.scenarios import write_scenarios

        write_scenarios(saver, ["acme:_:s-rewrite", "initech:_:s-sub"])
    for key in ("k:_:long", "acme:_:s-rewrite", "initech:_:s-sub"):
        with any_kind.saver(url) as saver:
            ref = reference_rows(saver, key)
        assert ref and _cli_rows(url, key) == ref


def test_heads_of_other_layouts():
    # Key order, widths and value kinds other than LangGraph's own layout take the general reader.
    import ormsgpack

    from symfonic_cli.codec.msgpack_head import NeedMore, channel_blob_count, checkpoint_blob_head

    odd = [None, True, 1, -1, 300, -70000, 2**40, 1.5, "s" * 40, "s" * 300, "s" * 70000, b"b" * 300,
           list(range(20)), {str(i): i for i in range(20)}, list(range(70000))]
    for value in odd:
        blob = ormsgpack.packb({"junk": value, "ts": "T", "channel_values": {"other": value, "messages": [1, 2, 3]}, "z": value})
        assert checkpoint_blob_head(blob) == ("T", 3)
        with pytest.raises(NeedMore):
            checkpoint_blob_head(blob[: blob.index(b"messages")])
    assert checkpoint_blob_head(ormsgpack.packb({"ts": "T", "channel_values": {}})) == ("T", 0)
    assert checkpoint_blob_head(ormsgpack.packb({"ts": "T", "channel_values": {"messages": {"a": 1}}})) == ("T", None)
    assert channel_blob_count(ormsgpack.packb(list(range(100_000)))[:5]) == 100_000
    with pytest.raises(ValueError):
        checkpoint_blob_head(b"\xc1")


def test_heads_with_an_iso_id_take_the_fast_reader_and_agree_with_the_general_one():
    # Old LangGraph wrote the ts as the id (32 characters): LangGraph's layout otherwise.
    import ormsgpack

    from symfonic_cli.codec.msgpack_head import _STANDARD_HEAD, NeedMore, checkpoint_blob_head

    ts = "2026-12-07T12:18:21.228848+00:00"
    for messages in ([], [1, 2, 3], {"a": 1}):
        values = {"messages": messages, "other": 1}
        blob = ormsgpack.packb({"v": 4, "ts": ts, "id": ts, "channel_values": values, "z": 1})
        general = ormsgpack.packb({"id": ts, "v": 4, "ts": ts, "channel_values": values, "z": 1})
        assert _STANDARD_HEAD.match(blob) and not _STANDARD_HEAD.match(general)
        assert checkpoint_blob_head(blob) == checkpoint_blob_head(general) == (ts, None if isinstance(messages, dict) else len(messages))
        with pytest.raises(NeedMore):
            checkpoint_blob_head(blob[: blob.index(b"channel_values") + 16])


class _NoPlainState:
    """The real store whose plain-message read finds nothing, so rows come from strictly built messages."""

    def __init__(self, store) -> None:
        self._store = store

    def read_message_state(self, key, *, checkpoint_id=None):
        return None

    def __getattr__(self, name):
        return getattr(self._store, name)


def _strict_only(store):
    return _NoPlainState(store)


@pytest.mark.parametrize("key", SCENARIO_KEYS + ["t:_:long", "t:_:sub"])
def test_rows_from_stored_fields_equal_rows_from_built_messages(sqlite_master, shapes_db, key):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.transcript.read import read_transcript

    path = shapes_db if key.startswith("t:") else sqlite_master
    with open_store(parse_location(str(path))) as store:
        plain = read_transcript(store, key)
        strict = read_transcript(_strict_only(store), key)
    assert plain.rows == strict.rows and plain.warnings == strict.warnings
    assert plain.checkpoint_id == strict.checkpoint_id and plain.rows


def _transcript_in_fresh_process(store: str, key: str) -> tuple[list, str]:
    """``transcript show --format json`` in a new interpreter: its rows, and the langgraph and
    langchain_core modules it loaded (as a repr on stderr)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom symfonic_cli.cli.app import main\n"
        f"try:\n    main(['transcript', 'show', '--store', {store!r}, '--thread', {key!r}, '--format', 'json'])\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.strip()


def test_plain_thread_is_read_without_langgraph(shapes_db):
    # Start-up is most of a transcript's cost: a plain thread needs no langgraph or langchain.
    rows, loaded = _transcript_in_fresh_process(str(shapes_db), "t:_:long")
    assert rows[0]["timestamp"]
    assert loaded == "[]"


def test_plain_read_agrees_with_strict_read_on_every_kind(any_kind):
    """Each backend's raw read of the latest messages gives the rows strict decoding gives."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.transcript.read import read_transcript

    url = any_kind.new_store()
    with open_store(parse_location(url)) as store:
        assert store.read_message_state("acme:_:s-001") is not None
        for key in SCENARIO_KEYS:
            plain = read_transcript(store, key)
            strict = read_transcript(_strict_only(store), key)
            assert plain.rows == strict.rows and plain.warnings == strict.warnings, key
            assert plain.rows


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_plain_thread_needs_no_langgraph_on_sql_stores(kind, request):
    # (MongoDB keeps metadata serialized value by value; reading it loads LangGraph's serializer.)
    from tests.conftest import backend_for

    url = backend_for(kind, request).new_store()
    rows, loaded = _transcript_in_fresh_process(url, "acme:_:s-001")
    assert rows[1]["content"] == "What is the status of order 1042?" and all(r["timestamp"] for r in rows)
    assert loaded == "[]"
