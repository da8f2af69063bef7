"""``symfonic transcript show`` on SQLite: every rule of get_transcript, checked through the CLI."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.cli import run
from tests.support.reference import reference_transcript
from tests.support.scenarios import ANSI, BIG, UNICODE


def show(store, *args):
    res = run("transcript", "show", "--store", str(store), *args)
    return res


def rows(store, *args):
    res = show(store, *args, "--format", "json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_first_user_question(sqlite_master):
    out = rows(sqlite_master, "--tenant", "acme", "--session", "s-001", "--index", "0", "--speaker", "user")
    assert [r["content"] for r in out] == ["What is the status of order 1042?"]
    assert out[0]["index"] == 0 and out[0]["role"] == "user" and out[0]["message_id"] == "u-1"


def test_json_has_exactly_the_documented_keys(sqlite_master):
    out = rows(sqlite_master, "--thread", "acme:_:s-001")
    assert out and all(list(r) == ["index", "role", "content", "message_id", "timestamp"] for r in out)


def test_roles_and_speaker_filter(sqlite_master):
    every = rows(sqlite_master, "--thread", "acme:_:s-001")
    assert [r["role"] for r in every][:2] == ["system", "user"]
    assert {"tool", "assistant", "user", "system"} <= {r["role"] for r in every}
    assert [r["index"] for r in every] == list(range(len(every)))
    users = rows(sqlite_master, "--thread", "acme:_:s-001", "--speaker", "user")
    assert [r["message_id"] for r in users] == ["u-1", "u-2", "u-3"]
    assert [r["index"] for r in users] == [0, 1, 2]
    assistants = rows(sqlite_master, "--thread", "acme:_:s-001", "--speaker", "assistant")
    assert all(r["role"] == "assistant" for r in assistants) and len(assistants) == 4


def test_negative_and_out_of_range_index(sqlite_master):
    last = rows(sqlite_master, "--thread", "acme:_:s-001", "--speaker", "user", "--index", "-1")
    assert [(r["index"], r["message_id"]) for r in last] == [(2, "u-3")]
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--index", "99") == []
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--index", "-99") == []
    res = show(sqlite_master, "--thread", "acme:_:s-001", "--index", "99")
    assert res.code == 0 and res.out == ""


def test_limit_is_applied_last(sqlite_master):
    out = rows(sqlite_master, "--thread", "acme:_:s-001", "--speaker", "user", "--limit", "2")
    assert [r["message_id"] for r in out] == ["u-1", "u-2"]
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--limit", "0") == []


def test_sub_tenant_key_derivation(sqlite_master):
    a = rows(sqlite_master, "--tenant", "acme", "--sub-tenant", "eu", "--session", "s-002")
    b = rows(sqlite_master, "--thread", "acme:eu:s-002")
    assert a == b and a[0]["content"] == UNICODE
    assert a[1]["role"] == "assistant"
    assert any(r["content"] == BIG for r in a)


def test_multimodal_content_joined_as_symfonic_does(sqlite_master):
    out = rows(sqlite_master, "--thread", "acme:eu:s-003", "--index", "0")
    assert out[0]["content"] == "lead look at this [image_url]untyped-textNone[block]"


def test_timestamps_match_symfonic_core(sqlite_master, tmp_path):
    copy = tmp_path / "ref.db"
    shutil.copyfile(sqlite_master, copy)
    for tenant, sub, session in [
        ("acme", None, "s-001"),
        ("acme", "eu", "s-003"),
        ("acme", None, "s-rewrite"),
        ("initech", None, "s-sub"),
        ("globex", None, "s-100"),
    ]:
        expected = reference_transcript(copy, tenant, sub, session)
        key = f"{tenant}:{sub or '_'}:{session}"
        got = rows(sqlite_master, "--thread", key)
        assert got == expected, key
        assert all(r["timestamp"] for r in got)
        for speaker in ("user", "assistant"):
            for index in (0, -1, 5):
                assert rows(sqlite_master, "--thread", key, "--speaker", speaker, "--index", str(index)) == reference_transcript(
                    copy, tenant, sub, session, speaker=speaker, index=index
                )


def test_time_range_inclusive_and_utc_default(sqlite_master):
    every = rows(sqlite_master, "--thread", "acme:_:s-001")
    stamps = sorted({r["timestamp"] for r in every})
    lo, hi = stamps[1], stamps[-2]
    got = rows(sqlite_master, "--thread", "acme:_:s-001", "--since", lo, "--until", hi)
    assert got and all(lo <= r["timestamp"] <= hi for r in got)
    assert {r["timestamp"] for r in got} == {s for s in stamps if lo <= s <= hi}
    # open bounds
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--since", lo) == [r for r in every if r["timestamp"] >= lo]
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--until", lo) == [r for r in every if r["timestamp"] <= lo]
    # a value without offset is UTC: the same instant written both ways selects the same rows
    naive = lo.replace("+00:00", "").removesuffix("Z")
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--since", naive) == rows(
        sqlite_master, "--thread", "acme:_:s-001", "--since", lo
    )
    # in another offset, the same instant
    from datetime import datetime, timedelta, timezone

    shifted = datetime.fromisoformat(lo).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert rows(sqlite_master, "--thread", "acme:_:s-001", "--since", shifted) == rows(
        sqlite_master, "--thread", "acme:_:s-001", "--since", lo
    )


def test_index_with_time_range_is_usage_error(sqlite_master):
    res = show(sqlite_master, "--thread", "acme:_:s-001", "--index", "0", "--since", "2020-01-01")
    assert res.code == 2 and "mutually exclusive" in res.err
    assert len(res.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, code",
    [
        (["--speaker", "robot"], 2),
        (["--since", "yesterday"], 2),
        (["--format", "xml"], 2),
        (["--limit", "-1"], 2),
        (["--index", "one"], 2),
    ],
)
def test_bad_options(sqlite_master, args, code):
    res = show(sqlite_master, "--thread", "acme:_:s-001", *args)
    assert res.code == code
    assert "Traceback" not in res.err and res.err.startswith("symfonic: error:")


def test_thread_selection_errors(sqlite_master):
    res = show(sqlite_master)
    assert res.code == 2 and "--thread" in res.err
    res = show(sqlite_master, "--thread", "a:b:c", "--tenant", "a")
    assert res.code == 2
    res = show(sqlite_master, "--tenant", "acme")
    assert res.code == 2


def test_unknown_thread_lists_tenant_threads(sqlite_master):
    res = show(sqlite_master, "--tenant", "acme", "--session", "nope")
    assert res.code == 3
    assert "acme:_:nope" in res.err
    for key in ("acme:_:s-001", "acme:eu:s-002", "acme:eu:s-003", "acme:_:s-rewrite"):
        assert key in res.err
    res = show(sqlite_master, "--thread", "umbrella:_:x")
    assert res.code == 3 and "umbrella:_:x" in res.err and "has no threads" in res.err


def test_checkpoint_option(sqlite_master):
    import sqlite3

    conn = sqlite3.connect(sqlite_master)
    ids = [r[0] for r in conn.execute(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id='acme:_:s-001' AND checkpoint_ns='' ORDER BY checkpoint_id"
    )]
    conn.close()
    full = rows(sqlite_master, "--thread", "acme:_:s-001")
    early = rows(sqlite_master, "--thread", "acme:_:s-001", "--checkpoint", ids[2])
    assert 0 < len(early) < len(full)
    assert early == full[: len(early)]
    res = show(sqlite_master, "--thread", "acme:_:s-001", "--checkpoint", "no-such-id")
    assert res.code == 3 and "no-such-id" in res.err


def test_adversarial_content_is_escaped_in_text_and_table(sqlite_master):
    res = show(sqlite_master, "--thread", "acme:eu:s-003", "--format", "text")
    assert res.code == 0
    assert "\x1b" not in res.out and "\x07" not in res.out and "\x9b" not in res.out
    assert "\\x1b[31mRED" in res.out and "\\x07" in res.out and "\\x9b" in res.out
    assert "\u202e" not in res.out and "\\u202eexe.txt\\u202c" in res.out  # bidi reordering shown, not applied
    assert "[bold red]markup[/bold red]" in res.out
    table = run("transcript", "show", "--store", str(sqlite_master), "--thread", "acme:eu:s-003", "--format", "table", env={"COLUMNS": "400"})
    assert table.code == 0
    assert "\x1b" not in table.out and "\x07" not in table.out
    assert "[bold red]markup[/bold" in table.out  # markup printed as written, not interpreted


def test_json_keeps_exact_content(sqlite_master):
    out = rows(sqlite_master, "--thread", "acme:eu:s-003", "--speaker", "user", "--index", "1")
    assert out[0]["content"] == ANSI
    raw = show(sqlite_master, "--thread", "acme:eu:s-003", "--format", "jsonl").out
    assert "\x1b" not in raw and "\x9b" not in raw and "\u202e" not in raw  # escaped as JSON, not raw
    assert json.loads(raw.splitlines()[2])["content"] == ANSI


def test_jsonl_one_object_per_line(sqlite_master):
    res = show(sqlite_master, "--thread", "acme:_:s-001", "--format", "jsonl")
    lines = res.out.strip().splitlines()
    assert [json.loads(line) for line in lines] == rows(sqlite_master, "--thread", "acme:_:s-001")


def test_default_format_is_text_when_piped(sqlite_master):
    res = show(sqlite_master, "--thread", "acme:_:s-001", "--index", "1")
    assert res.out.startswith("[1] user ")
    assert "What is the status of order 1042?" in res.out


class AppMessage:  # replaced below by a HumanMessage subclass (kept at module level so it has a module path)
    pass


def _app_message_class():
    from langchain_core.messages import HumanMessage

    global AppMessage

    class AppMessage(HumanMessage):  # the application's own message type
        pass

    AppMessage.__module__ = __name__
    return AppMessage


def app_class_store(tmp_path):
    """A store a real graph wrote (thread ``t:_:app``) whose second checkpoint holds a message of
    the application's own class, outside the safe list."""
    import sqlite3

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, MessagesState, StateGraph

    cls = _app_message_class()

    def node(state):
        return {"messages": [cls(content="from the app's own class", id="app-1")]}

    b = StateGraph(MessagesState)
    b.add_node("n", node)
    b.add_edge(START, "n")
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    b.compile(checkpointer=SqliteSaver(conn)).invoke({"messages": [HumanMessage(content="hi", id="h-1")]}, {"configurable": {"thread_id": "t:_:app"}})
    conn.close()
    return path


def test_unsafe_class_is_not_built_and_is_named(tmp_path):
    """A checkpoint naming a class outside the safe list still yields its messages, with a warning."""
    path = app_class_store(tmp_path)
    res = show(path, "--thread", "t:_:app", "--format", "json")
    assert res.code == 0, res.err
    got = json.loads(res.out)
    assert [(r["message_id"], r["role"], r["content"]) for r in got] == [
        ("h-1", "user", "hi"),
        ("app-1", "user", "from the app's own class"),
    ]
    assert res.err.count("\n") == 1 and "warning" in res.err and "AppMessage" in res.err


def test_hostile_payload_is_never_executed(tmp_path, sqlite_master):
    """A stored value naming os.system is not imported or called; it is named in a warning."""
    from tests.support.payloads import store_with_payload

    path, marker = store_with_payload(tmp_path, sqlite_master, in_messages=True)
    res = show(path, "--thread", "globex:_:s-101", "--format", "json")
    assert not marker.exists()
    assert res.code == 0, res.err
    got = json.loads(res.out)
    assert got[0]["content"] == "Keep this conversation."
    assert "os.system" in res.err


def test_undecodable_blob_is_an_error_naming_the_checkpoint(tmp_path, sqlite_master):
    import sqlite3

    path = tmp_path / "broken.db"
    shutil.copyfile(sqlite_master, path)
    conn = sqlite3.connect(path)
    cid = conn.execute(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id='globex:_:s-101' AND checkpoint_ns='' ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()[0]
    conn.execute("UPDATE checkpoints SET checkpoint=X'c1c1c1' WHERE checkpoint_id=?", (cid,))
    conn.commit()
    conn.close()
    res = show(path, "--thread", "globex:_:s-101")
    assert res.code == 4
    assert cid in res.err and "Traceback" not in res.err


def test_delta_encoded_messages_with_an_add_messages_reducer_match_get_state(tmp_path):
    """A messages channel kept by LangGraph's DeltaChannel with add_messages as its reducer: the
    transcript is the list get_state rebuilds (it used to be refused)."""
    import sqlite3
    from typing import Annotated

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.channels.delta import DeltaChannel
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import add_messages
    from typing_extensions import TypedDict

    def reducer(state, writes):
        for w in writes:
            state = add_messages(state, w)
        return state

    State = TypedDict("State", {"messages": Annotated[list, DeltaChannel(reducer, list, snapshot_frequency=3)]})

    def node(s):
        return {"messages": [AIMessage(content=f"reply {len(s['messages'])}")]}

    b = StateGraph(State)
    b.add_node("n", node)
    b.add_edge(START, "n")
    path = tmp_path / "delta.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = b.compile(checkpointer=SqliteSaver(conn))
    for i in range(4):
        graph.invoke({"messages": [HumanMessage(content=f"q{i}")]}, {"configurable": {"thread_id": "d:_:1"}})
    expected = graph.get_state({"configurable": {"thread_id": "d:_:1"}}).values["messages"]
    conn.close()
    res = show(path, "--thread", "d:_:1", "--format", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)
    assert [(r["message_id"], r["content"]) for r in rows] == [(m.id, m.content) for m in expected]
    assert len(rows) == 8 and all(r["timestamp"] for r in rows)


def test_terminal_gets_a_safe_table(sqlite_master):
    """On a real pseudo-terminal the default is a table, and hostile content still cannot reach the terminal."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "LINES": "50", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "symfonic_cli", "transcript", "show", "--store", str(sqlite_master), "--thread", "acme:eu:s-003"],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    out = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "┃" in out or "│" in out  # a table
    assert "pwned-title" in out and "\x1b]0;" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b]0;pwned-title\\x07" in out
    assert "[bold red]markup[/bold" in out
