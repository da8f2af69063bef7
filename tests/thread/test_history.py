"""``thread history`` and ``thread diff`` on every store kind, against the real savers and graphs.

Real LangGraph graphs write the histories (tests/support/scenarios.py plus a fork and an in-place edit
written here); the oracles are the real saver's ``list()``/``get_tuple()`` and the graph's
``get_state_history()``/``get_state()`` on the same store.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.scenarios import ANSI, agent_graph

PLAIN, REWRITE, SUB, FORK, INPLACE = "acme:_:s-001", "acme:_:s-rewrite", "initech:_:s-sub", "hist:_:fork", "hist:_:inplace"
KEYS = (PLAIN, REWRITE, SUB, FORK, INPLACE, "acme:eu:s-003")

_stores: dict[str, str] = {}


def _write_extra(saver) -> None:
    from langchain_core.messages import HumanMessage

    graph = agent_graph().compile(checkpointer=saver)
    # A fork: a new branch from an older checkpoint (update_state on it), then a run on the branch.
    config = {"configurable": {"thread_id": FORK}}
    graph.invoke({"messages": [HumanMessage(content="first", id="f-1")]}, config)
    graph.invoke({"messages": [HumanMessage(content="second", id="f-2")]}, config)
    older = [s for s in graph.get_state_history(config) if s.metadata["step"] == 1][-1].config
    branch = graph.update_state(older, {"messages": [HumanMessage(content="on the branch", id="f-b")]})
    graph.invoke(None, branch)
    # An edit in place: the same id, other content (nothing removed).
    config = {"configurable": {"thread_id": INPLACE}}
    graph.invoke({"messages": [HumanMessage(content="original", id="e-1")]}, config)
    graph.update_state(config, {"messages": [HumanMessage(content="edited", id="e-1")]})
    graph.invoke({"messages": [HumanMessage(content="after the edit", id="e-2")]}, config)


def _store(backend) -> str:
    if backend.kind not in _stores:
        url = backend.new_store()
        with backend.saver(url) as saver:
            _write_extra(saver)
        _stores[backend.kind] = url
    return _stores[backend.kind]


@contextmanager
def _graph(backend, url, key):
    with backend.saver(url) as saver:
        yield agent_graph(key == SUB).compile(checkpointer=saver), saver


def _history(url, key, *args) -> list[dict]:
    res = run("thread", "history", "-s", url, "-t", key, "-f", "json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def _cid(config) -> str:
    return config["configurable"]["checkpoint_id"]


@pytest.mark.parametrize("key", KEYS)
def test_history_is_the_savers_list(any_kind, key):
    url = _store(any_kind)
    got = _history(url, key)
    with _graph(any_kind, url, key) as (graph, saver):
        listed = list(saver.list({"configurable": {"thread_id": key}}))
        snapshots = {_cid(s.config): s for s in graph.get_state_history({"configurable": {"thread_id": key}})}
    assert [e["checkpoint_id"] for e in got] == [_cid(t.config) for t in listed]
    for e, t in zip(got, listed):
        assert e["checkpoint_ns"] == t.config["configurable"]["checkpoint_ns"]
        assert e["parent_checkpoint_id"] == (_cid(t.parent_config) if t.parent_config else None)
        assert (e["step"], e["source"]) == (t.metadata["step"], t.metadata["source"])
        assert e["ts"] == t.checkpoint["ts"]
        assert e["messages"] == len(t.checkpoint["channel_values"].get("messages") or [])
        snap = snapshots.get(e["checkpoint_id"])
        if snap is not None:  # root namespace: the graph's own view agrees
            assert (e["step"], e["source"]) == (snap.metadata["step"], snap.metadata["source"])
            assert e["messages"] == len(snap.values.get("messages", []))
    # Which node wrote which channels: the tasks that ran on the parent (the graph names them).
    by_id = {_cid(t.config): t for t in listed}
    for e in got:
        parent = by_id.get(e["parent_checkpoint_id"])
        if parent is None or e["source"] == "update" or len(e["children"]) > 1:
            continue
        expected: dict[str, list[str]] = {}
        for task_id, channel, _ in parent.pending_writes or []:
            expected.setdefault(task_id, [])
            if channel not in expected[task_id]:
                expected[task_id].append(channel)
        siblings = [x for x in got if x["parent_checkpoint_id"] == e["parent_checkpoint_id"]]
        if len(siblings) == 1:
            assert {w["task_id"]: sorted(w["channels"]) for w in e["writes"]} == {k: sorted(v) for k, v in expected.items()}
        snap = snapshots.get(e["parent_checkpoint_id"])
        if snap is not None:
            names = {t.id: t.name for t in snap.tasks}
            for w in e["writes"]:
                if w["task_id"] in names:
                    assert w["node"] == names[w["task_id"]]


def test_plain_history_has_no_marks(any_kind):
    got = _history(_store(any_kind), PLAIN)
    assert not any(e["forked"] or e["rewrote"] for e in got)
    assert [w["node"] for w in got[0]["writes"]] == ["model"]
    assert got[0]["pending_writes"] == []


def test_fork_marks_the_parent(any_kind):
    url = _store(any_kind)
    got = _history(url, FORK)
    forked = [e for e in got if e["forked"]]
    with _graph(any_kind, url, FORK) as (graph, _):
        updates = [s for s in graph.get_state_history({"configurable": {"thread_id": FORK}}) if s.metadata["source"] == "update"]
    assert len(updates) == 1 and len(forked) == 1
    assert forked[0]["checkpoint_id"] == _cid(updates[0].parent_config)
    assert _cid(updates[0].config) in forked[0]["children"] and len(forked[0]["children"]) == 2
    assert not any(e["rewrote"] for e in got)  # a branch adds messages; it rewrites none


def test_rewritten_history_is_marked(any_kind):
    url = _store(any_kind)
    got = _history(url, REWRITE)
    marked = [e for e in got if e["rewrote"]]
    with _graph(any_kind, url, REWRITE) as (graph, _):
        history = list(graph.get_state_history({"configurable": {"thread_id": REWRITE}}))
    update = [s for s in history if s.metadata["source"] == "update"][0]
    before = [s for s in history if _cid(s.config) == _cid(update.parent_config)][0].values["messages"]
    assert [e["checkpoint_id"] for e in marked] == [_cid(update.config)]
    # scenarios.rewrite: the first message replaced in place, the second removed
    assert marked[0]["edited_messages"] == [before[0].id]
    assert marked[0]["removed_messages"] == [before[1].id]


def test_edit_in_place_is_marked(any_kind):
    got = _history(_store(any_kind), INPLACE)
    marked = [e for e in got if e["rewrote"]]
    assert len(marked) == 1 and marked[0]["source"] == "update"
    assert marked[0]["edited_messages"] == ["e-1"] and marked[0]["removed_messages"] == []


def test_namespaces_and_limit(any_kind):
    url = _store(any_kind)
    every = _history(url, SUB)
    namespaces = {e["checkpoint_ns"] for e in every}
    assert "" in namespaces and len(namespaces) >= 2
    with _graph(any_kind, url, SUB) as (_, saver):
        for ns in namespaces:
            got = _history(url, SUB, "--namespace", ns)
            listed = list(saver.list({"configurable": {"thread_id": SUB, "checkpoint_ns": ns}}))
            assert [e["checkpoint_id"] for e in got] == [_cid(t.config) for t in listed]
            assert {e["checkpoint_ns"] for e in got} == {ns}
    assert _history(url, SUB, "--limit", "3") == every[:3]
    assert _history(url, SUB, "--namespace", "no-such-namespace") == []


def _python_diff(graph, saver, key, a: str, b: str):
    def conf(cid):
        return {"configurable": {"thread_id": key, "checkpoint_ns": "", "checkpoint_id": cid}}

    va = saver.get_tuple(conf(a)).checkpoint["channel_values"]
    vb = saver.get_tuple(conf(b)).checkpoint["channel_values"]
    channels = {
        "added": sorted(set(vb) - set(va)),
        "removed": sorted(set(va) - set(vb)),
        "changed": sorted(c for c in set(va) & set(vb) if va[c] != vb[c]),
    }
    ma = {m.id: m for m in graph.get_state(conf(a)).values.get("messages", [])}
    mb = {m.id: m for m in graph.get_state(conf(b)).values.get("messages", [])}
    messages = {
        "added": [i for i in mb if i not in ma],
        "removed": [i for i in ma if i not in mb],
        "edited": [i for i in ma if i in mb and ma[i] != mb[i]],
    }
    return channels, messages


@pytest.mark.parametrize("key", (PLAIN, REWRITE, FORK, INPLACE))
def test_diff_is_a_python_diff_of_the_states(any_kind, key):
    url = _store(any_kind)
    root = [e["checkpoint_id"] for e in _history(url, key, "--namespace", "")]
    pairs = [(root[-1], root[0]), (root[1], root[0]), (root[0], root[-1])] + [(root[i + 1], root[i]) for i in range(len(root) - 1)]
    with _graph(any_kind, url, key) as (graph, saver):
        for a, b in pairs:
            res = run("thread", "diff", "-s", url, "-t", key, a, b, "-f", "json")
            assert res.code == 0, res.err
            got = json.loads(res.out)
            channels, messages = _python_diff(graph, saver, key, a, b)
            assert got["from"]["checkpoint_id"] == a and got["to"]["checkpoint_id"] == b
            assert got["channels"] == channels
            assert {k: [m["id"] for m in v] for k, v in got["messages"].items()} == messages
    # -1 and -2 are the two latest root checkpoints
    res = run("thread", "diff", "-s", url, "-t", key, "-2", "-1", "-f", "json")
    got = json.loads(res.out)
    assert (got["from"]["checkpoint_id"], got["to"]["checkpoint_id"]) == (root[1], root[0])


def test_diff_shows_the_edit(any_kind):
    url = _store(any_kind)
    root = [e for e in _history(url, INPLACE, "--namespace", "")]
    update = [e for e in root if e["rewrote"]][0]
    got = json.loads(run("thread", "diff", "-s", url, "-t", INPLACE, update["parent_checkpoint_id"], update["checkpoint_id"], "-f", "json").out)
    edited = got["messages"]["edited"]
    assert [m["id"] for m in edited] == ["e-1"]
    assert edited[0]["before"]["content"] == "original" and edited[0]["after"]["content"] == "edited"
    text = run("thread", "diff", "-s", url, "-t", INPLACE, update["parent_checkpoint_id"], update["checkpoint_id"], "-f", "text").out
    assert "message edited\te-1\tuser\tbefore: original / after: edited" in text


def test_subgraph_checkpoints_diff_by_id(any_kind):
    url = _store(any_kind)
    inner = [e for e in _history(url, SUB) if e["checkpoint_ns"]]
    a, b = inner[-1]["checkpoint_id"], inner[0]["checkpoint_id"]
    got = json.loads(run("thread", "diff", "-s", url, "-t", SUB, a, b, "-f", "json").out)
    assert got["from"]["checkpoint_ns"] == inner[-1]["checkpoint_ns"]
    assert len(got["messages"]["added"]) == inner[0]["messages"] - inner[-1]["messages"]


def test_unknown_thread_and_checkpoint_exit_3(any_kind):
    url = _store(any_kind)
    res = run("thread", "history", "-s", url, "-t", "acme:_:nope")
    assert res.code == 3 and "acme:_:s-001" in res.err and res.out == ""
    res = run("thread", "diff", "-s", url, "-t", "acme:_:nope", "-1", "-2")
    assert res.code == 3 and "acme:_:s-001" in res.err and res.out == ""
    for refs in (("1f000000-0000-6000-8000-000000000000", "-1"), ("-1", "-99"), ("-0", "-1")):
        res = run("thread", "diff", "-s", url, "-t", PLAIN, *refs, "-f", "json")
        assert res.code == 3 and res.out == "" and "checkpoint" in res.err


def test_bad_input_is_a_usage_error(sqlite_store):
    for args in (("-1", "--no-such-flag"), ("-x", "-1"), ("-1",)):
        res = run("thread", "diff", "-s", str(sqlite_store), "-t", PLAIN, *args)
        assert res.code == 2 and res.out == "", args
    res = run("thread", "history", "-s", str(sqlite_store), "-t", PLAIN, "--limit", "-1")
    assert res.code == 2
    res = run("thread", "history", "-s", str(sqlite_store), "-t", PLAIN, "-f", "yaml")
    assert res.code == 2


def test_every_format_parses_and_agrees(sqlite_store):
    url = str(sqlite_store)
    full = _history(url, PLAIN)
    lines = run("thread", "history", "-s", url, "-t", PLAIN, "-f", "jsonl").out.splitlines()
    assert [json.loads(line) for line in lines] == full
    text = run("thread", "history", "-s", url, "-t", PLAIN, "-f", "text").out.splitlines()
    assert text[0].split("\t")[:2] == ["checkpoint_id", "parent_checkpoint_id"]
    assert [line.split("\t")[0] for line in text[1:]] == [e["checkpoint_id"] for e in full]
    one = run("thread", "diff", "-s", url, "-t", PLAIN, "-2", "-1", "-f", "jsonl").out
    assert one.count("\n") == 1 and json.loads(one) == json.loads(run("thread", "diff", "-s", url, "-t", PLAIN, "-2", "-1", "-f", "json").out)


def test_untrusted_content_is_escaped(any_kind):
    url = _store(any_kind)
    key = "acme:eu:s-003"
    first = _history(url, key, "--namespace", "")[-1]["checkpoint_id"]
    for fmt in ("text", "table"):
        res = run("thread", "diff", "-s", url, "-t", key, first, "-1", "-f", fmt)
        assert res.code == 0
        assert "\x1b" not in res.out and "\x07" not in res.out and "\u202e" not in res.out and "\x9b" not in res.out
        assert ("\\x1b[31mRED" if fmt == "text" else "\\x1b") in res.out
    got = json.loads(run("thread", "diff", "-s", url, "-t", key, first, "-1", "-f", "json").out)
    assert ANSI in [m["content"] for m in got["messages"]["added"]]


def test_history_is_read_only(sqlite_store):
    def digest() -> str:
        h = hashlib.sha256()
        for p in sorted(Path(sqlite_store).parent.glob(Path(sqlite_store).name + "*")):
            h.update(p.name.encode() + p.read_bytes())
        return h.hexdigest()

    before = digest()
    for key in (PLAIN, REWRITE, SUB):
        assert run("thread", "history", "-s", str(sqlite_store), "-t", key).code == 0
        assert run("thread", "diff", "-s", str(sqlite_store), "-t", key, "-2", "-1").code == 0
    assert digest() == before


def test_long_thread_decodes_only_the_latest(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from symfonic_cli.history.history import build_history
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store
    from tests.support.scenarios import long_thread
    import sqlite3

    path = tmp_path / "long.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    long_thread(SqliteSaver(conn), "k:_:long", 40)
    listed = list(SqliteSaver(conn).list({"configurable": {"thread_id": "k:_:long"}}))
    conn.close()
    with open_store(resolve_store(str(path)), writable=False) as st:
        result = build_history(st, "k:_:long")
    assert [e.checkpoint_id for e in result.entries] == [_cid(t.config) for t in listed]
    assert result.decoded == 1
    assert not any(e.rewrote or e.forked for e in result.entries)


def test_ids_whole_in_an_80_column_terminal(sqlite_store):
    from tests.support.terminal import on_terminal

    full = _history(str(sqlite_store), SUB)
    code, out = on_terminal("thread", "history", "-s", str(sqlite_store), "-t", SUB, "--no-pager", cols=80, rows=50)
    assert code == 0, out
    import re

    # rich styles the table (bold headers): drop the SGR sequences before measuring
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in out.splitlines()]
    assert max(len(line) for line in lines) <= 80
    for e in full:
        assert any(e["checkpoint_id"] in line for line in lines), e["checkpoint_id"]


def test_application_class_is_shown_from_raw_fields_with_a_warning(tmp_path):
    from tests.transcript.test_transcript import app_class_store

    path = app_class_store(tmp_path)
    res = run("thread", "diff", "-s", str(path), "-t", "t:_:app", "-2", "-1", "-f", "json")
    assert res.code == 0, res.err
    got = json.loads(res.out)
    assert [(m["id"], m["content"]) for m in got["messages"]["added"]] == [("app-1", "from the app's own class")]
    assert res.err.count("\n") == 1 and "warning" in res.err and "AppMessage" in res.err
    hist = run("thread", "history", "-s", str(path), "-t", "t:_:app", "-f", "json")
    assert hist.code == 0 and json.loads(hist.out)[0]["writes"][0]["node"] == "n"


def test_hostile_payload_is_never_executed_by_history_or_diff(tmp_path, sqlite_master):
    from tests.support.payloads import store_with_payload

    path, marker = store_with_payload(tmp_path, sqlite_master, in_messages=False)
    for args in (("history",), ("diff", "-2", "-1")):
        res = run("thread", *args, "-s", str(path), "-t", "globex:_:s-101", "-f", "json")
        assert res.code in (0, 4), res.err
        json.loads(res.out) if res.code == 0 else None
    assert not marker.exists()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_hostile = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(channel=_hostile, node=_hostile, task_id=_hostile)
def test_hostile_write_names_are_escaped_and_exact(tmp_path_factory, channel, node, task_id):
    import sqlite3

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path_factory.mktemp("hostile") / "w.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = agent_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "h:_:w"}}
    graph.invoke({"messages": [HumanMessage(content="hi", id="h-1")]}, config)
    latest = graph.get_state(config).config
    saver.put_writes(latest, [(channel, "x")], task_id, task_path=f"~__pregel_pull, {node}")
    conn.close()
    got = _history(str(path), "h:_:w")
    assert got[0]["pending_writes"] == [{"node": node, "task_id": task_id, "task_path": f"~__pregel_pull, {node}", "channels": [channel]}]
    for fmt in ("text", "table"):
        out = run("thread", "history", "-s", str(path), "-t", "h:_:w", "-f", fmt).out
        assert not any(c in out for c in "\x1b\x07\x9b\u202e\u2066\r\x00")


def test_pending_writes_of_an_interrupt_and_an_error(any_kind):
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def ask(state):
        answer = interrupt("approve refund of 42 EUR?")
        return {"messages": [AIMessage(content=f"approved: {answer}")]}

    def boom(state):
        raise RuntimeError("the node failed")

    url = any_kind.new_store(scenarios=False)
    keys = {"p:_:interrupt": ask, "p:_:error": boom}
    with any_kind.saver(url) as saver:
        for key, fn in keys.items():
            b = StateGraph(MessagesState)
            b.add_node("step", fn)
            b.add_edge(START, "step")
            graph = b.compile(checkpointer=saver)
            try:
                graph.invoke({"messages": [HumanMessage(content="hi", id="h-1")]}, {"configurable": {"thread_id": key}})
            except RuntimeError:
                pass
        expected = {}
        for key in keys:
            latest = saver.get_tuple({"configurable": {"thread_id": key}})
            expected[key] = (_cid(latest.config), sorted({(t, ch) for t, ch, _ in latest.pending_writes}))
    for key, (cid, pending) in expected.items():
        got = _history(url, key)
        assert got[0]["checkpoint_id"] == cid
        assert sorted((w["task_id"], ch) for w in got[0]["pending_writes"] for ch in w["channels"]) == pending
        assert any(ch in ("__interrupt__", "__error__") for _, ch in pending)
        assert all(w["node"] == "step" for w in got[0]["pending_writes"])


def test_durability_exit_runs_are_not_rewrites(tmp_path):
    import sqlite3

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "exit.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = agent_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "x:_:exit"}}
    for i in range(4):
        text = "tool:thing" if i == 2 else f"question {i}"
        graph.invoke({"messages": [HumanMessage(content=text, id=f"x-{i}")]}, config, durability="exit")
    listed = list(saver.list(config))
    conn.close()
    got = _history(str(path), "x:_:exit")
    assert [e["checkpoint_id"] for e in got] == [_cid(t.config) for t in listed]
    assert [e["messages"] for e in got] == [len(t.checkpoint["channel_values"].get("messages") or []) for t in listed]
    assert not any(e["rewrote"] or e["forked"] for e in got)


def test_crafted_metadata_is_escaped_and_exact(sqlite_store):
    import sqlite3

    conn = sqlite3.connect(sqlite_store)
    cid, meta = conn.execute(
        "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
        (PLAIN,),
    ).fetchone()
    crafted = {**json.loads(meta), "source": ANSI, "step": "7", "writes": {"\x1b]0;t\x07node": {"chan\u202enel": 1}}}
    conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (json.dumps(crafted).encode(), cid))
    conn.commit()
    conn.close()
    got = _history(str(sqlite_store), PLAIN)
    assert got[0]["checkpoint_id"] == cid and got[0]["source"] == ANSI
    assert got[0]["step"] == json.loads(meta)["step"]  # not an int: the step in the id
    for fmt in ("text", "table"):
        out = run("thread", "history", "-s", str(sqlite_store), "-t", PLAIN, "-f", fmt).out
        assert not any(c in out for c in "\x1b\x07\x9b\u202e") and "\\x1b" in out


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("colour", [True, False])
def test_one_line_a_checkpoint_where_it_fits(sqlite_master, cols, colour):
    """Issue #37 item 5: at 120 columns every checkpoint of a thread is one line (it took four);
    at 80 the writes wrap between names, never inside one (``messages,branch:`` / ``to:model``);
    ids whole; the time an age (clock.age), ``--absolute-time`` the instant."""
    import re

    from tests.support.terminal import on_terminal

    full = _history(str(sqlite_master), PLAIN)
    env = {} if colour else {"NO_COLOR": "1"}
    code, out = on_terminal("thread", "history", "-s", str(sqlite_master), PLAIN, "--no-pager", cols=cols, rows=200, env=env)
    assert code == 0, out
    assert ("\x1b[" in out) == colour
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in out.splitlines()]
    assert max(len(line) for line in lines) <= cols
    by_id = {e["checkpoint_id"]: [line for line in lines if line.startswith(e["checkpoint_id"] + " ")] for e in full}
    assert all(len(found) == 1 for found in by_id.values()), by_id
    names = {c for e in full for w in e["writes"] for c in w["channels"]}
    assert "branch:to:model" in names
    if cols == 120:
        assert len([line for line in lines if line.strip()]) == len(full) + 3  # title, header, rule
        for e in full:
            line = by_id[e["checkpoint_id"]][0]
            cells = line.split()
            assert re.fullmatch(r"\d+[smhdy]", cells[1]), line  # an age
            assert cells[2:5] == [str(e["step"]), e["source"], str(e["messages"])], line
            for w in e["writes"]:
                assert f"{w['node']}:" in line and all(c in line for c in w["channels"]), (w, line)
    else:
        text = "\n".join(lines)
        for name in names:
            assert re.search(rf"(^|[\s,]){re.escape(name)}[,;]?(\s|$)", text, re.M), name  # whole on a line
    code, out = on_terminal("--absolute-time", "thread", "history", "-s", str(sqlite_master), PLAIN, "--no-pager", cols=cols, rows=200,
                            env=env)
    assert code == 0 and all(e["ts"].replace("+00:00", "Z") in out for e in full)


@pytest.mark.parametrize("cols", [80, 120])
def test_a_long_channel_name_is_never_broken(tmp_path, cols):
    """``branch:to:approve`` (17 characters) at 80 columns: step and source share a column so the
    writes have room for it, whole (issue #37 item 5); pending writes after a ';'."""
    import re

    from tests.support.terminal import on_terminal

    store = str(tmp_path / "demo.db")
    assert run("demo", store).code == 0
    key = "acme:eu:s-003"
    full = _history(store, key)
    names = {c for e in full for w in e["writes"] + e["pending_writes"] for c in w["channels"]}
    assert "branch:to:approve" in names
    code, out = on_terminal("thread", "history", "-s", store, key, "--no-pager", cols=cols, rows=100, env={"NO_COLOR": "1"})
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= cols
    for name in names:
        assert re.search(rf"(^|[\s,]){re.escape(name)}[,;]?(\s|$)", out, re.M), (name, out)
    assert all(sum(line.startswith(e["checkpoint_id"] + " ") for line in lines) == 1 for e in full)
    assert "; pending approve:" in " ".join(out.split())
