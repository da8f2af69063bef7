"""``-f csv`` (issue #35): RFC 4180, a header row, the same fields as JSON, on the five commands
that print records (threads list, threads search, transcript show, thread history, store usage),
on every store kind; a store's hostile text stays inert in it; the other commands refuse it."""

from __future__ import annotations

import csv
import io
import json

import pytest

from symfonic_cli import vocabulary
from tests.support.cli import run

HOSTILE = ['a, "quoted"\nsecond line', "=HYPERLINK(\"http://x\")", "\x1b[31mred\x1b[0m\rback", "-1+1", "@sum",
           "\t=HYPERLINK(\"http://tab\")", "\r=1+2", "+cmd"]
KEY = "acme:_:csv-1"


def _csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), strict=True))


def _hostile(value: object) -> bool:
    """Text the CSV writer changes on purpose: controls, or a formula's first character."""
    return isinstance(value, str) and (value[:1] in ("=", "+", "-", "@", "\t", "\r") or not value.replace("\n", "").replace("\t", "").isprintable())


def _command(url: str, key: str) -> dict[str, list[str]]:
    return {
        "threads list": ["threads", "list", "-s", url],
        "threads list (run state)": ["threads", "list", "-s", url, "--status", "done,error,interrupted,pending", "--with-size"],
        "threads search": ["threads", "search", "-s", url, "the"],
        "transcript show": ["transcript", "show", "-s", url, "-t", key],
        "thread history": ["thread", "history", "-s", url, "-t", key],
    }


def _expected_field(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@pytest.fixture(scope="module")
def store(shared_kind):  # only read by the tests
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    b = StateGraph(MessagesState)
    b.add_node("answer", lambda state: {"messages": [AIMessage(content="the answer, in \"quotes\"")]})
    b.add_edge(START, "answer")
    url = shared_kind.new_store()  # the scenarios, and a thread of hostile text
    with shared_kind.saver(url) as saver:
        graph = b.compile(checkpointer=saver)
        for text in HOSTILE:
            graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": KEY}})
    return url


def test_csv_holds_the_fields_and_values_of_json(store):
    for name, argv in _command(store, KEY).items():
        as_json = run(*argv, "-f", "json")
        as_csv = run(*argv, "-f", "csv")
        assert as_json.code == 0 and as_csv.code == 0, (name, as_json.err, as_csv.err)
        records = json.loads(as_json.out)
        assert records, name
        text = as_csv.out
        # RFC 4180: every record ends in CRLF; a bare LF appears only inside a quoted field.
        assert text.endswith("\r\n"), name
        rows = _csv(text)
        header, body = rows[0], rows[1:]
        fields = list(dict.fromkeys(k for rec in records for k in rec))
        assert header == fields, name  # the same fields, in JSON's order
        assert len(body) == len(records), name
        for rec, row in zip(records, body):
            assert len(row) == len(header), name
            for field, got in zip(header, row):
                value = rec.get(field)
                if _hostile(value):
                    continue  # checked below
                if value is None or isinstance(value, str):
                    assert got == _expected_field(value), (name, field)
                else:
                    assert json.loads(got) == value, (name, field)


def test_a_stores_hostile_text_is_inert_in_csv(store):
    r = run("transcript", "show", "-s", store, "-t", KEY, "-f", "csv")
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\r" not in r.out.replace("\r\n", "")
    contents = [row[2] for row in _csv(r.out)[1:]]
    users = contents[0::2]
    assert users[0] == HOSTILE[0]  # commas, quotes and the line break survive, quoted
    assert users[1] == "'" + HOSTILE[1]  # a formula is text to a spreadsheet
    assert users[2] == "\\x1b[31mred\\x1b[0m\\x0dback"  # controls shown, never sent
    assert users[3] == "'-1+1" and users[4] == "'@sum"
    assert users[5] == "'\t=HYPERLINK(\"http://tab\")"  # a Tab or CR before the formula is guarded too
    assert users[6] == "'\\x0d=1+2" and users[7] == "'+cmd"
    assert contents[1] == 'the answer, in "quotes"'
    assert '"a, ""quoted""\nsecond line"' in r.out  # quoted as RFC 4180 says


def test_no_csv_field_of_store_text_starts_a_formula(store):
    """Every -f csv output (the records and store usage's document): no field of text begins with
    =, +, -, @, Tab or CR (OWASP's CSV injection list) unguarded; numbers are numbers."""
    argvs = [*_command(store, KEY).values(), ["threads", "search", "-s", store, "HYPERLINK", "--tools"],
             ["store", "usage", "-s", store]]
    for argv in argvs:
        r = run(*argv, "-f", "csv")
        assert r.code == 0, (argv, r.err)
        for row in _csv(r.out):
            for field in row:
                if field[:1] in ("=", "+", "-", "@", "\t", "\r"):
                    assert _number(field), (argv, field)


def _number(field: str) -> bool:
    try:
        return isinstance(json.loads(field), (int, float))
    except ValueError:
        return False


def test_store_usage_csv_is_the_json_document_field_by_field(store):
    doc = json.loads(run("store", "usage", "-s", store, "-f", "json").out)
    rows = _csv(run("store", "usage", "-s", store, "-f", "csv").out)
    assert rows[0] == ["field", "value"]
    got = dict(rows[1:])
    assert got["store_kind"] == doc["store_kind"]
    assert got["largest_threads.0.key"] == doc["largest_threads"][0]["key"]
    assert json.loads(got["largest_threads.0.bytes"]) == doc["largest_threads"][0]["bytes"]
    assert json.loads(got["reclaimable.checkpoints"]) == doc["reclaimable"]["checkpoints"]
    assert len(got) == len(rows) - 1  # every path once


def test_csv_is_offered_where_it_is_taken_and_refused_elsewhere(sqlite_master):
    from symfonic_cli import complete

    tree = complete.build_tree()
    for path in vocabulary.RECORD_COMMANDS:
        node = tree
        for word in path:
            node = node["commands"][word]
        assert node["options"]["--format"]["choices"] == list(vocabulary.RECORD_FORMATS), path
        assert "[table|text|json|jsonl|csv]" in run(*path, "--help", env={"COLUMNS": "200"}).out, path
    assert tree["commands"]["store"]["commands"]["info"]["options"]["--format"]["choices"] == list(vocabulary.FORMATS)
    for argv in (["store", "info"], ["compat", "report"], ["thread", "show", "-t", "acme:_:s-001"]):
        r = run(*argv, "-s", str(sqlite_master), "-f", "csv")
        assert r.code == 2 and "unknown --format 'csv'" in r.err and r.out == "", (argv, r.err)


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("color", [True, False])
def test_csv_on_a_terminal_is_the_same_bytes_as_on_a_pipe(sqlite_master, cols, color):
    from tests.support.terminal import on_terminal

    env = {} if color else {"NO_COLOR": "1"}
    piped = run("threads", "list", "-s", str(sqlite_master), "-f", "csv", env=env)
    code, screen = on_terminal("--no-pager", "threads", "list", "-s", str(sqlite_master), "-f", "csv", cols=cols, env=env)
    assert code == 0 and piped.code == 0
    assert "\x1b" not in screen
    assert screen.replace("\r", "") == piped.out.replace("\r\n", "\n")
